"""Our runs on cross-partition tables Paimon Java wrote (``bucket`` = -1, primary key without
the partition column).

Paimon writes such tables in its KEY_DYNAMIC bucket mode: no HASH index; the writer finds each
key's partition and bucket from the data (GlobalIndexAssigner bootstrapped by IndexBootstrap)
and, for a key already in the table, then does what its ExistingProcessor says for the engine:
deduplicate deletes the old record and inserts in the new partition
(DeleteExistingProcessor), partial-update / aggregation update the record where it is
(UseOldExistingProcessor), first-row keeps it (SkipNewExistingProcessor). PaimonPeer writes the
table (its assigner puts the new keys into buckets as GlobalIndexAssigner's BucketAssigner:
``dynamic-bucket.target-row-num`` keys a bucket); our run then moves, updates, deletes and adds
keys; Java reads the same rows as we do and every key lives in one place.
"""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.ops.after_run import after_run
from dbt.adapters.paimon.write import write_primary_key_run
from dbt.adapters.paimon.write.dynamic_index import hash_index_entries

FIELDS = [("dt", "STRING NOT NULL"), ("id", "BIGINT NOT NULL"), ("name", "STRING"),
          ("amount", "BIGINT")]

ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.amount.aggregate-function": "sum"},
    "first-row": {"merge-engine": "first-row"},
}


def _run(ids, dt, amount, kind="+I", name=lambda i: f"r{i}"):
    return pa.table({"dt": pa.array([dt(i) for i in ids], pa.string()),
                     "id": pa.array(list(ids), pa.int64()),
                     "name": pa.array([name(i) for i in ids], pa.string()),
                     "amount": pa.array([amount(i) for i in ids], pa.int64()),
                     "op": pa.array([kind] * len(ids), pa.string())})


def _expected(engine):
    """The rows after Java's 30 keys (id i in d{i % 2}, amount i) and our run: 0..9 to the
    other partition with amount 100 + i, 10..14 in place with 200 + i, 40..44 new in d0, and
    (deduplicate) 20 deleted."""
    rows = {i: (f"d{i % 2}", i, f"j{i}", i) for i in range(30)}
    for i in range(10):
        if engine == "deduplicate":
            rows[i] = (f"d{(i + 1) % 2}", i, f"r{i}", 100 + i)
        elif engine == "partial-update":
            rows[i] = (f"d{i % 2}", i, f"r{i}", 100 + i)
        elif engine == "aggregation":
            rows[i] = (f"d{i % 2}", i, f"r{i}", i + 100 + i)
    for i in range(10, 15):
        if engine == "aggregation":
            rows[i] = (f"d{i % 2}", i, f"r{i}", i + 200 + i)
        elif engine != "first-row":
            rows[i] = (f"d{i % 2}", i, f"r{i}", 200 + i)
    if engine == "deduplicate":
        del rows[20]
    for i in range(40, 45):
        rows[i] = ("d0", i, f"r{i}", i)
    return sorted(rows.values(), key=lambda r: r[1])


@pytest.mark.parametrize("engine", list(ENGINES))
def test_our_run_on_a_java_written_cross_partition_table(spark, tmp_path, paimon_java, engine):
    warehouse = str(tmp_path / "warehouse")
    location = TableRef(warehouse, "db", "cross", {})
    options = {"bucket": "-1", "dynamic-bucket.target-row-num": "8", **ENGINES[engine]}
    paimon_java.create(warehouse, location.name, FIELDS, ["id"], ["dt"], options)
    paimon_java.write(warehouse, location.name,
                      [{"dt": f"d{i % 2}", "id": i, "name": f"j{i}", "amount": i,
                        "_row_kind": "+I"} for i in range(30)], tmp_path / "java.jsonl")
    table = location.open()
    assert hash_index_entries(table, table.snapshot_manager().get_latest_snapshot()) == []
    java_buckets = {(r["dt"], r["id"]): r["_bucket"]
                    for r in paimon_java.buckets(warehouse, location.name)}
    assert set(java_buckets.values()) == {0, 1}   # 15 keys a partition, 8 a bucket

    run = pa.concat_tables([
        _run(range(10), dt=lambda i: f"d{(i + 1) % 2}", amount=lambda i: 100 + i, kind="+U"),
        _run(range(10, 15), dt=lambda i: f"d{i % 2}", amount=lambda i: 200 + i, kind="+U"),
        _run(range(40, 45), dt=lambda i: "d0", amount=lambda i: i)]
        + ([_run([20], dt=lambda i: "d0", amount=lambda i: 0, kind="-D")]
           if engine == "deduplicate" else []))
    write_primary_key_run(spark, spark.createDataFrame(run.to_pandas()), location,
                          row_kind_column="op", model_name="cross")
    after_run(spark, location, expire=False)  # as a dbt run: first-row lifts level 0

    theirs = sorted(((r["dt"], r["id"], r["name"], r["amount"])
                     for r in paimon_java.read(warehouse, location.name)), key=lambda r: r[1])
    assert theirs == _expected(engine)
    assert Counter(r[1] for r in theirs).most_common(1)[0][1] == 1
    # a key staying in its partition stays in its bucket (Java's key index)
    after = {(r["dt"], r["id"]): r["_bucket"]
             for r in paimon_java.buckets(warehouse, location.name)}
    stayed = [k for k in after if k in java_buckets]
    assert stayed and all(after[k] == java_buckets[k] for k in stayed)
    assert splits_mod.current_snapshot_id(location.open()) is not None
