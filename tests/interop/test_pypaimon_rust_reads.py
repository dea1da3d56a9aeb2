"""A third Paimon implementation: pypaimon-rust 0.4.0 (the Rust core of pypaimon, PyPI
``pypaimon-rust``, a dev extra -- never a runtime dependency; it brings no pyarrow pin and runs
beside the project's pyarrow 19.0.1) reads tables dbt-paimon wrote, and must see the rows our
own merged read sees: every engine, sequence groups, aggregation, deletes, partitions, dynamic
buckets. Its merged read is its own merge-function code, independent of ours and of Java's.
"""
from __future__ import annotations

import pyarrow as pa
import pytest

from test_java_reads_our_tables import KV, _kv, make_table, ordered, ours, render, write_run

from pypaimon_rust.datafusion import SQLContext

from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.format.kv_files import read_append_split


def rust_rows(location):
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": location.warehouse})
    batches = ctx.sql(f"SELECT * FROM paimon.{location.database}.{location.table}")
    table = pa.Table.from_batches(batches) if batches else pa.table({})
    return [{k: render(v) for k, v in row.items()} for row in table.to_pylist()]


def assert_rust_reads_ours(location, keys):
    mine = ordered(ours(location), keys)
    assert mine, "the table should hold rows"
    assert ordered(rust_rows(location), keys) == mine


RUNS = [_kv([1, 2, 3, 4, 1], amounts=[1, 2, 3, 4, 5], kinds=["+I"] * 5),
        _kv([2, 3, 5], amounts=[20, 30, 50], kinds=["+U", "-D", "+I"]),
        _kv([4, 6, 6], amounts=[40, None, 61], kinds=["+U", "+I", "+U"])]


@pytest.mark.parametrize("engine, options", [
    ("deduplicate", {}),
    ("aggregation", {"fields.amount.aggregate-function": "sum", "fields.score.aggregate-function": "max",
                     "fields.name.aggregate-function": "listagg", "fields.name.ignore-retract": "true",
                     "fields.score.ignore-retract": "true"}),
    ("partial-update", {"ignore-delete": "true"}),
])
def test_rust_reads_our_engines(spark, tmp_path, engine, options):
    location = make_table(tmp_path, engine.replace("-", "_"), KV, ["id"],
                          options={"bucket": "2", "merge-engine": engine, **options})
    for run in RUNS:
        write_run(spark, location, run, row_kind_column="op")
    assert_rust_reads_ours(location, ["id"])


def test_rust_reads_our_sequence_groups_partitions_and_dynamic_buckets(spark, tmp_path):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("day", pa.string(), nullable=False),
                        ("a", pa.int32()), ("b", pa.int32()), ("g", pa.int64()), ("c", pa.string()), ("h", pa.int64())])
    location = make_table(tmp_path, "groups", schema, ["id", "day"], ["day"], options={
        "bucket": "-1", "merge-engine": "partial-update", "fields.g.sequence-group": "a,b",
        "fields.h.sequence-group": "c", "fields.b.aggregate-function": "sum"})
    runs = [
        {"id": [1, 2, 1], "day": ["d1", "d1", "d2"], "a": [1, 2, 3], "b": [10, 20, 30], "g": [5, 5, 5],
         "c": ["x", "y", "z"], "h": [1, 1, 1]},
        {"id": [1, 2, 1], "day": ["d1", "d1", "d2"], "a": [9, None, 4], "b": [1, 2, 3], "g": [4, 6, None],
         "c": ["late", None, "w"], "h": [2, None, 0]},
    ]
    for run in runs:
        write_run(spark, location, pa.table(run, schema=schema))
    assert_rust_reads_ours(location, ["id", "day"])


@pytest.mark.parametrize("engine, options", [
    ("deduplicate", ""),
    ("aggregation", ", 'fields.amount.aggregate-function' = 'sum', 'fields.name.aggregate-function' = 'max'"),
    ("partial-update", ""),
])
def test_we_read_tables_rust_wrote(tmp_path, engine, options):
    """The other direction: pypaimon-rust creates and writes (two commits); our merged read sees
    the rows it sees."""
    from dbt.adapters.paimon.datasource.source import TableRef

    warehouse = str(tmp_path / "warehouse")
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    ctx.sql("CREATE DATABASE IF NOT EXISTS paimon.db")
    name = engine.replace("-", "_")
    ctx.sql(f"CREATE TABLE paimon.db.{name} (id BIGINT NOT NULL, name STRING, amount INT, PRIMARY KEY (id)) "
            f"WITH ('bucket' = '2', 'merge-engine' = '{engine}'{options})")
    ctx.sql(f"INSERT INTO paimon.db.{name} VALUES (1, 'a', 1), (2, 'b', 2), (3, NULL, 3)")
    ctx.sql(f"INSERT INTO paimon.db.{name} VALUES (1, NULL, 10), (3, 'c', NULL), (4, 'd', 4)")
    location = TableRef(warehouse, "db", name, {})
    assert_rust_reads_ours(location, ["id"])


# --------------------------------------------------------------------------- append and queue tables

def test_rust_reads_our_append_and_queue_tables(spark, tmp_path):
    """Append tables (unaware-bucket, partitioned, row tracking) and queue tables (fixed buckets
    on a bucket key): pypaimon-rust reads the rows we read, and a queue bucket's rows in write
    order. (After UPDATE / MERGE / DELETE a row-tracking table holds files that store ``_ROW_ID``
    and have no first_row_id, as Paimon's RowTrackingCommitUtils.assignRowTrackingMeta leaves
    them; pypaimon-rust 0.4.0 refuses those: "Row-tracked file ... is missing first_row_id".)"""
    from test_java_reads_append_tables import append, make

    from dbt.adapters.paimon.format.bucket import bucket_ids

    def ours_appended(location):
        table = location.open()
        return [{k: render(v) for k, v in row.items()} for split in splits_mod.plan_splits(table)
                for row in read_append_split(table, split).to_pylist()]

    events = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("dt", pa.string())])
    plain = make(tmp_path, "events", events, ["dt"], {"row-tracking.enabled": "true"})
    for start in (0, 30):
        append(spark, plain, [(i, f"k{i % 3}", f"d{i % 2}") for i in range(start, start + 30)],
               "id bigint, kind string, dt string")
    assert ordered(rust_rows(plain), ["id"]) == ordered(ours_appended(plain), ["id"])
    assert len(rust_rows(plain)) == 60

    queue = make(tmp_path, "queue", pa.schema([("k", pa.string()), ("n", pa.int64())]),
                 options={"bucket": "2", "bucket-key": "k"})
    for start in (0, 50):
        append(spark, queue, [(f"k{i % 5}", i) for i in range(start, start + 50)], "k string, n bigint")
    rows = rust_rows(queue)
    assert ordered(rows, ["n"]) == ordered(ours_appended(queue), ["n"])
    assert sorted(r["n"] for r in rows) == list(range(100))
    per_bucket = {}
    for row in rows:
        per_bucket.setdefault(int(bucket_ids(pa.table({"k": [row["k"]]}), 2)[0]), []).append(row["n"])
    assert len(per_bucket) == 2 and all(ns == sorted(ns) for ns in per_bucket.values())
