"""Fixed buckets computed by Spark (write/jvm_bucket.py) are Paimon's: the same bucket as
format/bucket.py's vectorized BinaryRow hash (itself checked against Paimon Java in
tests/interop), for every integer width, extreme and negative values, several key columns and
bucket counts; other key types are left to the Arrow UDF; a distributed run with integer keys
stores every key in its bucket."""
import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.kv_files import read_split_records
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.write import write_primary_key_run
from dbt.adapters.paimon.write.jvm_bucket import jvm_bucket_column
from dbt.adapters.paimon.write.spark_job import make_plan
from write_helpers import make_table, read_back

WIDTHS = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}


def _values(dtype, n: int, rng) -> np.ndarray:
    info = np.iinfo(dtype)
    extremes = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], dtype)
    return np.concatenate([extremes, rng.integers(info.min, info.max, n, dtype=dtype,
                                                  endpoint=True)])


def _spark_buckets(spark, tmp_path, name, keys: pa.Table, num_buckets: int) -> np.ndarray:
    schema = keys.schema.append(pa.field("v", pa.int64()))
    location = make_table(tmp_path, name, schema, keys.column_names,
                          options={"bucket": str(num_buckets)})
    plan = make_plan(spark, location.open(), location, name, None)
    data = keys.append_column("v", pa.array(np.arange(keys.num_rows), pa.int64()))
    frame = spark.createDataFrame(data)  # an Arrow table: each column keeps its width
    assert [f.dataType.simpleString() for f in frame.schema] == \
        [_spark_type(f.type) for f in schema]
    column = jvm_bucket_column(plan, frame)
    assert column is not None
    got = frame.select("v", column.alias("b")).toArrow().sort_by("v")
    return got.column("b").to_numpy()


def _spark_type(t: pa.DataType) -> str:
    return {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int",
            pa.int64(): "bigint", pa.string(): "string", pa.float64(): "double"}[t]


@pytest.mark.parametrize("arrow_type", list(WIDTHS), ids=str)
@pytest.mark.parametrize("num_buckets", [1, 4, 7, 1000])
def test_one_integer_key(spark, tmp_path, arrow_type, num_buckets):
    rng = np.random.default_rng(num_buckets)
    keys = pa.table({"k": pa.array(_values(WIDTHS[arrow_type], 3000, rng), arrow_type)})
    got = _spark_buckets(spark, tmp_path, "one", keys, num_buckets)
    assert got.tolist() == bucket_ids(keys, num_buckets).tolist()


def test_several_integer_key_columns(spark, tmp_path):
    """Three columns of different widths: one 8-byte slot each after the 8-byte header."""
    rng = np.random.default_rng(7)
    keys = pa.table({"a": pa.array(_values(np.int64, 4000, rng), pa.int64()),
                     "b": pa.array(_values(np.int32, 4000, rng), pa.int32()),
                     "c": pa.array(_values(np.int8, 4000, rng), pa.int8())})
    got = _spark_buckets(spark, tmp_path, "three", keys, 16)
    assert got.tolist() == bucket_ids(keys, 16).tolist()


def test_narrower_model_column_hashes_as_the_stored_type(spark, tmp_path):
    """An INT model column into a BIGINT key: the stored value is the BIGINT, so is the hash."""
    location = make_table(tmp_path, "wide", pa.schema([("k", pa.int64()), ("v", pa.int64())]),
                          ["k"], options={"bucket": "5"})
    plan = make_plan(spark, location.open(), location, "wide", None)
    values = np.array([-2**31, -5, 0, 3, 2**31 - 1], np.int32)
    frame = spark.createDataFrame([(int(x), i) for i, x in enumerate(values)], "k int, v bigint")
    got = frame.select("v", jvm_bucket_column(plan, frame).alias("b")).toArrow().sort_by("v")
    expected = bucket_ids(pa.table({"k": pa.array(values.astype(np.int64))}), 5)
    assert got.column("b").to_pylist() == expected.tolist()


@pytest.mark.parametrize("stored, model", [(pa.string(), "string"), (pa.int32(), "bigint"),
                                           (pa.int64(), "double")])
def test_other_types_keep_the_arrow_udf(spark, tmp_path, stored, model):
    """String keys, and model columns a cast could fail or round, are not hashed by Spark."""
    location = make_table(tmp_path, "other", pa.schema([("k", stored), ("v", pa.int64())]),
                          ["k"], options={"bucket": "3"})
    plan = make_plan(spark, location.open(), location, "other", None)
    frame = spark.createDataFrame([], f"k {model}, v bigint")
    assert jvm_bucket_column(plan, frame) is None


def test_distributed_run_stores_every_key_in_its_bucket(spark, tmp_path):
    schema = pa.schema([("k", pa.int64()), ("n", pa.int32()), ("v", pa.int64())])
    location = make_table(tmp_path, "dist", schema, ["k", "n"], options={"bucket": "5"})
    df = spark.range(-50_000, 50_000, numPartitions=4).selectExpr(
        "id * 104729 as k", "cast(id % 7 as int) as n", "id as v")
    result = write_primary_key_run(spark, df, location, model_name="dist",
                                   write_path="distributed")
    assert result.path_label == "distributed" and result.records == 100_000
    assert read_back(location).num_rows == 100_000
    table = location.open()
    splits = plan_splits(table)
    assert {s.bucket for s in splits} == set(range(5))
    for split in splits:
        keys = read_split_records(table, split).select(["k", "n"])
        assert set(bucket_ids(keys, 5).tolist()) == {split.bucket}
