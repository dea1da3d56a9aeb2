"""Paimon's fixed-bucket assignment, vectorized and bit-identical to Java Paimon.

Java (``FixedBucketRowKeyExtractor`` + ``DefaultBucketFunction``) projects the bucket-key
columns into a ``BinaryRow`` and computes ``Math.abs(row.hashCode() % numBuckets)``, where
``hashCode`` is Murmur3-32 (seed 42) over the row's bytes, word by word. We build those
bytes for all rows at once with numpy and run Murmur3 column-wise over the words.

BinaryRow layout (all little-endian):
- null bit set: ``((arity + 63 + 8) // 64) * 8`` bytes; byte 0 is the row kind (INSERT = 0),
  the null bit of field ``i`` is bit ``i + 8``;
- one 8-byte slot per field: fixed-width values zero-extended; strings/bytes of at most
  7 bytes inline with ``0x80 | len`` in the slot's last byte; longer ones as
  ``offset << 32 | len`` into the variable part (each value padded to 8 bytes);
  non-compact DECIMAL (precision > 18) as 16 variable bytes holding
  ``BigInteger.toByteArray()``; non-compact TIMESTAMP (precision > 3) as the epoch millis
  (8 variable bytes) with ``offset << 32 | nanoOfMillisecond`` in the slot.
- a NULL slot is 0, except non-compact DECIMAL/TIMESTAMP: Java's generated projection calls
  ``writeDecimal(pos, null, p)`` / ``writeTimestamp(pos, null, p)``, which still reserve the
  16 / 8 zeroed variable bytes and store ``offset << 32`` in the slot.

Known differences from pypaimon 2.1.0 (``row_key_extractor._binary_row_hash_code``), where we
follow Java: (1) NULL non-compact DECIMAL/TIMESTAMP (pypaimon writes a zero slot and no
variable bytes); (2) negative non-compact decimals whose magnitude is ``2**(8k-1)``, e.g.
-128 (pypaimon's byte length uses ``int.bit_length`` of the magnitude: one byte too many).
Both only matter for nullable or unusual bucket keys; primary keys are never NULL.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["bucket_ids", "hash_codes", "binary_rows", "bucket_key_columns"]

_SEED = 42
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_MAX_INLINE = 7
_COMPACT_DECIMAL_PRECISION = 18
_COMPACT_TIMESTAMP_PRECISION = 3
_UNIT_PRECISION = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_UNITS_PER_MILLI = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}
# bit length of every byte value, for BigInteger.bitLength() on 16-byte decimals
_BYTE_BIT_LENGTH = np.array([int(b).bit_length() for b in range(256)], dtype=np.int64)


def bucket_ids(keys: pa.Table, num_buckets: int,
               key_types: Optional[Sequence[str]] = None) -> np.ndarray:
    """Paimon's fixed bucket of every row of ``keys`` (its columns = the bucket key, in order).

    ``key_types`` (Paimon type names such as ``"TIMESTAMP(6)"`` or ``"DECIMAL(20, 2)"``) only
    matters where the Arrow type does not say whether a value is compact, e.g. a
    ``TIMESTAMP(9)`` stored as Arrow microseconds; by default the precision comes from the
    Arrow type (timestamp unit s/ms = compact, us/ns = not; decimal128 precision).
    Returns an int32 array, ``abs(hashCode % num_buckets)`` with Java's truncating ``%``.
    """
    if not isinstance(num_buckets, (int, np.integer)) or num_buckets <= 0:
        raise ValueError(f"num_buckets must be a positive integer, got {num_buckets!r}")
    hashes = hash_codes(keys, key_types).astype(np.int64)
    return np.abs(np.fmod(hashes, num_buckets)).astype(np.int32)


def hash_codes(keys: pa.Table, key_types: Optional[Sequence[str]] = None) -> np.ndarray:
    """Java ``BinaryRow.hashCode()`` of the row built from each row of ``keys`` (int32)."""
    flat, starts, lengths = binary_rows(keys, key_types)
    return _murmur3_rows(flat, starts, lengths)


def binary_rows(keys: pa.Table, key_types: Optional[Sequence[str]] = None):
    """The BinaryRow bytes of every row: ``(flat uint8 buffer, row starts, row lengths)``."""
    if isinstance(keys, pa.RecordBatch):
        keys = pa.Table.from_batches([keys])
    if key_types is not None and len(key_types) != keys.num_columns:
        raise ValueError(
            f"key_types names {len(key_types)} types for {keys.num_columns} key columns")
    n = keys.num_rows
    arity = keys.num_columns
    null_bytes = ((arity + 63 + 8) // 64) * 8
    fixed_size = null_bytes + 8 * arity

    null_words = np.zeros((n, null_bytes // 8), dtype=np.uint64)  # row kind INSERT = 0
    slots = np.zeros((n, arity), dtype=np.uint64)
    var_parts = []  # (field position, per-row var length, writer(flat, var_start))
    var_lengths = np.zeros(n, dtype=np.int64)

    for pos in range(arity):
        column = keys.column(pos)
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        type_name = key_types[pos] if key_types is not None else None
        encoded = _encode_field(array, type_name, keys.schema.field(pos).name)
        valid = _validity(array)
        slots[:, pos] = encoded.slot
        if encoded.var_length is not None:
            var_parts.append((pos, var_lengths.copy(), encoded))
            var_lengths += encoded.var_length
        if encoded.null_slot_is_zero:
            slots[~valid, pos] = 0
        bit = pos + 8
        null_words[~valid, bit // 64] |= np.uint64(1 << (bit % 64))

    lengths = fixed_size + var_lengths
    starts = np.zeros(n, dtype=np.int64)
    if n:
        np.cumsum(lengths[:-1], out=starts[1:])
    total = int(lengths.sum()) if n else 0
    flat = np.zeros(total, dtype=np.uint8)

    # offsets in the slots are relative to the row start: var part starts at fixed_size
    for pos, var_before, encoded in var_parts:
        var_offset = (fixed_size + var_before).astype(np.uint64)
        has_var = encoded.var_length > 0
        slots[has_var, pos] |= var_offset[has_var] << np.uint64(32)
        encoded.write_var(flat, starts + fixed_size + var_before)

    fixed = np.concatenate([null_words, slots], axis=1)  # (n, fixed_size // 8) uint64
    if n:
        if not var_parts:
            flat = fixed.reshape(-1).view(np.uint8).copy()
        else:  # rows start on 8-byte boundaries: place the fixed parts word by word
            index = (starts // 8)[:, None] + np.arange(fixed_size // 8, dtype=np.int64)[None, :]
            flat.view("<u8")[index] = fixed
    return flat, starts, lengths


class _Encoded:
    """One field's contribution: the 8-byte slot per row and, optionally, variable bytes."""

    def __init__(self, slot, var_length=None, write_var=None, null_slot_is_zero=True):
        self.slot = slot
        self.var_length = var_length
        self._write_var = write_var
        self.null_slot_is_zero = null_slot_is_zero

    def write_var(self, flat, dest_starts):
        if self._write_var is not None:
            self._write_var(flat, dest_starts)


def _validity(array: pa.Array) -> np.ndarray:
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _parse_precision(type_name: Optional[str]) -> Optional[int]:
    if not type_name:
        return None
    match = re.search(r"\(\s*(\d+)", type_name)
    return int(match.group(1)) if match else None


def _fixed_numpy(array: pa.Array, dtype) -> np.ndarray:
    if array.null_count:
        filled = array.fill_null(False if pa.types.is_boolean(array.type) else 0)
    else:
        filled = array
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=dtype)


def _encode_field(array: pa.Array, type_name: Optional[str], name: str) -> _Encoded:
    t = array.type
    if pa.types.is_dictionary(t):
        return _encode_field(array.dictionary_decode(), type_name, name)
    if pa.types.is_boolean(t):
        return _Encoded(_fixed_numpy(array, np.bool_).astype(np.uint64))
    if pa.types.is_integer(t):
        if t.bit_width == 64:
            return _Encoded(_fixed_numpy(array, np.int64).view(np.uint64))
        unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32}[t.bit_width]
        signed = {8: np.int8, 16: np.int16, 32: np.int32}[t.bit_width]
        if not pa.types.is_signed_integer(t):
            raise TypeError(f"bucket key column {name!r}: unsigned {t} has no Paimon type")
        return _Encoded(_fixed_numpy(array, signed).view(unsigned).astype(np.uint64))
    if pa.types.is_float32(t):
        return _Encoded(_fixed_numpy(array, np.float32).view(np.uint32).astype(np.uint64))
    if pa.types.is_float64(t):
        return _Encoded(_fixed_numpy(array, np.float64).view(np.uint64))
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        if pa.types.is_time32(t) and t.unit != "ms":
            array = array.cast(pa.time32("ms"))
        ints = array.cast(pa.int32())
        return _Encoded(_fixed_numpy(ints, np.int32).view(np.uint32).astype(np.uint64))
    if pa.types.is_time64(t):  # Paimon TIME is millis of the day as an int whatever p
        per_milli = 1_000 if t.unit == "us" else 1_000_000
        millis = (_fixed_numpy(array.cast(pa.int64()), np.int64) // per_milli).astype(np.int32)
        return _Encoded(millis.view(np.uint32).astype(np.uint64))
    if pa.types.is_timestamp(t):
        return _encode_timestamp(array, type_name, name)
    if pa.types.is_decimal(t):
        return _encode_decimal(array, type_name, name)
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)):
        return _encode_bytes(array)
    raise TypeError(f"bucket key column {name!r} has type {t}, which Paimon does not allow "
                    f"in a bucket key")


def _encode_timestamp(array: pa.Array, type_name: Optional[str], name: str) -> _Encoded:
    unit = array.type.unit
    precision = _parse_precision(type_name)
    if precision is None:
        precision = _UNIT_PRECISION[unit]
    values = _fixed_numpy(array.cast(pa.int64()), np.int64)
    if unit == "s":
        millis, nanos = values * 1000, np.zeros_like(values)
    else:
        per_milli = _UNITS_PER_MILLI[unit]
        millis = np.floor_divide(values, per_milli)
        nanos = np.mod(values, per_milli) * (1_000_000 // per_milli)
    if precision <= _COMPACT_TIMESTAMP_PRECISION:
        return _Encoded(millis.view(np.uint64))

    def write_var(flat, dest_starts):
        # millis as int64 LE; NULLs keep their 8 zero bytes (Java writeTimestamp(pos, null))
        valid = _validity(array)
        index = dest_starts[valid, None] + np.arange(8, dtype=np.int64)[None, :]
        flat[index] = millis[valid].astype("<i8").view(np.uint8).reshape(-1, 8)

    slot = nanos.astype(np.uint64)
    slot[~_validity(array)] = 0
    return _Encoded(slot, np.full(len(array), 8, dtype=np.int64), write_var,
                    null_slot_is_zero=False)


def _encode_decimal(array: pa.Array, type_name: Optional[str], name: str) -> _Encoded:
    t = array.type
    if t.bit_width != 128:
        array = array.cast(pa.decimal128(min(t.precision, 38), t.scale))
        t = array.type
    precision = _parse_precision(type_name) or t.precision
    n = len(array)
    raw = np.frombuffer(array.buffers()[1], dtype=np.uint8)
    le = raw[array.offset * 16:(array.offset + n) * 16].reshape(n, 16)
    valid = _validity(array)
    if precision <= _COMPACT_DECIMAL_PRECISION:
        low = le[:, :8].copy().view("<i8").reshape(n).astype(np.int64)
        low[~valid] = 0
        return _Encoded(low.view(np.uint64))

    be = le[:, ::-1]
    negative = be[:, 0] >= 0x80
    # BigInteger.toByteArray(): bitLength() // 8 + 1 bytes, bitLength of (v >= 0 ? v : ~v)
    magnitude = np.where(negative[:, None], 255 - be, be)
    nonzero = magnitude != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), 16)
    top_byte = magnitude[np.arange(n), np.minimum(first, 15)]
    bit_length = np.where(first < 16, (15 - first) * 8 + _BYTE_BIT_LENGTH[top_byte], 0)
    num_bytes = np.minimum(bit_length // 8 + 1, 16)
    num_bytes[~valid] = 0  # NULL: offset << 32 | 0, 16 zero bytes

    def write_var(flat, dest_starts):
        cols = np.arange(16, dtype=np.int64)[None, :] + (16 - num_bytes)[:, None]
        inside = cols < 16
        shifted = np.where(inside, be[np.arange(n)[:, None], np.minimum(cols, 15)], 0)
        index = dest_starts[:, None] + np.arange(16, dtype=np.int64)[None, :]
        flat[index] = shifted.astype(np.uint8)

    return _Encoded(num_bytes.astype(np.uint64), np.full(n, 16, dtype=np.int64), write_var,
                    null_slot_is_zero=False)


def _encode_bytes(array: pa.Array) -> _Encoded:
    t = array.type
    if pa.types.is_fixed_size_binary(t):
        array = array.cast(pa.binary())
    elif pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        array = array.cast(pa.binary())
    elif pa.types.is_string(t):
        array = array.cast(pa.binary())
    n = len(array)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset:array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = array.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    valid = _validity(array)
    lengths = np.where(valid, offsets[1:] - offsets[:-1], 0)
    inline = valid & (lengths <= _MAX_INLINE)
    long_values = valid & (lengths > _MAX_INLINE)

    slot = np.zeros(n, dtype=np.uint64)
    if inline.any():
        rows = np.nonzero(inline)[0]
        lens = lengths[rows]
        packed = np.zeros((len(rows), 8), dtype=np.uint8)
        byte_pos = np.arange(_MAX_INLINE, dtype=np.int64)[None, :]
        take = byte_pos < lens[:, None]
        src = np.minimum(offsets[rows][:, None] + byte_pos, max(len(data) - 1, 0))
        packed[:, :_MAX_INLINE] = np.where(take, data[src] if len(data) else 0, 0)
        packed[:, 7] = (0x80 | lens).astype(np.uint8)
        slot[rows] = packed.view("<u8").reshape(-1)
    slot[long_values] = lengths[long_values].astype(np.uint64)
    var_length = np.where(long_values, (lengths + 7) // 8 * 8, 0).astype(np.int64)

    def write_var(flat, dest_starts):
        # copy 4-byte words: little-endian reads at any byte offset of the data buffer, the
        # bytes past a value's end masked to zero (Java zeroes the padding)
        rows = np.nonzero(long_values)[0]
        if not len(rows):
            return
        lens = lengths[rows]
        num_words = (lens + 3) // 4
        row_of = np.repeat(np.arange(len(rows)), num_words)
        within = np.arange(len(row_of), dtype=np.int64) - np.repeat(
            np.cumsum(num_words) - num_words, num_words)
        src = offsets[rows][row_of] + 4 * within
        dst = (dest_starts[rows] // 4)[row_of] + within
        remaining = lens[row_of] - 4 * within
        padded = np.zeros((len(data) + 11) // 4 * 4, dtype=np.uint8)
        padded[:len(data)] = data
        aligned = padded.view("<u4").astype(np.uint64)
        word, shift = src // 4, (src % 4).astype(np.uint64) * np.uint64(8)
        values = ((aligned[word] | (aligned[word + 1] << np.uint64(32))) >> shift)
        keep_bits = np.minimum(remaining, 4).astype(np.uint64) * np.uint64(8)
        values &= (np.uint64(1) << keep_bits) - np.uint64(1)
        flat.view("<u4")[dst] = values.astype(np.uint32)

    return _Encoded(slot, var_length, write_var)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _murmur3_rows(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Murmur3-32 (seed 42) of each row, word by word (rows are multiples of 8 bytes)."""
    n = len(starts)
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    words = flat.view("<u4")
    word_starts = starts // 4
    num_words = lengths // 4
    order = np.argsort(-num_words, kind="stable")
    sorted_starts = word_starts[order]
    sorted_counts = num_words[order]
    h = np.full(n, _SEED, dtype=np.uint32)
    max_words = int(sorted_counts[0])
    # rows sorted by descending length: the rows that still have word j are a prefix
    negated_counts = -sorted_counts
    for j in range(max_words):
        active = int(np.searchsorted(negated_counts, -j, side="left"))
        k1 = words[sorted_starts[:active] + j].astype(np.uint32)
        k1 = k1 * _C1
        k1 = _rotl(k1, 15)
        k1 = k1 * _C2
        hh = h[:active] ^ k1
        hh = _rotl(hh, 13)
        h[:active] = hh * np.uint32(5) + np.uint32(0xE6546B64)
    h ^= sorted_counts.astype(np.uint32) * np.uint32(4)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    result = np.empty(n, dtype=np.uint32)
    result[order] = h
    return result.view(np.int32)


def bucket_key_columns(primary_keys: Sequence[str], partition_keys: Sequence[str],
                       options: Optional[Dict[str, str]] = None,
                       columns: Sequence[str] = ()) -> List[str]:
    """The columns Paimon hashes for a row's bucket, as Java ``TableSchema.bucketKeys()``.

    The ``bucket-key`` option if set, else the primary key minus the partition keys. An
    append table (no primary key) without ``bucket-key`` hashes all of ``columns``
    (Alibaba's Paimon docs, seed 002). Java Paimon refuses to create such a bucketed
    append table and pypaimon hashes an empty row for it (one bucket for every row).
    """
    options = options or {}
    configured = str(options.get("bucket-key") or "").strip()
    if configured:
        keys = [k.strip() for k in configured.split(",") if k.strip()]
        if columns:
            missing = [k for k in keys if k not in columns]
            if missing:
                raise ValueError(f"bucket-key names unknown columns {missing}; "
                                 f"the table has {list(columns)}")
        overlap = [k for k in keys if k in partition_keys]
        if overlap:
            raise ValueError(f"bucket-key {keys} must not contain partition keys {overlap}")
        if primary_keys:
            outside = [k for k in keys if k not in primary_keys]
            if outside:
                raise ValueError(f"bucket-key {keys} must be a subset of the primary key "
                                 f"{list(primary_keys)}; {outside} are not")
        return keys
    if primary_keys:
        return [k for k in primary_keys if k not in partition_keys]
    return list(columns)
