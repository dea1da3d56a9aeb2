"""The profile's ``catalog:``: which Paimon catalog holds the warehouse's tables (pure Python,
no pypaimon: credentials check it before anything is imported or connects).

``catalog: {type: filesystem}`` (the default, also when ``catalog`` is absent) is Paimon's
filesystem catalog: the warehouse's folders are the tables. ``catalog: {type: jdbc, uri: ...}``
is Paimon's JDBC catalog (Java: paimon-core org/apache/paimon/jdbc/JdbcCatalog.java; Python:
pypaimon/catalog/jdbc_catalog.py): a database's ``paimon_tables`` rows say which tables exist,
their files stay under ``warehouse``. Options carry Paimon's own names, so a Flink or Spark
catalog definition can be copied over (``uri``, ``jdbc.user``, ``jdbc.password``,
``catalog-key``, ``lock.enabled``, ...). ``parse_catalog`` checks them before anything
connects; ``PaimonCatalog.pypaimon_options`` is what pypaimon's ``CatalogFactory`` takes.

``catalog: {type: hive, uri: thrift://host:9083}`` is Paimon's Hive catalog (Java:
paimon-hive-catalog org/apache/paimon/hive/HiveCatalog.java; Python: catalog/hive_catalog.py, as
pypaimon has none): a Hive Metastore's table entries say which tables exist.

``catalog: {type: rest, uri: http://host:port, warehouse: <name>, token.provider: bear, token:
...}`` is Paimon's REST catalog (Java: paimon-api org/apache/paimon/rest/RESTCatalog.java;
Python: pypaimon/catalog/rest/rest_catalog.py, opened in catalog/rest_catalog.py): a server
speaking Paimon's REST catalog API says which tables exist and where their files are; its
``warehouse`` is the name the server knows the catalog by, not a folder: the tables' files live
under ``warehouse-path`` (default: the profile's ``warehouse``, see ``PaimonCatalog.warehouse``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import parse_qs, urlparse

FILESYSTEM, JDBC, HIVE, REST = "filesystem", "jdbc", "hive", "rest"
CATALOG_TYPES = (FILESYSTEM, JDBC, HIVE, REST)
# pypaimon's key for the catalog kind; the profile names it `type`
METASTORE_KEY = "metastore"
WAREHOUSE_KEY = "warehouse"
URI_KEY = "uri"
CATALOG_KEY_KEY = "catalog-key"
LOCK_ENABLED_KEY = "lock.enabled"
LOCK_CHECK_MAX_SLEEP_KEY = "lock-check-max-sleep"
LOCK_ACQUIRE_TIMEOUT_KEY = "lock-acquire-timeout"
LOCK_KEY_MAX_LENGTH_KEY = "lock-key-max-length"
JDBC_PROPERTY_PREFIX = "jdbc."  # passed to the database driver without the prefix

# Paimon 1.0's JdbcCatalogOptions / CatalogOptions, with their defaults
DEFAULT_CATALOG_KEY = "jdbc"
DEFAULT_LOCK_CHECK_MAX_SLEEP_MS = 8_000
DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS = 8 * 60_000
DEFAULT_LOCK_KEY_MAX_LENGTH = 255

# option -> what it is (the error for an unknown key lists them)
JDBC_OPTIONS = {
    URI_KEY: "the database's JDBC URL: jdbc:sqlite:<file>, jdbc:postgresql://host:port/db, "
             "jdbc:mysql://host:port/db",
    WAREHOUSE_KEY: "folder or URI under which the tables' files live",
    CATALOG_KEY_KEY: "the catalog's name in the database's tables (default 'jdbc'): several "
                     "catalogs can share one database",
    LOCK_ENABLED_KEY: "commit under the catalog's lock (the paimon_distributed_locks table), "
                      "as Paimon's JdbcCatalogLock does",
    LOCK_CHECK_MAX_SLEEP_KEY: "longest wait between two tries to take the lock (default 8 s)",
    LOCK_ACQUIRE_TIMEOUT_KEY: "give up taking the lock after this long (default 8 min)",
    LOCK_KEY_MAX_LENGTH_KEY: "length of the lock table's key column (default 255)",
    JDBC_PROPERTY_PREFIX + "*": "the database driver's connection properties, e.g. jdbc.user, "
                                "jdbc.password",
}
FILESYSTEM_OPTIONS = {WAREHOUSE_KEY: "folder or URI of the warehouse"}
WAREHOUSE_PATH_KEY = "warehouse-path"  # a REST catalog's folder of files (dbt-paimon's option)
TOKEN_PROVIDER_KEY = "token.provider"
TOKEN_KEY = "token"
DLF_PREFIX = "dlf."       # pypaimon's DLF token provider's options (dlf.access-key-id, ...)
HEADER_PREFIX = "header."  # extra HTTP headers of every request (pypaimon's RESTApi)
# pypaimon 2.1's AuthProviderFactory: bear (a bearer token), dlf (Alibaba Cloud DLF signing)
REST_TOKEN_PROVIDERS = ("bear", "dlf")
REST_OPTIONS = {
    URI_KEY: "the REST catalog server's address, http(s)://host:port[/path]",
    WAREHOUSE_KEY: "the catalog's name on the server (Paimon's REST `warehouse`)",
    WAREHOUSE_PATH_KEY: "the folder or URI under which the server keeps the catalog's tables "
                        "(<warehouse-path>/<database>.db/<table>); default: the profile's "
                        "`warehouse`",
    TOKEN_PROVIDER_KEY: "how requests authenticate: bear (a bearer token, `token`) or dlf "
                        "(Alibaba Cloud DLF, its dlf.* options)",
    TOKEN_KEY: "the bearer token of token.provider bear",
    DLF_PREFIX + "*": "the DLF token provider's options (dlf.access-key-id, "
                      "dlf.access-key-secret, dlf.region, ...)",
    HEADER_PREFIX + "*": "an HTTP header sent with every request, e.g. header.X-Tenant",
}
# Paimon REST catalog options dbt-paimon cannot honour: why, for the error
REST_REFUSED = {
    "data-token.enabled": "dbt-paimon's Spark readers and writers reach the warehouse with the "
                          "file-system options of `catalog_options`, not with per-table tokens "
                          "from the server",
}
HIVE_CONF_DIR_KEY = "hive-conf-dir"
HIVE_CONF_DIR_ENV = "HIVE_CONF_DIR"  # Paimon's HiveCatalog.possibleHiveConfPath
HIVE_SITE_FILE = "hive-site.xml"
# what dbt-paimon takes from hive-site.xml (Hive's HiveConf.ConfVars names)
HIVE_SITE_URIS = "hive.metastore.uris"
HIVE_SITE_WAREHOUSE = "hive.metastore.warehouse.dir"
HIVE_SITE_SASL = "hive.metastore.sasl.enabled"
HIVE_OPTIONS = {
    URI_KEY: "the metastore's Thrift URI, thrift://host:9083 (several, comma-separated, are "
             "tried in turn)",
    HIVE_CONF_DIR_KEY: "a folder whose hive-site.xml names the metastore "
                       "(hive.metastore.uris) and the warehouse (hive.metastore.warehouse.dir) "
                       "when `uri` and `warehouse` do not; default: $HIVE_CONF_DIR",
    WAREHOUSE_KEY: "folder or URI under which new databases' folders (<warehouse>/<db>.db) live",
    LOCK_ENABLED_KEY: "commit under the metastore's table lock, as Paimon's HiveCatalogLock does",
    LOCK_CHECK_MAX_SLEEP_KEY: "longest wait between two checks of a waiting lock (default 8 s)",
    LOCK_ACQUIRE_TIMEOUT_KEY: "give up taking the lock after this long (default 8 min)",
}
# Paimon's Hive catalog options dbt-paimon cannot honour: why, for the error
HIVE_REFUSED = {
    "hadoop-conf-dir": "dbt-paimon does not read Hadoop configuration folders; file-system "
                       "options go in `catalog_options`",
    "location-in-properties": "table locations are kept in the storage descriptor, as by "
                              "Paimon's default",
    "metastore.client.class": "dbt-paimon talks to the metastore over Thrift itself",
}
# the driver each JDBC URL form needs in Python (pypaimon's jdbc_catalog._DbApiConnection)
JDBC_URL_FORMS = ("jdbc:sqlite:", "jdbc:postgresql:", "jdbc:mysql:")
_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")
# Paimon's TimeUtils units, in milliseconds
_DURATION_UNITS = {
    "": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}


class CatalogConfigError(ValueError):
    """The profile's ``catalog`` cannot be used; the message says what to change."""


@dataclass(frozen=True)
class PaimonCatalog:
    """A checked ``catalog:``: its kind and its Paimon options (string values, no ``type``)."""

    type: str = FILESYSTEM
    options: Mapping[str, str] = field(default_factory=dict)
    # a Hive catalog's hive.metastore.warehouse.dir from hive-site.xml (with_paths_under):
    # its warehouse when neither the catalog nor the profile names one, as in Paimon
    site_warehouse: Optional[str] = None

    @property
    def is_jdbc(self) -> bool:
        return self.type == JDBC

    @property
    def is_hive(self) -> bool:
        return self.type == HIVE

    @property
    def is_rest(self) -> bool:
        return self.type == REST

    @property
    def warehouse_key(self) -> str:
        """The option naming the folder or URI of the tables' files: ``warehouse``, but a REST
        catalog's ``warehouse`` is its name on the server (``rest_warehouse``) and its folder
        is ``warehouse-path``."""
        return WAREHOUSE_PATH_KEY if self.type == REST else WAREHOUSE_KEY

    @property
    def warehouse(self) -> Optional[str]:
        """The folder or URI of the tables' files this catalog names (``warehouse_key``)."""
        return self.options.get(self.warehouse_key)

    @property
    def rest_warehouse(self) -> Optional[str]:
        """A REST catalog's name on its server."""
        return self.options.get(WAREHOUSE_KEY) if self.type == REST else None

    @property
    def uri(self) -> Optional[str]:
        return self.options.get(URI_KEY)

    def pypaimon_options(self) -> Dict[str, str]:
        """The options pypaimon's ``CatalogFactory.create`` takes (``metastore`` names the
        kind), without ``warehouse``: the caller adds the resolved one. A REST catalog keeps
        its ``warehouse``, the server's name of the catalog (catalog/warehouse.py
        ``open_catalog`` does not replace it by the folder)."""
        if self.type == FILESYSTEM:
            return {}
        options = {k: v for k, v in self.options.items() if k != self.warehouse_key}
        options[METASTORE_KEY] = self.type
        return options

    def with_paths_under(self, base: str,
                         environ: Optional[Mapping[str, str]] = None) -> "PaimonCatalog":
        """The catalog with its files found from ``base`` (the dbt project), as a relative
        warehouse is, so that dbt run from another folder finds the same catalog: a relative
        ``jdbc:sqlite:<file>``; a Hive catalog's hive-site.xml (``hive-conf-dir``, else
        $HIVE_CONF_DIR, as Paimon's HiveCatalog.createHiveConf) read for what ``uri`` and
        ``warehouse`` leave open."""
        uri = self.uri or ""
        prefix = "jdbc:sqlite:"
        if uri.startswith(prefix):
            path = uri[len(prefix):]
            if path.startswith("file:") or os.path.isabs(path):
                return self
            resolved = os.path.normpath(os.path.join(base, path))
            return PaimonCatalog(self.type, {**self.options, URI_KEY: prefix + resolved})
        if self.type != HIVE:
            return self
        folder = self.options.get(HIVE_CONF_DIR_KEY) or \
            (os.environ if environ is None else environ).get(HIVE_CONF_DIR_ENV, "").strip()
        if not folder:
            return self
        site = read_hive_site(os.path.normpath(os.path.join(base, folder)))
        if site.get(HIVE_SITE_SASL, "false").strip().lower() == "true":
            raise CatalogConfigError(
                f"catalog type 'hive': {folder}/{HIVE_SITE_FILE} sets {HIVE_SITE_SASL}: a "
                "Kerberos-secured metastore, which dbt-paimon cannot reach (its Thrift client "
                "has no SASL). Use a metastore endpoint without Kerberos.")
        options = {k: v for k, v in self.options.items() if k != HIVE_CONF_DIR_KEY}
        uri = options.get(URI_KEY) or site.get(HIVE_SITE_URIS, "").strip()
        if not uri:
            raise CatalogConfigError(
                f"catalog type 'hive': neither `uri` nor {HIVE_SITE_URIS} in "
                f"{folder}/{HIVE_SITE_FILE} names the metastore; set `uri`, e.g. "
                "thrift://metastore.example.com:9083")
        hive_metastore_addresses(uri)
        options[URI_KEY] = uri
        return PaimonCatalog(self.type, options,
                             site.get(HIVE_SITE_WAREHOUSE, "").strip() or None)


def read_hive_site(folder: str) -> Dict[str, str]:
    """The properties of ``<folder>/hive-site.xml`` (Hadoop's configuration format); a missing
    or unreadable file is an error, as in Paimon."""
    import xml.etree.ElementTree as ElementTree

    path = os.path.join(folder, HIVE_SITE_FILE)
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        raise CatalogConfigError(
            f"catalog type 'hive': cannot read {path} ({exc}); `hive-conf-dir` (or "
            f"${HIVE_CONF_DIR_ENV}) must name a folder with a {HIVE_SITE_FILE}") from None
    properties = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            properties[name.strip()] = (value or "").strip()
    return properties


@dataclass(frozen=True)
class CatalogRoute:
    """A Paimon catalog other than the profile's that holds some of a project's databases (a
    catalogs.yml integration, catalog_integrations.py): where its tables' files live and the
    options pypaimon's catalog takes (``metastore`` names its kind)."""

    name: str
    warehouse: str
    options: Dict[str, str]


def parse_catalog(value: Any) -> PaimonCatalog:
    """The profile's ``catalog`` value checked; CatalogConfigError names what is wrong."""
    if value is None:
        return PaimonCatalog()
    if not isinstance(value, Mapping):
        raise CatalogConfigError(
            f"catalog must be a mapping such as {{type: jdbc, uri: 'jdbc:sqlite:catalog.db'}}, "
            f"got {value!r}")
    options = {str(k): v for k, v in value.items()}
    if METASTORE_KEY in options:
        raise CatalogConfigError(
            f"catalog: name the catalog kind with `type` (one of {', '.join(CATALOG_TYPES)}), "
            f"not `{METASTORE_KEY}`")
    kind = str(options.pop("type", FILESYSTEM)).strip().lower()
    if kind not in CATALOG_TYPES:
        raise CatalogConfigError(
            f"catalog type '{kind}' is not a Paimon catalog dbt-paimon supports. Expected one "
            f"of: {', '.join(CATALOG_TYPES)}.")
    refusals = {HIVE: HIVE_REFUSED, REST: REST_REFUSED}.get(kind, {})
    refused = sorted(k for k in options if k in refusals)
    if refused:
        raise CatalogConfigError(
            f"catalog type '{kind}' option {refused[0]} is not supported: "
            f"{refusals[refused[0]]}")
    accepted = {JDBC: JDBC_OPTIONS, HIVE: HIVE_OPTIONS, REST: REST_OPTIONS}.get(
        kind, FILESYSTEM_OPTIONS)
    prefixes = {JDBC: (JDBC_PROPERTY_PREFIX,), REST: (DLF_PREFIX, HEADER_PREFIX)}.get(kind, ())
    unknown = sorted(k for k in options if k not in accepted and not any(
        k.startswith(prefix) and len(k) > len(prefix) for prefix in prefixes))
    if unknown:
        listed = "; ".join(f"{k}: {doc}" for k, doc in accepted.items())
        raise CatalogConfigError(
            f"catalog type '{kind}' does not take option(s) {', '.join(unknown)}. Accepted: "
            f"{listed}. File-system options (fs.s3.*, fs.oss.*, ...) go in `catalog_options`.")
    strings = {}
    for key, raw in options.items():
        if raw is None or isinstance(raw, (Mapping, list, tuple)):
            raise CatalogConfigError(f"catalog option {key} must be a single value, got {raw!r}")
        strings[key] = str(raw).lower() if isinstance(raw, bool) else str(raw)
    folder_key = WAREHOUSE_PATH_KEY if kind == REST else WAREHOUSE_KEY
    if folder_key in strings and not strings[folder_key].strip():
        raise CatalogConfigError(f"catalog option {folder_key} is empty: name a folder or URI, "
                                 "or leave it out (the profile's warehouse is used)")
    if kind == JDBC:
        _check_jdbc(strings)
    if kind == HIVE:
        _check_hive(strings)
    if kind == REST:
        _check_rest(strings)
    return PaimonCatalog(kind, strings)


def _check_jdbc(options: Dict[str, str]) -> None:
    uri = options.get(URI_KEY, "").strip()
    if not uri:
        raise CatalogConfigError(
            "catalog type 'jdbc' needs `uri`, the catalog database's JDBC URL, e.g. "
            "jdbc:sqlite:paimon_catalog.db (a file, relative to the dbt project) or "
            "jdbc:postgresql://host:5432/paimon")
    if not uri.startswith(JDBC_URL_FORMS):
        raise CatalogConfigError(
            f"catalog uri '{redact_uri(uri)}' is not a JDBC URL pypaimon can open: it must start "
            f"with one of {', '.join(JDBC_URL_FORMS)}")
    if uri.startswith("jdbc:sqlite:"):
        path = uri[len("jdbc:sqlite:"):]
        if not path or path == ":memory:" or "mode=memory" in path:
            raise CatalogConfigError(
                f"catalog uri '{uri}' is an in-memory SQLite database: every connection would "
                "see an empty catalog. Name a file, e.g. jdbc:sqlite:paimon_catalog.db")
    if uri.startswith("jdbc:postgresql:"):
        _check_postgresql(uri, options)
    options[URI_KEY] = uri
    if options.get(CATALOG_KEY_KEY, DEFAULT_CATALOG_KEY).strip() == "":
        raise CatalogConfigError("catalog option catalog-key is empty (default: 'jdbc')")
    _check_lock_options(options)
    if LOCK_KEY_MAX_LENGTH_KEY in options and not options[LOCK_KEY_MAX_LENGTH_KEY].isdigit():
        raise CatalogConfigError(f"catalog option {LOCK_KEY_MAX_LENGTH_KEY} must be a whole "
                                 f"number, got '{options[LOCK_KEY_MAX_LENGTH_KEY]}'")


def _check_lock_options(options: Dict[str, str]) -> None:
    if LOCK_ENABLED_KEY in options:
        value = options[LOCK_ENABLED_KEY].strip().lower()
        if value not in ("true", "false"):
            raise CatalogConfigError(
                f"catalog option lock.enabled must be true or false, got "
                f"'{options[LOCK_ENABLED_KEY]}'")
        options[LOCK_ENABLED_KEY] = value
    for key in (LOCK_CHECK_MAX_SLEEP_KEY, LOCK_ACQUIRE_TIMEOUT_KEY):
        if key in options:
            duration_millis(options[key], key)


def _check_hive(options: Dict[str, str]) -> None:
    """``uri`` as Hive's ``hive.metastore.uris``: thrift://host:port, comma-separated; without
    it, ``hive-conf-dir`` (or $HIVE_CONF_DIR), whose hive-site.xml names the metastore
    (PaimonCatalog.with_paths_under reads it)."""
    uri = options.get(URI_KEY, "").strip()
    if HIVE_CONF_DIR_KEY in options and not options[HIVE_CONF_DIR_KEY].strip():
        raise CatalogConfigError("catalog option hive-conf-dir is empty: name the folder of "
                                 "hive-site.xml, or leave it out")
    if not uri:
        if options.get(HIVE_CONF_DIR_KEY) or os.environ.get(HIVE_CONF_DIR_ENV, "").strip():
            options.pop(URI_KEY, None)
            _check_lock_options(options)
            return
        raise CatalogConfigError(
            "catalog type 'hive' needs `uri`, the Hive Metastore's Thrift URI, e.g. "
            "thrift://metastore.example.com:9083 (or `hive-conf-dir`, a folder whose "
            "hive-site.xml names it)")
    hive_metastore_addresses(uri)
    options[URI_KEY] = uri
    _check_lock_options(options)


def _check_rest(options: Dict[str, str]) -> None:
    """``uri`` an http(s) address, ``warehouse`` the catalog's name, ``token.provider`` one
    pypaimon knows with what it needs (pypaimon's RESTApi and AuthProviderFactory would fail
    later, on the first request, or send no credentials at all)."""
    uri = options.get(URI_KEY, "").strip()
    example = "http://rest-catalog.example.com:8080"
    if not uri:
        raise CatalogConfigError(
            f"catalog type 'rest' needs `uri`, the REST catalog server's address, e.g. {example}")
    parsed = urlparse(uri)
    try:
        parsed.port  # urlparse checks the port when asked for it
    except ValueError:
        raise CatalogConfigError(
            f"catalog uri '{uri}': the port is not a number 0-65535 (e.g. {example})") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname or "@" in parsed.netloc \
            or parsed.query or parsed.fragment:
        raise CatalogConfigError(
            f"catalog uri '{uri}' is not a REST catalog server's address: write "
            f"http(s)://host:port with an optional path, e.g. {example} (credentials go in "
            "`token`, not in the URI)")
    options[URI_KEY] = uri.rstrip("/")
    if not options.get(WAREHOUSE_KEY, "").strip():
        raise CatalogConfigError(
            "catalog type 'rest' needs `warehouse`: the name the REST catalog server knows the "
            "catalog by (a managed service shows it as the catalog's name). The folder or URI of "
            "the tables' files is `warehouse-path` (default: the profile's `warehouse`).")
    provider = options.get(TOKEN_PROVIDER_KEY, "").strip().lower()
    if not provider:
        raise CatalogConfigError(
            "catalog type 'rest' needs `token.provider`: `bear` (with `token`, the bearer token "
            "the server gave you) or `dlf` (Alibaba Cloud DLF, with its dlf.* options)")
    if provider not in REST_TOKEN_PROVIDERS:
        raise CatalogConfigError(
            f"catalog option token.provider '{options[TOKEN_PROVIDER_KEY]}' is not one pypaimon "
            f"knows: {', '.join(REST_TOKEN_PROVIDERS)}")
    options[TOKEN_PROVIDER_KEY] = provider
    if provider == "bear" and not options.get(TOKEN_KEY, "").strip():
        raise CatalogConfigError(
            "catalog option token.provider 'bear' needs `token`, the bearer token the REST "
            "catalog server accepts (e.g. \"{{ env_var('PAIMON_REST_TOKEN') }}\")")
    if provider == "dlf" and TOKEN_KEY in options:
        raise CatalogConfigError(
            "catalog option token is the bearer token of token.provider 'bear'; DLF signs its "
            "requests with its dlf.* options (dlf.access-key-id, dlf.access-key-secret, ...)")


def hive_metastore_addresses(uri: str) -> List[Tuple[str, int]]:
    """(host, port) of each ``thrift://host:port`` of a Hive ``uri``, in order."""
    addresses = []
    for part in (p.strip() for p in uri.split(",")):
        parsed = urlparse(part)
        try:
            port = parsed.port
        except ValueError:
            port = None
        if parsed.scheme != "thrift" or not parsed.hostname or port is None or \
                parsed.path not in ("", "/") or parsed.query or "@" in parsed.netloc:
            raise CatalogConfigError(
                f"catalog uri '{uri}': '{part}' is not a Hive Metastore address; write "
                "thrift://host:port (e.g. thrift://metastore.example.com:9083), several "
                "separated by commas")
        addresses.append((parsed.hostname, port))
    return addresses


def _check_postgresql(uri: str, options: Dict[str, str]) -> None:
    """A PostgreSQL URL in the one form pypaimon reads as Java's driver does:
    ``jdbc:postgresql://host[:port]/database[?property=value&...]``, one host, the user and
    password as ``jdbc.user``/``jdbc.password`` or ``?user=``/``&password=``, not both with
    different values (pypaimon's ``_connect_postgresql`` lets the URL's win)."""
    form = "jdbc:postgresql://host:5432/database"
    shown = redact_uri(uri)
    if not uri.startswith("jdbc:postgresql://"):
        raise CatalogConfigError(
            f"catalog uri '{shown}': name the server and the database, as in {form} (pypaimon "
            "does not read the short forms jdbc:postgresql:database and jdbc:postgresql:/ as "
            "Java's driver does: it would try a local Unix socket)")
    parsed = urlparse(uri[len("jdbc:"):])
    if "@" in parsed.netloc:
        raise CatalogConfigError(
            f"catalog uri '{shown}': pypaimon ignores a user:password@ in the URL; give them "
            "as the catalog options jdbc.user and jdbc.password")
    if "," in parsed.netloc:
        raise CatalogConfigError(
            f"catalog uri '{shown}' names several hosts: pypaimon connects to one; name the "
            f"primary server, as in {form}")
    try:
        parsed.port  # urlparse checks the port when asked for it
    except ValueError:
        raise CatalogConfigError(
            f"catalog uri '{shown}': the port is not a number 0-65535 ({form})") from None
    if not parsed.hostname:
        raise CatalogConfigError(f"catalog uri '{shown}' names no host ({form})")
    if not parsed.path.strip("/"):
        raise CatalogConfigError(f"catalog uri '{shown}' names no database ({form})")
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    for name in ("user", "password"):
        key = JDBC_PROPERTY_PREFIX + name
        if name in query and key in options and query[name] != options[key]:
            raise CatalogConfigError(
                f"catalog: the uri's ?{name}= and the option {key} differ; give the {name} "
                "once (the option keeps it out of the URL, which appears in messages)")


def duration_millis(text: str, key: str = "duration") -> int:
    """A Paimon duration ('8 s', '500ms', '8 min', a bare number of milliseconds)."""
    match = _DURATION.match(str(text).lower())
    if not match or match.group(2) not in _DURATION_UNITS:
        raise CatalogConfigError(
            f"catalog option {key}: '{text}' is not a duration such as '500 ms', '8 s', "
            "'8 min' or '1 h'")
    return int(match.group(1)) * _DURATION_UNITS[match.group(2)]


def redact_uri(uri: str) -> str:
    """A JDBC URL fit for messages and logs: a password in it replaced by ***."""
    uri = re.sub(r"(?i)(password=)[^&;]*", r"\1***", uri)
    try:
        parsed = urlparse(uri[len("jdbc:"):] if uri.startswith("jdbc:") else uri)
    except ValueError:
        return uri
    if parsed.password:
        uri = uri.replace(f":{parsed.password}@", ":***@", 1)
    return uri


def same_location(a: str, b: str) -> bool:
    """Two spellings of one folder: ``file:/x``, ``file:///x`` and ``/x`` are the same."""
    def normal(location: str) -> str:
        parsed = urlparse(str(location))
        if parsed.scheme in ("", "file"):
            return os.path.normpath(parsed.path)
        return str(location).rstrip("/")

    return normal(a) == normal(b)
