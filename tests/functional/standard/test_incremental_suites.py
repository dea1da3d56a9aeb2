"""dbt-tests-adapter's incremental suites with file_format='paimon' (the default).

Fixtures the suites mutate with SQL (`insert into <seed>`) stay Spark parquet tables
(`+file_format: parquet`), as dbt-spark gives its suites format-specific fixtures: the models
under test are Paimon tables. BaseIncrementalPredicates expects two rows of key 2 after a
delete+insert whose predicate spared the stored one: delete+insert builds an append table
(copy-on-write), so that holds here too; `merge` builds a primary-key table instead."""

import pytest

from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey

from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import open_table


def wh_table_exists(project, table: str) -> bool:
    """Whether the model's Paimon table exists (a failed first run leaves none)."""
    from dbt.adapters.paimon.catalog import warehouse as wh
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    credentials = project.adapter.config.credentials
    if not wh.table_exists(credentials.warehouse, project.test_schema, table,
                           credentials.catalog_options):
        return False
    return current_snapshot_id(open_table(project, table)) is not None


class TestIncrementalUniqueKeyPaimon(BaseIncrementalUniqueKey):
    """A merge model's unique_key is its Paimon table's primary key, fixed when the table is
    created and never NULL. So a unique_key that is not a column fails the FIRST run (the suite
    expects that only from the second), and the trinary key, whose `city` is NULL in one seed
    row, fails with Paimon's NOT NULL rule instead of keeping a row no merge can match."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+file_format": "parquet"}}

    @pytest.fixture(autouse=True)
    def legacy_store_assignment(self, project):
        # the suite inserts date strings into the parquet seed's date column, which Spark's
        # ANSI store assignment refuses (as dbt-spark's profiles, write them the legacy way)
        project.run_sql("set spark.sql.storeAssignmentPolicy=LEGACY")
        yield
        project.run_sql("set spark.sql.storeAssignmentPolicy=ANSI")

    def first_run_fails(self, model: str) -> str:
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        _, output = run_dbt_and_capture(["run", "--select", model, "--full-refresh"],
                                        expect_pass=False)
        return output

    def test__bad_unique_key(self, project):
        output = self.first_run_fails("not_found_unique_key")
        assert "Model 'not_found_unique_key'" in output and "thisisnotacolumn" in output

    def test__bad_unique_key_list(self, project):
        output = self.first_run_fails("not_found_unique_key_list")
        assert "Model 'not_found_unique_key_list'" in output and "thisisnotacolumn" in output

    def test__trinary_unique_key_list(self, project):
        output = self.first_run_fails("trinary_unique_key_list")
        assert "trinary_unique_key_list" in output and "city" in output and "NULL" in output
        assert not wh_table_exists(project, "trinary_unique_key_list")

    def test__trinary_unique_key_list_no_update(self, project):
        output = self.first_run_fails("nontyped_trinary_unique_key_list")
        assert "city" in output and "NULL" in output

    # The suite's seed holds state 'NY' twice. dbt's first run of a Delta merge model is a
    # plain CREATE TABLE AS SELECT that keeps both rows; a Paimon primary-key table on `state`
    # holds one row per key from its first commit on (deduplicate: the last one the query
    # returns). So every other state must match the suite's expected table exactly, and 'NY'
    # is one row, one of the expected table's two.
    def check_one_row_per_key(self, project, model: str, expected: str):
        fields = self.get_test_fields(project, seed="seed", incremental_model=model,
                                      update_sql_file="duplicate_insert",
                                      opt_model_count=self.update_incremental_model(expected))
        assert (fields.seed_count, fields.model_count, fields.seed_rows,
                fields.inc_test_model_count) == (1, 1, 8, 1)
        columns = "state, county, city, cast(last_visit_date as string)"
        got = project.run_sql(f"select {columns} from {project.test_schema}.{model}",
                              fetch="all")
        want = project.run_sql(f"select {columns} from {project.test_schema}.{expected}",
                               fetch="all")
        by_state = {}
        for row in want:
            by_state.setdefault(row[0], []).append(tuple(row))
        assert sorted(r[0] for r in got) == sorted(by_state)       # one row per state
        assert len(by_state["NY"]) == 2
        for row in got:
            assert tuple(row) in by_state[row[0]]
            if len(by_state[row[0]]) == 1:
                assert tuple(row) == by_state[row[0]][0]
        assert ("CT", "Hartford", "Hartford", "2022-02-14") in [tuple(r) for r in got]

    def test__one_unique_key(self, project):
        self.check_one_row_per_key(project, "str_unique_key", "one_str__overwrite")

    def test__unary_unique_key_list(self, project):
        self.check_one_row_per_key(project, "unary_unique_key_list",
                                   "unique_key_list__inplace_overwrite")

    def test__duplicated_unary_unique_key_list(self, project):
        self.check_one_row_per_key(project, "duplicated_unary_unique_key_list",
                                   "unique_key_list__inplace_overwrite")


class TestMergeExcludeColumnsPaimon(BaseMergeExcludeColumns):
    pass


class TestIncrementalOnSchemaChangePaimon(BaseIncrementalOnSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge", "+unique_key": "id"}}


class TestIncrementalPredicatesPaimon(BaseIncrementalPredicates):
    pass


_INPUT_MODEL_PARQUET = """
{{ config(materialized='table', event_time='event_time', file_format='parquet') }}
select 1 as id, TIMESTAMP '2020-01-01 00:00:00-0' as event_time
union all
select 2 as id, TIMESTAMP '2020-01-02 00:00:00-0' as event_time
union all
select 3 as id, TIMESTAMP '2020-01-03 00:00:00-0' as event_time
"""


class TestMicrobatchPaimon(BaseMicrobatch):
    @pytest.fixture(scope="class")
    def input_model_sql(self) -> str:
        return _INPUT_MODEL_PARQUET

    def test_microbatch_model_is_paimon(self, project):
        from dbt.tests.util import patch_microbatch_end_time

        with patch_microbatch_end_time("2020-01-03 13:57:00"):
            run_dbt(["run"])
        assert open_table(project, "microbatch_model").primary_keys == []
