"""Row tracking from a dbt project: seed 004's walk-through with run-operations (update, merge,
delete), the paimon_row_tracking() columns, incremental_strategy='merge', then `dbt test`."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds


T = """
{{ config(materialized='paimon_append', row_tracking=true) }}
select cast(id as int) as id, data from values (11, 'a'), (22, 'b') as v(id, data)
"""
S = ("select cast(id as int) as id, data "
     "from values (22, 'new-data-merge'), (33, 'c') as v(id, data)")
MERGED = """
{{ config(materialized='paimon_append', row_tracking=true, incremental_strategy='merge',
          unique_key='id') }}
select cast(id as int) as id, data
from values {{ var('rows', "(1, 'a'), (2, 'b')") }} as v(id, data)
"""
SCHEMA_YML = """
version: 2
models:
  - name: t
    columns:
      - name: id
        data_tests: [unique, not_null]
  - name: merged
    columns:
      - name: id
        data_tests: [unique, not_null]
"""
SHOW = ("select id, data, _ROW_ID, _SEQUENCE_NUMBER from {{{{ paimon_row_tracking(ref('{}')) }}}}"
        " order by _ROW_ID")


def show(model):
    """What `SELECT id, data, _ROW_ID, _SEQUENCE_NUMBER FROM t` prints, through dbt show."""
    result = run_dbt(["show", "--inline", SHOW.format(model), "--limit", "-1"])
    return [tuple(row) for row in result.results[0].agate_table.rows]


def operation(name, args):
    run_dbt(["run-operation", name, "--args", args])


class TestRowTracking:
    @pytest.fixture(scope="class")
    def models(self):
        return {"t.sql": T, "s.sql": S, "merged.sql": MERGED, "schema.yml": SCHEMA_YML}

    def test_seed_004_walk_through(self, project):
        run_dbt(["run", "-s", "t", "s"])
        # INSERT INTO t VALUES (11, 'a'), (22, 'b')
        assert show("t") == [(11, "a", 0, 1), (22, "b", 1, 1)]

        # UPDATE t SET data = 'new-data-update' WHERE id = 11
        operation("update_rows", '{model: t, set: {data: "new-data-update"}, where: "id = 11"}')
        assert sorted(show("t"), key=lambda r: r[0]) == [
            (11, "new-data-update", 0, 2), (22, "b", 1, 1)]

        # MERGE INTO t USING s ON t.id = s.id
        #   WHEN MATCHED THEN UPDATE SET t.data = s.data WHEN NOT MATCHED THEN INSERT *
        operation("merge_rows",
                  '{model: t, source: s, condition: "t.id = s.id", update: {data: "s.data"}}')
        assert show("t") == [
            (11, "new-data-update", 0, 2), (22, "new-data-merge", 1, 3), (33, "c", 2, 3)]

        # DELETE FROM t WHERE _ROW_ID = 0  (the seed's alternative to WHERE id = 11)
        operation("delete_rows", '{model: t, where: "_ROW_ID = 0"}')
        assert show("t") == [(22, "new-data-merge", 1, 3), (33, "c", 2, 3)]
        assert commit_kinds(project, "t") == ["APPEND", "OVERWRITE", "OVERWRITE", "OVERWRITE"]

        # incremental_strategy='merge': MERGE INTO on unique_key in a normal dbt run
        run_dbt(["run", "-s", "merged"])
        run_dbt(["run", "-s", "merged", "--vars", "{rows: \"(2, 'B'), (3, 'c')\"}"])
        assert show("merged") == [(1, "a", 0, 1), (2, "B", 1, 2), (3, "c", 2, 2)]
        run_dbt(["test"])

    def test_operation_errors(self, project):
        _, output = run_dbt_and_capture(
            ["run-operation", "update_rows", "--args", '{model: t, set: {nope: 1}, where: "true"}'],
            expect_pass=False)
        assert "update_rows" in output and "nope" in output
        _, output = run_dbt_and_capture(
            ["run-operation", "delete_rows", "--args", '{model: t, where: "no_such_column = 1"}'],
            expect_pass=False)
        assert "delete_rows" in output and "no_such_column" in output
        _, output = run_dbt_and_capture(
            ["run-operation", "merge_rows", "--args", '{model: t, condition: "t.id = s.id"}'],
            expect_pass=False)
        assert "exactly one of 'source'" in output

    def test_messages_name_the_executor(self, project):
        """A small table on a local Spark: `auto` runs the operation in the dbt process;
        `write_path: distributed` in Spark tasks; both say so, and both keep the row ids."""
        run_dbt(["run", "-s", "t", "--full-refresh"])  # a new table: (11, a), (22, b), ids 0, 1
        _, output = run_dbt_and_capture(
            ["run-operation", "update_rows", "--args", '{model: t, set: {data: "x"}, '
             'where: "id = 11"}'])
        assert "1 updated in-process (snapshot 2;" in output
        _, output = run_dbt_and_capture(
            ["run-operation", "update_rows", "--args", '{model: t, set: {data: "y"}, '
             'where: "id = 22", write_path: distributed}'])
        assert "1 updated distributed (snapshot 3;" in output
        assert show("t") == [(11, "x", 0, 2), (22, "y", 1, 3)]
        results = run_dbt(["run", "-s", "merged", "--vars", "{rows: \"(3, 'C'), (4, 'd')\"}"])
        assert "1 updated, 1 inserted in-process" in results[0].message
