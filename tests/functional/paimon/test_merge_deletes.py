"""Merges that delete: dbt's incremental merge with not_matched_by_source_action='delete'
(dbt-databricks' config) deletes, in the run's one commit, the stored rows the run does not
match: change data capture's deletes reach the table. As SQL's MERGE ... WHEN NOT MATCHED BY
SOURCE [AND condition] THEN DELETE: a stored row whose key the run lacks, or for which an
incremental predicate does not hold, is not matched."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds

SOURCE = """select cast(id as bigint) as id, cast({{ var('v', 1) }} as int) as v
from range({{ var('low', 1) }}, {{ var('high', 6) }})"""

GOLD = """{{ config(materialized='incremental', unique_key='id',
                  not_matched_by_source_action='delete') }}
""" + SOURCE

GUARDED = """{{ config(materialized='incremental', unique_key='id',
                  not_matched_by_source_action='delete',
                  not_matched_by_source_condition='DBT_INTERNAL_DEST.id > 1') }}
""" + SOURCE

WINDOWED = """{{ config(materialized='incremental', unique_key='id',
                  not_matched_by_source_action='delete',
                  incremental_predicates=['DBT_INTERNAL_DEST.id >= 2']) }}
""" + SOURCE

KEPT = """{{ config(materialized='incremental', unique_key='id') }}
""" + SOURCE

BAD_ACTION = """{{ config(materialized='incremental', unique_key='id',
                  not_matched_by_source_action='update') }}
select 1 as id"""

BAD_STRATEGY = """{{ config(materialized='incremental', unique_key='id',
                  incremental_strategy='append', not_matched_by_source_action='delete') }}
select 1 as id"""

PARTIAL = """{{ config(materialized='incremental', unique_key='id',
                  not_matched_by_source_action='delete',
                  table_options={'merge-engine': 'partial-update'}) }}
""" + SOURCE


def rows(project, name):
    return sorted(tuple(r) for r in project.run_sql(
        f"select id, v from {project.test_schema}.{name}", fetch="all"))


class TestMergeDeletes:
    @pytest.fixture(scope="class")
    def models(self):
        return {"gold.sql": GOLD, "guarded.sql": GUARDED, "windowed.sql": WINDOWED,
                "kept.sql": KEPT}

    def test_stored_rows_the_run_lacks_are_deleted_in_its_commit(self, project):
        run_dbt(["run"])  # ids 1-5, v 1
        run_dbt(["run", "--vars", "{low: 3, high: 8, v: 2}"])  # ids 3-7, v 2
        now = [(i, 2) for i in range(3, 8)]
        assert rows(project, "gold") == now
        assert rows(project, "guarded") == [(1, 1)] + now  # the condition spares id 1
        # id 1 fails the predicate: not matched, deleted; id 2 likewise (not in the run)
        assert rows(project, "windowed") == now
        assert rows(project, "kept") == [(1, 1), (2, 1)] + now
        assert commit_kinds(project, "gold") == ["APPEND", "APPEND"]  # one commit a run
        # a run with every key again deletes nothing
        run_dbt(["run", "-s", "gold", "--vars", "{low: 3, high: 8, v: 3}"])
        assert rows(project, "gold") == [(i, 3) for i in range(3, 8)]


class TestMergeDeleteErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {"bad_action.sql": BAD_ACTION, "bad_strategy.sql": BAD_STRATEGY,
                "partial.sql": PARTIAL}

    def test_bad_configs_are_named_before_anything_is_written(self, project):
        run_dbt(["run", "-s", "partial"])  # the first run creates the table
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'bad_action': not_matched_by_source_action is 'update'; expected " \
               "'ignore'" in output
        assert "Model 'bad_strategy': not_matched_by_source_action='delete' goes with " \
               "incremental_strategy='merge'" in output
        assert "Model 'partial': incremental_strategy='merge' with " \
               "not_matched_by_source_action='delete' on a primary-key table needs " \
               "merge_engine 'deduplicate'" in output
        assert commit_kinds(project, "partial") == ["APPEND"]
