import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    """A plain local session with the `paimon` data source registered (getOrCreate: the other
    integration folders' fixtures get the same session in one pytest process)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from dbt.adapters.paimon.datasource.source import PaimonDataSource

    session = (SparkSession.builder.master("local[2]")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(PaimonDataSource)
    return session
