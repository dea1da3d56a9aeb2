"""`dbt clone` of Paimon models (ops/clone.py): from a state manifest into another schema, a
Paimon model becomes a Paimon table sharing the source's files (hard links), holding the
source's latest snapshot, unchanged by later writes to the source, its compaction and the
expiry of its snapshots; a view stays dbt's view clone. Where a JDBC catalog registers the
tables, the clone is a copy of the source's rows in a table the catalog lists, and says so."""

import os
import shutil

import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import location, open_table

# `dbt clone` and `--defer` read the other state's manifest.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")

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


class TestCloneWithDefer:
    """CI against production, as dbt documents `dbt clone` with `--defer`: a model built in the
    CI schema reads an unbuilt parent from the state's (production) schema; once the parent is
    cloned into the CI schema, it reads the clone, unless `--favor-state` says production."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": TOTALS}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"schema.sql": SCHEMA_MACRO}

    def test_deferred_refs_read_production_then_the_clone(self, project, tmp_path):
        run_dbt(["run"])  # production: orders sum 45
        state = tmp_path / "state"
        shutil.copytree(os.path.join(project.project_root, "target"), state)
        ci = f"{project.test_schema}_ci"
        in_ci = ["--state", str(state), "--vars", f"{{clone_schema: {ci}}}"]
        run_dbt(["run", "-s", "totals", "--defer"] + in_ci)

        def totals():
            return project.run_sql(f"select total from {ci}.totals", fetch="one")[0]

        assert totals() == 45  # read production's orders: the CI schema has none
        assert project.run_sql(f"show tables in {ci} like 'orders'", fetch="all") == []
        run_dbt(["clone", "-s", "orders"] + in_ci)
        run_dbt(["run", "-s", "orders", "--vars", "{batch: 2}"])  # production moves on: 90
        run_dbt(["run", "-s", "totals", "--defer"] + in_ci)
        assert totals() == 45  # the clone, which keeps the state's snapshot
        run_dbt(["run", "-s", "totals", "--defer", "--favor-state"] + in_ci)
        assert totals() == 90
        project.run_sql(f"drop schema if exists {ci} cascade")


# -- a JDBC catalog: the clone is a copy -----------------------------------------------------
JDBC_SCHEMA = "clone_jdbc"
JDBC_PROFILE = ("warehouse: paimon_warehouse\n"
                "catalog:\n  type: jdbc\n  uri: 'jdbc:sqlite:paimon_catalog.db'\n"
                "  lock.enabled: true\n"
                "spark_master: 'local[2]'\n"
                "spark_conf:\n  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")
# dynamic buckets (no `buckets`): the copy's write plan sizes its assigners by the session
JDBC_ORDERS = """
{{ config(materialized='paimon_pk', primary_key='id') }}
select cast(id as bigint) as id, cast(id * {{ var('batch', 1) }} as bigint) as v
from range(0, 10)
"""


class TestCloneIntoAJdbcCatalogCopies:
    """The profile's JDBC catalog (SQLite) registers every table: `dbt clone` cannot share
    files, and copies the rows into a table the catalog creates. Real dbt processes: a process
    serves one warehouse and one catalog."""

    @pytest.fixture(scope="class")
    def jdbc_project(self, tmp_path_factory):
        from tests.functional.console_output import write_project

        root = write_project(tmp_path_factory.mktemp("clone_jdbc"), JDBC_SCHEMA, JDBC_PROFILE,
                             {"orders.sql": JDBC_ORDERS})
        (root / "macros").mkdir()
        (root / "macros" / "schema.sql").write_text(SCHEMA_MACRO)
        return root

    def test_a_clone_through_the_catalog_is_a_copy(self, jdbc_project, tmp_path):
        import json
        import sqlite3

        from dbt.adapters.paimon.datasource.source import TableRef
        from dbt.adapters.paimon.catalog.config import parse_catalog
        from tests.functional.console_output import run_dbt_process
        from tests.integration.write.write_helpers import read_back, sorted_rows

        root = jdbc_project
        options = parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{root / 'paimon_catalog.db'}"}
                                ).pypaimon_options()
        warehouse = str(root / "paimon_warehouse")
        source = TableRef(warehouse, JDBC_SCHEMA, "orders", options)
        clone = TableRef(warehouse, f"{JDBC_SCHEMA}_ci", "orders", options)

        run = run_dbt_process(root, "run")
        assert run.returncode == 0, run.stdout
        state = tmp_path / "state"
        shutil.copytree(root / "target", state)
        cloned = run_dbt_process(root, "clone", "--state", str(state), "--vars",
                                 f"{{clone_schema: {clone.database}}}")
        assert cloned.returncode == 0, cloned.stdout
        [result] = json.loads((root / "target" / "run_results.json").read_text())["results"]
        assert result["message"].startswith(f"CLONE of {source.name} at snapshot 1 as a COPY: "
                                            "10 rows written in one commit (snapshot 1)")
        assert "registered by a JDBC catalog" in result["message"]
        assert result["adapter_response"]["rows_affected"] == 10
        with sqlite3.connect(root / "paimon_catalog.db") as con:
            listed = sorted(con.execute("SELECT database_name, table_name FROM paimon_tables"))
        assert listed == [(JDBC_SCHEMA, "orders"), (clone.database, "orders")]
        expected = [{"id": i, "v": i} for i in range(10)]
        assert sorted_rows(read_back(clone), ["id"]) == sorted_rows(read_back(source), ["id"]) \
            == expected
        assert clone.open().table_schema.options == source.open().table_schema.options

        # a later write to the source (here by pypaimon, through the catalog) does not reach
        # the copy
        import pyarrow as pa

        table = source.open()
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(pa.table({"id": pa.array([3, 42], pa.int64()),
                                    "v": pa.array([-3, -42], pa.int64())}))
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
        assert sorted_rows(read_back(source), ["id"]) == sorted(
            [r for r in expected if r["id"] != 3] + [{"id": 3, "v": -3}, {"id": 42, "v": -42}],
            key=lambda r: r["id"])
        assert sorted_rows(read_back(clone), ["id"]) == expected
