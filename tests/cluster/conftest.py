"""tests/cluster: dbt-paimon against a Spark standalone cluster (master + 2 workers on 127.0.0.1).

Run in their own pytest process (`make test` does): a process has one Spark session, and here
it is a driver of the cluster instead of local mode. The cluster starts once per process, when
the first test needs it, and is stopped (every daemon, executor and Python worker) at the end.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from standalone import StandaloneCluster  # noqa: E402

from tests import process_ledger  # noqa: E402

# Each worker offers 2 one-core executor slots and each application takes at most 2 cores: the
# test process's own session (one executor per worker) and the sample project's dbt process
# (another one per worker) run side by side instead of one waiting for the other's cores.
WORKER_CORES = 2
WORKER_MEMORY = "2g"


def cluster_spark_conf() -> dict:
    """Spark settings of an application on the test cluster (the driver binds to loopback by
    itself: environments/spark_conf.py does that for a loopback master)."""
    return {
        "spark.executor.cores": "1",
        "spark.cores.max": "2",
        "spark.executor.memory": "512m",
        "spark.sql.shuffle.partitions": "4",
    }


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    cluster = StandaloneCluster(str(tmp_path_factory.mktemp("spark-cluster")), workers=2,
                                cores=WORKER_CORES, memory=WORKER_MEMORY)
    with process_ledger.server_start("spark-cluster"):
        cluster.start()
    try:
        yield cluster
        _stop_driver()
    finally:
        cluster.stop()


def _stop_driver() -> None:
    """Stop this process's Spark session before its cluster goes away (else the driver logs
    lost executors while pytest exits)."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()


# Overrides tests/conftest.py: the dbt project's profile points at the cluster, and names the
# warehouse by its file:// URI (as for any other file system pypaimon supports).
@pytest.fixture(scope="session")
def dbt_profile_target(spark_cluster, paimon_warehouse):
    return {
        "type": "paimon",
        "threads": 1,
        "warehouse": f"file://{paimon_warehouse}",
        "spark_master": spark_cluster.master_url,
        "spark_conf": cluster_spark_conf(),
    }
