"""Profile settings of a ``type: paimon`` target.

A minimal profile is ``{type: paimon, schema: analytics}``: the warehouse defaults to
``paimon_warehouse/`` inside the dbt project and Spark runs embedded (``local[*]``).
``method: connect`` with ``host: sc://host:port`` runs Spark in a Spark Connect server instead
(see environments/connect_client.py and docs/connect.md). ``catalog: {type: jdbc, uri: ...}``
or ``catalog: {type: hive, uri: thrift://...}`` keeps the list of tables in Paimon's JDBC
catalog or a Hive Metastore instead of the warehouse's folders (catalog/config.py,
docs/catalogs.md).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from dbt.adapters.spark.connections import SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.branch_config import branch_name
from dbt.adapters.paimon.catalog.config import (WAREHOUSE_KEY, CatalogConfigError,
                                                PaimonCatalog, parse_catalog)
from dbt.adapters.paimon.environments import connect_client
from dbt.adapters.paimon.environments.locations import (SPARK_STATE_DIRNAME, is_local_path,  # noqa: F401
                                                       resolved_warehouse)

DEFAULT_WAREHOUSE_DIRNAME = "paimon_warehouse"
# Spark's own files (Derby metastore, spark-warehouse/, derby.log) live in this folder under a
# local warehouse. Paimon lists only `<name>.db` folders as databases, so it never sees it.
SESSION_METHOD = "session"  # Spark embedded in the dbt process
CONNECT_METHOD = "connect"  # Spark in a Spark Connect server
DEFAULT_MASTER = "local[*]"
# Master URLs of a classic Spark driver (Spark's own forms; mesos:// left Spark in 4.0).
MASTER_URL_FORMS = (
    ("local, local[N], local[*], local[N,retries]", re.compile(r"local(\[(\*|\d+)(,\d+)?\])?")),
    ("local-cluster[workers,cores,memory MiB]", re.compile(r"local-cluster\[\d+,\d+,\d+\]")),
    ("spark://host:port[,host:port] (standalone)", re.compile(r"spark://[^\s/]+:\d+(,[^\s/]+:\d+)*")),
    ("yarn", re.compile(r"yarn")),
    ("k8s://https://host:port (Kubernetes)", re.compile(r"k8s://\S+")),
)


@dataclass
class PaimonCredentials(SparkCredentials):
    # session (default): Spark runs in the dbt process; connect: in the Spark Connect server
    # named by `host` (sc://host:port[/;token=...]), e.g. one from `dbt-paimon server start`.
    method: str = SESSION_METHOD  # type: ignore[assignment]
    # Folder or URI of the Paimon warehouse (anything pypaimon accepts: a path, file://, s3://,
    # oss://, hdfs://). Relative paths are resolved against the dbt project folder. With method
    # connect it defaults to the server's warehouse.
    warehouse: Optional[str] = None
    # Spark master URL: local[*] embedded by default; spark://host:7077, yarn, k8s://... on a cluster.
    spark_master: str = DEFAULT_MASTER
    # Free-form Spark settings applied when the session starts (they win over our defaults).
    spark_conf: Dict[str, str] = field(default_factory=dict)
    # Where Spark keeps its metastore and scratch files. Default: <warehouse>/.spark for a local
    # warehouse, <project>/.paimon_spark for a remote one (Derby needs a local folder).
    spark_state_dir: Optional[str] = None
    # Options passed to pypaimon's catalog (e.g. fs.s3.accessKeyId for an S3 warehouse).
    catalog_options: Dict[str, str] = field(default_factory=dict)
    # The Paimon catalog that says which tables exist, with Paimon's option names:
    # {type: filesystem} (the default: the warehouse's folders) or {type: jdbc, uri:
    # jdbc:sqlite:<file> | jdbc:postgresql://..., jdbc.user, jdbc.password, catalog-key,
    # lock.enabled, warehouse, ...} or {type: hive, uri: thrift://host:9083, lock.enabled, ...}
    # or {type: rest, uri: http://host:port, warehouse: <the server's catalog name>,
    # token.provider: bear, token: ...}. Its `warehouse` is the profile's warehouse, except a
    # REST catalog's (a name on its server; its `warehouse-path` is the profile's warehouse).
    catalog: Optional[Dict[str, Any]] = None
    # The default profile (no `method`) runs Spark in a background daemon that the first
    # interactive command starts and later commands join (server/daemon.py,
    # docs/connect.md); daemon: false (or method: session) keeps Spark in the dbt process,
    # daemon: true uses the daemon also without a terminal or in CI.
    daemon: Optional[bool] = None
    # Minutes without a dbt command after which the daemon stops (default 60).
    daemon_idle_minutes: Optional[float] = None
    # The Paimon branch every table of an invocation reads and writes (write-audit-publish,
    # docs/tags_and_rollback.md); `--vars '{paimon_branch: ...}'` and a node's paimon_branch
    # config take precedence (branch_config.py). Unset or `main`: main.
    branch: Optional[str] = None

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        if data.get("method") == SESSION_METHOD:
            # an explicit session: Spark in this process, never the background daemon
            if data.get("daemon") is True:
                raise DbtRuntimeError(
                    "The profile sets method: session and daemon: true: method session runs "
                    "Spark in the dbt process. Remove `method` to use the background daemon.")
            data["daemon"] = False
        # Embedded Spark: the user names no host and no connection method.
        data.setdefault("method", SESSION_METHOD)
        if data["method"] == CONNECT_METHOD:
            data.setdefault("host", connect_client.DEFAULT_URL)
        data.setdefault("host", "embedded")
        return data

    def __post_init__(self) -> None:
        if self.method not in (SESSION_METHOD, CONNECT_METHOD):
            raise DbtRuntimeError(
                f"type: paimon supports method '{SESSION_METHOD}' (Spark in the dbt process, "
                f"the default) and '{CONNECT_METHOD}' (a Spark Connect server, host: "
                f"{connect_client.DEFAULT_URL}), not '{self.method}'.")
        super().__post_init__()
        self.spark_conf = {str(k): str(v) for k, v in (self.spark_conf or {}).items()}
        if self.method == CONNECT_METHOD:
            self.connect_url  # checked now, before any connection
            if self.spark_master != DEFAULT_MASTER:
                raise DbtRuntimeError(
                    f"spark_master '{self.spark_master}' applies to method 'session'; with "
                    "method 'connect' the server chose its master when it started "
                    "(`dbt-paimon server start --master ...`). Remove spark_master.")
        else:
            self.spark_master = check_master_url(self.spark_master, self.spark_conf)
        self.catalog_options = {str(k): str(v) for k, v in (self.catalog_options or {}).items()}
        if self.daemon_idle_minutes is not None and not float(self.daemon_idle_minutes) > 0:
            raise DbtRuntimeError(
                f"daemon_idle_minutes must be a number of minutes above 0, got "
                f"{self.daemon_idle_minutes}.")
        self._check_catalog()
        try:
            self.branch = branch_name(self.branch)
        except ValueError as exc:
            raise DbtRuntimeError(f"Profile field branch: {exc}") from None

    def _check_catalog(self) -> None:
        try:
            catalog = parse_catalog(self.catalog)
        except CatalogConfigError as exc:
            raise DbtRuntimeError(f"Profile field catalog: {exc}") from None
        if catalog.warehouse is not None:
            if self.warehouse is not None and self.warehouse != catalog.warehouse:
                raise DbtRuntimeError(
                    f"The profile names the warehouse twice: warehouse '{self.warehouse}' and "
                    f"catalog warehouse '{catalog.warehouse}'. Keep one of them.")
            self.warehouse = catalog.warehouse
        clashing = sorted(set(self.catalog_options) & (
            set(catalog.pypaimon_options()) | {"metastore", "uri", "catalog-key", "lock.enabled"}))
        clashing += sorted(k for k in self.catalog_options if k.startswith("jdbc."))
        if clashing:
            raise DbtRuntimeError(
                f"catalog_options {', '.join(clashing)} configure the Paimon catalog: put them "
                f"under the profile's `catalog:` (e.g. catalog: {{type: jdbc, uri: ...}}); "
                f"catalog_options are file-system options (fs.s3.*, fs.oss.*, ...).")
        self._paimon_catalog = catalog

    @property
    def paimon_catalog(self) -> PaimonCatalog:
        """The checked ``catalog`` (filesystem when the profile names none)."""
        return self._paimon_catalog

    @property
    def catalog_type(self) -> str:
        return self._paimon_catalog.type

    @property
    def pypaimon_catalog_options(self) -> Dict[str, str]:
        """Everything pypaimon's catalog needs besides the warehouse: the file-system options
        and, for a JDBC catalog, ``metastore: jdbc`` with its options."""
        return {**self.catalog_options, **self._paimon_catalog.pypaimon_options()}

    @property
    def type(self) -> str:
        return "paimon"

    @property
    def is_connect(self) -> bool:
        return self.method == CONNECT_METHOD

    @property
    def connect_url(self) -> connect_client.ConnectUrl:
        """The Spark Connect server of method connect, with the profile's token/use_ssl."""
        try:
            return connect_client.parse_connect_url(self.host or "", self.token, self.use_ssl)
        except ValueError as exc:
            raise DbtRuntimeError(str(exc)) from None

    @property
    def unique_field(self) -> str:
        return self.warehouse or DEFAULT_WAREHOUSE_DIRNAME

    def _connection_keys(self) -> Tuple[str, ...]:
        if self.is_connect:
            return ("method", "host", "schema", "warehouse", "catalog_type", "branch")
        return ("schema", "warehouse", "catalog_type", "branch", "spark_master", "spark_state_dir")

    def resolve_paths(self, project_root: Optional[str]) -> None:
        """Make ``warehouse`` and ``spark_state_dir`` absolute, relative to the dbt project."""
        base = os.path.abspath(project_root or os.getcwd())
        try:
            catalog = self._paimon_catalog.with_paths_under(base)
        except CatalogConfigError as exc:
            raise DbtRuntimeError(f"Profile field catalog: {exc}") from None
        if catalog is not self._paimon_catalog:
            self._paimon_catalog = catalog
            self.catalog = {"type": catalog.type, **catalog.options}
        if self.is_connect and self.warehouse is None:
            return  # the server's warehouse (connect_client.WAREHOUSE_CONF), known once connected
        # a Hive catalog's hive-site.xml names one when neither the profile nor `catalog` does
        warehouse = resolved_warehouse(
            self.warehouse or catalog.site_warehouse or DEFAULT_WAREHOUSE_DIRNAME, base)
        self.warehouse = warehouse
        if self.catalog and self._paimon_catalog.warehouse is not None:
            self.catalog = {**self.catalog, self._paimon_catalog.warehouse_key: warehouse}
        if self.spark_state_dir is None:
            if is_local_path(warehouse):
                self.spark_state_dir = os.path.join(warehouse, SPARK_STATE_DIRNAME)
            else:
                self.spark_state_dir = os.path.join(base, ".paimon_spark")
        elif not os.path.isabs(self.spark_state_dir):
            self.spark_state_dir = os.path.normpath(os.path.join(base, self.spark_state_dir))


def check_master_url(master: str, spark_conf: Dict[str, str]) -> str:
    """The profile's ``spark_master``, refused early (before Spark starts) when Spark could not
    use it or when ``spark_conf`` names another master."""
    master = str(master or "").strip()
    if master.startswith("sc://"):
        raise DbtRuntimeError(
            f"spark_master '{master}' is a Spark Connect URL: for a Spark Connect server set "
            f"`method: connect` and `host: {master}` (and remove spark_master); spark_master "
            "names the master of the Spark driver embedded in the dbt process (e.g. "
            "spark://host:7077, yarn, k8s://https://host:443).")
    if not any(pattern.fullmatch(master) for _, pattern in MASTER_URL_FORMS):
        forms = "; ".join(form for form, _ in MASTER_URL_FORMS)
        raise DbtRuntimeError(
            f"spark_master '{master}' is not a Spark master URL. Accepted forms: {forms}.")
    conf_master = spark_conf.get("spark.master")
    if conf_master is not None and conf_master != master:
        raise DbtRuntimeError(
            f"The profile sets the Spark master twice: spark_master '{master}' and spark_conf "
            f"spark.master '{conf_master}'. Keep only spark_master.")
    return master
