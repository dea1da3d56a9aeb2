"""Queue tables (append, fixed buckets) written through the paimon data source: Paimon's bucket
of every row (our vectorized hash), each bucket read in write order, and the partition order
of `scan.plan-sort-partition`."""

import pyarrow as pa
import pytest

from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.kv_files import read_append_split

SCHEMA = pa.schema([("k", pa.string()), ("n", pa.int64()), ("dt", pa.string())])


def write(spark, warehouse, table, rows):
    # several Spark partitions, so several tasks write the same buckets in one commit
    frame = spark.createDataFrame(rows, "k string, n bigint, dt string").repartition(1) \
        if len(rows) < 4 else spark.createDataFrame(rows, "k string, n bigint, dt string")
    (frame.write.format("paimon").option("warehouse", warehouse).option("table", f"db.{table}")
     .mode("append").save())


def read(spark, warehouse, table):
    return [tuple(r) for r in spark.read.format("paimon").option("warehouse", warehouse)
            .option("table", f"db.{table}").load().collect()]


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path)


def test_buckets_and_write_order(spark, warehouse):
    wh.create_table(warehouse, "db", "q", SCHEMA, partition_keys=["dt"],
                    options={"bucket": "3", "bucket-key": "k"})
    first = [(f"key{i % 7}", i, "d1" if i % 2 else "d2") for i in range(200)]
    second = [(f"key{i % 7}", i, "d1") for i in range(200, 260)]
    write(spark, warehouse, "q", first)
    write(spark, warehouse, "q", second)
    table = wh.open_table(warehouse, "db", "q")
    for split in splits.plan_splits(table):
        rows = read_append_split(table, split)
        # every row sits in the bucket Paimon computes for its key
        assert set(bucket_ids(rows.select(["k"]), 3).tolist()) == {split.bucket}
        # the bucket's files carry consecutive, increasing sequence ranges (Java's numbering)
        ranges = [(f.min_sequence_number, f.max_sequence_number) for f in split.files]
        assert ranges[0][0] == 0 and all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:]))
        assert sum(f.row_count for f in split.files) == ranges[-1][1] + 1
    # a bucket's records come back in write order
    seen = {}
    for k, n, dt in read(spark, warehouse, "q"):
        bucket = int(bucket_ids(pa.table({"k": [k]}), 3)[0])
        seen.setdefault((dt, bucket), []).append(n)
    assert sum(len(v) for v in seen.values()) == 260
    assert all(v == sorted(v) for v in seen.values())


def test_without_bucket_key_all_columns_hash(spark, warehouse):
    wh.create_table(warehouse, "db", "all_cols", SCHEMA, options={"bucket": "4"})
    rows = [(f"key{i}", i, "d") for i in range(40)]
    write(spark, warehouse, "all_cols", rows)
    table = wh.open_table(warehouse, "db", "all_cols")
    found = splits.plan_splits(table)
    assert len(found) > 1  # pypaimon would hash an empty row: one bucket for everything
    for split in found:
        data = read_append_split(table, split)
        assert set(bucket_ids(data.select(["k", "n", "dt"]), 4).tolist()) == {split.bucket}


@pytest.mark.parametrize("sort_partitions, expected", [("false", ["p2", "p1"]),
                                                       ("true", ["p1", "p2"])])
def test_plan_sort_partition(spark, warehouse, sort_partitions, expected):
    wh.create_table(warehouse, "db", "parts", SCHEMA, partition_keys=["dt"],
                    options={"bucket": "1", "bucket-key": "k",
                             "scan.plan-sort-partition": sort_partitions})
    write(spark, warehouse, "parts", [("a", 1, "p2")])
    write(spark, warehouse, "parts", [("a", 2, "p1")])
    write(spark, warehouse, "parts", [("a", 3, "p2")])
    partitions = [dt for _, _, dt in read(spark, warehouse, "parts")]
    assert list(dict.fromkeys(partitions)) == expected
