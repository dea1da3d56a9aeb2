"""The one Spark session of a dbt process: embedded (``start_session``, method session) or a
Spark Connect session (``start_connect_session``, method connect), started with settings that keep
Spark quiet and tidy. Every other module takes the session it is given: none touches the JVM
gateway, so the same code serves both kinds.

Traps handled here (each cost hours once):
- Python workers use the system interpreter (no pyarrow) unless PYSPARK_PYTHON is set first.
  PySpark reads only that variable (not ``spark.pyspark.python``) and ships its value with every
  Python function: executors and the driver's data-source planner run that path.
- A driver whose host name resolves to another address than a loopback master's is not
  reachable by that master's executors.
- Spark's progress bar, the JVM's start-up lines and executors' ERROR logs spill into dbt's
  output (``spark_logs`` sends them to a log file).
- Hive support drops metastore_db/, derby.log and spark-warehouse/ into the current folder
  unless the metastore URL, derby.system.home and spark.sql.warehouse.dir point elsewhere.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Dict, Optional

from pyspark.sql import SparkSession

from dbt.adapters.paimon import connect_client, jvm_cds, process_gc, spark_logs, worker_warm_up
from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.datasource.spark_env import is_connect

LOG4J_CONFIG = os.path.join(os.path.dirname(__file__), "log4j2.properties")
_lock = threading.Lock()
_registry: Optional[PaimonTableRegistry] = None
_warm_up_started = False


def default_spark_conf(master: str, state_dir: str) -> Dict[str, str]:
    derby_home = os.path.join(state_dir, "derby")
    java_opts = (
        f"-Dderby.system.home={derby_home} "
        f"-Dderby.stream.error.file={os.path.join(state_dir, 'derby.log')} "
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG}"
    )
    return {
        "spark.master": master,
        "spark.app.name": "dbt-paimon",
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": os.path.join(state_dir, "spark-warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={os.path.join(state_dir, 'metastore_db')};create=true"
        ),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.sql.python.filterPushdown.enabled": "true",
        # dbt-spark turns ANSI off for v3/v4 compatibility of its macros.
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # Rows reach the paimon data source's writers (and Python models' Arrow UDFs) in Arrow
        # batches; Spark's default of 10,000 rows made a 5M-row append cost 500 round trips per
        # task (benchmarks/append_throughput.py: 100,000 rows per batch is ~20% faster). The
        # byte limit keeps wide rows from making huge batches.
        "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
        "spark.sql.execution.arrow.maxBytesPerBatch": str(64 * 1024 * 1024),
    }


# Settings a Spark Connect session gets from the client: the server's own defaults may differ
# (a server not started by `dbt-paimon server start`), and these change results.
CONNECT_SESSION_CONF_KEYS = (
    "spark.sql.ansi.enabled",
    "spark.sql.session.timeZone",
    "spark.sql.python.filterPushdown.enabled",
    "spark.sql.execution.arrow.pyspark.enabled",
    "spark.sql.execution.arrow.maxRecordsPerBatch",
    "spark.sql.execution.arrow.maxBytesPerBatch",
)


def set_worker_python(conf: Dict[str, str]) -> None:
    """The interpreter of Spark's Python workers: ``spark.pyspark.python`` from the profile (on a
    cluster, a Python with dbt-paimon installed at that path on every worker and the driver),
    else a PYSPARK_PYTHON already set, else this one."""
    if "spark.pyspark.python" in conf:
        os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def is_loopback_master(master: str) -> bool:
    """local[...] or a cluster whose master(s) all listen on this machine's loopback."""
    if master.startswith("local"):
        return True
    if not master.startswith("spark://"):
        return False
    hosts = [address.rsplit(":", 1)[0] for address in master[len("spark://"):].split(",")]
    return all(host in ("127.0.0.1", "localhost", "[::1]") for host in hosts)


def start_session(
    master: str,
    warehouse: str,
    state_dir: str,
    spark_conf: Optional[Dict[str, str]] = None,
    catalog_options: Optional[Dict[str, str]] = None,
) -> PaimonTableRegistry:
    """Start (once per process) the Spark session and expose the warehouse's Paimon tables in it."""
    global _registry
    with _lock:
        if _registry is not None:
            if _registry.warehouse != warehouse:
                raise RuntimeError(
                    f"This process already serves the Paimon warehouse {_registry.warehouse}; "
                    f"one dbt process uses one warehouse (asked for {warehouse})."
                )
            return _registry
        conf = default_spark_conf(master, state_dir)
        conf.update(spark_conf or {})
        set_worker_python(conf)
        if is_loopback_master(master):
            # Spark warns about the host name resolving to loopback; locally that is what we
            # want, and a loopback cluster's executors reach the driver there.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.makedirs(state_dir, exist_ok=True)
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        if conf.get("spark.sql.catalogImplementation") == "hive":
            builder = builder.enableHiveSupport()
        _launch_jvm(conf, spark_logs.log_path(state_dir))
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
        _quiet_query_loggers()
        registry = PaimonTableRegistry(spark, warehouse, catalog_options or {})
        _registry = registry
        process_gc.freeze_long_lived()  # the Spark client's objects live as long as the process
        return registry


def _launch_jvm(conf: Dict[str, str], log_path: str) -> None:
    """Start the driver JVM with the class-data-sharing archive (jvm_cds), or writing it;
    again without it if the JVM does not start with it. Its output (and its Python workers')
    goes to a log file, not dbt's terminal."""
    from pyspark import SparkContext

    cds = jvm_cds.plan()
    if cds.java_options:
        options = f"{conf.get('spark.driver.extraJavaOptions', '')} {cds.java_options}".strip()
        try:
            spark_logs.launch_jvm({**conf, "spark.driver.extraJavaOptions": options}, log_path)
        except spark_logs.JvmStartError:
            cds.discard()
        else:
            gateway = SparkContext._gateway
            cds.jvm_started(getattr(getattr(gateway, "proc", None), "pid", None))
            return
    spark_logs.launch_jvm(conf, log_path)


def start_connect_session(
    url: connect_client.ConnectUrl,
    warehouse: Optional[str],
    spark_conf: Optional[Dict[str, str]] = None,
    catalog_options: Optional[Dict[str, str]] = None,
) -> PaimonTableRegistry:
    """Join (once per process) the shared session of the Spark Connect server at ``url`` and
    expose the warehouse's Paimon tables in it. ``warehouse`` None: the server's own.
    Raises connect_client.ConnectSetupError with the fix when the server cannot serve us."""
    global _registry
    with _lock:
        if _registry is not None:
            if warehouse is not None and _registry.warehouse != warehouse:
                raise RuntimeError(
                    f"This process already serves the Paimon warehouse {_registry.warehouse}; "
                    f"one dbt process uses one warehouse (asked for {warehouse}).")
            return _registry
        connect_client.check_reachable(url, warehouse)
        session_conf = {key: value for key, value in default_spark_conf("", "").items()
                        if key in CONNECT_SESSION_CONF_KEYS}
        session_conf.update(spark_conf or {})
        spark, session_url = _join_shared_session(url, session_conf)
        served = spark.conf.get(connect_client.WAREHOUSE_CONF, None)
        if warehouse is None:
            if served is None:
                raise connect_client.ConnectSetupError(
                    f"The Spark Connect server at {url.redacted} was not started by "
                    "`dbt-paimon server start`, so it names no Paimon warehouse: set "
                    "`warehouse` in the profile.")
            warehouse = served
        elif served is not None and os.path.normpath(served) != os.path.normpath(warehouse):
            raise connect_client.ConnectSetupError(
                f"The Spark Connect server at {url.redacted} serves the Paimon warehouse "
                f"{served}, the profile names {warehouse}: its metastore belongs to the "
                "server's warehouse. Point the profile at that warehouse (or drop `warehouse` "
                "from it), or start a server for this warehouse on another port "
                f"(`{connect_client.start_command(warehouse, url.port + 1)}`).")
        connect_client.check_server(spark, url)
        _quiet_query_loggers()
        # code that asks pyspark for "the" session (pandas-on-Spark in Python models) finds the
        # dbt session: the default session of this URL
        os.environ["SPARK_REMOTE"] = str(session_url)
        registry = PaimonTableRegistry(spark, warehouse, catalog_options or {})
        _registry = registry
        process_gc.freeze_long_lived()  # the Spark client's objects live as long as the process
        return registry


def _join_shared_session(url: connect_client.ConnectUrl, session_conf: Dict[str, str]):
    """The server's shared dbt-paimon session (connect_client's docstring says why shared),
    or the URL's own ``session_id`` when it names one; (session, its URL)."""
    try:
        import pyspark.sql.connect.session  # noqa: F401 - needs pyspark[connect]'s libraries
    except ImportError as exc:
        raise connect_client.ConnectSetupError(
            f"method 'connect' needs Spark Connect's client libraries ({exc}): "
            "pip install 'pyspark[connect]'") from exc
    generations = ([None] if url.param("session_id")
                   else range(connect_client.MAX_SESSION_GENERATIONS))
    last_error: Optional[BaseException] = None
    for generation in generations:
        target = url if generation is None else url.with_params(
            session_id=connect_client.shared_session_id(generation))
        # through pyspark.sql's builder: it switches pyspark.sql.functions to Connect mode
        builder = SparkSession.builder.remote(str(target))
        for key, value in session_conf.items():
            builder = builder.config(key, value)
        try:
            spark = builder.create()
            spark.conf.get(connect_client.WAREHOUSE_CONF, None)  # the session is usable
            return spark, target
        except Exception as exc:  # noqa: BLE001 - classified below
            last_error = exc
            if not connect_client.is_session_closed(exc):
                raise connect_client.ConnectSetupError(
                    f"The Spark Connect server at {url.redacted} refused the dbt session: "
                    f"{_first_line(exc)}") from None
    raise connect_client.ConnectSetupError(
        f"The Spark Connect server at {url.redacted} has closed all of dbt-paimon's shared "
        f"sessions ({_first_line(last_error)}); restart it.")


def _first_line(exc: Optional[BaseException]) -> str:
    return str(exc).strip().splitlines()[0] if exc is not None and str(exc).strip() else repr(exc)


def _quiet_query_loggers() -> None:
    # PySpark logs every failed query to stderr as a JSON record with the Java stack trace
    # (its own handler, not log4j); dbt reports the error already.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def warm_up_python_workers_once() -> None:
    """Start Spark's Python processes in the background (``worker_warm_up``), once per session.
    Called after the first registry sync: started with the session, the warm-up competed with
    the JVM's own start-up (Hive metastore) on a 2-core machine."""
    global _warm_up_started
    with _lock:
        if _warm_up_started or _registry is None:
            return
        if is_connect(_registry.spark):
            return  # the server's shared session keeps its Python processes warm
        _warm_up_started = True
        worker_warm_up.start_in_background(_registry.spark)


def current_registry() -> PaimonTableRegistry:
    if _registry is None:
        raise RuntimeError("The dbt-paimon Spark session has not been started yet.")
    return _registry
