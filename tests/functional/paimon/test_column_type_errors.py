"""Column types a Paimon table cannot take, before anything is written: a type change under
on_schema_change='ignore' (an exact widening is written cast to the stored type, anything else
is an error naming the model, column and both types), and an untyped `null as v` (Spark's void)."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import open_table, snapshots

EVENTS = """
{{ config(materialized='paimon_append', on_schema_change='ignore') }}
select cast({{ var('id', 1) }} as int) id, cast({{ var('v', 1) }} as {{ var('v_type', 'int') }}) v
"""

UNTYPED = """
{{ config(materialized='paimon_append') }}
select 1 as id, null as v
"""


class TestColumnTypeErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "untyped.sql": UNTYPED}

    def test_type_change_and_untyped_null(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        # the untyped NULL: named, with the fix; no table was created
        assert "Model 'untyped'" in output and "['v'] have no type" in output
        assert "cast(null as string) as v" in output
        assert "nnexpected" not in output
        assert project.run_sql(f"show tables in {project.test_schema} like 'untyped'",
                               fetch="all") == []
        before = len(snapshots(project, "events"))

        # INT stored, STRING given: refused before any write
        _, output = run_dbt_and_capture(
            ["run", "-s", "events", "--vars", "{id: 2, v: \"'x'\", v_type: string}"],
            expect_pass=False)
        assert "Model 'events'" in output and "column 'v' is INT" in output
        assert "but STRING in the query" in output and "cast(v as int)" in output
        assert "Arrow" not in output
        assert len(snapshots(project, "events")) == before

        # SMALLINT into the INT column: exact, written as INT
        run_dbt(["run", "-s", "events", "--vars", "{id: 3, v: 7, v_type: smallint}"])
        assert [str(f.type) for f in open_table(project, "events").table_schema.fields] == \
            ["INT", "INT"]
        rows = project.run_sql(f"select id, v from {project.test_schema}.events order by id",
                               fetch="all")
        assert [tuple(r) for r in rows] == [(1, 1), (3, 7)]
