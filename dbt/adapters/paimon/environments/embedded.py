"""The embedded environment (``method: session``, the default): Spark runs in this process's
own JVM, started with the settings of ``spark_conf`` and quiet (its progress bar, the JVM's
start-up lines and executors' ERROR logs go to a log file, ``spark_logs``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import jvm_cds, spark_logs
from dbt.adapters.paimon.environments.base import Environment, quiet_query_loggers
from dbt.adapters.paimon.environments.spark_conf import (default_spark_conf, is_loopback_master,
                                                         set_worker_python)


@dataclass
class EmbeddedEnvironment(Environment):
    master: str
    warehouse: str
    state_dir: str  # the session's metastore, spark-warehouse/ and logs
    spark_conf: Dict[str, str] = field(default_factory=dict)
    catalog_options: Dict[str, str] = field(default_factory=dict)

    def _open(self) -> PaimonTableRegistry:
        conf = default_spark_conf(self.master, self.state_dir)
        conf.update(self.spark_conf)
        set_worker_python(conf)
        if is_loopback_master(self.master):
            # Spark warns about the host name resolving to loopback; locally that is what we
            # want, and a loopback cluster's executors reach the driver there.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.makedirs(self.state_dir, exist_ok=True)
        _free_the_metastore(self.state_dir)
        builder = SparkSession.builder
        for key, value in conf.items():
            builder = builder.config(key, value)
        if conf.get("spark.sql.catalogImplementation") == "hive":
            builder = builder.enableHiveSupport()
        _launch_jvm(conf, spark_logs.log_path(self.state_dir))
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(conf.get("spark.log.level", "ERROR"))
        quiet_query_loggers()
        return PaimonTableRegistry(spark, self.warehouse, self.catalog_options)


def _free_the_metastore(state_dir: str) -> None:
    """The warehouse's background daemon (daemon.py) holds its Derby metastore, which admits one
    Spark: stop it unless another dbt command is using it."""
    from dbt.adapters.paimon.environments import daemon

    busy = daemon.stop_if_idle(state_dir)
    if busy is not None:
        raise RuntimeError(
            f"The background Spark of this warehouse (pid {busy.get('server_pid')}) is serving "
            f"another dbt command, and its metastore admits one Spark: wait for that command, "
            f"or use the daemon (remove `method: session` / `daemon: false` from the profile, "
            f"or unset DBT_PAIMON_DAEMON=off).")


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
