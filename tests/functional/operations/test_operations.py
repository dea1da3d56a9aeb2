"""Table operations from a dbt project: `dbt run-operation compact | rescale_buckets |
expire_snapshots | remove_orphan_files | paimon_table_info` on tables built by paimon_pk models."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from dbt.adapters.paimon.format import splits
from tests.functional.batch_runs import run_batch
from tests.functional.paimon_tables import commit_kinds, location

ORDERS = """
{{ config(materialized='paimon_pk', primary_key=['dt', 'id'], partition_by='dt', buckets=2) }}
select concat('2024-03-1', cast(id % 2 + 1 as string)) as dt, cast(id as bigint) as id,
       cast(id * {{ env_var('DBT_TEST_BATCH', '0') }} as bigint) as v
from range(0, 40)
"""

FIRST = """
{{ config(materialized='paimon_pk', primary_key='id', merge_engine='first-row', buckets=2) }}
select cast(id as bigint) as id, cast({{ env_var('DBT_TEST_BATCH', '0') }} as bigint) as batch
from range(0, 20)
where id < 10 * {{ env_var('DBT_TEST_BATCH', '0') }}
"""

DYNAMIC = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=-1) }}
select cast(id as bigint) as id from range(0, 5)
"""


def files(project, table):
    return [f for s in splits.plan_splits(location(project, table).open()) for f in s.files]


def rows(project, table):
    return [tuple(r) for r in project.run_sql(
        f"select * from {project.test_schema}.{table} order by 1, 2", fetch="all")]


def operation(name, args, expect_pass=True):
    return run_dbt_and_capture(["run-operation", name, "--args", args], expect_pass=expect_pass)


class TestOperations:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "first_rows.sql": FIRST, "dyn.sql": DYNAMIC}

    def test_compact_rescale_expire_info(self, project):
        for batch in (1, 2, 3):
            run_batch(["run", "--select", "orders"], batch)
        before = rows(project, "orders")
        assert len(before) == 40 and len(files(project, "orders")) == 12

        _, out = operation("compact", '{model: orders, partitions: [{dt: "2024-03-12"}], full: true}')
        assert "full compaction" in out and "data files 6 -> 2" in out
        assert commit_kinds(project, "orders") == ["APPEND"] * 3 + ["COMPACT"]
        assert rows(project, "orders") == before
        levels = {(f.level) for s in splits.plan_splits(location(project, "orders").open(),
                                                        partition_filter={"dt": "2024-03-12"})
                  for f in s.files}
        assert levels == {5}

        _, out = operation("compact", f"{{relation: {project.test_schema}.orders, full: true}}")
        assert len(files(project, "orders")) == 4 and rows(project, "orders") == before

        _, out = operation("paimon_table_info", "{model: orders}")
        assert "Files per (partition, bucket)" in out and "L5:1" in out and "COMPACT" in out

        _, out = operation("rescale_buckets", "{model: orders, buckets: 3}")
        assert "from 2 to 3 buckets" in out
        assert commit_kinds(project, "orders")[-1] == "OVERWRITE"
        assert location(project, "orders").open().table_schema.options["bucket"] == "3"
        assert rows(project, "orders") == before
        # the model says buckets=3 too from now on; its next run writes into the new buckets
        write_file(ORDERS.replace("buckets=2", "buckets=3"), project.project_root, "models",
                   "orders.sql")
        run_batch(["run", "--select", "orders"], 4)
        after_run = rows(project, "orders")
        assert len(after_run) == 40 and (("2024-03-11", 4, 16)) in after_run
        assert {s.total_buckets for s in splits.plan_splits(location(project, "orders").open())} == {3}

        _, out = operation("expire_snapshots", '{model: orders, retain_last: 2, older_than: "0 ms"}')
        assert "expired 5 snapshot(s) 1..5" in out
        assert [s.id for s in splits.list_snapshots(location(project, "orders").open())] == [6, 7]
        assert rows(project, "orders") == after_run

        _, out = operation("remove_orphan_files", "{model: orders, dry_run: true}")
        assert "would delete 0 orphan file(s)" in out

    def test_first_row_table_readable_after_compaction(self, project):
        for batch in (1, 2):
            run_batch(["run", "--select", "first_rows"], batch)
        ours = rows(project, "first_rows")
        assert ours == [(i, 1 if i < 10 else 2) for i in range(20)]
        # pypaimon's reader skips level 0 of first-row tables: it sees nothing until the files
        # are compacted (automatically after each run once the model builder calls after_run)
        operation("compact", "{model: first_rows}")
        assert {f.level for f in files(project, "first_rows")} == {5}
        table = location(project, "first_rows").open()
        builder = table.new_read_builder()
        theirs = builder.new_read().to_arrow(builder.new_scan().plan().splits())
        assert sorted(tuple(r.values()) for r in theirs.to_pylist()) == ours
        assert rows(project, "first_rows") == ours

    def test_errors(self, project):
        run_batch(["run", "--select", "dyn"], 1)
        _, out = operation("rescale_buckets", "{model: dyn, buckets: 4}", expect_pass=False)
        assert "dynamic bucket mode" in out
        _, out = operation("compact", "{model: nope}", expect_pass=False)
        assert "no model named 'nope'" in out
        _, out = operation("compact", "{}", expect_pass=False)
        assert "exactly one of 'model'" in out


SNAPSHOT_LOG = """
{{ config(materialized='table') }}
select snapshot_id, commit_kind, total_record_count
from {{ paimon_system(ref('orders'), 'snapshots') }}
"""

# fails (returns rows) unless audit_log holds every row of the table, each as +I
AUDIT_COMPLETE = """
select * from (select count(*) as n from {{ paimon_system(ref('orders'), 'audit_log') }}
               where rowkind = '+I') a
where n != (select count(*) from {{ ref('orders') }})
"""


class TestSystemTables:
    """`paimon_system(ref(...), name)`: Paimon's system tables in a model, a singular test and
    `dbt show` (over Spark Connect too: tests/functional/operations is in CONNECT_TESTS)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "snapshot_log.sql": SNAPSHOT_LOG}

    @pytest.fixture(scope="class")
    def tests(self):
        return {"audit_log_complete.sql": AUDIT_COMPLETE}

    def test_system_tables_in_models_tests_and_show(self, project):
        for batch in (1, 2):
            run_batch(["run", "--select", "orders"], batch)
        run_batch(["build", "--select", "snapshot_log", "audit_log_complete"], 2)
        assert [tuple(r) for r in project.run_sql(
            f"select * from {project.test_schema}.snapshot_log order by 1", fetch="all")] == \
            [(1, "APPEND", 40), (2, "APPEND", 80)]

        _, out = run_dbt_and_capture([
            "show", "--inline", "select partition, sum(record_count) as records from "
            "{{ paimon_system(ref('orders'), 'files') }} group by 1 order by 1"])
        assert "[2024-03-11]" in out and "[2024-03-12]" in out and "40" in out

        with pytest.raises(Exception, match="unknown Paimon system table 'snapshot'; "
                                            "supported: snapshots, schemas"):
            run_dbt(["show", "--inline",
                     "select * from {{ paimon_system(ref('orders'), 'snapshot') }}"])
