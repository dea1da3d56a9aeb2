"""Tables written by dbt-paimon's own code paths, read by Apache Paimon 1.0 Java (PaimonPeer).

Every test writes through ``write_primary_key_run`` (one Spark job, one commit per run) or the
``paimon`` Spark data source, and compares Paimon Java's batch read with our merged read
(``plan_splits`` + ``read_merged_split``), row for row.

Paimon 1.0 semantics documented here:
- first-row tables: Paimon 1.0 Java's batch read of a first-row table skips level-0 files
  (first-row relies on compaction to publish rows), so a table we never compacted reads EMPTY in
  Java; after our full compaction it reads the same rows as ours.
- DECIMAL(p <= 18) columns: Java 1.0 cannot read pypaimon's default parquet encoding of them
  (see ``test_decimal_10_2``); our writer stores them as integers like Java.
"""
from __future__ import annotations

import datetime
import decimal
import math
from typing import Dict, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef, read_merged_split
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.write import write_primary_key_run

from dbt.adapters.paimon.ops.compact import compact_table
from dbt.adapters.paimon.ops.rescale import rescale_buckets


# --------------------------------------------------------------------------- helpers

def make_table(tmp_path, name: str, schema: pa.Schema, primary_keys=(), partition_keys=(),
               options: Optional[Dict[str, str]] = None) -> TableRef:
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, schema, primary_keys=list(primary_keys),
                           partition_keys=list(partition_keys), options=options or {})
    return TableRef(wh, "db", name, {})


def write_run(spark, location: TableRef, run: pa.Table, row_kind_column=None):
    """Commits alternate between the two executors (write/path_choice.py), so Java reads tables
    written by both, and by both mixed."""
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    path = ("in_process", "distributed")[(current_snapshot_id(location.open()) or 0) % 2]
    return write_primary_key_run(spark, spark.createDataFrame(run), location,
                                 row_kind_column=row_kind_column, model_name=location.table,
                                 write_path=path)


def render(value):
    """A Python value as PaimonPeer renders it."""
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None).isoformat(timespec="microseconds")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value).replace("nan", "NaN").replace("inf", "Infinity")
    return value


def ours(location: TableRef, snapshot: Optional[int] = None) -> List[dict]:
    """Our merged read, rendered like PaimonPeer."""
    table = location.open()
    names = list(table.field_names)
    rows = []
    for split in splits_mod.plan_splits(table, snapshot_id=snapshot):
        for row in read_merged_split(table, split, names).to_pylist():
            rows.append({k: render(v) for k, v in row.items()})
    return rows


def ordered(rows: List[dict], keys: Sequence[str]) -> List[dict]:
    return sorted(rows, key=lambda r: tuple((r[k] is None, str(r[k])) for k in keys))


def java_rows(java_read, location: TableRef, snapshot: Optional[int] = None):
    return java_read(location.warehouse, location.name, snapshot)


def assert_same(java_read, location: TableRef, keys: Sequence[str],
                snapshot: Optional[int] = None) -> List[dict]:
    mine = ordered(ours(location, snapshot), keys)
    theirs = ordered(java_rows(java_read, location, snapshot), keys)
    assert theirs == mine
    return mine


# --------------------------------------------------------------------------- merge engines

KV = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                ("amount", pa.int32()), ("score", pa.float64())])


def _kv(ids, amounts=None, kinds=None, names=None):
    n = len(ids)
    data = {"id": pa.array(ids, pa.int64()),
            "name": pa.array(names or [f"n{i}-{j}" for j, i in enumerate(ids)], pa.string()),
            "amount": pa.array(amounts if amounts is not None else list(range(n)), pa.int32()),
            "score": pa.array([i * 0.5 for i in range(n)], pa.float64())}
    if kinds is not None:
        data["op"] = pa.array(kinds, pa.string())
    return pa.table(data)


def test_deduplicate_updates_and_deletes_several_commits(spark, tmp_path, java_read):
    location = make_table(tmp_path, "dedup", KV, ["id"], options={"bucket": "2"})
    runs = [
        _kv([1, 2, 3, 4, 5, 1], kinds=["+I"] * 6),
        _kv([2, 3, 3, 6, 4], kinds=["-D", "-U", "+U", "+I", "-D"]),
        _kv([4, 7, 5, 8], kinds=["+I", "-D", "-D", "+U"]),  # 7: delete of a never-seen key
    ]
    for run in runs:
        write_run(spark, location, run, row_kind_column="op")
    rows = assert_same(java_read, location, ["id"])
    assert [r["id"] for r in rows] == [1, 3, 4, 6, 8]
    # time travel: every snapshot reads the same in Java
    for snapshot in (1, 2):
        assert_same(java_read, location, ["id"], snapshot=snapshot)


def test_first_row(spark, tmp_path, java_read):
    location = make_table(tmp_path, "first", KV, ["id"],
                          options={"bucket": "2", "merge-engine": "first-row"})
    write_run(spark, location, _kv([1, 2, 3, 1], amounts=[10, 20, 30, 11]))
    write_run(spark, location, _kv([2, 4, 5], amounts=[21, 40, 50]))
    mine = ordered(ours(location), ["id"])
    assert [(r["id"], r["amount"]) for r in mine] == [(1, 10), (2, 20), (3, 30), (4, 40), (5, 50)]
    # Paimon 1.0 Java batch-reads of first-row tables skip level-0 files: never compacted = empty
    assert java_rows(java_read, location) == []
    result = compact_table(spark, location, full=True)
    assert result.snapshot_id is not None
    assert_same(java_read, location, ["id"])


def test_aggregation_sum_max(spark, tmp_path, java_read):
    location = make_table(tmp_path, "agg", KV, ["id"], options={
        "bucket": "2", "merge-engine": "aggregation",
        "fields.amount.aggregate-function": "sum",
        "fields.score.aggregate-function": "max",
        "fields.name.aggregate-function": "last_non_null_value"})
    write_run(spark, location, _kv([1, 2, 3, 1], amounts=[1, 2, 3, 4]))
    write_run(spark, location, _kv([1, 2, 4], amounts=[10, 20, 40]))
    write_run(spark, location, _kv([3, 3, 5], amounts=[100, 200, 500]))
    rows = assert_same(java_read, location, ["id"])
    assert [(r["id"], r["amount"]) for r in rows] == [(1, 15), (2, 22), (3, 303), (4, 40),
                                                       (5, 500)]


PU = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.string()),
                ("b", pa.int32()), ("g1", pa.int64()), ("c", pa.string()), ("g2", pa.int64())])


def _pu(ids, a, b, g1, c, g2):
    return pa.table({"id": pa.array(ids, pa.int64()), "a": pa.array(a, pa.string()),
                     "b": pa.array(b, pa.int32()), "g1": pa.array(g1, pa.int64()),
                     "c": pa.array(c, pa.string()), "g2": pa.array(g2, pa.int64())})


def test_partial_update_with_sequence_groups(spark, tmp_path, java_read):
    location = make_table(tmp_path, "pu", PU, ["id"], options={
        "bucket": "2", "merge-engine": "partial-update",
        "fields.g1.sequence-group": "a,b", "fields.g2.sequence-group": "c"})
    write_run(spark, location, _pu([1, 2, 3], ["a1", "a2", "a3"], [1, 2, 3], [5, 5, 5],
                                   ["c1", "c2", "c3"], [5, 5, 5]))
    # group 1 newer for id 1, older for id 2; group 2 only for id 3 (a,b NULL: no g1)
    write_run(spark, location, _pu([1, 2, 3], ["A1", "A2", None], [10, 20, None], [6, 4, None],
                                   [None, None, "C3"], [None, None, 7]))
    write_run(spark, location, _pu([3, 4], [None, "a4"], [None, 4], [None, 1], ["old", None],
                                   [6, None]))
    rows = assert_same(java_read, location, ["id"])
    assert [(r["id"], r["a"], r["c"]) for r in rows] == [
        (1, "A1", "c1"), (2, "a2", "c2"), (3, "a3", "C3"), (4, "a4", None)]


# --------------------------------------------------------------------------- layouts

@pytest.mark.parametrize("buckets", [2, 4])
def test_fixed_buckets_rows_and_bucket_assignment(spark, tmp_path, java_read, paimon_java,
                                                  buckets):
    location = make_table(tmp_path, f"fixed{buckets}", KV, ["id"],
                          options={"bucket": str(buckets)})
    rng = np.random.default_rng(buckets)
    for _ in range(2):
        ids = rng.integers(-500, 500, 300).tolist()
        write_run(spark, location, _kv(ids, amounts=rng.integers(0, 99, 300).tolist()))
    assert_same(java_read, location, ["id"])
    rows = paimon_java.buckets(location.warehouse, location.name)
    keys = pa.table({"id": pa.array([r["id"] for r in rows], pa.int64())})
    assert [r["_bucket"] for r in rows] == bucket_ids(keys, buckets).tolist()


EVENTS = pa.schema([pa.field("dt", pa.string(), nullable=False),
                    pa.field("id", pa.int32(), nullable=False),
                    ("v", pa.string()), ("day", pa.date32()), ("ts", pa.timestamp("us"))])


def _events(dts, ids, kinds=None):
    n = len(ids)
    data = {"dt": pa.array(dts, pa.string()), "id": pa.array(ids, pa.int32()),
            "v": pa.array([f"v{i}" for i in range(n)], pa.string()),
            "day": pa.array([datetime.date(2024, 1, 1 + i % 28) for i in range(n)], pa.date32()),
            "ts": pa.array([datetime.datetime(2024, 1, 1, 12, 0, i % 60, 1000 * i)
                            for i in range(n)], pa.timestamp("us"))}
    if kinds is not None:
        data["op"] = pa.array(kinds, pa.string())
    return pa.table(data)


def test_partitioned_table_with_deletes(spark, tmp_path, java_read, paimon_java):
    location = make_table(tmp_path, "events", EVENTS, ["dt", "id"], ["dt"],
                          options={"bucket": "2"})
    write_run(spark, location, _events(["a", "a", "b", "b", "c"], [1, 2, 1, 2, 3],
                                       kinds=["+I"] * 5), "op")
    write_run(spark, location, _events(["a", "b", "c", "c"], [2, 1, 3, 4],
                                       kinds=["-D", "+U", "+U", "+I"]), "op")
    rows = assert_same(java_read, location, ["dt", "id"])
    assert [(r["dt"], r["id"]) for r in rows] == [("a", 1), ("b", 1), ("b", 2), ("c", 3),
                                                   ("c", 4)]
    # buckets hash the primary key minus the partition columns
    got = paimon_java.buckets(location.warehouse, location.name)
    keys = pa.table({"id": pa.array([r["id"] for r in got], pa.int32())})
    assert [r["_bucket"] for r in got] == bucket_ids(keys, 2).tolist()


def test_dynamic_bucket_table(spark, tmp_path, java_read):
    location = make_table(tmp_path, "dyn", KV, ["id"], options={"bucket": "-1"})
    write_run(spark, location, _kv(list(range(50))))
    write_run(spark, location, _kv(list(range(25, 80)), kinds=["+I"] * 55), "op")
    assert_same(java_read, location, ["id"])


# --------------------------------------------------------------------------- types

DEC = pa.schema([pa.field("id", pa.int64(), nullable=False), ("amount", pa.decimal128(10, 2))])
WIDE_DEC = pa.schema([pa.field("id", pa.int64(), nullable=False),
                      ("amount", pa.decimal128(20, 2))])


def _decimals(schema, values):
    return pa.table({"id": pa.array(range(len(values)), pa.int64()),
                     "amount": pa.array([decimal.Decimal(v) if v is not None else None
                                         for v in values], schema.field("amount").type)})


def test_decimal_10_2(spark, tmp_path, java_read):
    location = make_table(tmp_path, "dec", DEC, ["id"], options={"bucket": "1"})
    """pypaimon's default parquet DECIMAL(p <= 18) (dictionary-encoded FIXED_LEN_BYTE_ARRAY)
    makes Paimon 1.0 Java fail with java.lang.UnsupportedOperationException: org.apache.paimon.
    shade.org.apache.parquet.column.values.dictionary.PlainValuesDictionary$PlainBinaryDictionary;
    catalog/warehouse.py stores them as integers, the way Paimon Java does."""
    write_run(spark, location, _decimals(DEC, ["1.50", "-2.25", None, "99999999.99"]))
    rows = assert_same(java_read, location, ["id"])
    assert [r["amount"] for r in rows] == ["1.50", "-2.25", None, "99999999.99"]


def test_decimal_20_2(spark, tmp_path, java_read):
    location = make_table(tmp_path, "wdec", WIDE_DEC, ["id"], options={"bucket": "1"})
    write_run(spark, location, _decimals(WIDE_DEC, ["1.50", "-2.25", None,
                                                    "123456789012345678.99"]))
    assert_same(java_read, location, ["id"])


# --------------------------------------------------------------------------- append table

def test_append_table_through_the_data_source(spark, tmp_path, java_read):
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("day", pa.date32())])
    location = make_table(tmp_path, "logs", schema)
    written = []
    for start in (0, 100):
        data = pa.table({
            "id": pa.array(range(start, start + 40), pa.int64()),
            "name": pa.array([f"x{i}" for i in range(40)], pa.string()),
            "day": pa.array([datetime.date(2024, 2, 1 + i % 20) for i in range(40)],
                            pa.date32())})
        written += [{k: render(v) for k, v in r.items()} for r in data.to_pylist()]
        df = spark.createDataFrame(data)
        (df.write.format("paimon").option("warehouse", location.warehouse)
         .option("table", location.name).mode("append").save())
    expected = spark.read.format("paimon").option("warehouse", location.warehouse) \
        .option("table", location.name).load().toArrow().to_pylist()
    expected = [{k: render(v) for k, v in r.items()} for r in expected]
    theirs = java_rows(java_read, location)
    assert len(theirs) == 80
    assert ordered(theirs, ["id"]) == ordered(expected, ["id"]) == ordered(written, ["id"])


# --------------------------------------------------------------------------- bucket keys

BUCKET_CASES = {
    "int": (pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.int32())]),
            lambda rng: {"k": pa.array(rng.integers(-2**31, 2**31 - 1, 200), pa.int32())}),
    "bigint": (pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int32())]),
               lambda rng: {"k": pa.array(rng.integers(-2**62, 2**62, 200), pa.int64())}),
    "string_short": (pa.schema([pa.field("k", pa.string(), nullable=False), ("v", pa.int32())]),
                     lambda rng: {"k": pa.array([f"s{i}" for i in range(200)], pa.string())}),
    "string_long": (pa.schema([pa.field("k", pa.string(), nullable=False), ("v", pa.int32())]),
                    lambda rng: {"k": pa.array([f"key-é-{i}-" + "x" * (i % 40)
                                                for i in range(200)], pa.string())}),
    "multi": (pa.schema([pa.field("k", pa.int32(), nullable=False),
                         pa.field("k2", pa.string(), nullable=False), ("v", pa.int32())]),
              lambda rng: {"k": pa.array(rng.integers(0, 20, 200), pa.int32()),
                           "k2": pa.array([f"name-{i}" * (1 + i % 2) for i in range(200)],
                                          pa.string())}),
}


@pytest.mark.parametrize("case", sorted(BUCKET_CASES))
def test_bucket_assignment_matches_java(spark, tmp_path, paimon_java, case):
    schema, make_keys = BUCKET_CASES[case]
    keys = [f.name for f in schema if f.name != "v"]
    location = make_table(tmp_path, f"b_{case}", schema, keys, options={"bucket": "5"})
    data = make_keys(np.random.default_rng(7))
    data["v"] = pa.array(range(200), pa.int32())
    run = pa.table(data).cast(schema)
    write_run(spark, location, run)
    rows = paimon_java.buckets(location.warehouse, location.name)
    distinct = {tuple(r[k] for k in keys) for r in run.select(keys).to_pylist()}
    assert len(rows) == len(distinct)
    key_table = pa.table({k: pa.array([r[k] for r in rows], schema.field(k).type)
                          for k in keys})
    assert [r["_bucket"] for r in rows] == bucket_ids(key_table, 5).tolist()
    assert len({r["_bucket"] for r in rows}) > 1


def engine_table(tmp_path, engine, buckets="2", prefix=""):
    """A KV table with ``engine`` (aggregation: amount sum, score max), named after it."""
    options = {"bucket": buckets, "merge-engine": engine}
    if engine == "aggregation":
        options.update({"fields.amount.aggregate-function": "sum",
                        "fields.score.aggregate-function": "max"})
    return make_table(tmp_path, prefix + engine.replace("-", "_"), KV, ["id"], options=options)


# --------------------------------------------------------------------------- our maintenance


@pytest.mark.parametrize("engine", ["deduplicate", "aggregation", "partial-update"])
def test_after_our_compaction_and_rescale(spark, tmp_path, java_read, paimon_java, engine):
    location = engine_table(tmp_path, engine, prefix="m_")
    kinds = "op" if engine == "deduplicate" else None
    runs = [_kv(list(range(30)), kinds=["+I"] * 30),
            _kv(list(range(20, 45)), amounts=list(range(100, 125)),
                kinds=["-D", "+U"] * 12 + ["+I"])]
    for run in runs:
        write_run(spark, location, run if kinds else run.drop_columns(["op"]), kinds)
    compacted = compact_table(spark, location, full=True)
    assert compacted.snapshot_id is not None
    assert_same(java_read, location, ["id"])
    rescale_buckets(spark, location, 4)
    assert_same(java_read, location, ["id"])
    got = paimon_java.buckets(location.warehouse, location.name)
    keys = pa.table({"id": pa.array([r["id"] for r in got], pa.int64())})
    assert [r["_bucket"] for r in got] == bucket_ids(keys, 4).tolist()
    write_run(spark, location, _kv([1, 2, 60], amounts=[7, 7, 7], kinds=["+U", "+U", "+I"])
              if kinds else _kv([1, 2, 60], amounts=[7, 7, 7]), kinds)
    assert_same(java_read, location, ["id"])
