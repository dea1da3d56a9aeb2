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
