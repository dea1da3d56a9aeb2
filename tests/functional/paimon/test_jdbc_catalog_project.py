"""A dbt project whose profile names a JDBC catalog on SQLite (`catalog: {type: jdbc, uri:
jdbc:sqlite:...}`): `dbt run` creates and fills its paimon_pk models through the catalog, a
downstream model reads one with ref(), and a later dbt process (`dbt docs generate`) finds both
by the catalog, not by the folders: a Paimon table folder the catalog does not list is no
relation. Real dbt processes: a process serves one warehouse and one catalog."""
import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.write.write_helpers import read_back, sorted_rows

SCHEMA = "jdbc_project"
MODELS = {
    "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
                  "select id, cast(id * 10 as int) as amount from range(5)",
    "orders_total.sql": "{{ config(materialized='paimon_pk', primary_key='one') }}\n"
                        "select 1 as one, sum(amount) as total, count(*) as n "
                        "from {{ ref('orders') }}",
    "sources.yml": f"version: 2\nsources:\n  - name: lake\n    schema: {SCHEMA}\n"
                   "    tables:\n      - name: stray\n",
}
PROFILE = ("warehouse: paimon_warehouse\n"
           "catalog:\n  type: jdbc\n  uri: 'jdbc:sqlite:paimon_catalog.db'\n"
           "  lock.enabled: true\n"
           "spark_master: 'local[2]'\n"
           "spark_conf:\n  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = write_project(tmp_path_factory.mktemp("jdbc"), SCHEMA, PROFILE, MODELS)
    # a Paimon table in the warehouse's folders that the JDBC catalog does not list
    wh.create_table(str(root / "paimon_warehouse"), SCHEMA, "stray",
                    pa.schema([("id", pa.int64())]))
    return root


def catalog_options(project: Path):
    return parse_catalog({"type": "jdbc",
                          "uri": f"jdbc:sqlite:{project / 'paimon_catalog.db'}"}
                         ).pypaimon_options()


def test_models_are_built_and_found_through_the_jdbc_catalog(project):
    run = run_dbt_process(project, "run")
    assert run.returncode == 0, run.stdout
    assert "Completed successfully" in run.stdout

    with sqlite3.connect(project / "paimon_catalog.db") as con:
        listed = sorted(con.execute("SELECT database_name, table_name FROM paimon_tables"))
    assert listed == [(SCHEMA, "orders"), (SCHEMA, "orders_total")]
    total = read_back(TableRef(str(project / "paimon_warehouse"), SCHEMA, "orders_total",
                                    catalog_options(project)))
    assert sorted_rows(total, ["one"]) == [{"one": 1, "total": 100, "n": 5}]

    docs = run_dbt_process(project, "docs", "generate")
    assert docs.returncode == 0, docs.stdout
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    assert {n.rsplit(".", 1)[1] for n in catalog["nodes"]} == {"orders", "orders_total"}
    columns = catalog["nodes"][f"model.{SCHEMA}.orders_total"]["columns"]
    assert {c.lower() for c in columns} == {"one", "total", "n"}
    # the folder is there, the catalog does not list it: not a relation
    assert f"source.{SCHEMA}.lake.stray" not in catalog["sources"]
