"""A dbt project whose profile names a Hive Metastore catalog (`catalog: {type: hive, uri:
thrift://...}`, the test process's metastore, tests/hive_metastore_server.py): a source() is a
Paimon table another engine registered in the metastore (registered here by hand, as Paimon
Java's HiveCatalog does), `dbt run` creates and fills paimon_pk models through the metastore
from it, and a downstream model reads one with ref(). A real dbt process."""
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.catalog.test_hive_catalog import (PAIMON_INPUT_FORMAT,
                                                          PAIMON_OUTPUT_FORMAT,
                                                          PAIMON_STORAGE_HANDLER, Hive,
                                                          shop_events_table)
from tests.integration.write.write_helpers import read_back, sorted_rows

SCHEMA = "hive_project"
MODELS = {
    "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
                  "select id, upper(name) as name from {{ source('shop', 'events') }}",
    "orders_total.sql": "{{ config(materialized='paimon_pk', primary_key='one') }}\n"
                        "select 1 as one, count(*) as n from {{ ref('orders') }}",
    "sources.yml": f"version: 2\nsources:\n  - name: shop\n    schema: {SCHEMA}\n"
                   "    tables:\n      - name: events\n",
}


def profile(uri: str) -> str:
    return ("warehouse: paimon_warehouse\n"
            f"catalog:\n  type: hive\n  uri: '{uri}'\n  lock.enabled: true\n"
            "spark_master: 'local[2]'\n"
            "spark_conf:\n  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")


@pytest.fixture(scope="module")
def project(tmp_path_factory, hive_metastore) -> Path:
    root = write_project(tmp_path_factory.mktemp("hive"), SCHEMA, profile(hive_metastore.uri),
                         MODELS)
    # the shop's table, registered as Paimon Java's HiveCatalog registers it (written with
    # pypaimon's own writer: this process's Spark session is the adapter's)
    shop_events_table(Hive(hive_metastore, str(root / "paimon_warehouse"), SCHEMA),
                      {"id": [1, 2, 3], "name": ["a", "b", "c"]})
    return root


def test_models_read_a_registered_source_and_are_registered_in_the_metastore(project,
                                                                             hive_metastore):
    run = run_dbt_process(project, "run")
    assert run.returncode == 0, run.stdout
    assert "Completed successfully" in run.stdout

    warehouse = str(project / "paimon_warehouse")
    hive = Hive(hive_metastore, warehouse, SCHEMA)
    assert sorted(hive.call("get_all_tables", SCHEMA)) == ["events", "orders", "orders_total"]
    for model in ("orders", "orders_total"):
        entry = hive.entry(model)
        assert (entry.sd.inputFormat, entry.sd.outputFormat) == (PAIMON_INPUT_FORMAT,
                                                                 PAIMON_OUTPUT_FORMAT)
        assert entry.parameters["storage_handler"] == PAIMON_STORAGE_HANDLER
        assert entry.sd.location == f"file:{warehouse}/{SCHEMA}.db/{model}"
    options = parse_catalog(hive_metastore.catalog(warehouse)).pypaimon_options()
    orders = read_back(TableRef(warehouse, SCHEMA, "orders", options))
    assert sorted_rows(orders, ["id"]) == [{"id": 1, "name": "A"}, {"id": 2, "name": "B"},
                                           {"id": 3, "name": "C"}]
    total = read_back(TableRef(warehouse, SCHEMA, "orders_total", options))
    assert sorted_rows(total, ["one"]) == [{"one": 1, "n": 3}]
