"""The shredding schema Paimon infers for one Parquet data file of a table with
`variant.inferShreddingSchema` = true (Paimon's ``InferVariantShreddingSchema`` in its default
`variant.shredding.inferenceMode`, 'per-file').

Paimon's writer holds back a file's first `variant.shredding.maxInferBufferRow` rows (4096),
infers from them one schema per top-level VARIANT column and shreds the whole file with it:

- each non-NULL variant (a JSON null included) counts once for its column; its schema is: an
  integer DECIMAL(p, 0) for its p digits (p <= 18), else BIGINT; a decimal DECIMAL(p, s) of its
  digits once trailing zeros are stripped; a string, double, float, boolean, binary, date,
  timestamp of that type; an object a ROW of its fields, each counted once; an array an ARRAY
  of its elements' merged schema; a JSON null nothing (it merges into any type); anything else
  (a UUID) or anything below `variant.shredding.maxSchemaDepth` levels, VARIANT;
- schemas merge: decimals to the widest digits left and right of the point (VARIANT above
  38 digits), a decimal and a BIGINT to BIGINT when the decimal is integral of at most 18
  digits, rows field by field (counts added), arrays by element, equal types to themselves,
  anything else (an integer and a double) to VARIANT, which is not shredded;
- the merged schema is finalized: a row keeps the fields seen in at least
  ceil(values * `variant.shredding.minFieldCardinalityRatio`) values, and a row left empty is
  VARIANT; integral decimals of up to 18 digits become BIGINT, other decimals DECIMAL(18, s)
  or DECIMAL(38, s); every field spends one of `variant.shredding.maxSchemaWidth` columns
  (a typed scalar two), one budget for all the file's VARIANT columns, and a field reached
  with none left is VARIANT.

A column whose finalized schema is an object, a scalar or an array is shredded so, by
format/variant_shredder.py (``infer`` gives pypaimon's parsed form of the schema, as
`variant.shreddingSchema` would be parsed); one whose schema is VARIANT is not, as in Paimon.
Not built: VARIANT fields nested in ROW columns (pypaimon's writer shreds top-level columns
only) are written unshredded.
Inference reads at most `maxInferBufferRow` values per column and file, one at a time in
Python: bounded, and small next to shredding the file, which is vectorized.
`variant.shredding.inferenceMode` 'adaptive' (weighing a data writer's earlier files) is
format/variant_adaptive.py, built on this module's evidence and merging.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa
from pypaimon.data.generic_variant import (_get_metadata_key, _handle_array, _handle_object,
                                           _read_unsigned)

INFER = "variant.inferShreddingSchema"
MODE = "variant.shredding.inferenceMode"
MAX_WIDTH = "variant.shredding.maxSchemaWidth"
MAX_DEPTH = "variant.shredding.maxSchemaDepth"
MIN_RATIO = "variant.shredding.minFieldCardinalityRatio"
MAX_ROWS = "variant.shredding.maxInferBufferRow"
DEFAULTS = {MAX_WIDTH: 300, MAX_DEPTH: 50, MIN_RATIO: 0.1, MAX_ROWS: 4096}
MAX_PRECISION = 38
# Paimon's DataTypes.VARIANT() in an inferred schema: the value stays in the variant's bytes
VARIANT = "VARIANT"

# the Variant encoding spec's basic types and primitive type ids
_PRIMITIVE, _SHORT_STRING, _OBJECT, _ARRAY = 0, 1, 2, 3
_SCALARS = {1: "BOOLEAN", 2: "BOOLEAN", 7: "DOUBLE", 11: "DATE", 12: "TIMESTAMP_LTZ",
            13: "TIMESTAMP", 14: "FLOAT", 15: "BYTES", 16: "STRING"}
_INT_WIDTHS = {3: 1, 4: 2, 5: 4, 6: 8}
_DECIMAL_WIDTHS = {8: 4, 9: 8, 10: 16}
_NULL = 0
# Paimon's type strings of `variant.shreddingSchema` (pypaimon parses them)
_TYPE_STRINGS = {"BOOLEAN": "BOOLEAN", "BIGINT": "BIGINT", "DOUBLE": "DOUBLE",
                 "FLOAT": "FLOAT", "STRING": "STRING", "BYTES": "BYTES", "DATE": "DATE",
                 "TIMESTAMP": "TIMESTAMP(6)",
                 "TIMESTAMP_LTZ": "TIMESTAMP(6) WITH LOCAL TIME ZONE"}


@dataclass(frozen=True)
class Decimal:
    precision: int
    scale: int


@dataclass(frozen=True)
class Field:
    name: str
    type: "Schema"
    count: Optional[float]  # in how many values it was seen; None in a finalized schema


@dataclass(frozen=True)
class Row:
    fields: Tuple[Field, ...]


@dataclass(frozen=True)
class Array:
    element: "Schema"


# None: no value seen yet (a JSON null); a str: a scalar type or VARIANT
Schema = Union[None, str, Decimal, Row, Array]


# ------------------------------------------------------------------------- options

def enabled(options: Mapping[str, str]) -> bool:
    """Whether the table's raw ``options`` ask for inference (a configured
    `variant.shreddingSchema` wins over it, as in Paimon)."""
    if options.get("variant.shreddingSchema") or options.get("parquet.variant.shreddingSchema"):
        return False
    return str(options.get(INFER, "false")).strip().lower() == "true"


def adaptive(options: Mapping[str, str]) -> bool:
    return str(options.get(MODE, "per-file")).strip().lower() == "adaptive"


def setting(options: Mapping[str, str], key: str, default):
    """The table's option ``key`` as ``default``'s type, ``default`` when unset."""
    raw = options.get(key)
    return default if raw is None else type(default)(str(raw).strip())


def _setting(options: Mapping[str, str], key: str):
    return setting(options, key, DEFAULTS[key])


def raw_options(writer) -> Mapping[str, str]:
    return writer.options.options.to_map()


def sample_rows(options: Mapping[str, str]) -> int:
    return _setting(options, MAX_ROWS)


# ------------------------------------------------------------------------- schema of a value

def schema_of(value: bytes, metadata: bytes, pos: int, depth: int) -> Schema:
    """One variant value's schema (``InferVariantShreddingSchema.schemaOf``)."""
    header = value[pos]
    basic, info = header & 3, header >> 2
    if basic == _SHORT_STRING:
        return "STRING"
    if basic == _OBJECT:
        return VARIANT if depth <= 0 else _object_schema(value, metadata, pos, depth)
    if basic == _ARRAY:
        return VARIANT if depth <= 0 else _array_schema(value, metadata, pos, depth)
    if info == _NULL:
        return None
    if info in _INT_WIDTHS:
        digits = len(str(abs(_signed(value, pos + 1, _INT_WIDTHS[info]))))
        return Decimal(digits, 0) if digits <= 18 else "BIGINT"
    if info in _DECIMAL_WIDTHS:
        return _decimal_schema(value, pos, _DECIMAL_WIDTHS[info])
    return _SCALARS.get(info, VARIANT)  # a UUID, or a type Paimon does not know


def _signed(value: bytes, pos: int, width: int) -> int:
    return int.from_bytes(value[pos:pos + width], "little", signed=True)


def _decimal_schema(value: bytes, pos: int, width: int) -> Schema:
    # Paimon reads the decimal with its trailing zeros stripped (BigDecimal.stripTrailingZeros)
    scale, unscaled = value[pos + 1], _signed(value, pos + 2, width)
    while unscaled and unscaled % 10 == 0:
        unscaled //= 10
        scale -= 1
    if unscaled == 0:
        scale = 0
    if scale < 0:
        # an integral decimal with zeros stripped from its units (1E+20): Paimon's DECIMAL type
        # refuses its negative scale and its writer fails; here it is left in the bytes
        return VARIANT
    precision = max(len(str(abs(unscaled))), scale, 1)
    return Decimal(precision, scale)


def _object_schema(value: bytes, metadata: bytes, pos: int, depth: int) -> Row:
    def fields(size, id_size, offset_size, id_start, offset_start, data_start):
        out = []
        for i in range(size):
            key = _get_metadata_key(metadata, _read_unsigned(value, id_start + id_size * i,
                                                             id_size))
            offset = _read_unsigned(value, offset_start + offset_size * i, offset_size)
            out.append(Field(key, schema_of(value, metadata, data_start + offset, depth - 1), 1))
        return out

    found = _handle_object(value, pos, fields)
    names = [java_order(f.name) for f in found]
    if any(a >= b for a, b in zip(names, names[1:])):
        raise ValueError("Variant object fields must be sorted alphabetically")
    return Row(tuple(found))


def _array_schema(value: bytes, metadata: bytes, pos: int, depth: int) -> Array:
    def element(size, offset_size, offset_start, data_start):
        merged = None
        for i in range(size):
            offset = _read_unsigned(value, offset_start + offset_size * i, offset_size)
            merged = merge(merged, schema_of(value, metadata, data_start + offset, depth - 1))
        return merged

    merged = _handle_array(value, pos, element)
    return Array(VARIANT if merged is None else merged)


def java_order(name: str) -> bytes:
    """A key ordering names as Java's String.compareTo does (by UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


# ------------------------------------------------------------------------- merging schemas

def merge(a: Schema, b: Schema) -> Schema:
    """Two schemas' common schema (``InferVariantShreddingSchema.mergeSchema``)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return merge_decimals(a, b)
    if isinstance(a, Decimal) and b == "BIGINT":
        return merge_decimal_with_long(a)
    if a == "BIGINT" and isinstance(b, Decimal):
        return merge_decimal_with_long(b)
    if isinstance(a, Row) and isinstance(b, Row):
        return _merge_rows(a, b)
    if isinstance(a, Array) and isinstance(b, Array):
        return Array(merge(a.element, b.element))
    return a if a == b else VARIANT


def merge_decimals(a: Decimal, b: Decimal) -> Schema:
    scale = max(a.scale, b.scale)
    digits = max(a.precision - a.scale, b.precision - b.scale)
    return VARIANT if digits + scale > MAX_PRECISION else Decimal(digits + scale, scale)


def merge_decimal_with_long(d: Decimal) -> Schema:
    if d.scale == 0 and d.precision <= 18:
        return "BIGINT"
    return merge_decimals(d, Decimal(19, 0))  # any BIGINT fits DECIMAL(19, 0)


_MAX_ROW_FIELDS = 1000


def _merge_rows(a: Row, b: Row) -> Row:
    """The union of two rows' fields (each sorted by name), counts added; at most 1000."""
    out: List[Field] = []
    i = j = 0
    while (i < len(a.fields) or j < len(b.fields)) and len(out) < _MAX_ROW_FIELDS:
        left = a.fields[i] if i < len(a.fields) else None
        right = b.fields[j] if j < len(b.fields) else None
        order = 0 if left is None or right is None else \
            (java_order(left.name) > java_order(right.name)) - \
            (java_order(left.name) < java_order(right.name))
        if left is not None and right is not None and order == 0:
            out.append(Field(left.name, merge(left.type, right.type), left.count + right.count))
            i, j = i + 1, j + 1
        elif right is None or (left is not None and order < 0):
            out.append(left)
            i += 1
        else:
            out.append(right)
            j += 1
    return Row(tuple(out))


# ------------------------------------------------------------------------- finalizing

class Budget:
    """``maxSchemaWidth``'s columns left, shared by every VARIANT column of the file."""

    def __init__(self, width: int):
        self.remaining = width


def finalize(schema: Schema, min_count: int, budget: Budget) -> Schema:
    """The merged schema as Paimon shreds it (``finalizeSimpleSchema``)."""
    budget.remaining -= 1  # every field has a value column
    if budget.remaining <= 0 or schema is None or schema == VARIANT:
        return VARIANT
    if isinstance(schema, Row):
        kept = []
        for field in schema.fields:
            if field.count >= min_count and budget.remaining > 0:
                kept.append(Field(field.name, finalize(field.type, min_count, budget), None))
        return Row(tuple(kept)) if kept else VARIANT
    if isinstance(schema, Array):
        return Array(finalize(schema.element, min_count, budget))
    budget.remaining -= 1  # and a scalar a typed column
    if isinstance(schema, Decimal):
        if schema.scale == 0 and schema.precision <= 18:
            return "BIGINT"
        return Decimal(18 if schema.precision <= 18 else MAX_PRECISION, schema.scale)
    return schema


@dataclass(frozen=True)
class Evidence:
    """What one file's sampled rows say of a VARIANT column: its non-NULL values and their
    merged schema, fields counted (``analyze``)."""
    count: float
    observed: Schema


def analyze(columns: Sequence[pa.Array], options: Mapping[str, str]) -> List[Evidence]:
    """Each sampled VARIANT column's (``struct<value, metadata>``) evidence."""
    depth, out = _setting(options, MAX_DEPTH), []
    for column in columns:
        count, merged = 0, None
        # bounded per-value loop: at most `maxInferBufferRow` values (see the module's doc)
        for variant in column.to_pylist():
            if variant is None:
                continue
            count += 1
            merged = merge(merged, schema_of(variant["value"], variant["metadata"], 0, depth))
        out.append(Evidence(count, merged))
    return out


def finalize_all(evidence: Sequence[Evidence], options: Mapping[str, str]) -> List[Schema]:
    """The finalized schema of each column of one file (``inferInitial``)."""
    ratio, budget = _setting(options, MIN_RATIO), Budget(_setting(options, MAX_WIDTH))
    return [finalize(e.observed, math.ceil(e.count * ratio), budget) for e in evidence]


def infer_schemas(columns: Sequence[pa.Array], options: Mapping[str, str]) -> List[Schema]:
    """The finalized schema of each VARIANT column of one file, from its first
    `maxInferBufferRow` rows."""
    rows = sample_rows(options)
    return finalize_all(analyze([c.slice(0, rows) for c in columns], options), options)


# ------------------------------------------------------------------------- as an option

def _option_type(schema: Schema):
    """``schema`` in `variant.shreddingSchema`'s JSON form (VARIANT: a field kept in the
    bytes, which pypaimon parses to a field with ``value`` only)."""
    if isinstance(schema, Row):
        return {"type": "ROW", "fields": [{"name": f.name, "type": _option_type(f.type)}
                                          for f in schema.fields]}
    if isinstance(schema, Array):
        return {"type": "ARRAY", "element": _option_type(schema.element)}
    if isinstance(schema, Decimal):
        return f"DECIMAL({schema.precision}, {schema.scale})"
    return None if schema == VARIANT else _TYPE_STRINGS[schema]


def shredding_schema(schema: Schema):
    """A finalized schema as pypaimon parses a `variant.shreddingSchema` type
    (``VariantSchema``: an untyped field has no type); None for VARIANT (not shredded)."""
    from pypaimon.data.variant_shredding import _parse_sub_schema

    return None if schema in (None, VARIANT) else _parse_sub_schema(_option_type(schema))


def sampled(data: pa.Table, names: Sequence[str], rows: int) -> List[pa.Array]:
    """The first ``rows`` values of each column of ``names`` in ``data``."""
    sample = data.slice(0, rows)
    return [sample.column(n).combine_chunks() for n in names]


def infer(data: pa.Table, names: Sequence[str],
          options: Mapping[str, str]) -> Dict[str, Tuple[list, pa.StructType]]:
    """Per VARIANT column of ``names`` in ``data`` (one data file's rows), the shredding
    Paimon's per-file inference gives it (``shredding_plan``)."""
    present = [name for name in names if name in data.column_names]
    if not present or data.num_rows == 0:
        return {}
    rows = sample_rows(options)
    return shredding_plan(present, infer_schemas(sampled(data, present, rows), options))


def shredding_plan(names: Sequence[str],
                   schemas: Sequence[Schema]) -> Dict[str, Tuple[list, pa.StructType]]:
    """Per column of ``names``, its finalized schema as pypaimon's writer holds a configured
    `variant.shreddingSchema` (``DataWriter._variant_shredding``): variant_shredder's
    ``Inferred`` schema and the column's Parquet type, laid out as Paimon lays it out and
    shredded by format/variant_shredder.py. A column Paimon would not shred is absent."""
    from dbt.adapters.paimon.format import variant_shredder

    plan = {}
    for name, schema in zip(names, schemas):
        parsed = shredding_schema(schema)
        if parsed is None:
            continue
        inferred = variant_shredder.Inferred(parsed)
        if not variant_shredder.shreds(inferred):  # every type inference gives is shredded
            raise AssertionError(f"an inferred shredding schema variant_shredder does not "
                                 f"shred: {schema}")
        plan[name] = (inferred, variant_shredder.target_type(inferred))
    return plan


# ------------------------------------------------------------------------- per data writer

class PerFile:
    """A data writer's inference in Paimon's 'per-file' mode: each file from its own rows."""

    def __init__(self, names: Sequence[str], options: Mapping[str, str]):
        self.names, self.options = list(names), options

    def plan(self, data: pa.Table) -> Dict[str, Tuple[list, pa.StructType]]:
        """The shredding of the file of ``data``'s rows."""
        return infer(data, self.names, self.options)

    def written(self) -> None:
        """The file of the last plan is written (no state to keep in this mode)."""


def variant_columns(table) -> List[str]:
    """The table's top-level VARIANT columns (the ones pypaimon's writer shreds)."""
    return [f.name for f in table.fields if getattr(f.type, "type", None) == VARIANT]


def inference_for(writer):
    """The inference pypaimon's data ``writer`` makes for each of its files: for a Parquet
    file of a table that asks for it (a configured `variant.shreddingSchema` wins; other
    formats are not shredded, as in Paimon) with VARIANT columns, per file or adaptive
    (`variant.shredding.inferenceMode`); None otherwise."""
    from pypaimon.common.options.core_options import CoreOptions

    from dbt.adapters.paimon.format import variant_adaptive

    options = raw_options(writer)
    if writer.file_format != CoreOptions.FILE_FORMAT_PARQUET or writer._variant_shredding \
            or not enabled(options):
        return None
    names = variant_columns(writer.table)
    if not names:
        return None
    if adaptive(options):
        return variant_adaptive.Adaptive(names, options)
    return PerFile(names, options)
