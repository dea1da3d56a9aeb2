"""Model contracts on Paimon materializations: names and types checked before anything is written,
not_null columns NOT NULL in the Paimon table (a NULL fails the run, table untouched), a
primary_key constraint is the Paimon primary key, other constraints are reported as not enforced."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from tests.functional.paimon_tables import open_table, snapshots

PK_MODEL = """
{{ config(materialized='paimon_pk') }}
select cast(id as int) id, name, cast(amount as decimal(10,2)) amount
from {{ ref('contract_rows') }} where batch = {{ var('batch', 1) }}
"""

APPEND_MODEL = """
{{ config(materialized='paimon_append') }}
select cast(id as int) id, name from {{ ref('contract_rows') }} where batch = {{ var('batch', 1) }}
"""

SEED = """batch,id,name,amount
1,1,a,1.50
1,2,b,2.25
2,3,,3.00
"""

SCHEMA_YML = """
models:
  - name: orders
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
        constraints: [{type: primary_key}]
      - name: name
        data_type: string
        constraints: [{type: not_null}, {type: check, expression: "name <> ''"}]
      - name: amount
        data_type: decimal(10,2)
  - name: events
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
      - name: name
        data_type: string
        constraints: [{type: not_null}]
"""

WRONG_TYPE_YML = SCHEMA_YML.replace("data_type: decimal(10,2)", "data_type: string")
CONFLICT_MODEL = PK_MODEL.replace("materialized='paimon_pk'", "materialized='paimon_pk', primary_key='name'")


class TestPaimonContracts:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"contract_rows.csv": SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": PK_MODEL, "events.sql": APPEND_MODEL, "schema.yml": SCHEMA_YML}

    def test_contracts(self, project):
        run_dbt(["seed"])
        _, output = run_dbt_and_capture(["run"])
        # the check constraint is reported the dbt way; not_null / primary_key are enforced
        assert "check" in output and "not enforced" in output.lower()
        table = open_table(project, "orders")
        assert list(table.primary_keys) == ["id"]
        nullable = {f.name: f.type.nullable for f in table.table_schema.fields}
        assert nullable == {"id": False, "name": False, "amount": True}
        events = {f.name: f.type.nullable for f in open_table(project, "events").table_schema.fields}
        assert events == {"id": True, "name": False}
        before = {t: len(snapshots(project, t)) for t in ("orders", "events")}

        # a NULL in a not_null column fails the run, naming the column, before any write
        for model in ("orders", "events"):
            _, output = run_dbt_and_capture(["run", "-s", model, "--vars", "{batch: 2}"],
                                            expect_pass=False)
            assert "NULL" in output and "'name'" in output, output
            assert len(snapshots(project, model)) == before[model]

        # a type mismatch is dbt's contract error, before anything is written
        write_file(WRONG_TYPE_YML, project.project_root, "models", "schema.yml")
        _, output = run_dbt_and_capture(["run", "-s", "orders"], expect_pass=False)
        assert "data type mismatch" in output.lower() and "amount" in output
        assert len(snapshots(project, "orders")) == before["orders"]

        # primary_key config and the primary_key constraint must agree
        write_file(SCHEMA_YML, project.project_root, "models", "schema.yml")
        write_file(CONFLICT_MODEL, project.project_root, "models", "orders.sql")
        _, output = run_dbt_and_capture(["run", "-s", "orders"], expect_pass=False)
        assert "must agree" in output and "['name']" in output
        assert len(snapshots(project, "orders")) == before["orders"]


STRICT_MODEL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns',
          table_options=var('opts', {})) }}
select cast(id as int) id, cast(name as string) name
from values {{ var('rows', "(1, 'a'), (2, null)") }} as t(id, name)
"""
STRICT_YML = """
models:
  - name: strict
    config: {contract: {enforced: true}}
    columns:
      - {name: id, data_type: int}
      - {name: name, data_type: string}
  - name: strict_table
    config: {contract: {enforced: true}}
    columns:
      - {name: id, data_type: int}
      - {name: name, data_type: string}
"""
STRICT_NOT_NULL_YML = STRICT_YML.replace("data_type: string}",
                                         "data_type: string, constraints: [{type: not_null}]}")
STRICT_TABLE = STRICT_MODEL.replace("materialized='incremental'", "materialized='table'")
ALLOW = "opts: {alter-column-null-to-not-null.disabled: 'false'}"


class TestContractNotNullOnExistingColumn:
    """A not_null constraint added to a stored nullable column: Paimon alters a column from
    nullable to NOT NULL only where the table's option 'alter-column-null-to-not-null.disabled'
    is 'false' (SchemaManager.generateTableSchema, UpdateColumnNullability), and its ALTER does
    not look at the rows: the run also refuses while stored rows hold NULL there."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"strict.sql": STRICT_MODEL, "strict_table.sql": STRICT_TABLE,
                "schema.yml": STRICT_YML}

    def state(self, project, table="strict"):
        schema = open_table(project, table).table_schema
        return (len(snapshots(project, table)), schema.id,
                {f.name: f.type.nullable for f in schema.fields})

    def test_not_null_added_later(self, project):
        run_dbt(["run"])
        assert self.state(project)[2] == {"id": False, "name": True}
        write_file(STRICT_NOT_NULL_YML, project.project_root, "models", "schema.yml")
        before = self.state(project)

        # Paimon's default: the change is refused, naming the option that allows it
        _, output = run_dbt_and_capture(["run", "-s", "strict", "--vars", "{rows: \"(3, 'c')\"}"],
                                        expect_pass=False)
        assert "Model 'strict'" in output and "['name']" in output
        assert "'alter-column-null-to-not-null.disabled': 'false'" in output
        assert self.state(project) == before

        # allowed by the table option, but a stored row holds NULL in `name`
        _, output = run_dbt_and_capture(
            ["run", "-s", "strict", "--vars", "{rows: \"(3, 'c')\", " + ALLOW + "}"],
            expect_pass=False)
        assert "Model 'strict'" in output and "stored rows" in output and "'id': 2" in output
        assert self.state(project) == before

        # the NULL replaced by a run without the constraint, then the column becomes NOT NULL
        write_file(STRICT_YML, project.project_root, "models", "schema.yml")
        run_dbt(["run", "-s", "strict", "--vars", "{rows: \"(2, 'b')\", " + ALLOW + "}"])
        write_file(STRICT_NOT_NULL_YML, project.project_root, "models", "schema.yml")
        run_dbt(["run", "-s", "strict", "--vars", "{rows: \"(3, 'c')\", " + ALLOW + "}"])
        assert self.state(project)[2] == {"id": False, "name": False}
        assert sorted(tuple(r) for r in project.run_sql(
            f"select * from {project.test_schema}.strict", fetch="all")) == [
            (1, "a"), (2, "b"), (3, "c")]

        # dbt's `table` replaces every row: under Paimon's default it is rebuilt with the
        # NOT NULL column (a change Paimon cannot make in place)
        assert self.state(project, "strict_table")[2] == {"id": True, "name": True}
        run_dbt(["run", "-s", "strict_table", "--vars", "{rows: \"(1, 'a')\"}"])
        assert self.state(project, "strict_table")[2] == {"id": True, "name": False}
        assert [tuple(r) for r in project.run_sql(
            f"select * from {project.test_schema}.strict_table", fetch="all")] == [(1, "a")]

        # the constraint removed: an incremental run still refuses NULLs in the stored NOT
        # NULL column; a `table` run replaces the table with the column nullable again
        write_file(STRICT_YML, project.project_root, "models", "schema.yml")
        before = self.state(project)
        _, output = run_dbt_and_capture(["run", "-s", "strict", "--vars", "{rows: \"(4, null)\"}"],
                                        expect_pass=False)
        assert "'name'" in output and "NULL" in output
        assert self.state(project) == before
        run_dbt(["run", "-s", "strict_table", "--vars", "{rows: \"(1, null)\"}"])
        assert self.state(project, "strict_table")[2] == {"id": True, "name": True}
