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
- with an inferred schema (``Inferred``) a column (or field) of a scalar type gets each
  variant of that type in ``typed_value``, any other in ``value``; one of arrays gets each
  array's elements, each shredded alike, in a LIST ``typed_value``, any other in ``value``.

The object layout follows the Variant encoding spec: the header's id and offset widths are the
smallest that hold the largest key id and the data size, fields listed in the object's own
order (its keys' order), their bytes laid out in that order.

``shreds(obj_fields)`` says whether a shredding schema is one this module handles: objects of
the scalar types above, of objects, and of untyped fields (a field of an inferred schema whose
values disagree, format/variant_inference.py: its values all in its ``value``); an inferred
schema also of arrays. Other configured schemas (arrays, which pypaimon's writer lays out as
BINARY, timestamps of another precision) keep pypaimon's shredder (format/pypaimon_compat.py
picks), whose result ``check_lossless`` reads back: pypaimon converts a value of another type
than its field's when Arrow can (a DOUBLE 1.5 into a BIGINT field as 1) and drops a JSON
null's key, which would change the stored variant without a word.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

OBJECT, ARRAY = 2, 3
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


@dataclass
class Inferred:
    """A column's shredding schema as inference gives it (format/variant_inference.py):
    pypaimon's ``VariantSchema`` of the whole variant (an object, a scalar or an array), laid
    out as Paimon's ``variantShreddingSchema`` lays it out (``target_type``): an array as a
    LIST of its elements' ``value`` and ``typed_value``, an untyped field with ``value``
    only."""
    schema: Any


def shreds(obj_fields) -> bool:
    """Whether ``obj_fields`` (pypaimon's parsed shredding schema of one column, or an
    ``Inferred``) is one this module shreds: objects of the scalar types above, of objects
    and of untyped fields (``untyped``); an ``Inferred`` schema may hold arrays too, laid
    out as pypaimon does not lay them out."""
    if isinstance(obj_fields, Inferred):
        return _shreddable(obj_fields.schema, arrays=True)
    return bool(obj_fields) and all(_shreddable(f.schema, arrays=False) for f in obj_fields)


def _shreddable(schema, arrays: bool) -> bool:
    if schema.object_fields is not None:
        return bool(schema.object_fields) and all(_shreddable(f.schema, arrays)
                                                  for f in schema.object_fields)
    if schema.array_schema is not None:
        return arrays and _shreddable(schema.array_schema, arrays)
    return _scalar(schema.scalar_arrow_type) or _untyped(schema)


def _decimal(arrow_type) -> bool:
    return arrow_type is not None and pa.types.is_decimal128(arrow_type)


def _scalar(arrow_type) -> bool:
    return arrow_type in _SCALARS or _decimal(arrow_type) or arrow_type in _TEMPORAL


def untyped(field) -> bool:
    """Whether ``field`` (an ``ObjectField``) is shredded without a type: a field of an
    inferred schema whose values disagree (Paimon's VARIANT), stored in its ``value`` alone."""
    return _untyped(field.schema)


def _untyped(schema) -> bool:
    return schema.typed_idx < 0 and schema.scalar_arrow_type is None \
        and schema.object_fields is None and schema.array_schema is None


def target_type(obj_fields) -> pa.StructType:
    """The Parquet type of a column shredded as ``obj_fields``: for pypaimon's parsed fields,
    pypaimon's (``shredding_schema_to_arrow_type``); for an ``Inferred`` schema, Paimon's
    layout (``variantShreddingSchema``), the same where pypaimon has one, with the field ids
    pypaimon gives."""
    from pypaimon.data.variant_shredding import shredding_schema_to_arrow_type

    if not isinstance(obj_fields, Inferred):
        return shredding_schema_to_arrow_type(obj_fields)
    typed = _typed_type(obj_fields.schema)
    return pa.struct([pa.field("metadata", pa.binary(), nullable=False, metadata=_id(0)),
                      pa.field("value", pa.binary(), metadata=_id(1))]
                     + ([] if typed is None else
                        [pa.field("typed_value", typed, metadata=_id(2))]))


def _id(field_id: int) -> dict:
    return {b"PARQUET:field_id": str(field_id).encode()}


def _pair_type(schema) -> pa.StructType:
    """A field's or an array element's ``value`` and ``typed_value`` (none when untyped)."""
    typed = _typed_type(schema)
    return pa.struct([pa.field("value", pa.binary(), metadata=_id(0))]
                     + ([] if typed is None else
                        [pa.field("typed_value", typed, metadata=_id(1))]))


def _typed_type(schema) -> Optional[pa.DataType]:
    if schema.object_fields is not None:
        return pa.struct([pa.field(f.field_name, _pair_type(f.schema), nullable=False,
                                   metadata=_id(i + 1))
                          for i, f in enumerate(schema.object_fields)])
    if schema.array_schema is not None:
        return pa.list_(pa.field("element", _pair_type(schema.array_schema), nullable=False))
    return schema.scalar_arrow_type


def shred(column, obj_fields, target_type: pa.StructType) -> pa.StructArray:
    """``column`` (VARIANT as ``struct<value, metadata>``) as ``target_type`` (pypaimon's
    ``shredding_schema_to_arrow_type(obj_fields)``, or ``target_type(obj_fields)``)."""
    from pypaimon.data.variant_shredding import VariantSchema

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    n = len(column)
    values = _Bytes(column.field("value"))
    present = _valid(column) & (values.lengths > 0)
    header = np.zeros(n, np.int64)
    header[present] = values.buf[values.starts[present]]
    schema = obj_fields.schema if isinstance(obj_fields, Inferred) \
        else VariantSchema(object_fields=obj_fields)
    slots = _Slots(values.starts, values.lengths, present, header, np.arange(n))
    pair = pa.struct([target_type.field(i) for i in range(1, target_type.num_fields)])
    columns = _columns(values.buf, _Bytes(column.field("metadata")), slots, schema, pair)
    metadata_column = column.field("metadata").cast(pa.binary()).fill_null(b"")
    return pa.StructArray.from_arrays(
        [metadata_column] + columns, fields=list(target_type), mask=pa.array(~_valid(column)))


class _Slots:
    """Variant values, one a slot (a row; a field's value in a row; an array's element): where
    each one's bytes are (none where not ``present``), its header byte, and the row whose
    metadata names its keys (``owners``)."""

    def __init__(self, starts: np.ndarray, lengths: np.ndarray, present: np.ndarray,
                 header: np.ndarray, owners: np.ndarray):
        self.starts, self.lengths, self.present = starts, lengths, present
        self.header, self.owners = header, owners

    def at(self, rows: np.ndarray, begins: np.ndarray, lengths: np.ndarray,
           buf: np.ndarray) -> "_Slots":
        """The values at ``begins`` (a field's, one level down) in the slots ``rows``."""
        n = len(self.starts)
        starts, sizes, present = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
        header = np.zeros(n, np.int64)
        starts[rows], sizes[rows], present[rows] = begins, lengths, True
        header[rows] = buf[begins]
        return _Slots(starts, sizes, present, header, self.owners)


def _columns(buf: np.ndarray, metadata: "_Bytes", slots: _Slots, schema,
             pair_type: pa.StructType) -> List[pa.Array]:
    """The ``value`` (and ``typed_value``) columns of ``pair_type`` for the slots' values
    shredded as ``schema``."""
    if pair_type.get_field_index("typed_value") < 0:  # untyped: every value in ``value``
        return [_bytes_of(buf, slots, slots.present)]
    typed_type = pair_type.field("typed_value").type
    if schema.object_fields is not None:
        return list(_shred_objects(buf, metadata, slots, schema.object_fields, typed_type))
    if schema.array_schema is not None:
        return list(_shred_arrays(buf, metadata, slots, schema.array_schema, typed_type))
    rows = np.flatnonzero(slots.present)
    typed, ok = _typed(buf, slots.starts[rows], slots.header[rows], typed_type)
    kept = np.zeros(len(slots.starts), bool)
    kept[rows[~ok]] = True  # another type (a variant NULL included): its own bytes
    return [_bytes_of(buf, slots, kept),
            _scatter(typed.filter(pa.array(ok)), rows[ok], len(slots.starts), typed_type)]


def _bytes_of(buf: np.ndarray, slots: _Slots, which: np.ndarray) -> pa.Array:
    """The bytes of the slots' values where ``which``, NULL elsewhere."""
    data, offsets = _gather(buf, slots.starts[which], slots.lengths[which])
    return _scatter_binary(data, offsets, np.flatnonzero(which), len(slots.starts))


def _shred_objects(buf: np.ndarray, metadata: "_Bytes", slots: _Slots, obj_fields,
                   typed_type: pa.StructType) -> Tuple[pa.Array, pa.StructArray]:
    """``value`` and ``typed_value`` of the slots' values shredded as an object of
    ``obj_fields``: a field's ``typed_value`` is shredded one level down, in the same slots."""
    n = len(slots.starts)
    is_object = slots.present & ((slots.header & 3) == OBJECT)
    entries = _Entries(buf, slots.starts, slots.header, np.flatnonzero(is_object))
    names = _Names(metadata, entries, slots.owners)
    shredded = np.zeros(len(entries.rows), bool)
    fields = []
    for i, field in enumerate(obj_fields):
        match = names.equal(field.field_name.encode("utf-8"))
        shredded |= match
        pair_type = typed_type.field(i).type
        inner = slots.at(entries.rows[match], entries.begins[match], entries.lengths[match], buf)
        fields.append(pa.StructArray.from_arrays(
            _columns(buf, metadata, inner, field.schema, pair_type), fields=list(pair_type)))
    value = _remaining(buf, slots, entries, ~shredded, is_object)
    typed = pa.StructArray.from_arrays(fields, fields=list(typed_type),
                                       mask=pa.array(~is_object))
    return value, typed


def _shred_arrays(buf: np.ndarray, metadata: "_Bytes", slots: _Slots, element_schema,
                  list_type: pa.ListType) -> Tuple[pa.Array, pa.ListArray]:
    """``value`` and ``typed_value`` of the slots' values shredded as arrays: an array's
    elements each shredded as ``element_schema`` (Paimon's writer shreds an array whole); any
    other value in ``value``."""
    n = len(slots.starts)
    is_array = slots.present & ((slots.header & 3) == ARRAY)
    rows = np.flatnonzero(is_array)
    start, info = slots.starts[rows], slots.header[rows] >> 2
    size_bytes = np.where((info >> 2) & 1 == 1, 4, 1)
    offset_size = (info & 3) + 1
    count = _read_uint(buf, start + 1, size_bytes).astype(np.int64)
    offsets_at = start + 1 + size_bytes
    data_at = offsets_at + (count + 1) * offset_size
    per = np.repeat(np.arange(len(rows)), count)
    rank = np.arange(len(per)) - np.repeat(_exclusive_cumsum(count), count)
    width = offset_size[per]
    begin = _read_uint(buf, offsets_at[per] + rank * width, width).astype(np.int64)
    end = _read_uint(buf, offsets_at[per] + (rank + 1) * width, width).astype(np.int64)
    element_starts = data_at[per] + begin
    elements = _Slots(element_starts, end - begin, np.ones(len(per), bool),
                      buf[element_starts].astype(np.int64), slots.owners[rows][per])
    element_type = list_type.value_type
    items = pa.StructArray.from_arrays(
        _columns(buf, metadata, elements, element_schema, element_type),
        fields=list(element_type))
    counts = np.zeros(n, np.int64)
    counts[rows] = count
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    typed = pa.ListArray.from_arrays(offsets, items, type=list_type, mask=pa.array(~is_array))
    return _bytes_of(buf, slots, slots.present & ~is_array), typed


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

    def __init__(self, metadata: _Bytes, entries: _Entries, owners: np.ndarray):
        buf, start = metadata.buf, metadata.starts[owners[entries.rows]]
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


def _remaining(buf: np.ndarray, slots: _Slots, entries: _Entries, kept: np.ndarray,
               is_object: np.ndarray) -> pa.Array:
    """Per slot: a non-object value's bytes whole; an object's unshredded fields as an object
    of their own (NULL when none is left); NULL where there is no value."""
    n = len(slots.starts)
    whole = slots.present & ~is_object
    scalars = _bytes_of(buf, slots, whole)
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
