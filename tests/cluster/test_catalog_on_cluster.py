"""A JDBC catalog on the cluster: a dbt process whose driver runs on the test cluster builds
Paimon tables through Paimon's JDBC catalog (SQLite) with every write in the executors
(`write_path='distributed'`): the catalog's options travel with the tasks, the commits (in the
driver) go through the catalog and its lock, and the catalog lists exactly the models."""
import sqlite3

from conftest import cluster_spark_conf

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.write.write_helpers import read_back, sorted_rows

MODELS = {
    "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2, "
                  "write_path='distributed') }}\n"
                  "select id, cast(id * 10 as int) as amount from range(100)",
    "events.sql": "{{ config(materialized='paimon_append', write_path='distributed') }}\n"
                  "select id, 'e' as kind from range(30)",
    "totals.sql": "{{ config(materialized='paimon_pk', primary_key='one', "
                  "write_path='distributed') }}\n"
                  "select 1 as one, sum(amount) as total, "
                  "(select count(*) from {{ ref('events') }}) as events from {{ ref('orders') }}",
}


def test_models_are_built_through_a_jdbc_catalog_on_the_cluster(spark_cluster, tmp_path):
    warehouse = tmp_path / "warehouse"
    catalog = {"type": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
               "lock.enabled": "true"}
    conf = "".join(f"  {key}: '{value}'\n" for key, value in cluster_spark_conf().items())
    profile = (f"warehouse: {warehouse}\nspark_master: {spark_cluster.master_url}\n"
               f"spark_state_dir: {tmp_path / 'spark'}\n"
               f"spark_conf:\n{conf}"
               "catalog:\n" + "".join(f"  {k}: '{v}'\n" for k, v in catalog.items()))
    root = write_project(tmp_path / "project", "cluster_jdbc", profile, MODELS)
    run = run_dbt_process(root, "run")
    assert run.returncode == 0, run.stdout
    with sqlite3.connect(tmp_path / "catalog.db") as con:
        listed = sorted(con.execute("SELECT table_name FROM paimon_tables"))
    assert listed == [("events",), ("orders",), ("totals",)]
    options = parse_catalog(catalog).pypaimon_options()
    totals = read_back(TableRef(str(warehouse), "cluster_jdbc", "totals", options))
    assert sorted_rows(totals, ["one"]) == [{"one": 1, "total": 49500, "events": 30}]
