"""dbt's incremental materialization with file_format='paimon': each run is ONE Paimon commit;
merge is a primary-key table on unique_key; merge_update_columns keeps the other columns'
stored values (a NULL in an updated column is written as NULL); insert_overwrite replaces the
run's partitions; microbatch replaces each batch's window; bad config fails before writing."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

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


def table_exists(project, table) -> bool:
    from dbt.adapters.paimon.catalog import warehouse as wh

    credentials = project.adapter.config.credentials
    return wh.table_exists(credentials.warehouse, project.test_schema, table,
                           credentials.catalog_options)


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
        assert "Set unique_key, or use incremental_strategy='append'" in output
        assert "Model 'odd_strategy'" in output and "upsert" in output
        assert not any(table_exists(project, t) for t in ("merge_no_key", "odd_strategy"))


class TestMicrobatchWithoutEventTime:
    @pytest.fixture(scope="class")
    def models(self):
        return {"no_event_time.sql": "{{ config(materialized='incremental', "
                                     "incremental_strategy='microbatch', batch_size='day', "
                                     "begin='2024-01-01') }} select 1 as id"}

    def test_error_names_model_and_config(self, project):
        from dbt.exceptions import ParsingError

        # dbt's parser refuses the project before any model runs
        with pytest.raises(ParsingError) as error:
            run_dbt(["run"])
        assert "Microbatch model 'no_event_time' must provide an 'event_time'" in str(error.value)
        assert not table_exists(project, "no_event_time")


GRAIN_EVENTS = """
{{ config(materialized='table', file_format='parquet', event_time='ts') }}
select cast(id as bigint) as id, cast(ts as timestamp) as ts
from values (1, '2024-01-01 10:00:00'), {{ var('day2', "(2, '2024-01-02 10:00:00'),
            (3, '2024-01-02 11:00:00'),") }} (4, '2024-01-03 09:00:00'),
            (5, '2024-01-03 10:30:00') as t(id, ts)
"""
# partitioned by the batch grain: the event_time column is the DATE partition column itself
BY_DAY = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_day',
          batch_size='day', begin='2024-01-01', partition_by='event_day') }}
select id, ts, cast(ts as date) as event_day from {{ ref('grain_events') }}
"""
# hourly batches into a table partitioned by the hour (a TIMESTAMP partition column)
BY_HOUR = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='hour', begin='2024-01-03', partition_by='event_hour') }}
select id, ts, date_trunc('hour', ts) as event_hour from {{ ref('grain_events') }}
"""
# the batch of 2024-01-02 fails while the model holds the bad line (dbt retry runs it alone)
FAILING_DAY = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='ts',
          batch_size='day', begin='2024-01-01', partition_by='dt') }}
{% if '2024-01-02' in (model.batch.event_time_start | string) %} not valid sql {% endif %}
select id, ts, cast(to_date(ts) as string) as dt from {{ ref('grain_events') }}
"""


def partition_files(project, table, snapshot_id=None) -> dict:
    """partition values -> names of its live data files at the snapshot (default: latest)."""
    from dbt.adapters.paimon.format.splits import plan_splits

    found = {}
    for split in plan_splits(open_table(project, table), snapshot_id):
        found.setdefault(split.partition_values, set()).update(f.file_name for f in split.files)
    return found


# `dbt retry` reads run_results.json
@pytest.mark.usefixtures("dbt_artifacts")
class TestMicrobatchAtPartitionGrain:
    """Paimon's INSERT OVERWRITE of a partition (FileStoreCommitImpl.overwrite with a partition
    filter: the partition's files deleted, the new ones added, one OVERWRITE snapshot) is what
    a batch commits when the table is partitioned by the batch's grain."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"grain_events.sql": GRAIN_EVENTS, "by_day.sql": BY_DAY,
                "by_hour.sql": BY_HOUR, "failing_day.sql": FAILING_DAY}

    def test_batch_overwrites_its_partition(self, project):
        run_dbt(["run", "-s", "grain_events"])
        run_dbt(["run", "-s", "by_day", *WINDOW])
        assert [(r[0], str(r[2])) for r in rows(project, "by_day")] == [
            (1, "2024-01-01"), (2, "2024-01-02"), (3, "2024-01-02"), (4, "2024-01-03"),
            (5, "2024-01-03")]
        table = open_table(project, "by_day")
        assert list(table.partition_keys) == ["event_day"]
        assert [f.type.type for f in table.table_schema.fields if f.name == "event_day"] \
            == ["DATE"]
        assert commit_kinds(project, "by_day") == ["APPEND", "OVERWRITE", "OVERWRITE"]
        before = partition_files(project, "by_day")
        assert len(before) == 3

        # day 2's rows change upstream: its batch alone replaces exactly its partition
        run_dbt(["run", "-s", "grain_events", "--vars", "{day2: \"(6, '2024-01-02 12:00:00'),\"}"])
        run_dbt(["run", "-s", "by_day", "--event-time-start", "2024-01-02",
                 "--event-time-end", "2024-01-03"])
        assert sorted(r[0] for r in rows(project, "by_day")) == [1, 4, 5, 6]
        assert commit_kinds(project, "by_day")[3:] == ["OVERWRITE"]
        after = partition_files(project, "by_day")
        day2 = next(p for p in after if str(p[0]) == "2024-01-02")
        assert after[day2].isdisjoint(before[day2])              # new files for day 2 ...
        assert {p: f for p, f in after.items() if p != day2} == \
               {p: f for p, f in before.items() if p != day2}    # ... the others untouched

        # the batch again, with day 2 gone upstream: its partition is emptied, nothing else
        run_dbt(["run", "-s", "grain_events", "--vars", "{day2: ''}"])
        run_dbt(["run", "-s", "by_day", "--event-time-start", "2024-01-02",
                 "--event-time-end", "2024-01-03"])
        assert sorted(r[0] for r in rows(project, "by_day")) == [1, 4, 5]
        assert commit_kinds(project, "by_day")[4:] == ["OVERWRITE"]
        emptied = partition_files(project, "by_day")
        assert day2 not in emptied
        assert emptied == {p: f for p, f in before.items() if p != day2}

    def test_hourly_batches_into_hour_partitions(self, project):
        run_dbt(["run", "-s", "grain_events"])
        hours = ["--event-time-start", "2024-01-03 09:00:00", "--event-time-end",
                 "2024-01-03 11:00:00"]
        run_dbt(["run", "-s", "by_hour", *hours])
        assert [(r[0], str(r[2])) for r in rows(project, "by_hour")] == [
            (4, "2024-01-03 09:00:00"), (5, "2024-01-03 10:00:00")]
        assert commit_kinds(project, "by_hour") == ["APPEND", "OVERWRITE"]
        before = partition_files(project, "by_hour")
        run_dbt(["run", "-s", "by_hour", *hours])                 # a re-run: no duplicates
        assert sorted(r[0] for r in rows(project, "by_hour")) == [4, 5]
        assert commit_kinds(project, "by_hour")[2:] == ["OVERWRITE", "OVERWRITE"]
        after = partition_files(project, "by_hour")
        assert after.keys() == before.keys()
        assert all(after[p].isdisjoint(before[p]) for p in after)

    def test_retry_runs_the_failed_batch(self, project):
        """A failed batch commits nothing and the other batches stand (dbt's PartialSuccess);
        `dbt retry` runs only the failed batch: one more commit, no duplicated row."""
        run_dbt(["run", "-s", "grain_events"])
        results = run_dbt(["run", "-s", "failing_day", *WINDOW], expect_pass=False)
        assert results[0].status == "partial success"
        assert sorted(r[0] for r in rows(project, "failing_day")) == [1, 4, 5]
        assert len(commit_kinds(project, "failing_day")) == 2    # days 1 and 3 only
        write_file(FAILING_DAY.replace("not valid sql", ""), project.project_root, "models",
                   "failing_day.sql")
        results = run_dbt(["retry"])
        assert [r.status for r in results] == ["success"]
        assert sorted(r[0] for r in rows(project, "failing_day")) == [1, 2, 3, 4, 5]
        kinds = commit_kinds(project, "failing_day")
        assert len(kinds) == 3 and kinds[2] == "OVERWRITE"
