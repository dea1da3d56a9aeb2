"""bucket_ids against pypaimon's per-row BinaryRow hash, and against values from Paimon's Java tests."""

import datetime
import decimal
import struct

import numpy as np
import pyarrow as pa
import pytest
from pypaimon.schema.data_types import AtomicType, DataField
from pypaimon.write.row_key_extractor import (RowKeyExtractor, _bucket_from_hash,
                                              _hash_bytes_by_words)

from dbt.adapters.paimon.format.bucket import (binary_rows, bucket_ids, bucket_key_columns,
                                               hash_codes)

N = 1500
RNG = np.random.default_rng(20240607)


def _with_nulls(values, rate=0.1):
    mask = RNG.random(len(values)) < rate
    return [None if m else v for v, m in zip(values, mask)]


def _strings(n):
    alphabet = list("abcxyz019 _-") + ["é", "ü", "日", "本", "🙂"]
    out = []
    for _ in range(n):
        length = int(RNG.choice([0, 1, 3, 6, 7, 8, 9, 15, 16, 17, 40]))
        out.append("".join(RNG.choice(alphabet, size=length)))
    return out


def _decimals(n, precision, scale):
    digits = RNG.integers(1, precision + 1, size=n)
    out = []
    for d in digits:
        unscaled = int(RNG.integers(0, 10 ** min(int(d), 18))) * (10 ** max(int(d) - 18, 0))
        unscaled = min(unscaled, 10 ** precision - 1)
        sign = -1 if RNG.random() < 0.5 else 1
        value = decimal.Decimal(sign * unscaled).scaleb(-scale)
        out.append(value)
    return out


def _datetimes(n):
    micros = RNG.integers(-3 * 10 ** 15, 4 * 10 ** 15, size=n)
    epoch = datetime.datetime(1970, 1, 1)
    return [epoch + datetime.timedelta(microseconds=int(m)) for m in micros]


# (Paimon type, arrow type, value generator) -- every type Paimon allows in a key
KEY_TYPES = {
    "TINYINT": (pa.int8(), lambda n: RNG.integers(-128, 128, n).tolist()),
    "SMALLINT": (pa.int16(), lambda n: RNG.integers(-2 ** 15, 2 ** 15, n).tolist()),
    "INT": (pa.int32(), lambda n: RNG.integers(-2 ** 31, 2 ** 31, n).tolist()),
    "BIGINT": (pa.int64(), lambda n: RNG.integers(-2 ** 63, 2 ** 63 - 1, n).tolist()),
    "BOOLEAN": (pa.bool_(), lambda n: (RNG.random(n) < 0.5).tolist()),
    "FLOAT": (pa.float32(),
              lambda n: np.concatenate([RNG.normal(0, 1e6, n - 2), [0.0, -0.0]])
              .astype(np.float32).tolist()),
    "DOUBLE": (pa.float64(),
               lambda n: np.concatenate([RNG.normal(0, 1e12, n - 3), [0.0, -0.0, np.inf]])
               .tolist()),
    "STRING": (pa.string(), _strings),
    "BYTES": (pa.binary(), lambda n: [s.encode("utf-8") for s in _strings(n)]),
    "DATE": (pa.date32(), lambda n: [datetime.date(1970, 1, 1) + datetime.timedelta(days=int(d))
                                     for d in RNG.integers(-30000, 30000, n)]),
    "TIME": (pa.time64("us"), lambda n: [(datetime.datetime(2000, 1, 1) + datetime.timedelta(
        microseconds=int(m))).time() for m in RNG.integers(0, 86_400_000_000, n)]),
    "TIMESTAMP(3)": (pa.timestamp("ms"),
                     lambda n: [d.replace(microsecond=d.microsecond // 1000 * 1000)
                                for d in _datetimes(n)]),
    "TIMESTAMP(6)": (pa.timestamp("us"), _datetimes),
    "DECIMAL(10, 2)": (pa.decimal128(10, 2), lambda n: _decimals(n, 10, 2)),
    "DECIMAL(18, 0)": (pa.decimal128(18, 0), lambda n: _decimals(n, 18, 0)),
    "DECIMAL(20, 4)": (pa.decimal128(20, 4), lambda n: _decimals(n, 20, 4)),
    "DECIMAL(38, 10)": (pa.decimal128(38, 10), lambda n: _decimals(n, 38, 10)),
}
# Where pypaimon differs from Java's BinaryRow (see bucket.py): NULLs are left out here and
# checked against hand-laid Java bytes below.
NON_COMPACT = {"TIMESTAMP(6)", "DECIMAL(20, 4)", "DECIMAL(38, 10)"}


def _pypaimon_hashes(table: pa.Table, types):
    fields = [DataField(i, name, AtomicType(t))
              for i, (name, t) in enumerate(zip(table.column_names, types))]
    columns = [c.to_pylist() for c in table.columns]
    out = []
    for r in range(table.num_rows):
        h = RowKeyExtractor._binary_row_hash_code(tuple(c[r] for c in columns), fields)
        out.append(h - (1 << 32) if h >= 1 << 31 else h)
    return np.array(out, dtype=np.int64)


def _pypaimon_buckets(table, types, num_buckets):
    return np.array([_bucket_from_hash(h & 0xFFFFFFFF, num_buckets)
                     for h in _pypaimon_hashes(table, types)], dtype=np.int32)


def _column(type_name, n=N):
    arrow_type, generate = KEY_TYPES[type_name]
    values = generate(n)
    if type_name not in NON_COMPACT:
        values = _with_nulls(values)
    return pa.array(values, type=arrow_type)


@pytest.mark.parametrize("type_name", sorted(KEY_TYPES))
def test_single_column_matches_pypaimon(type_name):
    table = pa.table({"k": _column(type_name)})
    assert np.array_equal(hash_codes(table).astype(np.int64),
                          _pypaimon_hashes(table, [type_name]))
    for num_buckets in (1, 2, 7, 16, 1000):
        assert np.array_equal(bucket_ids(table, num_buckets),
                              _pypaimon_buckets(table, [type_name], num_buckets))


@pytest.mark.parametrize("names", [
    ["INT", "STRING"],
    ["STRING", "BIGINT", "BYTES"],
    ["DATE", "DECIMAL(10, 2)", "TIMESTAMP(3)", "BOOLEAN"],
    ["STRING", "DECIMAL(38, 10)", "STRING", "TIMESTAMP(6)", "SMALLINT", "TINYINT"],
    sorted(KEY_TYPES),  # every key type in one row
])
def test_multi_column_keys_match_pypaimon(names):
    n = 600
    table = pa.table({f"c{i}": _column(t, n) for i, t in enumerate(names)})
    expected = _pypaimon_hashes(table, names)
    assert np.array_equal(hash_codes(table).astype(np.int64), expected)
    assert np.array_equal(bucket_ids(table, 13), _pypaimon_buckets(table, names, 13))


def test_more_than_56_columns_use_a_second_null_word():
    n = 200
    names = ["INT", "STRING"] * 30
    table = pa.table({f"c{i}": _column(t, n) for i, t in enumerate(names)})
    assert np.array_equal(hash_codes(table).astype(np.int64), _pypaimon_hashes(table, names))


def test_known_java_buckets():
    # FixedBucketRowKeyExtractorTest.testBucket: row (5, 6, 7) of INTs, 100 buckets
    row = pa.table({"a": pa.array([5], pa.int32()), "b": pa.array([6], pa.int32()),
                    "c": pa.array([7], pa.int32())})
    assert bucket_ids(row.select(["a"]), 100).tolist() == [96]
    assert bucket_ids(row.select(["a", "b"]), 100).tolist() == [27]
    assert bucket_ids(row, 100).tolist() == [40]


def _java_hash(row_bytes: bytes) -> int:
    h = _hash_bytes_by_words(row_bytes)
    return h - (1 << 32) if h >= 1 << 31 else h


def test_null_non_compact_decimal_and_timestamp_follow_java():
    # Java writeDecimal(pos, null, p) / writeTimestamp(pos, null, p): null bit set, slot =
    # offset << 32, zeroed variable bytes (16 for decimal, 8 for timestamp) still reserved.
    header = bytes([0, 0b1]) + bytes(6)  # row kind INSERT, null bit of field 0
    slot = struct.pack("<q", 16 << 32)
    for arrow_type, var_size in ((pa.decimal128(38, 18), 16), (pa.timestamp("us"), 8)):
        table = pa.table({"k": pa.array([None], arrow_type)})
        expected = _java_hash(header + slot + bytes(var_size))
        assert hash_codes(table).tolist() == [expected]
    # compact ones are a plain zero slot, as pypaimon does
    for arrow_type, name in ((pa.decimal128(10, 2), "DECIMAL(10, 2)"),
                             (pa.timestamp("ms"), "TIMESTAMP(3)")):
        table = pa.table({"k": pa.array([None], arrow_type)})
        assert hash_codes(table).tolist() == _pypaimon_hashes(table, [name]).tolist()


def test_negative_non_compact_decimal_uses_java_big_integer_bytes():
    # BigInteger.valueOf(-128).toByteArray() == [0x80]: one byte (pypaimon writes two)
    table = pa.table({"k": pa.array([decimal.Decimal(-128)], pa.decimal128(20, 0))})
    row = bytes(8) + struct.pack("<q", (16 << 32) | 1) + bytes([0x80]) + bytes(15)
    assert hash_codes(table).tolist() == [_java_hash(row)]
    table = pa.table({"k": pa.array([decimal.Decimal(-129)], pa.decimal128(20, 0))})
    row = bytes(8) + struct.pack("<q", (16 << 32) | 2) + bytes([0xFF, 0x7F]) + bytes(14)
    assert hash_codes(table).tolist() == [_java_hash(row)]


def test_key_types_override_compactness():
    # TIMESTAMP(9) data carried as Arrow microseconds is still non-compact
    values = pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 678901)], pa.timestamp("us"))
    as_ms = pa.table({"k": values.cast(pa.timestamp("ms"), safe=False)})
    table = pa.table({"k": values})
    assert hash_codes(table, ["TIMESTAMP(9)"]).tolist() == hash_codes(table).tolist()
    assert hash_codes(as_ms, ["TIMESTAMP(6)"]).tolist() != hash_codes(as_ms).tolist()


def test_chunked_and_sliced_inputs():
    column = _column("STRING", 300)
    table = pa.table({"k": column})
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=37))
    sliced = table.slice(50, 100)
    assert np.array_equal(hash_codes(chunked), hash_codes(table))
    assert np.array_equal(hash_codes(sliced), hash_codes(table)[50:150])
    flat, starts, lengths = binary_rows(sliced)
    assert (lengths % 8 == 0).all() and starts[-1] + lengths[-1] == len(flat)


def test_empty_input_and_bad_bucket_count():
    assert bucket_ids(pa.table({"k": pa.array([], pa.int32())}), 4).tolist() == []
    with pytest.raises(ValueError, match="positive"):
        bucket_ids(pa.table({"k": pa.array([1], pa.int32())}), 0)
    with pytest.raises(TypeError, match="does not allow"):
        bucket_ids(pa.table({"k": pa.array([[1]], pa.list_(pa.int32()))}), 4)


def test_bucket_key_columns():
    assert bucket_key_columns(["dt", "id"], ["dt"], {}) == ["id"]
    assert bucket_key_columns(["a", "b"], [], {"bucket-key": "b"}) == ["b"]
    assert bucket_key_columns([], [], {}, columns=["x", "y"]) == ["x", "y"]
    assert bucket_key_columns([], ["dt"], {"bucket-key": "x"}, columns=["dt", "x"]) == ["x"]
    with pytest.raises(ValueError, match="subset of the primary key"):
        bucket_key_columns(["a"], [], {"bucket-key": "c"})
    with pytest.raises(ValueError, match="partition keys"):
        bucket_key_columns(["dt", "a"], ["dt"], {"bucket-key": "dt"})
    with pytest.raises(ValueError, match="unknown columns"):
        bucket_key_columns([], [], {"bucket-key": "nope"}, columns=["x"])
