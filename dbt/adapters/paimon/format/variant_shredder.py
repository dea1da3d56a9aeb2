"""A VARIANT column shredded into the typed Parquet columns of `variant.shreddingSchema`,
vectorized over the column's bytes with NumPy.

pypaimon 2.1's writer, through which every data file is written, shreds row by row in Python
(``shred_variant_column``: about 40,000 rows a second on the 2-core test machine,
benchmarks/variant_shredding.py), and stores a shredded field's value of another type than the
option gives it by converting it anyway (a DOUBLE 1.5 into a BIGINT field as 1) or fails the
write. This module shreds as Paimon's Java
writer does (``VariantShreddingWriter.castShredded``):

- a row whose variant is an object gets, per shredded field, ``typed_value`` when the field's
  value has the field's type (an integer of any width, or a decimal of integral value, that
  fits the integer type; an integer or a decimal a DECIMAL(p, s) field holds exactly, its
  scale changed to s: Paimon's writer allows such numeric scale changes; a date, a
  microsecond timestamp with or without time zone; a boolean, float, double, string or
  binary of that type; an object, its fields shredded alike one level down), else the
  value's own bytes in the field's ``value``; a missing field has neither. The object's other
  fields stay in its ``value``, an object of the same key ids (NULL when none is left);
- any other variant (a scalar, an array) is kept whole in the top-level ``value``;
- a column shredded whole (``Whole``: an inferred scalar schema) gets each variant of its type
  in the top-level ``typed_value``, any other in ``value``.

The object layout follows the Variant encoding spec: the header's id and offset widths are the
smallest that hold the largest key id and the data size, fields listed in the object's own
order (its keys' order), their bytes laid out in that order.

``shreds(obj_fields)`` says whether a shredding schema is one this module handles: objects of
the scalar types above, of objects, and of untyped fields (a field of an inferred schema whose
values disagree, format/variant_inference.py: its values all in its ``value``). Other schemas
(arrays, timestamps of another precision) keep pypaimon's shredder (format/pypaimon_compat.py
picks), whose result ``check_lossless`` reads back: pypaimon converts a value of another type
than its field's when Arrow can (a DOUBLE 1.5 into a BIGINT field as 1) and drops a JSON
null's key, which would change the stored variant without a word.
"""

from __future__ import annotations

import decimal
from typing import List, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

OBJECT = 2
SHORT_STRING = 1
PRIMITIVE = 0
# primitive type ids of the Variant encoding spec
TRUE, FALSE = 1, 2
INT_WIDTHS = {3: 1, 4: 2, 5: 4, 6: 8}
DECIMAL_WIDTHS = {8: 4, 9: 8, 10: 16}  # DECIMAL4, DECIMAL8, DECIMAL16: the unscaled bytes
MAX_DECIMAL_DIGITS = 38
DOUBLE, FLOAT, BINARY, LONG_STRING = 7, 14, 15, 16

_INTEGER_RANGES = {pa.int8(): (-2 ** 7, 2 ** 7 - 1), pa.int16(): (-2 ** 15, 2 ** 15 - 1),
                   pa.int32(): (-2 ** 31, 2 ** 31 - 1), pa.int64(): (-2 ** 63, 2 ** 63 - 1)}
# a date (days), a timestamp with and without time zone (microseconds): their type ids
_TEMPORAL = {pa.date32(): (11, 4, np.int32), pa.timestamp("us", tz="UTC"): (12, 8, np.int64),
             pa.timestamp("us"): (13, 8, np.int64)}
_SCALARS = tuple(_INTEGER_RANGES) + (pa.bool_(), pa.float32(), pa.float64(), pa.string(),
                                     pa.large_string(), pa.binary(), pa.large_binary())


class Whole:
    """A column shredded whole into one scalar ``typed_value`` of ``arrow_type``: an inferred
    schema whose values all have that type (format/variant_inference.py), laid out as Paimon's
    ``variantShreddingSchema`` lays out a scalar: ``metadata``, ``value``, ``typed_value``."""

    def __init__(self, arrow_type: pa.DataType):
        self.arrow_type = arrow_type


def shreds(obj_fields) -> bool:
    """Whether ``obj_fields`` (pypaimon's parsed shredding schema of one column, or a
    ``Whole``) is a flat object of scalar types this module shreds, or of untyped fields
    (``untyped``), or a scalar of those types."""
    if isinstance(obj_fields, Whole):
        return _scalar(obj_fields.arrow_type)
    return bool(obj_fields) and all(
        f.schema.array_schema is None
        and (shreds(f.schema.object_fields) if f.schema.object_fields is not None
             else _scalar(f.schema.scalar_arrow_type) or untyped(f)) for f in obj_fields)


def _decimal(arrow_type) -> bool:
    return arrow_type is not None and pa.types.is_decimal128(arrow_type)


def _scalar(arrow_type) -> bool:
    return arrow_type in _SCALARS or _decimal(arrow_type) or arrow_type in _TEMPORAL


def untyped(field) -> bool:
    """Whether ``field`` (an ``ObjectField``) is shredded without a type: a field of an
    inferred schema whose values disagree (Paimon's VARIANT), stored in its ``value`` alone."""
    schema = field.schema
    return schema.typed_idx < 0 and schema.scalar_arrow_type is None \
        and schema.object_fields is None and schema.array_schema is None


def target_type(obj_fields) -> pa.StructType:
    """The Parquet type of a column shredded as ``obj_fields``: pypaimon's
    (``shredding_schema_to_arrow_type``), an untyped field's struct holding ``value`` only,
    as Paimon's ``variantShreddingSchema`` lays out a VARIANT field."""
    from pypaimon.data.variant_shredding import shredding_schema_to_arrow_type

    if isinstance(obj_fields, Whole):
        no_fields = shredding_schema_to_arrow_type([])
        typed = no_fields.field("typed_value").with_type(obj_fields.arrow_type)
        return pa.struct([no_fields.field("metadata"), no_fields.field("value"), typed])
    whole = shredding_schema_to_arrow_type(obj_fields)
    typed = whole.field("typed_value")
    return pa.struct([whole.field("metadata"), whole.field("value"),
                      typed.with_type(_laid_out(obj_fields, typed.type))])


def _laid_out(obj_fields, typed: pa.StructType) -> pa.StructType:
    """pypaimon's ``typed_value`` type of ``obj_fields`` with each untyped field, at any
    depth, a struct of ``value`` only."""
    fields = [typed.field(i) for i in range(typed.num_fields)]
    for i, field in enumerate(obj_fields):
        pair = fields[i].type
        if untyped(field):
            fields[i] = fields[i].with_type(pa.struct([pair.field("value")]))
        elif field.schema.object_fields is not None:
            inner = pair.field("typed_value")
            fields[i] = fields[i].with_type(pa.struct([pair.field("value"), inner.with_type(
                _laid_out(field.schema.object_fields, inner.type))]))
    return pa.struct(fields)


def shred(column, obj_fields, target_type: pa.StructType) -> pa.StructArray:
    """``column`` (VARIANT as ``struct<value, metadata>``) as ``target_type`` (pypaimon's
    ``shredding_schema_to_arrow_type(obj_fields)``)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    n = len(column)
    values = _Bytes(column.field("value"))
    present = _valid(column) & (values.lengths > 0)
    header = np.zeros(n, np.int64)
    header[present] = values.buf[values.starts[present]]
    if isinstance(obj_fields, Whole):
        return _shred_whole(column, values, present, header, obj_fields.arrow_type, target_type)
    metadata = _Bytes(column.field("metadata"))
    value, typed = _shred_objects(values.buf, values.starts, values.lengths, present, header,
                                  metadata, obj_fields, target_type.field("typed_value").type)
    metadata_column = column.field("metadata").cast(pa.binary()).fill_null(b"")
    return pa.StructArray.from_arrays(
        [metadata_column, value, typed], fields=list(target_type),
        mask=pa.array(~_valid(column)))


def _shred_objects(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                   present: np.ndarray, header: np.ndarray, metadata: "_Bytes", obj_fields,
                   typed_type: pa.StructType) -> Tuple[pa.Array, pa.StructArray]:
    """The ``value`` and ``typed_value`` columns of the variants (one a row, at ``starts``;
    none where not ``present``) shredded as ``obj_fields``: a row's variant, or a field's
    value one level down, with the same row numbers."""
    n = len(starts)
    is_object = present & ((header & 3) == OBJECT)
    entries = _Entries(buf, starts, header, np.flatnonzero(is_object))
    names = _Names(metadata, entries)
    shredded = np.zeros(len(entries.rows), bool)
    fields = []
    for i, field in enumerate(obj_fields):
        match = names.equal(field.field_name.encode("utf-8"))
        shredded |= match
        field_type = typed_type.field(i).type
        fields.append(pa.StructArray.from_arrays(
            _field_columns(buf, entries, match, n, field, field_type, metadata),
            fields=list(field_type)))
    value = _remaining(buf, starts, lengths, entries, ~shredded, present, is_object)
    typed = pa.StructArray.from_arrays(fields, fields=list(typed_type),
                                       mask=pa.array(~is_object))
    return value, typed


def _shred_whole(column, values: "_Bytes", present: np.ndarray, header: np.ndarray,
                 arrow_type: pa.DataType, target_type: pa.StructType) -> pa.StructArray:
    """Each variant of ``arrow_type`` in ``typed_value``, any other (a JSON null included)
    whole in ``value``."""
    n = len(column)
    rows = np.flatnonzero(present)
    typed, ok = _typed(values.buf, values.starts[rows], header[rows], arrow_type)
    data, offsets = _gather(values.buf, values.starts[rows[~ok]], values.lengths[rows[~ok]])
    kept = _scatter_binary(data, offsets, rows[~ok], n)
    typed = _scatter(typed.filter(pa.array(ok)), rows[ok], n, arrow_type)
    metadata_column = column.field("metadata").cast(pa.binary()).fill_null(b"")
    return pa.StructArray.from_arrays([metadata_column, kept, typed], fields=list(target_type),
                                      mask=pa.array(~_valid(column)))


# ---------------------------------------------------------------------------- reading bytes

class _Bytes:
    """A binary column's bytes as NumPy: ``buf`` (padded with zeros so that a read of up to
    8 bytes past any position stays inside it), each row's ``starts`` and ``lengths``."""

    def __init__(self, array: pa.Array):
        array = array.cast(pa.large_binary())
        n = len(array)
        offsets = np.frombuffer(array.buffers()[1], np.int64)[array.offset:array.offset + n + 1]
        data = array.buffers()[2]
        raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        self.buf = np.concatenate([raw, np.zeros(8, np.uint8)])
        self.starts = offsets[:-1].astype(np.int64)
        self.lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
        self.lengths[~_valid(array)] = 0


def _valid(array) -> np.ndarray:
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _read_uint(buf: np.ndarray, pos: np.ndarray, width) -> np.ndarray:
    """The little-endian unsigned integers of ``width`` (1-8, per position) bytes at ``pos``."""
    width = np.broadcast_to(np.asarray(width, np.int64), pos.shape)
    result = np.zeros(pos.shape, np.uint64)
    for j in range(8):
        used = width > j
        if not used.any():
            break
        byte = buf[pos + j].astype(np.uint64)
        result |= np.where(used, byte << np.uint64(8 * j), np.uint64(0))
    return result


def _int_size(values: np.ndarray) -> np.ndarray:
    """The Variant encoding's byte width of unsigned ``values``: 1, 2, 3 or 4."""
    return 1 + (values > 0xFF) + (values > 0xFFFF) + (values > 0xFFFFFF)


def _exclusive_cumsum(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(counts) \
        else np.zeros(0, np.int64)


def _range_positions(begins: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions of the ranges [begin, begin + length), one range after another: a
    running sum of steps of one that jumps at each range's first position (one pass over the
    bytes, where a repeat of each range's shift takes several)."""
    keep = lengths > 0
    begins, lengths = begins[keep], lengths[keep]
    if not len(begins):
        return np.zeros(0, np.int64)
    steps = np.ones(int(lengths.sum()), np.int64)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    steps[firsts] = np.concatenate([[begins[0]], begins[1:] - (begins[:-1] + lengths[:-1] - 1)])
    return np.cumsum(steps)


def _gather(buf: np.ndarray, begins: np.ndarray, lengths: np.ndarray) -> Tuple[np.ndarray,
                                                                              np.ndarray]:
    """The bytes of the ranges [begin, begin + length) one after another, and their offsets."""
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return buf[_range_positions(begins, lengths)], offsets


class _Entries:
    """The fields of each object row, flattened: per entry its row (``rows``), its position in
    the row (``ranks``), key id (``ids``) and the absolute byte range of its value."""

    def __init__(self, buf: np.ndarray, starts: np.ndarray, header: np.ndarray,
                 object_rows: np.ndarray):
        start = starts[object_rows]
        info = header[object_rows] >> 2
        large = (info >> 4) & 1
        id_size = ((info >> 2) & 3) + 1
        offset_size = (info & 3) + 1
        size_bytes = np.where(large == 1, 4, 1)
        count = _read_uint(buf, start + 1, size_bytes).astype(np.int64)
        id_start = start + 1 + size_bytes
        offset_start = id_start + count * id_size
        data_start = offset_start + (count + 1) * offset_size

        per_row = np.repeat(np.arange(len(object_rows)), count)
        self.rows = object_rows[per_row]
        self.ranks = np.arange(len(per_row)) - np.repeat(_exclusive_cumsum(count), count)
        self.ids = _read_uint(buf, id_start[per_row] + self.ranks * id_size[per_row],
                              id_size[per_row]).astype(np.int64)
        offsets = _read_uint(buf, offset_start[per_row] + self.ranks * offset_size[per_row],
                             offset_size[per_row]).astype(np.int64)
        ends_of_data = _read_uint(buf, offset_start + count * offset_size,
                                  offset_size).astype(np.int64)
        # a field's bytes end where the next field's begin in the data area (which need not
        # follow the id order), the last at the data's end
        order = np.lexsort((offsets, per_row))
        following = np.empty(len(order), np.int64)
        if len(order):
            same_row = per_row[order][1:] == per_row[order][:-1]
            following[:-1] = np.where(same_row, offsets[order][1:],
                                      ends_of_data[per_row[order][:-1]])
            following[-1] = ends_of_data[per_row[order][-1]]
        ends = np.empty(len(order), np.int64)
        ends[order] = following
        self.begins = data_start[per_row] + offsets
        self.lengths = ends - offsets


class _Names:
    """The key name of each entry, located in its row's metadata dictionary."""

    def __init__(self, metadata: _Bytes, entries: _Entries):
        buf, start = metadata.buf, metadata.starts[entries.rows]
        size = ((buf[start].astype(np.int64) >> 6) & 3) + 1
        dictionary = _read_uint(buf, start + 1, size).astype(np.int64)
        strings = start + 1 + (dictionary + 2) * size
        begin = _read_uint(buf, start + 1 + (entries.ids + 1) * size, size).astype(np.int64)
        end = _read_uint(buf, start + 1 + (entries.ids + 2) * size, size).astype(np.int64)
        self.buf, self.begins, self.lengths = buf, strings + begin, end - begin

    def equal(self, name: bytes) -> np.ndarray:
        match = self.lengths == len(name)
        for j, byte in enumerate(name):
            match &= self.buf[np.where(match, self.begins + j, 0)] == byte
        return match


# ---------------------------------------------------------------------------- writing columns

def _field_columns(buf: np.ndarray, entries: _Entries, match: np.ndarray, n: int, field,
                   field_type: pa.StructType, metadata: "_Bytes") -> List[pa.Array]:
    """The field's ``value`` and ``typed_value`` columns over all ``n`` rows: ``value`` alone
    for an untyped field; a nested object's shredded one level down."""
    rows, begins, lengths = entries.rows[match], entries.begins[match], entries.lengths[match]
    if untyped(field):
        data, offsets = _gather(buf, begins, lengths)
        return [_scatter_binary(data, offsets, rows, n)]
    header = buf[begins].astype(np.int64)
    if field.schema.object_fields is not None:
        at, long, here, kinds = (np.zeros(n, np.int64), np.zeros(n, np.int64),
                                 np.zeros(n, bool), np.zeros(n, np.int64))
        at[rows], long[rows], here[rows], kinds[rows] = begins, lengths, True, header
        return list(_shred_objects(buf, at, long, here, kinds, metadata,
                                   field.schema.object_fields,
                                   field_type.field("typed_value").type))
    arrow_type = field.schema.scalar_arrow_type
    typed, typed_ok = _typed(buf, begins, header, arrow_type)
    kept = ~typed_ok  # another type (a variant NULL included): its own bytes
    data, offsets = _gather(buf, begins[kept], lengths[kept])
    value = _scatter_binary(data, offsets, rows[kept], n)
    return [value, _scatter(typed.filter(pa.array(typed_ok)), rows[typed_ok], n, arrow_type)]


def _typed(buf: np.ndarray, begins: np.ndarray, header: np.ndarray, arrow_type: pa.DataType):
    """Each value (at ``begins``) as ``arrow_type``, and whether it has that type."""
    basic, info = header & 3, header >> 2
    primitive = basic == PRIMITIVE
    if pa.types.is_boolean(arrow_type):
        ok = primitive & ((info == TRUE) | (info == FALSE))
        return pa.array(info == TRUE), ok
    if arrow_type in _INTEGER_RANGES:
        # an integer, or a decimal of integral value (its scale changed, as Paimon allows)
        ok, unscaled, scale = _numbers(buf, begins, header)
        ok &= _rescales(unscaled, scale, MAX_DECIMAL_DIGITS, 0)
        signed = unscaled // np.power(10, np.minimum(scale, 18), dtype=np.int64)
        low, high = _INTEGER_RANGES[arrow_type]
        ok &= (signed >= low) & (signed <= high)
        return pa.array(np.where(ok, signed, 0)).cast(arrow_type), ok
    if _decimal(arrow_type):
        return _typed_decimal(buf, begins, header, arrow_type)
    if arrow_type in _TEMPORAL:
        wanted, width, dtype = _TEMPORAL[arrow_type]
        ok = primitive & (info == wanted)
        raw = _read_uint(buf, begins + 1, width)
        signed = raw.astype(np.uint32).view(np.int32) if width == 4 else raw.view(np.int64)
        return pa.array(signed.astype(dtype)).cast(arrow_type), ok
    if pa.types.is_floating(arrow_type):
        wanted, width, dtype = (DOUBLE, 8, "<f8") if arrow_type == pa.float64() \
            else (FLOAT, 4, "<f4")
        ok = primitive & (info == wanted)
        raw = _read_uint(buf, begins + 1, width)
        floats = raw.view("<f8") if width == 8 else raw.astype(np.uint32).view(dtype)
        return pa.array(floats.astype(dtype)).cast(arrow_type), ok
    # strings and binary: the bytes after the header (and a 4-byte length, but for a short
    # string, whose length is in its header)
    string = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    short = (basic == SHORT_STRING) if string else np.zeros(len(begins), bool)
    long = primitive & (info == (LONG_STRING if string else BINARY))
    ok = short | long
    length = np.where(short, info, np.where(long, _read_uint(buf, begins + 1, 4), 0))
    data, offsets = _gather(buf, np.where(short, begins + 1, begins + 5),
                            np.where(ok, length, 0).astype(np.int64))
    array = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(begins),
                                             [None, pa.py_buffer(offsets),
                                              pa.py_buffer(data)])
    return array.cast(pa.large_string() if string else pa.large_binary()).cast(arrow_type), ok


def _typed_decimal(buf: np.ndarray, begins: np.ndarray, header: np.ndarray,
                   arrow_type: pa.Decimal128Type):
    """Each value as ``arrow_type`` (DECIMAL(p, s)), and whether it is one: an integer or a
    decimal whose value it holds exactly at scale s in p digits (Paimon's writer allows such
    numeric scale changes: ``allowNumericScaleChanges``). A 16-byte decimal is taken when its
    unscaled value fits 8 bytes; a larger one stays in the bytes."""
    ok, unscaled, scale = _numbers(buf, begins, header)
    ok &= _rescales(unscaled, scale, arrow_type.precision, arrow_type.scale)
    rows = np.flatnonzero(ok)
    pieces, order = [], []
    for source_scale in np.unique(scale[rows]):  # at most 39 scales
        at = rows[scale[rows] == source_scale]
        pair = np.stack([unscaled[at], unscaled[at] >> 63], axis=1)  # little-endian int128
        exact = pa.Array.from_buffers(pa.decimal128(MAX_DECIMAL_DIGITS, int(source_scale)),
                                      len(at), [None, pa.py_buffer(pair.tobytes())])
        pieces.append(exact.cast(arrow_type))
        order.append(at)
    if not pieces:
        return pa.nulls(len(begins), arrow_type), ok
    return _scatter(pa.concat_arrays(pieces), np.concatenate(order), len(begins),
                    arrow_type), ok


def _numbers(buf: np.ndarray, begins: np.ndarray, header: np.ndarray):
    """Which values (at ``begins``) are exact numbers of at most 8 unscaled bytes (an integer
    of any width, scale 0; a decimal, a 16-byte one when its high half is the low half's
    sign), and their unscaled values and scales."""
    basic, info = header & 3, header >> 2
    primitive = basic == PRIMITIVE
    int_width = np.select([info == t for t in INT_WIDTHS], list(INT_WIDTHS.values()), 0)
    dec_width = np.select([info == t for t in DECIMAL_WIDTHS], list(DECIMAL_WIDTHS.values()), 0)
    is_int, is_dec = primitive & (int_width > 0), primitive & (dec_width > 0)
    width = np.where(is_int, int_width, np.where(is_dec, np.minimum(dec_width, 8), 1))
    raw = _read_uint(buf, np.where(is_dec, begins + 2, begins + 1), width)
    shift = (64 - 8 * width).astype(np.uint64)
    unscaled = ((raw << shift).view(np.int64)) >> shift.astype(np.int64)  # sign-extended
    wide = is_dec & (dec_width == 16)
    high = _read_uint(buf, np.where(wide, begins + 10, begins), 8).view(np.int64)
    scale = np.where(is_dec, buf[begins + 1].astype(np.int64), 0)
    ok = is_int | (is_dec & (~wide | (high == unscaled >> 63)) & (scale <= MAX_DECIMAL_DIGITS))
    return ok, unscaled, scale


def _rescales(unscaled: np.ndarray, scale: np.ndarray, precision: int,
              target: int) -> np.ndarray:
    """Whether each value (``unscaled`` at ``scale``) is held exactly at scale ``target`` in
    ``precision`` digits: scaled up by 10^k it must keep to ``precision`` digits; scaled
    down, lose no digit."""
    k = np.abs(target - scale)
    power = np.power(10, np.minimum(k, 18), dtype=np.int64)
    digits_left = precision - k
    limit = np.power(10, np.clip(digits_left, 0, 18), dtype=np.int64)
    up = (digits_left >= 19) | ((digits_left >= 0) & (unscaled < limit) & (unscaled > -limit))
    down = np.where(k <= 18, unscaled % power == 0, unscaled == 0)
    return np.where(scale <= target, up, down)


def _scatter(array: pa.Array, rows: np.ndarray, n: int, arrow_type: pa.DataType) -> pa.Array:
    """``array``'s values at ``rows`` of an ``n``-row column, NULL elsewhere."""
    position = np.full(n, -1, np.int64)
    position[rows] = np.arange(len(rows))
    index = pa.array(position, mask=position < 0)
    return array.take(index) if len(array) else pa.nulls(n, arrow_type)


def _scatter_binary(data: np.ndarray, offsets: np.ndarray, rows: np.ndarray,
                    n: int) -> pa.Array:
    array = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(rows),
                                             [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return _scatter(array, rows, n, pa.large_binary()).cast(pa.binary())


def _remaining(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, entries: _Entries,
               kept: np.ndarray, present: np.ndarray, is_object: np.ndarray) -> pa.Array:
    """Per row: a non-object variant's bytes whole; an object's unshredded fields as an
    object of their own (NULL when none is left); NULL where there is no variant."""
    n = len(starts)
    whole = present & ~is_object
    data, offsets = _gather(buf, starts[whole], lengths[whole])
    scalars = _scatter_binary(data, offsets, np.flatnonzero(whole), n)
    objects = _objects(buf, entries.rows[kept], entries.ids[kept], entries.begins[kept],
                       entries.lengths[kept], n)
    return pc.if_else(pa.array(whole), scalars, objects)


def _objects(buf: np.ndarray, rows: np.ndarray, ids: np.ndarray, begins: np.ndarray,
             lengths: np.ndarray, n: int) -> pa.Array:
    """The objects made of each row's kept fields (in the order given: the object's own), as
    Paimon's variant builder writes them: smallest id and offset widths, a 4-byte count above
    255 fields. NULL for rows with no kept field."""
    kept_rows, first, count = np.unique(rows, return_index=True, return_counts=True)
    if not len(kept_rows):
        return pa.nulls(n, pa.binary())
    data_size = np.add.reduceat(lengths, first) if len(lengths) else np.zeros(0, np.int64)
    max_id = np.maximum.reduceat(ids, first)
    id_size = _int_size(max_id)
    offset_size = np.where(data_size > 0, _int_size(data_size), 1)
    large = count > 255
    size_bytes = np.where(large, 4, 1)
    total = 1 + size_bytes + count * id_size + (count + 1) * offset_size + data_size
    out_start = _exclusive_cumsum(total)
    out = np.zeros(int(total.sum()) + 8, np.uint8)

    out[out_start] = ((large.astype(np.int64) << 6) | ((id_size - 1) << 4)
                      | ((offset_size - 1) << 2) | OBJECT).astype(np.uint8)
    _write_uint(out, out_start + 1, count, size_bytes)
    per_field = np.repeat(np.arange(len(kept_rows)), count)
    rank = np.arange(len(rows)) - np.repeat(first, count)
    ids_at = out_start + 1 + size_bytes
    _write_uint(out, ids_at[per_field] + rank * id_size[per_field], ids, id_size[per_field])
    offsets_at = ids_at + count * id_size
    within = np.cumsum(lengths) - lengths - np.repeat(np.cumsum(lengths)[first] -
                                                      lengths[first], count)
    _write_uint(out, offsets_at[per_field] + rank * offset_size[per_field], within,
                offset_size[per_field])
    _write_uint(out, offsets_at + count * offset_size, data_size, offset_size)
    data_at = offsets_at + (count + 1) * offset_size
    out[_range_positions(data_at[per_field] + within, lengths)] = \
        buf[_range_positions(begins, lengths)]
    offsets = np.concatenate([out_start, [total.sum()]]).astype(np.int64)
    array = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(kept_rows),
                                             [None, pa.py_buffer(offsets),
                                              pa.py_buffer(out[:-8])])
    return _scatter(array, kept_rows, n, pa.large_binary()).cast(pa.binary())


def _write_uint(out: np.ndarray, pos: np.ndarray, values: np.ndarray, width) -> None:
    width = np.broadcast_to(np.asarray(width, np.int64), pos.shape)
    values = values.astype(np.uint64)
    for j in range(4):
        used = width > j
        out[pos[used] + j] = ((values[used] >> np.uint64(8 * j)) & np.uint64(0xFF)) \
            .astype(np.uint8)


def check_lossless(column, shredded) -> None:
    """Raise ValueError when ``shredded`` (pypaimon's shredding of the VARIANT ``column``) does
    not read back as ``column``'s variants, naming the first row that differs. Row by row, as
    the shredding it checks is: only schemas pypaimon shreds come here."""
    from pypaimon.data.generic_variant import GenericVariant
    from pypaimon.data.variant_shredding import assemble_shredded_column, build_variant_schema

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if isinstance(shredded, pa.ChunkedArray):
        shredded = shredded.combine_chunks()
    back = assemble_shredded_column(shredded, build_variant_schema(shredded.type))
    for row, (written, read) in enumerate(zip(column.to_pylist(), back.to_pylist())):
        if written is None and read is None:
            continue
        value = None if written is None else GenericVariant.from_arrow_struct(written).to_python()
        again = None if read is None else GenericVariant.from_arrow_struct(read).to_python()
        if not _same(value, again):
            raise ValueError(f"row {row} would be stored as {again!r}, not {value!r}: a shredded "
                             f"field holds another type than its typed column's")


def _same(a, b) -> bool:
    """Equal values of the same Python types, recursively (1 is not 1.0, nor True; NaN is
    NaN); an integer and a decimal are the same number when equal, as Paimon's writer shreds
    one into the other's field (``allowNumericScaleChanges``)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if {type(a), type(b)} <= {int, decimal.Decimal}:
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
