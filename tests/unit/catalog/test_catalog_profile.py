"""The profile's `catalog:` (catalog/config.py), checked when the profile is read: before
any connection, Spark or pypaimon import."""
import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.credentials import PaimonCredentials
from dbt.adapters.paimon.catalog.config import duration_millis, parse_catalog, redact_uri


def credentials(**profile):
    return PaimonCredentials.from_dict({"schema": "analytics", **profile})


def test_no_catalog_is_the_filesystem_catalog_as_before():
    creds = credentials(warehouse="/data/lake", catalog_options={"fs.s3.endpoint": "e"})
    assert creds.catalog_type == "filesystem"
    assert creds.pypaimon_catalog_options == {"fs.s3.endpoint": "e"}
    assert credentials(catalog={"type": "filesystem"}).pypaimon_catalog_options == {}


def test_jdbc_catalog_options_keep_paimons_names():
    creds = credentials(catalog={"type": "jdbc", "uri": "jdbc:sqlite:/c/catalog.db",
                                 "jdbc.user": "u", "jdbc.password": "p", "catalog-key": "dbt",
                                 "lock.enabled": True, "lock-acquire-timeout": "30 s"},
                        catalog_options={"fs.s3.endpoint": "e"})
    assert creds.catalog_type == "jdbc"
    assert creds.pypaimon_catalog_options == {
        "metastore": "jdbc", "uri": "jdbc:sqlite:/c/catalog.db", "jdbc.user": "u",
        "jdbc.password": "p", "catalog-key": "dbt", "lock.enabled": "true",
        "lock-acquire-timeout": "30 s", "fs.s3.endpoint": "e"}
    assert "catalog_type" in creds._connection_keys()  # dbt debug shows the kind, not the uri


def test_relative_paths_resolve_against_the_project(tmp_path):
    creds = credentials(catalog={"type": "jdbc", "uri": "jdbc:sqlite:state/catalog.db",
                                 "warehouse": "lake"})
    creds.resolve_paths(str(tmp_path))
    assert creds.warehouse == str(tmp_path / "lake")
    assert creds.pypaimon_catalog_options["uri"] == f"jdbc:sqlite:{tmp_path}/state/catalog.db"
    assert "warehouse" not in creds.pypaimon_catalog_options  # the resolved one is passed
    again = PaimonCredentials.from_dict(creds.to_dict())  # dbt may copy credentials
    assert again.warehouse == creds.warehouse
    assert again.pypaimon_catalog_options == creds.pypaimon_catalog_options


def test_hive_catalog_options_keep_paimons_names():
    creds = credentials(catalog={"type": "hive", "uri": " thrift://a:9083,thrift://b:9083 ",
                                 "lock.enabled": True, "lock-acquire-timeout": "1 min"})
    assert creds.catalog_type == "hive"
    assert creds.pypaimon_catalog_options == {
        "metastore": "hive", "uri": "thrift://a:9083,thrift://b:9083", "lock.enabled": "true",
        "lock-acquire-timeout": "1 min"}


@pytest.mark.parametrize("catalog, message", [
    ({"type": "hive"}, "needs `uri`, the Hive Metastore's Thrift URI"),
    ({"type": "hive", "uri": "http://metastore:9083"}, "is not a Hive Metastore address"),
    ({"type": "hive", "uri": "thrift://metastore"}, "is not a Hive Metastore address"),
    ({"type": "hive", "uri": "thrift://a:9083,b"}, "'b' is not a Hive Metastore address"),
    ({"type": "hive", "uri": "thrift://a:9083", "hive-conf-dir": " "}, "hive-conf-dir is empty"),
    ({"type": "hive", "uri": "thrift://a:9083", "hadoop-conf-dir": "/etc/hadoop"},
     "does not read Hadoop configuration folders"),
    ({"type": "hive", "uri": "thrift://a:9083", "jdbc.user": "x"},
     "does not take option.s. jdbc.user"),
    ({"type": "hive", "uri": "thrift://a:9083", "lock.enabled": "on"}, "true or false"),
    ({"type": "rest", "warehouse": "w", "token.provider": "bear", "token": "t"}, "needs `uri`"),
    ({"type": "rest", "uri": "thrift://x:1", "warehouse": "w", "token.provider": "bear",
      "token": "t"}, "is not a REST catalog server's address"),
    ({"type": "rest", "uri": "http://u:p@x:1", "warehouse": "w", "token.provider": "bear",
      "token": "t"}, "credentials go in `token`"),
    ({"type": "rest", "uri": "http://x:port", "warehouse": "w", "token.provider": "bear",
      "token": "t"}, "port is not a number"),
    ({"type": "rest", "uri": "http://x", "token.provider": "bear", "token": "t"},
     "needs `warehouse`: the name the REST catalog server knows"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w"}, "needs `token.provider`"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w", "token.provider": "oauth"},
     "token.provider 'oauth' is not one pypaimon knows: bear, dlf"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w", "token.provider": "bear"},
     "'bear' needs `token`"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w", "token.provider": "dlf",
      "token": "t"}, "DLF signs its requests"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w", "token.provider": "bear",
      "token": "t", "data-token.enabled": True}, "data-token.enabled is not supported"),
    ({"type": "rest", "uri": "http://x", "warehouse": "w", "token.provider": "bear",
      "token": "t", "lock.enabled": True}, "does not take option.s. lock.enabled"),
    ({"type": "glue"}, "Expected one of: filesystem, jdbc, hive, rest"),
    ({"metastore": "jdbc"}, "with `type`"),
    ({"type": "jdbc"}, "needs `uri`"),
    ({"type": "jdbc", "uri": "sqlite:catalog.db"}, "must start with one of jdbc:sqlite:"),
    ({"type": "jdbc", "uri": "jdbc:sqlite::memory:"}, "in-memory SQLite"),
    ({"type": "jdbc", "uri": "jdbc:sqlite:c.db", "client-pool-size": 2},
     "does not take option.s. client-pool-size"),
    ({"type": "jdbc", "uri": "jdbc:sqlite:c.db", "lock.enabled": "yes"}, "true or false"),
    ({"type": "jdbc", "uri": "jdbc:sqlite:c.db", "lock-acquire-timeout": "soon"},
     "not a duration"),
    ({"type": "jdbc", "uri": "jdbc:sqlite:c.db", "jdbc.user": {"a": 1}}, "single value"),
    ({"type": "filesystem", "uri": "jdbc:sqlite:c.db"}, "does not take option.s. uri"),
])
def test_bad_catalogs_are_refused_naming_the_fix(catalog, message):
    with pytest.raises(DbtRuntimeError, match=message):
        credentials(catalog=catalog)


def test_rest_catalog_options_keep_paimons_names_and_its_warehouse_is_a_name():
    creds = credentials(warehouse="/data/lake", catalog={
        "type": "rest", "uri": "https://rest.example.com:8443/paimon/", "warehouse": "shop",
        "token.provider": "BEAR", "token": "secret", "header.X-Tenant": "t1"})
    assert creds.catalog_type == "rest" and creds.warehouse == "/data/lake"
    assert creds.pypaimon_catalog_options == {
        "metastore": "rest", "uri": "https://rest.example.com:8443/paimon", "warehouse": "shop",
        "token.provider": "bear", "token": "secret", "header.X-Tenant": "t1"}
    creds.resolve_paths("/project")  # the folder is the profile's; the name stays the server's
    assert creds.warehouse == "/data/lake" and creds.catalog["warehouse"] == "shop"
    assert creds.pypaimon_catalog_options["warehouse"] == "shop"
    located = credentials(catalog={"type": "rest", "uri": "http://x", "warehouse": "shop",
                                   "warehouse-path": "lake", "token.provider": "bear",
                                   "token": "t"})
    located.resolve_paths("/project")  # warehouse-path is the profile's warehouse
    assert located.warehouse == "/project/lake"
    assert located.catalog["warehouse-path"] == "/project/lake"
    assert located.pypaimon_catalog_options["warehouse"] == "shop"
    assert "warehouse-path" not in located.pypaimon_catalog_options
    with pytest.raises(DbtRuntimeError, match="names the warehouse twice"):
        credentials(warehouse="/a", catalog={"type": "rest", "uri": "http://x", "warehouse": "w",
                                             "warehouse-path": "/b", "token.provider": "bear",
                                             "token": "t"})
    dlf = parse_catalog({"type": "rest", "uri": "http://dlf", "warehouse": "w",
                         "token.provider": "dlf", "dlf.access-key-id": "k",
                         "dlf.access-key-secret": "s"})
    assert dlf.rest_warehouse == "w" and dlf.warehouse is None


def test_the_warehouse_named_twice_must_agree():
    with pytest.raises(DbtRuntimeError, match="names the warehouse twice"):
        credentials(warehouse="/a", catalog={"type": "jdbc", "uri": "jdbc:sqlite:c.db",
                                             "warehouse": "/b"})
    assert credentials(warehouse="/a", catalog={"type": "filesystem",
                                                "warehouse": "/a"}).warehouse == "/a"


def test_catalog_settings_in_catalog_options_are_refused():
    with pytest.raises(DbtRuntimeError, match="put them under the profile's `catalog:`"):
        credentials(catalog_options={"metastore": "jdbc", "uri": "jdbc:sqlite:c.db"})
    with pytest.raises(DbtRuntimeError, match="jdbc.password"):
        credentials(catalog={"type": "jdbc", "uri": "jdbc:sqlite:c.db"},
                    catalog_options={"jdbc.password": "p"})


def test_durations_and_redaction():
    assert duration_millis("8 s") == 8000 and duration_millis("8min") == 480_000
    assert duration_millis("250") == 250
    assert redact_uri("jdbc:postgresql://u:secret@h:5432/db") == "jdbc:postgresql://u:***@h:5432/db"
    assert "secret" not in redact_uri("jdbc:postgresql://h/db?user=u&password=secret")
    assert parse_catalog(None).type == "filesystem"


def test_a_postgresql_catalog_with_its_credentials_as_options():
    creds = credentials(catalog={"type": "jdbc", "uri": "jdbc:postgresql://db.corp:5433/paimon"
                                 "?sslmode=require", "jdbc.user": "dbt",
                                 "jdbc.password": "s3cret"})
    assert creds.pypaimon_catalog_options == {
        "metastore": "jdbc", "uri": "jdbc:postgresql://db.corp:5433/paimon?sslmode=require",
        "jdbc.user": "dbt", "jdbc.password": "s3cret"}
    # the user in the URL's query, the same user again as an option: one user, accepted
    same = {"type": "jdbc", "uri": "jdbc:postgresql://h/paimon?user=dbt", "jdbc.user": "dbt"}
    assert credentials(catalog=same).pypaimon_catalog_options["jdbc.user"] == "dbt"


@pytest.mark.parametrize("uri, message", [
    ("jdbc:postgresql:paimon", "name the server and the database.*Unix socket"),
    ("jdbc:postgresql:/", "name the server and the database"),
    ("jdbc:postgresql://h:5432/", "names no database"),
    ("jdbc:postgresql://h:5432", "names no database"),
    ("jdbc:postgresql://:5432/paimon", "names no host"),
    ("jdbc:postgresql://h:port/paimon", "port is not a number"),
    ("jdbc:postgresql://h1:5432,h2:5432/paimon", "several hosts"),
    ("jdbc:postgresql://dbt:s3cret@h/paimon", "jdbc.user and jdbc.password"),
])
def test_postgresql_urls_pypaimon_would_misread_are_refused(uri, message):
    with pytest.raises(DbtRuntimeError, match=message) as error:
        credentials(catalog={"type": "jdbc", "uri": uri})
    assert "s3cret" not in str(error.value)


def test_the_user_or_password_given_twice_must_agree():
    for name, value in (("user", "dbt"), ("password", "s3cret")):
        with pytest.raises(DbtRuntimeError, match=f"uri's .{name}= and the option "
                                                  f"jdbc.{name} differ") as error:
            credentials(catalog={"type": "jdbc", f"jdbc.{name}": "other",
                                 "uri": f"jdbc:postgresql://h/paimon?{name}={value}"})
        assert "s3cret" not in str(error.value)


def hive_site(folder, **properties):
    folder.mkdir(exist_ok=True)
    rows = "".join(f"<property><name>{k}</name><value>{v}</value></property>"
                   for k, v in properties.items())
    (folder / "hive-site.xml").write_text(
        f'<?xml version="1.0"?><configuration>{rows}</configuration>')
    return folder


def test_hive_site_names_the_metastore_and_the_warehouse_that_the_profile_leaves_open(
        tmp_path, monkeypatch):
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    hive_site(tmp_path / "conf", **{"hive.metastore.uris": "thrift://hms:9083",
                                    "hive.metastore.warehouse.dir": "/data/hive",
                                    "hive.metastore.client.socket.timeout": "300"})
    # relative to the project, as Paimon's HiveCatalog reads <hive-conf-dir>/hive-site.xml
    creds = credentials(catalog={"type": "hive", "hive-conf-dir": "conf"})
    creds.resolve_paths(str(tmp_path))
    assert creds.pypaimon_catalog_options == {"metastore": "hive", "uri": "thrift://hms:9083"}
    assert creds.warehouse == "/data/hive"
    again = PaimonCredentials.from_dict(creds.to_dict())  # dbt may copy credentials
    assert again.pypaimon_catalog_options == creds.pypaimon_catalog_options
    # the catalog's own `uri` and the profile's warehouse come first, as in Paimon
    creds = credentials(warehouse="/lake", catalog={"type": "hive", "uri": "thrift://other:1",
                                                    "hive-conf-dir": str(tmp_path / "conf")})
    creds.resolve_paths(str(tmp_path))
    assert creds.pypaimon_catalog_options["uri"] == "thrift://other:1"
    assert creds.warehouse == "/lake"


def test_hive_conf_dir_defaults_to_the_environment_as_in_paimon(tmp_path, monkeypatch):
    monkeypatch.setenv("HIVE_CONF_DIR", str(hive_site(tmp_path / "env", **{
        "hive.metastore.uris": "thrift://from-env:9083"})))
    creds = credentials(warehouse="/lake", catalog={"type": "hive"})
    creds.resolve_paths(str(tmp_path))
    assert creds.pypaimon_catalog_options["uri"] == "thrift://from-env:9083"


@pytest.mark.parametrize("properties, message", [
    ({"hive.metastore.uris": "thrift://hms:9083", "hive.metastore.sasl.enabled": "true"},
     "Kerberos-secured metastore"),
    ({"hive.metastore.warehouse.dir": "/data/hive"}, "neither `uri` nor hive.metastore.uris"),
    ({"hive.metastore.uris": "hms:9083"}, "is not a Hive Metastore address"),
    (None, "cannot read .*hive-site.xml"),
])
def test_a_hive_site_dbt_paimon_cannot_use_is_refused(tmp_path, monkeypatch, properties,
                                                      message):
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    folder = tmp_path / "conf"
    if properties is None:
        folder.mkdir()
    else:
        hive_site(folder, **properties)
    creds = credentials(catalog={"type": "hive", "hive-conf-dir": str(folder)})
    with pytest.raises(DbtRuntimeError, match=message):
        creds.resolve_paths(str(tmp_path))
