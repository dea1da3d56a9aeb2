"""The two executors of a primary-key run (write/path_choice.py) write the same table: random
runs written once in-process and once in Spark tasks give the same snapshots, the same files per
(partition, bucket) with the same rows, sequence numbers and statistics, and byte-identical
data files (the parquet writer is deterministic for the same rows). Also: how ``auto`` chooses,
and that the run reports its path.
"""
from __future__ import annotations

import io
import math
import re
import sys
import threading
import time
import uuid

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import write_primary_key_run
from dbt.adapters.paimon.write.path_choice import choose_path, estimated_bytes
from dbt.adapters.paimon.write.plan_size import explain_cost
from tests.integration.table_files import bucket_file_bytes, live_file_metadata
from write_helpers import make_table, read_back

SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False),
                    pa.field("tag", pa.string(), nullable=False),
                    pa.field("dt", pa.string(), nullable=False),
                    ("ts", pa.int64()), ("amount", pa.float64()), ("note", pa.string())])
KEYS = ["id", "tag", "dt"]
TAGS = ["", "a", "é", "日本語のキー", "x" * 40]
LAYOUTS = {
    "fixed-partitioned": (["dt"], {"bucket": "3"}),
    "dynamic-partial-update": ([], {"bucket": "-1", "merge-engine": "partial-update",
                                    "dynamic-bucket.target-row-num": "4"}),
    "fixed-aggregation-input-changelog": ([], {
        "bucket": "2", "merge-engine": "aggregation", "changelog-producer": "input",
        "fields.amount.aggregate-function": "sum", "fields.ts.aggregate-function": "max"}),
}

records = st.fixed_dictionaries({
    "id": st.integers(0, 6),
    "tag": st.sampled_from(TAGS),
    "dt": st.sampled_from(["d1", "d2"]),
    "ts": st.one_of(st.none(), st.integers(-3, 3)),
    "amount": st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)),
    "note": st.one_of(st.none(), st.text(max_size=8)),
    "op": st.sampled_from(["+I", "+I", "+U", "-U", "-D"]),
})
# no shrinking: each example is two Spark jobs per run, a shrink would take minutes
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
streams = st.lists(st.lists(records, max_size=15), min_size=1, max_size=2)


def _comparable(table: pa.Table):
    rows = table.sort_by([(k, "ascending") for k in KEYS]).to_pylist()
    return [{k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in rows]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@settings(max_examples=3, deadline=None, derandomize=True, phases=PHASES,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(stream=streams)
def test_both_paths_write_the_same_table(spark, tmp_path, layout, stream):
    partitions, options = LAYOUTS[layout]
    root = tmp_path / uuid.uuid4().hex
    tables = {path: make_table(root / path, "t", SCHEMA, KEYS, partitions, options)
              for path in ("distributed", "in_process")}
    for rows in stream:
        run = pa.Table.from_pylist(rows, schema=SCHEMA.append(pa.field("op", pa.string())))
        outcome = {}
        for path, location in tables.items():
            try:
                result = write_primary_key_run(spark, spark.createDataFrame(run), location,
                                               row_kind_column="op", model_name="paths",
                                               write_path=path)
                assert result.path == path
                outcome[path] = ("ok", result.snapshot_id, result.records, result.files,
                                 result.buckets)
            except PaimonDataError as exc:
                # a merge refusal names the bucket that failed first, on either path one of
                # several: its count of retractions differs, not the refusal
                first_line = str(exc).splitlines()[0]
                outcome[path] = ("refused", re.sub(r"\d+ retraction", "N retraction",
                                                   first_line))
        assert outcome["distributed"] == outcome["in_process"]
    a, b = tables["distributed"], tables["in_process"]
    assert live_file_metadata(a) == live_file_metadata(b)
    assert bucket_file_bytes(a) == bucket_file_bytes(b)
    assert _comparable(read_back(a)) == _comparable(read_back(b))


def test_auto_chooses_by_spark_size_estimate(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, KEYS, [], {"bucket": "2"})
    query = ("select cast(id as int) as id, 'a' as tag, 'd1' as dt, id as ts, "
             "cast(id as double) as amount, 'n' as note from range(0, 1000)")
    small = spark.sql(query)
    estimate = estimated_bytes(small)
    assert estimate is not None and 1000 <= estimate < 1 << 20
    assert choose_path(spark, small, "m").path == "in_process"
    assert choose_path(spark, small, "m", max_bytes=estimate - 1).path == "distributed"
    assert choose_path(spark, small, "m", requested="distributed").path == "distributed"
    # rows from a Python list (an RDD in classic Spark): no estimate, so Spark tasks write
    unknown = spark.createDataFrame([(1, "a")], "id int, tag string")
    assert estimated_bytes(unknown) is None
    choice = choose_path(spark, unknown, "m")
    assert choice.path == "distributed" and "cannot be estimated" in choice.reason
    assert choose_path(spark, unknown, "m", requested="in_process").path == "in_process"

    result = write_primary_key_run(spark, small, location, model_name="m")
    assert (result.path, result.records, result.snapshot_id) == ("in_process", 1000, 1)
    assert "budget" in result.path_reason
    spark.conf.set("spark.dbt.paimon.inProcessMaxBytes", "10")
    try:
        result = write_primary_key_run(spark, small, location, model_name="m")
    finally:
        spark.conf.unset("spark.dbt.paimon.inProcessMaxBytes")
    assert (result.path, result.snapshot_id) == ("distributed", 2)
    assert read_back(location).num_rows == 1000


def test_in_process_bad_rows_fail_before_any_file(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, KEYS, ["dt"], {"bucket": "2"})
    rows = [(i, "a", "d1", None, None, None) for i in range(50)] + [(None, "b", "d2", 1, 1.0,
                                                                     "bad")]
    df = spark.createDataFrame(rows, "id int, tag string, dt string, ts long, amount double, "
                                     "note string")
    with pytest.raises(PaimonDataError, match="column 'id'.*NULL"):
        write_primary_key_run(spark, df, location, model_name="m", write_path="in_process")
    assert read_back(location).num_rows == 0
    assert bucket_file_bytes(location) == {}


def test_sizing_a_query_leaves_the_process_stdout_to_other_threads(spark):
    """The estimate reads Spark's cost plan as a string: the process's sys.stdout is never
    swapped while it is taken, so a model sized in one dbt thread neither catches the lines
    other threads print meanwhile nor prints its plan on the terminal (dbt --threads)."""
    stream, swapped, done = io.StringIO(), [], threading.Event()

    def watch():
        while not done.is_set():
            if sys.stdout is not stream:
                swapped.append(sys.stdout)
            time.sleep(0)

    saved, sys.stdout = sys.stdout, stream
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        plans = [explain_cost(spark.sql(f"select id, id * {n} as v from range(0, 100)"))
                 for n in range(20)]
    finally:
        done.set()
        watcher.join()
        sys.stdout = saved
    assert all("== Optimized Logical Plan ==" in p and "sizeInBytes" in p for p in plans)
    assert swapped == [] and stream.getvalue() == ""
