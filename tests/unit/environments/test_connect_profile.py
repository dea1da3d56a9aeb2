"""Profile `method: connect` and its Spark Connect URL, checked before any connection (no Spark)."""

import socket

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.environments import connect_client
from dbt.adapters.paimon.environments.connect_client import ConnectSetupError, parse_connect_url
from dbt.adapters.paimon.credentials import PaimonCredentials


def credentials(**profile):
    return PaimonCredentials.from_dict({"schema": "analytics", **profile})


def test_session_stays_the_default():
    creds = credentials()
    assert creds.method == "session" and not creds.is_connect
    assert creds.host == "embedded"


def test_connect_defaults_to_the_local_server():
    creds = credentials(method="connect")
    assert creds.is_connect
    assert str(creds.connect_url) == "sc://127.0.0.1:15002"


def test_connect_url_keeps_host_port_and_parameters():
    creds = credentials(method="connect", host="sc://spark.example.com:443/;use_ssl=true;token=abc")
    url = creds.connect_url
    assert (url.host, url.port) == ("spark.example.com", 443)
    assert url.param("use_ssl") == "true" and url.param("token") == "abc"
    assert str(url) == "sc://spark.example.com:443/;use_ssl=true;token=abc"
    assert "abc" not in url.redacted


def test_profile_token_and_use_ssl_join_the_url():
    url = credentials(method="connect", host="sc://h:15002", token="t0k", use_ssl=True).connect_url
    assert url.param("token") == "t0k" and url.param("use_ssl") == "true"
    # a token in the URL wins
    url = credentials(method="connect", host="sc://h/;token=inurl", token="other").connect_url
    assert url.param("token") == "inurl" and url.port == 15002


@pytest.mark.parametrize("host, message", [
    ("127.0.0.1:15002", "not a Spark Connect URL"),
    ("http://h:15002", "not a Spark Connect URL"),
    ("sc://h:port", "port must be a number"),
    ("sc://h:15002/db", "has no path"),
    ("sc://h:15002/;token", "not key=value"),
    ("sc://h:15002/;use_ssl=yes", "use_ssl must be true or false"),
    ("sc://h:15002/;session_id=abc", "session_id must be a UUID"),
    ("sc://:15002", "names no server host"),
])
def test_bad_connect_urls_are_refused_with_the_form(host, message):
    with pytest.raises(DbtRuntimeError, match=message):
        credentials(method="connect", host=host)


def test_unknown_method_names_both_methods():
    with pytest.raises(DbtRuntimeError, match="'session'.*'connect'.*not 'thrift'"):
        credentials(method="thrift", host="h")


def test_spark_master_is_refused_with_connect():
    with pytest.raises(DbtRuntimeError, match="server start --master"):
        credentials(method="connect", spark_master="spark://h:7077")


def test_connect_url_as_spark_master_points_to_method_connect():
    with pytest.raises(DbtRuntimeError, match="method: connect"):
        credentials(spark_master="sc://h:15002")


def test_connect_warehouse_defaults_to_the_servers(tmp_path):
    creds = credentials(method="connect")
    creds.resolve_paths(str(tmp_path))
    assert creds.warehouse is None  # taken from the server when the connection opens
    creds = credentials(method="connect", warehouse="lake")
    creds.resolve_paths(str(tmp_path))
    assert creds.warehouse == str(tmp_path / "lake")


def test_unreachable_server_names_url_and_start_command():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = parse_connect_url(f"sc://127.0.0.1:{port}/;token=secret")
    with pytest.raises(ConnectSetupError) as error:
        connect_client.check_reachable(url, "/data/lake", timeout=1)
    message = str(error.value)
    assert f"sc://127.0.0.1:{port}" in message and "secret" not in message
    assert f"dbt-paimon server start --warehouse /data/lake --port {port}" in message


def test_shared_session_ids_are_stable_uuids_per_generation():
    first = connect_client.shared_session_id(0)
    assert first == connect_client.shared_session_id(0) != connect_client.shared_session_id(1)
    parse_connect_url(f"sc://h/;session_id={first}")  # a valid session_id


class FakeConf(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value


class FakeServer:
    """What check_server asks a Spark Connect session, with canned answers."""

    def __init__(self, version, probe):
        self.conf, self.version, self._probe = FakeConf(), version, probe

    def range(self, n):
        return self

    def mapInArrow(self, func, schema):
        return self

    def collect(self):
        if isinstance(self._probe, Exception):
            raise self._probe
        from types import SimpleNamespace

        return [SimpleNamespace(**self._probe)]


def test_server_check_passes_once_and_is_remembered_in_the_session():
    import pyspark

    expected = connect_client.expected_versions()
    server = FakeServer(pyspark.__version__, {"python": "/p", "found": expected, "error": ""})
    url = parse_connect_url("sc://h")
    connect_client.check_server(server, url)
    assert server.conf[connect_client.CHECKED_CONF] == expected
    server._probe = RuntimeError("not probed again")
    connect_client.check_server(server, url)


@pytest.mark.parametrize("version, probe, message", [
    ("3.5.1", None, "runs Spark 3.5.1; this dbt process has pyspark"),
    (None, {"python": "/usr/bin/python3", "found": "",
            "error": "ModuleNotFoundError: No module named 'dbt.adapters.paimon'"},
     "/usr/bin/python3, which cannot import dbt-paimon \\(ModuleNotFoundError"),
    (None, {"python": "/opt/py", "found": "dbt-paimon 0.0.9, pyspark 4.3.0", "error": ""},
     "/opt/py, which runs dbt-paimon 0.0.9, pyspark 4.3.0; this dbt process runs dbt-paimon"),
    (None, RuntimeError("PythonException:\n  Traceback ...\nModuleNotFoundError: No module "
                        "named 'pyarrow'"),
     "cannot import dbt-paimon \\(ModuleNotFoundError: No module named 'pyarrow'\\)"),
])
def test_server_check_names_the_mismatch_and_the_fix(version, probe, message):
    import pyspark

    server = FakeServer(version or pyspark.__version__, probe)
    with pytest.raises(ConnectSetupError, match=message) as error:
        connect_client.check_server(server, parse_connect_url("sc://h:15002"))
    assert "dbt-paimon server start" in str(error.value) or version
    assert connect_client.CHECKED_CONF not in server.conf
