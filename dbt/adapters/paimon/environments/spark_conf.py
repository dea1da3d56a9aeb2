"""The Spark settings every dbt-paimon Spark starts with (embedded session and Connect server
alike), and the process-environment traps they handle.

Traps (each cost hours once):
- Python workers use the system interpreter (no pyarrow) unless PYSPARK_PYTHON is set first.
  PySpark reads only that variable (not ``spark.pyspark.python``) and ships its value with every
  Python function: executors and the driver's data-source planner run that path.
- A driver whose host name resolves to another address than a loopback master's is not
  reachable by that master's executors.
- Hive support drops metastore_db/, derby.log and spark-warehouse/ into the current folder
  unless the metastore URL, derby.system.home and spark.sql.warehouse.dir point elsewhere.
"""

from __future__ import annotations

import os
import sys
from typing import Dict

LOG4J_CONFIG = os.path.join(os.path.dirname(__file__), "log4j2.properties")


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
        # Spark Connect keeps a session's plans by their request (relation and plan id), and
        # a pyspark client numbers its plans from 0 in every process: the dbt commands sharing
        # one server session send identical requests for different data (the same query after
        # a commit, a merge of a snapshot id that a rollback reused), which the cache would
        # answer with the plan, file lists included, an earlier command resolved. Off; no
        # effect outside Connect.
        "spark.connect.session.planCache.enabled": "false",
    }


DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


def with_profile_conf(defaults: Dict[str, str], profile: Dict[str, str]) -> Dict[str, str]:
    """The profile's ``spark_conf`` over dbt-paimon's settings, except the driver's JVM options,
    which follow dbt-paimon's instead of replacing them: its Derby home and log configuration
    stay (without them Spark's log lines reach dbt's output and Derby writes into the current
    folder), and a JVM flag the profile repeats wins, the JVM taking the last one."""
    merged = {**defaults, **profile}
    own, theirs = defaults.get(DRIVER_JAVA_OPTIONS), profile.get(DRIVER_JAVA_OPTIONS)
    if own and theirs:
        merged[DRIVER_JAVA_OPTIONS] = f"{own} {theirs}"
    return merged


# Settings a Spark Connect session gets from the client: the server's own defaults may differ
# (a server not started by `dbt-paimon server start`), and these change results (the plan
# cache, which results a repeated request gets).
CONNECT_SESSION_CONF_KEYS = (
    "spark.sql.ansi.enabled",
    "spark.sql.session.timeZone",
    "spark.sql.python.filterPushdown.enabled",
    "spark.sql.execution.arrow.pyspark.enabled",
    "spark.sql.execution.arrow.maxRecordsPerBatch",
    "spark.sql.execution.arrow.maxBytesPerBatch",
    "spark.connect.session.planCache.enabled",
)


def connect_session_conf() -> Dict[str, str]:
    """dbt-paimon's values of CONNECT_SESSION_CONF_KEYS: what a client sets on the session it
    joins."""
    return {key: value for key, value in default_spark_conf("", "").items()
            if key in CONNECT_SESSION_CONF_KEYS}


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
