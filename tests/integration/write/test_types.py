"""Every common Paimon type goes through Spark and back unchanged; keys of several types hash
to Paimon's buckets."""
import datetime as dt
import decimal

import pyarrow as pa

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.write import write_primary_key_run
from write_helpers import check_files, key_buckets, make_table, read_back, sorted_rows

SCHEMA = pa.schema([
    pa.field("day", pa.date32(), nullable=False), pa.field("code", pa.string(), nullable=False),
    pa.field("n", pa.int16(), nullable=False),
    ("i8", pa.int8()), ("i32", pa.int32()), ("i64", pa.int64()), ("f32", pa.float32()),
    ("f64", pa.float64()), ("dec", pa.decimal128(10, 2)), ("ts3", pa.timestamp("ms")),
    ("ts6", pa.timestamp("us")), ("ltz", pa.timestamp("us", tz="UTC")), ("flag", pa.bool_()), ("raw", pa.binary()),
    ("tags", pa.list_(pa.int32())), ("attrs", pa.map_(pa.string(), pa.int32())),
    ("point", pa.struct([("x", pa.float64()), ("y", pa.float64())])),
])
KEYS = ["day", "code", "n"]


def _rows(start, count):
    rows = []
    for i in range(start, start + count):
        rows.append({
            "day": dt.date(2024, 1, 1 + i % 3), "code": f"c{i % 5}" * (1 + i % 4), "n": i % 7,
            "i8": i % 100, "i32": i * 1000, "i64": i * 10**12, "f32": i / 4, "f64": i / 3,
            "dec": decimal.Decimal(f"{i}.{i % 100:02d}"),
            "ts3": dt.datetime(2024, 5, 1, 12, 0, 0, (i % 1000) * 1000),
            "ts6": dt.datetime(2024, 5, 1, 12, 0, 0, i * 7 % 1_000_000),
            "ltz": dt.datetime(2024, 5, 1, i % 24, tzinfo=dt.timezone.utc),
            "flag": i % 2 == 0, "raw": bytes([i % 256, 1, 2]), "tags": [i, i + 1],
            "attrs": [("a", i)], "point": {"x": float(i), "y": -float(i)}})
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def test_all_types_round_trip(spark, tmp_path):
    location = make_table(tmp_path, "typed", SCHEMA, KEYS, ["day"], {"bucket": "3"})
    first, second = _rows(0, 120), _rows(60, 120)
    for run in (first, second):
        write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="typed")
    expected = {tuple(r[k] for k in KEYS): r for r in first.to_pylist() + second.to_pylist()}
    got = sorted_rows(read_back(location), KEYS)
    assert got == sorted(expected.values(), key=lambda r: tuple(r[k] for k in KEYS))
    where = key_buckets(location, KEYS)
    keys = pa.table({"code": pa.array([k[1] for k in where]),
                     "n": pa.array([k[2] for k in where], pa.int16())})
    assert [b for _, b in where.values()] == bucket_ids(keys, 3).tolist()
    check_files(location)


def test_column_names_that_are_not_identifiers(spark, tmp_path):
    """Dots and spaces in names (PySpark's mapInArrow would read 'v.w' as a struct field)."""
    schema = pa.schema([("dt x", pa.string()), ("my key", pa.int64()), ("v.w", pa.int32())])
    location = make_table(tmp_path, "odd", schema, ["my key"], ["dt x"], {"bucket": "-1"})
    ddl = "`dt x` string, `my key` long, `v.w` int"
    write_primary_key_run(spark, spark.createDataFrame([("a", 1, 1), ("b", 2, 2)], ddl),
                          location, model_name="odd")
    write_primary_key_run(spark, spark.createDataFrame([("b", 1, 3)], ddl), location,
                          model_name="odd")
    assert sorted_rows(read_back(location), ["my key"]) == [
        {"dt x": "b", "my key": 1, "v.w": 3}, {"dt x": "b", "my key": 2, "v.w": 2}]
