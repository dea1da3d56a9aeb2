"""`dbt clone` of Paimon models (ops/clone.py): from a state manifest into another schema, a
Paimon model becomes a Paimon table sharing the source's files (hard links), holding the
source's latest snapshot, unchanged by later writes to the source, its compaction and the
expiry of its snapshots; a view stays dbt's view clone."""

import os
import shutil

import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import location, open_table

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}
select cast(id as bigint) as id, cast(id * {{ var('batch', 1) }} as bigint) as v
from range(0, 10)
"""

TOTALS = """
{{ config(materialized='table') }}
select sum(v) as total from {{ ref('orders') }}
"""

RECENT = """
{{ config(materialized='view') }}
select * from {{ ref('orders') }} where id > 5
"""

# every node in the schema `clone_schema` names (the clone's target), else the profile's
SCHEMA_MACRO = """
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ var('clone_schema', target.schema) }}
{%- endmacro %}
"""


def rows(table):
    read = table.new_read_builder()
    return sorted((r["id"], r["v"]) for r in
                  read.new_read().to_arrow(read.new_scan().plan().splits()).to_pylist())


def data_files(folder):
    return [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files
            if f.startswith("data-")]


class TestClonePaimonModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": TOTALS, "recent.sql": RECENT}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"schema.sql": SCHEMA_MACRO}

    def test_a_clone_shares_files_and_keeps_its_snapshot(self, project, tmp_path):
        run_dbt(["run"])
        state = tmp_path / "state"
        shutil.copytree(os.path.join(project.project_root, "target"), state)
        clone_schema = f"{project.test_schema}_clone"
        cloned = run_dbt(["clone", "--state", str(state), "--vars",
                          f"{{clone_schema: {clone_schema}}}"])
        assert len(cloned) == 3
        source = open_table(project, "orders")
        clone_location = location(project, "orders")
        clone_location = type(clone_location)(clone_location.warehouse, clone_schema, "orders",
                                              clone_location.catalog_options)
        clone = clone_location.open()
        assert rows(clone) == rows(source) == [(i, i) for i in range(10)]
        # the clone's data files are links of the source's
        warehouse = clone_location.warehouse
        files = data_files(os.path.join(warehouse, f"{clone_schema}.db", "orders"))
        assert files and all(os.stat(f).st_nlink >= 2 for f in files)
        # Spark reads the clones; the view is dbt's view clone of the source's view
        assert project.run_sql(f"select total from {clone_schema}.totals", fetch="one")[0] == 45
        assert project.run_sql(f"select count(*) from {clone_schema}.recent",
                               fetch="one")[0] == 4

        # the source moves on, compacts and expires its snapshots: the clone keeps its rows
        run_dbt(["run", "-s", "orders", "--vars", "{batch: 3}"])
        run_dbt(["run-operation", "compact", "--args", "{model: orders, full: true}"])
        run_dbt(["run-operation", "expire_snapshots",
                 "--args", "{model: orders, retain_last: 1, older_than: 0}"])
        assert rows(open_table(project, "orders")) == [(i, 3 * i) for i in range(10)]
        assert rows(clone_location.open()) == [(i, i) for i in range(10)]
        # a second clone without --full-refresh leaves the existing one; with it, replaces it
        run_dbt(["run", "--vars", "{batch: 5}"])
        shutil.rmtree(state)
        shutil.copytree(os.path.join(project.project_root, "target"), state)
        args = ["clone", "--state", str(state), "--vars", f"{{clone_schema: {clone_schema}}}"]
        run_dbt(args)
        assert rows(clone_location.open()) == [(i, i) for i in range(10)]
        run_dbt(args + ["--full-refresh"])
        assert rows(clone_location.open()) == [(i, 5 * i) for i in range(10)]
        project.run_sql(f"drop schema if exists {clone_schema} cascade")
