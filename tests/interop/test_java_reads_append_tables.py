"""Paimon 1.0 Java (PaimonPeer) reads our row-tracking tables after update/merge/delete, and
our queue tables in each bucket's write order.

Paimon 1.0 predates row tracking: it ignores the `row-tracking.enabled` option, the files'
`first_row_id`/`write_cols` and the `_ROW_ID`/`_SEQUENCE_NUMBER` columns our rewritten files
store, and reads the table's own columns. That is what is checked here: the same rows as ours
after every commit. (The hidden columns' values follow Paimon's format and are checked against
seed 004 in tests/integration/ops/test_row_ops.py and tests/functional/paimon/test_row_tracking.py.)
"""
from __future__ import annotations

import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.ops.row_ops import delete_rows, merge_rows, tracked_rows, update_rows


def make(tmp_path, name, schema, partition_keys=(), options=None) -> TableRef:
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, schema, partition_keys=list(partition_keys),
                           options=options or {})
    return TableRef(wh, "db", name, {})


def append(spark, location, rows, ddl):
    (spark.createDataFrame(rows, ddl).write.format("paimon")
     .option("warehouse", location.warehouse).option("table", location.name)
     .mode("append").save())


def test_row_tracking_table_after_row_operations(spark, tmp_path, java_read):
    schema = pa.schema([("id", pa.int32()), ("data", pa.string()), ("dt", pa.string())])
    location = make(tmp_path, "tracked", schema, ["dt"], {"row-tracking.enabled": "true"})
    ddl = "id int, data string, dt string"
    append(spark, location, [(i, f"v{i}", f"d{i % 2}") for i in range(20)], ddl)
    update_rows(spark, location, "id < 5", expressions={"data": "concat(data, '-u')"})
    source = spark.createDataFrame([(3, "m", "d1"), (40, "new", "d0")], ddl)
    merge_rows(spark, location, source, "t.id = s.id")
    delete_rows(spark, location, "id % 3 = 0")

    ours = sorted(tuple(r) for r in tracked_rows(spark, location)
                  .select("id", "data", "dt").collect())
    theirs = sorted((r["id"], r["data"], r["dt"]) for r in java_read(location.warehouse,
                                                                      location.name))
    assert theirs == ours
    assert (40, "new", "d0") in ours and (4, "v4-u", "d0") in ours
    assert not [r for r in ours if r[0] % 3 == 0]


def test_queue_table_bucket_order(spark, tmp_path, java_read):
    schema = pa.schema([("k", pa.string()), ("n", pa.int64())])
    location = make(tmp_path, "queue", schema, options={"bucket": "2", "bucket-key": "k"})
    for start in (0, 50):
        append(spark, location, [(f"k{i % 5}", i) for i in range(start, start + 50)],
               "k string, n bigint")
    per_bucket = {}
    for row in java_read(location.warehouse, location.name):
        bucket = int(bucket_ids(pa.table({"k": [row["k"]]}), 2)[0])
        per_bucket.setdefault(bucket, []).append(row["n"])
    assert sorted(n for ns in per_bucket.values() for n in ns) == list(range(100))
    # Java reads each bucket's records in the order they were written
    assert all(ns == sorted(ns) for ns in per_bucket.values())
