"""dbt-paimon on the 2-worker standalone cluster: paimon_pk (updates, deletes, several runs;
fixed buckets, and dynamic buckets with cross-partition updates), partial_update (a wide table from 2 models), paimon_append, compaction and rescale, and proof
that the work ran in executor processes.

Expected rows are what local mode gives: the runtime kernel (``merge_arrow``, the same code a
local run merges with) over the same input rows in the same arrival order, one commit per run.
The inputs are ``range()`` queries, so each run's rows come from both executors and the arrival
order (``_seq``) is numbered across them. The warehouse is given as a ``file://`` URI.

One dbt project for the class: its tests run in order, each continuing the tables the previous
one left (as a user's successive ``dbt run``s do).
"""

import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig
from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow
from tests.functional.console_output import FORBIDDEN, LOG4J_LINE, PYTHON_WARNING

ORDERS = """
{{ config(materialized='paimon_pk', primary_key=['dt', 'k'], partition_by='dt',
          buckets=var('buckets', 2), row_kind_column='op') }}
select concat('d', cast(id % 3 as string)) as dt, cast(id % 600 as bigint) as k,
       cast(id * {{ var('batch') }} as bigint) as v,
       case when id % 7 = {{ var('batch') }} then '-D' else '+I' end as op
from range({{ var('batch') }} * 500, {{ var('batch') }} * 500 + 2000)
"""

WIDE_A = """
{{ config(materialized='partial_update', target='wide', primary_key='k',
          sequence_groups={'ts_a': ['a']}, buckets=2) }}
select cast(id % 300 as bigint) as k, cast(id * {{ var('batch') }} as bigint) as a,
       cast((id * 37) % 1000 as bigint) as ts_a
from range({{ var('batch') }} * 200, {{ var('batch') }} * 200 + 900)
"""

WIDE_B = """
{{ config(materialized='partial_update', target='wide', primary_key='k',
          sequence_groups={'ts_b': ['b']}, buckets=2) }}
select cast(id % 400 as bigint) as k, concat('b', cast(id as string), '-{{ var("batch") }}') as b,
       cast((id * 53) % 1000 as bigint) as ts_b
from range({{ var('batch') }} * 300, {{ var('batch') }} * 300 + 1100)
"""

# dynamic buckets, partition not in the primary key: cross-partition updates (a key moves to the
# partition of its latest row), with Paimon's HASH index files written by the tasks
MOVING = """
{{ config(materialized='paimon_pk', primary_key='k', partition_by='dt', buckets=-1) }}
select concat('d', cast((id + {{ var('batch') }}) % 2 as string)) as dt,
       cast(id % 251 as bigint) as k, cast(id * {{ var('batch') }} as bigint) as v
from range({{ var('batch') }} * 100, {{ var('batch') }} * 100 + 700)
"""

EVENTS = """
{{ config(materialized='paimon_append', partition_by='dt') }}
select cast(id as bigint) as id, concat('d', cast(id % 2 as string)) as dt,
       cast({{ var('batch') }} as int) as batch
from range(0, 1500)
"""

BATCHES = (1, 2, 3)


# --------------------------------------------------------------------------- expected rows

def orders_input(batch: int) -> pa.Table:
    ids = np.arange(batch * 500, batch * 500 + 2000, dtype=np.int64)
    return pa.table({
        "dt": pc.binary_join_element_wise("d", pa.array((ids % 3).astype(str)), ""),
        "k": ids % 600,
        "v": ids * batch,
        "_row_kind": np.where(ids % 7 == batch, "-D", "+I"),
    })


def moving_input(batch: int) -> pa.Table:
    ids = np.arange(batch * 100, batch * 100 + 700, dtype=np.int64)
    return pa.table({
        "dt": pc.binary_join_element_wise("d", pa.array(((ids + batch) % 2).astype(str)), ""),
        "k": ids % 251,
        "v": ids * batch,
        "_row_kind": pa.array(["+I"] * len(ids)),
    })


def wide_inputs(batch: int):
    a_ids = np.arange(batch * 200, batch * 200 + 900, dtype=np.int64)
    b_ids = np.arange(batch * 300, batch * 300 + 1100, dtype=np.int64)
    b_text = pc.binary_join_element_wise("b", pa.array(b_ids.astype(str)), f"-{batch}", "")
    a = pa.table({"k": a_ids % 300, "a": a_ids * batch, "ts_a": (a_ids * 37) % 1000,
                  "b": pa.nulls(len(a_ids), pa.string()), "ts_b": pa.nulls(len(a_ids), pa.int64())})
    b = pa.table({"k": b_ids % 400, "a": pa.nulls(len(b_ids), pa.int64()),
                  "ts_a": pa.nulls(len(b_ids), pa.int64()), "b": b_text, "ts_b": (b_ids * 53) % 1000})
    return [a.append_column("_row_kind", pa.array(["+I"] * len(a_ids))),
            b.append_column("_row_kind", pa.array(["+I"] * len(b_ids)))]


def merged(spec: MergeSpec, commits) -> list:
    """What a reader sees after ``commits`` (one input table each, rows in arrival order)."""
    seq, parts = 0, []
    for number, table in enumerate(commits):
        parts.append(table.append_column("_seq", pa.array(np.arange(seq, seq + len(table))))
                     .append_column("_commit", pa.array([number] * len(table), pa.int64())))
        seq += len(table)
    out = merge_arrow(spec, pa.concat_tables(parts))
    return [tuple(row.values()) for row in out.to_pylist()]


ORDERS_SPEC = MergeSpec.from_table_options(
    schema=[("dt", "STRING"), ("k", "BIGINT"), ("v", "BIGINT")], primary_keys=["dt", "k"],
    options={"merge-engine": "deduplicate"})
MOVING_SPEC = MergeSpec.from_table_options(
    schema=[("dt", "STRING"), ("k", "BIGINT"), ("v", "BIGINT")], primary_keys=["k"],
    options={"merge-engine": "deduplicate"})
WIDE_SPEC = MergeSpec.from_table_options(
    schema=[("k", "BIGINT"), ("a", "BIGINT"), ("ts_a", "BIGINT"), ("b", "STRING"),
            ("ts_b", "BIGINT")],
    primary_keys=["k"],
    options={"merge-engine": "partial-update", "fields.ts_a.sequence-group": "a",
             "fields.ts_b.sequence-group": "b"})


# --------------------------------------------------------------------------- helpers

def rows(project, sql):
    return [tuple(r) for r in project.run_sql(sql, fetch="all")]


def table(project, name):
    return TableRef(project.adapter.config.credentials.warehouse, project.test_schema,
                         name, {}).open()


def commit_kinds(project, name):
    return [s.commit_kind for s in splits.list_snapshots(table(project, name))]


def run_batch(batch, select=None, buckets=2):
    args = ["run", "--vars", f"{{batch: {batch}, buckets: {buckets}}}"]
    return run_dbt(args + (["--select", select] if select else []))


# --------------------------------------------------------------------------- tests

class TestClusterRuns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "wide_a.sql": WIDE_A, "wide_b.sql": WIDE_B,
                "moving.sql": MOVING, "events.sql": EVENTS}

    def test_warehouse_uri_is_the_folder(self, project, paimon_warehouse):
        # the profile says file://<folder>; the adapter works on the folder itself
        assert project.adapter.config.credentials.warehouse == paimon_warehouse

    def test_three_runs_merge_like_local_mode(self, project):
        for batch in BATCHES:
            results = run_batch(batch)
            assert len(results) == 5
        schema = project.test_schema
        assert rows(project, f"select dt, k, v from {schema}.orders order by dt, k") == merged(
            ORDERS_SPEC, [orders_input(b) for b in BATCHES])
        assert rows(project, f"select k, a, ts_a, b, ts_b from {schema}.wide order by k") == merged(
            WIDE_SPEC, [t for b in BATCHES for t in wide_inputs(b)])
        assert rows(project, f"select dt, k, v from {schema}.moving order by k") == merged(
            MOVING_SPEC, [moving_input(b) for b in BATCHES])
        events = rows(project, f"select id, dt, batch from {schema}.events order by batch, id")
        assert events == [(i, f"d{i % 2}", b) for b in BATCHES for i in range(1500)]
        # one Paimon commit per model and run
        assert commit_kinds(project, "orders").count("APPEND") == 3
        assert commit_kinds(project, "wide").count("APPEND") == 6
        assert commit_kinds(project, "events") == ["APPEND"] * 3
        assert commit_kinds(project, "moving").count("APPEND") == 3

    def test_compaction_and_rescale_keep_the_rows(self, project):
        schema = project.test_schema
        query = f"select dt, k, v from {schema}.orders order by dt, k"
        expected = merged(ORDERS_SPEC, [orders_input(b) for b in BATCHES])

        _, out = run_dbt_and_capture(["run-operation", "compact", "--args",
                                      "{model: orders, full: true}"])
        assert "full compaction" in out
        assert commit_kinds(project, "orders")[-1] == "COMPACT"
        orders = table(project, "orders")
        top = CompactionConfig.from_options(dict(orders.table_schema.options)).max_level
        assert {f.level for s in splits.plan_splits(orders) for f in s.files} == {top}
        assert rows(project, query) == expected

        _, out = run_dbt_and_capture(["run-operation", "rescale_buckets", "--args",
                                      "{model: orders, buckets: 3}"])
        assert "from 2 to 3 buckets" in out
        assert commit_kinds(project, "orders")[-1] == "OVERWRITE"
        assert {s.total_buckets for s in splits.plan_splits(table(project, "orders"))} == {3}
        assert rows(project, query) == expected

        # the next run writes into the 3 buckets and merges with the rescaled files
        run_batch(4, select="orders", buckets=3)
        assert rows(project, query) == merged(ORDERS_SPEC, [orders_input(b) for b in (*BATCHES, 4)])

    def test_tasks_ran_in_executor_processes(self, project, spark_cluster):
        from dbt.adapters.paimon import environments

        spark = environments.current_registry().activate()
        app_id = spark.sparkContext.applicationId

        def where(batches):
            for _ in batches:
                yield pa.RecordBatch.from_pydict({"pid": [os.getpid()], "cwd": [os.getcwd()]})

        seen = spark.range(0, 8, numPartitions=8).mapInArrow(where, "pid long, cwd string").collect()
        # an executor runs in <worker work dir>/<application id>/<executor id>
        executor_dirs = {os.path.realpath(r.cwd) for r in seen}
        assert os.getpid() not in {r.pid for r in seen}
        ours = {os.path.realpath(d) for d in spark_cluster.executor_dirs()
                if os.path.basename(os.path.dirname(d)) == app_id}
        assert executor_dirs == ours
        # one executor on each of the two workers
        workers = {os.path.dirname(os.path.dirname(d)) for d in executor_dirs}
        assert workers == {os.path.realpath(spark_cluster.work_dir(i)) for i in range(2)}

        # the dbt runs above: every executor of this application finished tasks, and they
        # left no file where they ran (all of them went to the warehouse)
        for executor_dir in executor_dirs:
            with open(os.path.join(executor_dir, "stderr"), errors="replace") as log:
                assert log.read().count("Finished task") > 10, executor_dir
            assert set(os.listdir(executor_dir)) == {"stderr", "stdout"}
        (app,) = [a for a in spark_cluster.state()["activeapps"] if a["id"] == app_id]
        assert app["cores"] == 2


class TestClusterFailureStaysQuiet:
    """A model failing on bad input in executors: dbt's error only on the terminal; the driver's
    Spark log lines go to <spark_state_dir>/logs/spark.log, the executors' to their workers."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"null_key.sql": "{{ config(materialized='paimon_pk', primary_key='id', "
                                "write_path='distributed') }}\n"
                                "select cast(if(id = 3, null, id) as int) as id from range(8)"}

    def test_bad_input_is_dbt_error_only(self, project, capfd):
        from dbt.adapters.paimon.environments import spark_logs

        capfd.readouterr()
        results = run_dbt(["run"], expect_pass=False)
        assert "column 'id': NULL in a primary key" in results.results[0].message
        terminal = "".join(capfd.readouterr())
        # the console checks of the session-mode and Connect tests, and the driver's own
        # TaskSetManager line, which only a cluster's driver logs for an executor's failure
        for noise in FORBIDDEN + ("ERROR TaskSetManager",):
            assert noise not in terminal, f"{noise!r} reached the terminal:\n{terminal}"
        for pattern in (LOG4J_LINE, PYTHON_WARNING,
                        re.compile(r"\d\d:\d\d:\d\d (ERROR|WARN|INFO) ")):
            assert not pattern.search(terminal), terminal
        with open(spark_logs.current_log_path(), errors="replace") as log:
            assert "ERROR TaskSetManager" in log.read()
