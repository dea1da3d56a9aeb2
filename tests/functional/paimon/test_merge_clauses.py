"""dbt-databricks' merge clauses on a Paimon primary-key table (standard_writes.merge_clauses):
`matched_condition`, `not_matched_condition`, `skip_matched_step` and `skip_not_matched_step`
choose which of a run's rows its merge writes, as SQL's ``MERGE ... WHEN MATCHED [AND c] THEN
UPDATE WHEN NOT MATCHED [AND c] THEN INSERT`` does; a stored row no clause updates stays as
it is. The ON clause holds the key and the incremental predicates: a stored row failing a
predicate is no match. A stored row a run row matches is matched even when no clause writes
that run row, so not_matched_by_source_action='delete' keeps it."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

# even ids get +v, odd ids -v: run 1 (v=1) then run 2 (v=2) raises the even ids' values and
# lowers the odd ids'
SOURCE = """select cast(id as bigint) as id,
       cast({{ var('v', 1) }} * (case when id % 2 = 0 then 1 else -1 end) as int) as v
from range({{ var('low', 1) }}, {{ var('high', 6) }})"""


def model(**config):
    settings = ", ".join(f"{k}={v!r}" for k, v in config.items())
    return ("{{ config(materialized='incremental', unique_key='id', " + settings + ") }}\n"
            + SOURCE)


MODELS = {
    "guarded": model(matched_condition="DBT_INTERNAL_SOURCE.v > DBT_INTERNAL_DEST.v"),
    "inserts_small": model(not_matched_condition="DBT_INTERNAL_SOURCE.id < 7"),
    "insert_only": model(skip_matched_step=True),
    "update_only": model(skip_not_matched_step=True),
    "windowed_update": model(skip_not_matched_step=True,
                             incremental_predicates=["DBT_INTERNAL_DEST.id >= 4"]),
    "insert_only_deleting": model(skip_matched_step=True,
                                  not_matched_by_source_action="delete"),
}
FIRST = {1: -1, 2: 1, 3: -1, 4: 1, 5: -1}  # run 1: ids 1-5, v = 1
# run 2: ids 3-7, v = 2 -> 3: -2, 4: 2, 5: -2, 6: 2, 7: -2
AFTER = {
    # matched rows only where the run's value is greater; new keys inserted
    "guarded": {**FIRST, 4: 2, 6: 2, 7: -2},
    # every matched row updated; only new keys below 7 inserted
    "inserts_small": {**FIRST, 3: -2, 4: 2, 5: -2, 6: 2},
    "insert_only": {**FIRST, 6: 2, 7: -2},
    "update_only": {**FIRST, 3: -2, 4: 2, 5: -2},
    # stored 3 fails the predicate (no match, and new keys are skipped): kept as it was
    "windowed_update": {**FIRST, 4: 2, 5: -2},
    # 1 and 2 no run row matches: deleted; 3-5 matched (not updated): kept
    "insert_only_deleting": {3: -1, 4: 1, 5: -1, 6: 2, 7: -2},
}


def rows(project, name):
    return dict(tuple(r) for r in project.run_sql(
        f"select id, v from {project.test_schema}.{name}", fetch="all"))


class TestMergeClauses:
    @pytest.fixture(scope="class")
    def models(self):
        return {f"{name}.sql": sql for name, sql in MODELS.items()}

    def test_each_clause_writes_the_rows_sql_merge_would(self, project):
        run_dbt(["run"])
        for name in MODELS:
            assert rows(project, name) == FIRST, name  # the first run builds the table
        run_dbt(["run", "--vars", "{low: 3, high: 8, v: 2}"])
        for name, expected in AFTER.items():
            assert rows(project, name) == expected, name


class TestMergeClauseErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {"appended.sql": "{{ config(materialized='incremental', "
                                "incremental_strategy='append', "
                                "matched_condition='DBT_INTERNAL_SOURCE.v > 0') }}\n" + SOURCE}

    def test_a_clause_outside_a_keyed_merge_names_the_model_and_the_fix(self, project):
        _, out = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'appended'" in out and "matched_condition" in out, out
        assert "incremental_strategy='merge' with a unique_key" in out, out
        # SHOW TABLES also lists the session's temporary views (other tests' changes views)
        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        assert [t for t in tables if not t.isTemporary] == []
