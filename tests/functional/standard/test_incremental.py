"""dbt's incremental materialization with file_format='paimon': each run is ONE Paimon commit;
merge is a primary-key table on unique_key; merge_update_columns keeps the other columns'
stored values (a NULL in an updated column is written as NULL); insert_overwrite replaces the
run's partitions; microbatch replaces each batch's window; bad config fails before writing."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds, open_table

MERGED = """
{{ config(materialized='incremental', unique_key='id', merge_update_columns=['a']) }}
select cast(id as bigint) as id, cast(a as string) as a, cast(b as string) as b
from values {{ var('rows', "(1, 'a1', 'b1'), (2, 'a2', 'b2')") }} as t(id, a, b)
"""
PARTS = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          partition_by='dt') }}
select cast(id as bigint) as id, dt
from values {{ var('parts', "(1, 'd1'), (2, 'd2')") }} as t(id, dt)
"""
EVENTS = """
{{ config(materialized='table', file_format='parquet', event_time='ts') }}
select cast(id as bigint) as id, cast(ts as timestamp) as ts
from values (1, '2024-01-01 10:00:00'), (2, '2024-01-02 10:00:00'),
            (3, '2024-01-02 11:00:00'), (4, '2024-01-03 09:00:00') as t(id, ts)
"""
DAILY = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin='2024-01-01', partition_by='dt') }}
select id, ts, cast(to_date(ts) as string) as dt from {{ ref('events') }}
"""
KEYED_DAILY = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin='2024-01-01', primary_key='id') }}
select id, ts from {{ ref('events') }}
"""
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-04"]


def rows(project, table):
    return sorted(tuple(r) for r in project.run_sql(
        f"select * from {project.test_schema}.{table}", fetch="all"))


class TestIncrementalOnPaimon:
    @pytest.fixture(scope="class")
    def models(self):
        return {"merged.sql": MERGED, "parts.sql": PARTS, "events.sql": EVENTS,
                "daily.sql": DAILY, "keyed_daily.sql": KEYED_DAILY}

    def test_merge_update_columns_and_failed_run(self, project):
        run_dbt(["run", "-s", "merged", "parts"])
        assert list(open_table(project, "merged").primary_keys) == ["id"]
        run_dbt(["run", "-s", "merged", "--vars", "{rows: \"(1, null, 'bX'), (3, 'a3', 'b3')\"}"])
        # key 1 matched: `a` updated (to a genuine NULL), `b` keeps its stored value
        assert rows(project, "merged") == [(1, None, "b1"), (2, "a2", "b2"), (3, "a3", "b3")]
        assert commit_kinds(project, "merged") == ["APPEND", "APPEND"]
        # a NULL key fails the run before anything is committed
        _, output = run_dbt_and_capture(
            ["run", "-s", "merged", "--vars", "{rows: \"(null, 'x', 'y')\"}"], expect_pass=False)
        assert "merged" in output and "id" in output
        assert commit_kinds(project, "merged") == ["APPEND", "APPEND"]
        assert rows(project, "merged") == [(1, None, "b1"), (2, "a2", "b2"), (3, "a3", "b3")]

        # insert_overwrite: the run's partitions (d2) replaced, d1 kept, one OVERWRITE commit
        run_dbt(["run", "-s", "parts", "--vars", "{parts: \"(3, 'd2')\"}"])
        assert rows(project, "parts") == [(1, "d1"), (3, "d2")]
        assert commit_kinds(project, "parts") == ["APPEND", "OVERWRITE"]

    def test_microbatch_batches_replace_their_window(self, project):
        run_dbt(["run", "-s", "events"])
        run_dbt(["run", "-s", "daily", "keyed_daily", *WINDOW])
        expected = [1, 2, 3, 4]
        assert sorted(r[0] for r in rows(project, "daily")) == expected
        assert sorted(r[0] for r in rows(project, "keyed_daily")) == expected
        daily_kinds = commit_kinds(project, "daily")
        keyed_kinds = commit_kinds(project, "keyed_daily")
        assert len(daily_kinds) == 3 and len(keyed_kinds) == 3  # one commit per day
        # re-running the batches (dbt retry, a backfill) never duplicates rows
        run_dbt(["run", "-s", "daily", "keyed_daily", *WINDOW])
        assert sorted(r[0] for r in rows(project, "daily")) == expected
        assert sorted(r[0] for r in rows(project, "keyed_daily")) == expected
        assert len(commit_kinds(project, "daily")) == 6
        assert commit_kinds(project, "daily")[3:] == ["OVERWRITE"] * 3
        assert list(open_table(project, "daily").partition_keys) == ["dt"]


class TestIncrementalConfigErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "merge_no_key.sql": "{{ config(materialized='incremental', "
                                "incremental_strategy='merge') }} select 1 as id",
            # (a microbatch model without event_time: dbt's parser names it already)
            "odd_strategy.sql": "{{ config(materialized='incremental', "
                                "incremental_strategy='upsert') }} select 1 as id",
        }

    def test_errors_name_model_config_and_fix(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'merge_no_key'" in output and "needs config `unique_key`" in output
        assert "Model 'odd_strategy'" in output and "upsert" in output
