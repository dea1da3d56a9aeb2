"""The embedded environment (``method: session``, the default): Spark runs in this process's
own JVM, started with the settings of ``spark_conf`` and quiet (its progress bar, the JVM's
start-up lines and executors' ERROR logs go to a log file, ``spark_logs``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import jvm_cds, spark_logs, state_folder
from dbt.adapters.paimon.environments.base import (Environment, MetastoreTakenError,
                                                   quiet_query_loggers)
from dbt.adapters.paimon.environments.spark_conf import (default_spark_conf, is_loopback_master,
                                                         set_worker_python, with_profile_conf)


@dataclass
class EmbeddedEnvironment(Environment):
    master: str
    warehouse: str
    state_dir: str  # the session's metastore, spark-warehouse/ and logs
    spark_conf: Dict[str, str] = field(default_factory=dict)
    catalog_options: Dict[str, str] = field(default_factory=dict)

    def _open(self) -> PaimonTableRegistry:
        state_folder.check_usable(self.state_dir)
        conf = with_profile_conf(default_spark_conf(self.master, self.state_dir), self.spark_conf)
        set_worker_python(conf)
        if is_loopback_master(self.master):
            # Spark warns about the host name resolving to loopback; locally that is what we
            # want, and a loopback cluster's executors reach the driver there.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        _free_the_metastore(self.state_dir)
        _refuse_a_connect_servers_metastore(self.state_dir, self.warehouse)
        _wait_for_the_metastore(self.state_dir)
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        if conf.get("spark.sql.catalogImplementation") == "hive":
            builder = builder.enableHiveSupport()
        _launch_jvm(conf, spark_logs.log_path(self.state_dir))
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
        quiet_query_loggers()
        _open_the_metastore_in_background(spark)
        return PaimonTableRegistry(spark, self.warehouse, self.catalog_options)


def _open_the_metastore_in_background(spark: SparkSession) -> None:
    """Open the session's catalog (the Hive client and its Derby metastore: ~3.5 s of a fresh
    session's start on the 2-core machine) in a JVM thread of its own while this thread
    registers the paimon data source (~1.6 s in the JVM): 0.5-0.8 s less of an 11 s start on
    the idle machine; the first statement waits for whichever is left. A failure here (the metastore
    held by another Spark) is the first statement's error, as without this."""
    import threading

    def open_catalog() -> None:
        try:
            spark._jsparkSession.sharedState().externalCatalog()
        except Exception:  # noqa: BLE001 - reported by the first statement that needs it
            pass

    threading.Thread(target=open_catalog, name="dbt-paimon-metastore-open", daemon=True).start()


def _free_the_metastore(state_dir: str) -> None:
    """The warehouse's background daemon (daemon.py) holds its Derby metastore, which admits one
    Spark: stop it unless another dbt command is using it."""
    from dbt.adapters.paimon.server import daemon

    busy = daemon.stop_if_idle(state_dir)
    if busy is not None:
        raise MetastoreTakenError(
            f"The background Spark of this warehouse (pid {busy.get('server_pid')}) is serving "
            f"another dbt command, and its metastore admits one Spark: wait for that command, "
            f"or use the daemon (remove `method: session` / `daemon: false` from the profile, "
            f"or unset DBT_PAIMON_DAEMON=off).")


def _refuse_a_connect_servers_metastore(state_dir: str, warehouse: str) -> None:
    """A Spark Connect server that `dbt-paimon server start` runs on this warehouse holds its
    Derby metastore for as long as it runs: fail at once, naming the server and what to do,
    rather than wait for the metastore (_wait_for_the_metastore) and then fail with Spark's
    error about a metastore held by some other process."""
    from dbt.adapters.paimon.environments import connect_server

    running = connect_server.running_in(state_dir)
    if running:
        port, pid = running[0]
        raise MetastoreTakenError(
            f"A Spark Connect server (`dbt-paimon server start`, pid {pid}) runs on this "
            f"warehouse at sc://127.0.0.1:{port} and holds its metastore, which admits one "
            f"Spark: run this profile through it (`method: connect`, `host: "
            f"sc://127.0.0.1:{port}`), or stop it first (`dbt-paimon server stop --warehouse "
            f"{warehouse} --port {port}`).")


# How long a command waits for the JVM of the one before it to let go of the warehouse's Derby
# metastore: a dbt process's JVM ends a moment after the process (seconds on a loaded machine),
# and `dbt build && dbt run` would otherwise find the metastore taken.
METASTORE_WAIT_SECONDS = 60.0


def _wait_for_the_metastore(state_dir: str, seconds: float = METASTORE_WAIT_SECONDS) -> None:
    """Wait while another JVM holds the Derby metastore under ``state_dir``: Derby admits one,
    which holds an exclusive lock on ``metastore_db/dbex.lck`` (Derby's BaseDataFileFactory:
    FileChannel.tryLock, an fcntl lock on Linux and macOS). After ``seconds`` Spark tries
    anyway and, the lock still held, fails with error_messages' message naming the folder."""
    from pyspark import SparkContext

    if SparkContext._gateway is not None:
        return  # this process's JVM is running already: the lock may be its own
    try:
        import fcntl
    except ImportError:  # no fcntl locks (Windows): Spark tries at once
        return
    import time

    path = os.path.join(state_dir, "metastore_db", "dbex.lck")
    deadline = time.monotonic() + seconds
    while os.path.exists(path):
        with open(path, "a") as handle:
            try:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                if time.monotonic() >= deadline:
                    return
            else:
                fcntl.lockf(handle, fcntl.LOCK_UN)
                return
        time.sleep(0.25)


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
