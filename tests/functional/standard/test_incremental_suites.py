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

from tests.functional.paimon_tables import open_table


class TestIncrementalUniqueKeyPaimon(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+file_format": "parquet"}}


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
        from dbt.tests.util import run_dbt

        from dbt.tests.util import patch_microbatch_end_time

        with patch_microbatch_end_time("2020-01-03 13:57:00"):
            run_dbt(["run"])
        assert open_table(project, "microbatch_model").primary_keys == []
