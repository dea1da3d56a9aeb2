"""Append-table compaction against Paimon 1.0 Java (PaimonPeer).

- A bucketed (queue) table and its byte-identical copy: Java's own full compaction of the copy
  (``write.compact(partition, bucket, true)``: BucketedAppendCompactManager.FullCompactTask and
  compactRewrite) and ours of the original leave the same files: per bucket the same rows in
  the same order, the same sequence ranges, level 0. Java reads both tables the same.
- Unaware-bucket tables, with deletion vectors and with row tracking: Java reads our compacted
  table with the rows we read (Paimon 1.0 compacts those through Flink/Spark jobs only, which
  the peer cannot run; the planning rules are checked in tests/integration/ops).
- A rescaled queue table: Java reads each bucket's rows as we do, in our order.
"""
from __future__ import annotations

import os
import shutil

import pyarrow as pa

from dbt.adapters.paimon.datasource.source import (TableRef, commit_append_files,
                                                   write_append_files)
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.kv_files import read_append_split
from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits
from dbt.adapters.paimon.ops import compact_table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("s", pa.string())])


def _make(tmp_path, name, partition_keys=("dt",), **options) -> TableRef:
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, SCHEMA, partition_keys=list(partition_keys),
                           options=options)
    return TableRef(wh, "db", name, {})


def _append(location, ids):
    rows = pa.table({"dt": pa.array([f"d{i % 2}" for i in ids], pa.string()),
                     "id": pa.array(list(ids), pa.int64()),
                     "s": pa.array([f"s{i}" for i in ids], pa.string())})
    table = location.open()
    commit_append_files(table, write_append_files(table, [rows]))


def _copy(location, name) -> TableRef:
    root = os.path.join(location.warehouse, "db.db")
    shutil.copytree(os.path.join(root, location.table), os.path.join(root, name))
    return TableRef(location.warehouse, "db", name, {})


def _files(location):
    """(partition, bucket) -> each live file's (ids in file order, min/max sequence, level)."""
    table = location.open()
    out = {}
    for split in plan_splits(table):
        out[(split.partition_values, split.bucket)] = [
            (read_append_split(table, _one(split, f)).column("id").to_pylist(),
             f.min_sequence_number, f.max_sequence_number, f.level) for f in split.files]
    return out


def _one(split, meta):
    import dataclasses

    return dataclasses.replace(split, files=[meta], levels=[meta.level])


def _by_bucket(rows):
    out = {}
    for r in rows:
        out.setdefault(r["_bucket"], []).append((r["dt"], r["id"], r["s"]))
    return out


def test_bucketed_full_compaction_writes_the_files_java_writes(spark, tmp_path, paimon_java):
    ours = _make(tmp_path, "queue", bucket="2", **{"bucket-key": "id"})
    for n in range(4):
        _append(ours, range(15 * n, 15 * n + 15))
    theirs = _copy(ours, "queue_java")
    before = _files(ours)
    paimon_java.compact(theirs.warehouse, theirs.name)
    assert compact_table(spark, ours, full=True).snapshot_id == 5
    assert [s.commit_kind for s in list_snapshots(theirs.open())][-1] == "COMPACT"
    assert _files(ours) == _files(theirs) != before
    assert all(len(files) == 1 for files in _files(ours).values())
    assert _by_bucket(paimon_java.buckets(ours.warehouse, ours.name)) == \
        _by_bucket(paimon_java.buckets(theirs.warehouse, theirs.name))


def _java_ids(paimon_java, location):
    return sorted(r["id"] for r in paimon_java.read(location.warehouse, location.name))


def _our_ids(location):
    table = location.open()
    return sorted(i for s in plan_splits(table) for i in read_append_split(table, s)
                  .column("id").to_pylist())


def test_java_reads_our_compacted_unaware_tables(spark, tmp_path, paimon_java):
    plain = _make(tmp_path, "logs")
    tracked = _make(tmp_path, "tracked", partition_keys=(), **{"row-tracking.enabled": "true"})
    for location in (plain, tracked):
        for n in range(6):
            _append(location, range(10 * n, 10 * n + 10))
        assert compact_table(spark, location).snapshot_id == 7
        assert _our_ids(location) == list(range(60)) == _java_ids(paimon_java, location)
        assert len([f for s in plan_splits(location.open()) for f in s.files]) == \
            (2 if location is plain else 1)


def test_java_reads_our_compacted_deletion_vector_table(spark, tmp_path, paimon_java):
    location = _make(tmp_path, "dv", partition_keys=(), **{"deletion-vectors.enabled": "true"})
    for n in range(3):
        _append(location, range(10 * n, 10 * n + 10))
    paimon_java.dv_delete(location.warehouse, location.name, "id", [1, 2, 15, 29])
    expected = [i for i in range(30) if i not in (1, 2, 15, 29)]
    assert _java_ids(paimon_java, location) == expected == _our_ids(location)
    assert compact_table(spark, location).snapshot_id is not None
    (split,) = plan_splits(location.open())
    assert len(split.files) == 1 and not split.deletion_files
    assert _our_ids(location) == expected == _java_ids(paimon_java, location)


def test_java_reads_our_rescaled_queue_table_in_bucket_order(spark, tmp_path, paimon_java):
    from dbt.adapters.paimon.format.bucket import bucket_ids
    from dbt.adapters.paimon.ops.rescale import rescale_buckets

    location = _make(tmp_path, "queue", bucket="2", **{"bucket-key": "id"})
    for n in range(3):
        _append(location, range(15 * n, 15 * n + 15))
    assert rescale_buckets(spark, location, 3).snapshot_id == 4
    theirs = _by_bucket(paimon_java.buckets(location.warehouse, location.name))
    table = location.open()
    ours = {}
    for split in plan_splits(table):
        rows = read_append_split(table, split)
        ours.setdefault(split.bucket, []).extend(
            zip(rows.column("dt").to_pylist(), rows.column("id").to_pylist(),
                rows.column("s").to_pylist()))
    assert {b: sorted(r) for b, r in theirs.items()} == {b: sorted(r) for b, r in ours.items()}
    for bucket, rows in theirs.items():
        ids = pa.table({"id": pa.array([r[1] for r in rows], pa.int64())})
        assert set(bucket_ids(ids, 3).tolist()) == {bucket}
        for dt in ("d0", "d1"):  # within a partition's bucket: our write order
            mine = [r[1] for r in ours[bucket] if r[0] == dt]
            assert [r[1] for r in rows if r[0] == dt] == mine
