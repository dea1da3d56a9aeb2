"""paimon_append from a dbt project: appends, partition overwrite, full refresh, one commit each."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds


EVENTS = """
{{ config(materialized='paimon_append', partition_by='dt',
          incremental_strategy=var('strategy', 'append')) }}
select cast(id as bigint) as id, name, dt
from values {{ var('rows', "(1, 'a', 'd1'), (2, 'b', 'd2')") }} as t(id, name, dt)
"""


def rows(project, sql):
    return sorted(tuple(r) for r in project.run_sql(sql, fetch="all"))


class TestPaimonAppend:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS}

    def test_append_overwrite_and_full_refresh(self, project):
        table = f"{project.test_schema}.events"
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{rows: \"(3, 'c', 'd2')\"}"])
        assert rows(project, f"select * from {table}") == [
            (1, "a", "d1"), (2, "b", "d2"), (3, "c", "d2")]
        # insert_overwrite replaces only the partitions the run writes (d2), like INSERT OVERWRITE
        run_dbt(["run", "--vars", "{strategy: insert_overwrite, rows: \"(4, 'd', 'd2')\"}"])
        assert rows(project, f"select * from {table}") == [(1, "a", "d1"), (4, "d", "d2")]
        assert commit_kinds(project, "events") == ["APPEND", "APPEND", "OVERWRITE"]
        run_dbt(["run", "--full-refresh"])
        assert rows(project, f"select * from {table}") == [(1, "a", "d1"), (2, "b", "d2")]
        assert commit_kinds(project, "events") == ["APPEND"]


class TestAppendConfigErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "keyed.sql": "{{ config(materialized='paimon_append', primary_key='id') }} select 1 as id",
            "tracked.sql": "{{ config(materialized='paimon_append', row_tracking=true, buckets=2) }}"
            " select 1 as id",
            "merge.sql": "{{ config(materialized='paimon_append', incremental_strategy='merge') }}"
            " select 1 as id",
        }

    def test_errors_name_model_and_fix(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'keyed'" in output and "without primary key" in output
        assert "Model 'tracked'" in output and "unbucketed" in output
        assert "Model 'merge'" in output and "needs config `unique_key`" in output
        assert "row_tracking=true" in output


QUEUE = """
{{ config(materialized='paimon_append', buckets=2, bucket_key='k') }}
select concat('k', cast(id % 3 as string)) as k, cast(id as bigint) as n
from range({{ var('start', 0) }}, {{ var('start', 0) }} + 30)
"""
QUEUE_YML = """
version: 2
models:
  - name: queue
    columns:
      - name: n
        data_tests: [unique, not_null]
"""


class TestQueueTable:
    @pytest.fixture(scope="class")
    def models(self):
        return {"queue.sql": QUEUE, "schema.yml": QUEUE_YML}

    def test_each_bucket_reads_in_write_order(self, project):
        from dbt.adapters.paimon.format.bucket import bucket_ids
        import pyarrow as pa

        run_dbt(["run"])
        run_dbt(["run", "--vars", "{start: 30}"])
        run_dbt(["test"])
        read = project.run_sql(f"select k, n from {project.test_schema}.queue", fetch="all")
        per_bucket = {}
        for k, n in read:
            per_bucket.setdefault(int(bucket_ids(pa.table({"k": [k]}), 2)[0]), []).append(n)
        assert sorted(n for ns in per_bucket.values() for n in ns) == list(range(60))
        assert len(per_bucket) == 2 and all(ns == sorted(ns) for ns in per_bucket.values())
        assert commit_kinds(project, "queue") == ["APPEND", "APPEND"]
