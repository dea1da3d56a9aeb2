"""The profile's cluster settings, checked before Spark starts (no Spark, no cluster here)."""

import os
import sys

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.environments import spark_conf
from dbt.adapters.paimon.credentials import PaimonCredentials


def credentials(**profile):
    return PaimonCredentials.from_dict({"schema": "analytics", **profile})


@pytest.mark.parametrize("master", [
    "local[*]", "local[2]", "local[*,3]", "local-cluster[2,1,1024]", "spark://127.0.0.1:7077",
    "spark://m1:7077,m2:7077", "yarn", "k8s://https://k8s.example.com:443",
])
def test_master_urls_spark_accepts(master):
    assert credentials(spark_master=master).spark_master == master


@pytest.mark.parametrize("master, message", [
    ("sc://host:15002", "Spark Connect URL"),
    ("spark://host", "not a Spark master URL"),
    ("127.0.0.1:7077", "not a Spark master URL"),
    ("", "not a Spark master URL"),
])
def test_other_master_urls_are_refused_with_the_accepted_forms(master, message):
    with pytest.raises(DbtRuntimeError, match=message) as error:
        credentials(spark_master=master)
    assert "spark://" in str(error.value)


def test_master_given_twice_is_refused():
    with pytest.raises(DbtRuntimeError, match="sets the Spark master twice"):
        credentials(spark_master="yarn", spark_conf={"spark.master": "local[2]"})


def test_workers_python_from_profile_else_this_interpreter(monkeypatch):
    # set_worker_python writes os.environ itself: monkeypatch setenv first, so that the
    # variable is restored after the test (later tests start Spark workers with it)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.delenv("PYSPARK_PYTHON")
    spark_conf.set_worker_python({})
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    spark_conf.set_worker_python({"spark.pyspark.python": "/opt/venv/bin/python"})
    assert os.environ["PYSPARK_PYTHON"] == "/opt/venv/bin/python"


@pytest.mark.parametrize("master, loopback", [
    ("local[2]", True), ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True),
    ("spark://10.0.0.5:7077", False), ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
    ("yarn", False),
])
def test_loopback_masters(master, loopback):
    assert spark_conf.is_loopback_master(master) is loopback


@pytest.mark.parametrize("warehouse, folder", [
    ("file:///data/lake", "/data/lake"), ("file:/data/lake", "/data/lake"),
    ("file://localhost/data/lake", "/data/lake"), ("/data/lake/", "/data/lake"),
    ("lake", "/project/lake"),
])
def test_file_uri_warehouse_is_its_folder(warehouse, folder):
    creds = credentials(warehouse=warehouse)
    creds.resolve_paths("/project")
    assert creds.warehouse == folder
    assert creds.spark_state_dir == f"{folder}/.spark"


def test_file_uri_with_a_host_is_refused():
    creds = credentials(warehouse="file://data/lake")
    with pytest.raises(DbtRuntimeError, match="file:///data/lake"):
        creds.resolve_paths("/project")


def test_remote_warehouse_keeps_its_uri():
    creds = credentials(warehouse="s3://bucket/lake")
    creds.resolve_paths("/project")
    assert creds.warehouse == "s3://bucket/lake"
    assert creds.spark_state_dir == "/project/.paimon_spark"
