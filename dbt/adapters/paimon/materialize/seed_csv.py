"""A seed's CSV file as typed Arrow columns, with the types dbt would infer, in vectorized code.

dbt's seed materialization parses the whole file with agate (``load_agate_table``): every value
of every column goes through each candidate type's Python ``cast`` (about 15 s for 100,000 rows
of 10 columns). This module reads the file with Arrow's CSV reader and decides each column's type
as agate's type tester does (``dbt_common.clients.agate_helper.build_type_tester``), then the
Spark type as dbt-spark's ``convert_type`` does, so a seed keeps its table's types and values.

How a column's type is decided, exactly as agate does it, without a Python call per value:
- agate tries, in order, Integer, Number, Date, DateTime, ISODateTime, Boolean, Text; a type holds
  if every value of the column casts; the first that holds is the column's type.
- For each type, a vectorized "plain" form (e.g. ``-12.50`` for Number, ``2024-01-31`` for Date)
  recognises the values that certainly cast. Only the values outside it are handed to agate's own
  ``test`` (so ``$5``, ``1,000``, ``50%`` or ``2024-1-5`` are judged by agate itself); in a column
  that is not of that type the first such value fails and the type is dropped. Values that hold
  but are not plain are converted by agate's ``cast`` one by one: they are rare by construction.
- A file Arrow cannot read the way Python's csv module does (ragged or blank lines, empty or
  repeated header names) is parsed by agate itself and converted the same way.

Values are then what Spark's ``cast(? as <type>)`` of each value bound as a parameter gives:
numbers as int64 or float64, booleans as bool, text as it is in the file, dates and timestamps
as ISO text for Spark's ``cast`` (in the session time zone), ``column_types`` columns as text
for Spark's ``cast`` to the given type. ``SeedRows.typed`` gives the same rows at their Spark
types in Arrow when that can be done exactly.
"""
from __future__ import annotations

import codecs
import csv
import io
import os
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Dict, List, Mapping, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from dbt_common.clients import agate_helper

BOM = codecs.BOM_UTF8
# agate's decimal context precision (max_precision clips decimal places beyond it)
DECIMAL_PRECISION = 28

# The plain forms (after Python's str.strip(), which Arrow's utf8_trim_whitespace matches).
# Number: at most 13 integer and 15 fractional digits, so that agate's max_precision never clips.
PLAIN_NUMBER = r"^[+-]?(\d{1,13}(\.\d{0,15})?|\.\d{1,15})$"
PLAIN_DATE = r"^\d{4}-\d{2}-\d{2}$"
_TIME = r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
PLAIN_DATETIME = r"^\d{4}-\d{2}-\d{2} " + _TIME + "$"
PLAIN_ISO_DATETIME = r"^\d{4}-\d{2}-\d{2}T" + _TIME + r"(\.\d{1,6})?$"

BIGINT, DOUBLE, DATE, TIMESTAMP, BOOLEAN, STRING = (
    "bigint", "double", "date", "timestamp", "boolean", "string")


class SeedFileError(ValueError):
    """The file cannot be read as a seed (agate's own error, with the seed's name)."""


@dataclass
class SeedRows:
    """A seed's rows, column by column, and the Spark type each column is written as."""
    columns: List[str]
    types: List[str]                         # Spark SQL types (column_types applied)
    table: pa.Table                          # values for ``cast(`col` as type)``
    unknown_overrides: List[str] = field(default_factory=list)  # column_types keys not in the file

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def typed(self, session_time_zone: str) -> Optional[pa.Table]:
        """The rows at their Spark types as Arrow (what ``cast(`col` as type)`` of each column
        gives Spark's ``toArrow``), computed here; None when only Spark can cast them exactly:
        a ``column_types`` type other than the column's own, a timestamp with an offset, a
        wall-clock time the session's time zone skips (Spark moves it forward by the gap),
        or a time zone Arrow does not know."""
        columns = []
        for values, spark_type in zip(self.table.columns, self.types):
            converter = _TYPED.get(spark_type.strip().lower())
            if converter is None:
                return None
            try:
                converted = converter(values, session_time_zone)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
                return None
            if converted is None:
                return None
            columns.append(converted)
        fields = [pa.field(name, c.type) for name, c in zip(self.columns, columns)]
        return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def read_seed(path: str, delimiter: str = ",", column_types: Optional[Mapping[str, str]] = None,
              empty: bool = False) -> SeedRows:
    """The seed at ``path`` as dbt would load it (``column_types`` as in the seed's config;
    ``empty``: dbt's ``--empty``, the types from the whole file and no rows)."""
    column_types = dict(column_types or {})
    with open(path, "rb") as handle:
        data = handle.read()
    table = _arrow_strings(data, delimiter)
    if table is None:
        columns, values = _agate_strings(path, delimiter)
    else:
        columns, values = table.column_names, [c.combine_chunks() for c in table.columns]
    text_columns = {c for c in columns if c in column_types}
    converted, inferred = [], []
    for name, raw in zip(columns, values):
        try:
            arrow, spark_type = _convert(raw, text=name in text_columns)
        except SeedFileError as exc:
            raise SeedFileError(f"column '{name}': {exc}") from None
        converted.append(arrow)
        inferred.append(column_types.get(name, spark_type))
    result = pa.table(converted, names=[f"c{i}" for i in range(len(columns))])
    if empty:
        result = result.slice(0, 0)
    return SeedRows(list(columns), inferred, result,
                    sorted(set(column_types) - set(columns)))


# -- reading -------------------------------------------------------------------------------
def _arrow_strings(data: bytes, delimiter: str) -> Optional[pa.Table]:
    """Every column as strings, as Python's csv module reads the file; None when Arrow would
    read it otherwise (then agate reads it)."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    # dbt opens the file in text mode: universal newlines, also inside quoted values
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        names = next(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None
    if any(not n for n in names) or len(set(names)) != len(names):
        return None  # agate names or renames such columns
    try:
        return pacsv.read_csv(
            io.BytesIO(data),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char='"',
                                             double_quote=True, escape_char=False,
                                             newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                quoted_strings_can_be_null=False),
            read_options=pacsv.ReadOptions(block_size=max(1 << 20, min(len(data), 64 << 20))),
        )
    except (pa.ArrowInvalid, ValueError):
        return None  # e.g. a blank line or a short row: agate pads it with NULLs


def _agate_strings(path: str, delimiter: str):
    """The columns agate makes of the file (its names, its errors) with each cell's text."""
    try:
        table = agate_helper.from_csv(path, text_columns=[], delimiter=delimiter)
    except ValueError as exc:
        raise SeedFileError(str(exc)) from exc
    columns = list(table.column_names)
    with open(path, encoding="utf-8") as handle:
        if handle.read(1) != agate_helper.BOM:
            handle.seek(0)
        rows = list(csv.reader(handle, delimiter=delimiter))[1:]
    # agate pads a short row (or a blank line) with NULLs; "" is NULL for every type
    cells = [pa.array([row[i] if i < len(row) else "" for row in rows], pa.string())
             for i in range(len(columns))]
    return columns, cells


# -- types ---------------------------------------------------------------------------------
def _agate_types():
    """dbt's candidate types in its order: Integer, Number, Date, DateTime, ISODateTime,
    Boolean, Text (``build_type_tester``)."""
    return list(agate_helper.build_type_tester(())._possible_types)


_TYPES = _agate_types()
(_INTEGER, _NUMBER, _DATE, _DATETIME, _ISO_DATETIME, _BOOLEAN, _TEXT) = _TYPES


def _convert(raw: pa.Array, text: bool):
    """(values, Spark type) of one column of strings."""
    stripped = pc.utf8_trim_whitespace(raw)
    lowered = pc.utf8_lower(stripped)
    null = pc.or_(pc.equal(stripped, ""), pc.equal(lowered, "null"))
    if text:
        return _text(raw, null), STRING
    present = pc.invert(null)
    if not pc.any(present).as_py():
        # every type holds for a column of NULLs: agate takes the first, Integer
        return pa.nulls(len(raw), pa.int64()), BIGINT
    for agate_type, plain, convert in (
            (_NUMBER, _plain_number, _number),
            (_DATE, _plain_date, _temporal(DATE)),
            (_DATETIME, _plain_datetime, _temporal(TIMESTAMP)),
            (_ISO_DATETIME, _plain_iso_datetime, _temporal(TIMESTAMP, _iso_text)),
            (_BOOLEAN, _plain_boolean, _boolean)):
        is_plain = plain(stripped)
        # present values outside the plain form: agate judges them, and converts them
        exotic = pc.and_(present, pc.invert(is_plain))
        if _all_cast(agate_type, stripped.filter(exotic)):
            return convert(raw, stripped, null, is_plain, exotic, agate_type)
    return _text(raw, null), STRING


def _all_cast(agate_type, values: pa.Array) -> bool:
    """agate's own verdict on the values outside the plain form (the first failure decides:
    in a column not of this type that is usually its first value)."""
    if not all(agate_type.test(v) for v in values.slice(0, 8).to_pylist()):
        return False
    return all(agate_type.test(v) for v in pc.unique(values).to_pylist())


def _match(values: pa.Array, pattern: str) -> pa.Array:
    return pc.fill_null(pc.match_substring_regex(values, pattern), False)


def _plain_number(values):
    return _match(values, PLAIN_NUMBER)


def _parses(values, pattern: str, fmt: str, width: int):
    shaped = _match(values, pattern)
    if not pc.any(shaped).as_py():
        return shaped
    head = pc.utf8_slice_codeunits(values.filter(shaped), 0, width)
    parsed = pc.strptime(head, fmt, unit="s", error_is_null=True)
    # Arrow's strptime accepts days past the month's end (Feb 30 becomes Mar 1) and year 0;
    # Python's refuses them
    day = pc.cast(pc.utf8_slice_codeunits(head, 8, 10), pa.int64())
    month = pc.cast(pc.utf8_slice_codeunits(head, 5, 7), pa.int64())
    same = pc.and_(pc.equal(pc.day(parsed), day), pc.equal(pc.month(parsed), month))
    valid = pc.fill_null(pc.and_(same, pc.greater_equal(pc.year(parsed), 1)), False)
    return pc.replace_with_mask(shaped, shaped, valid)


def _plain_date(values):
    return _parses(values, PLAIN_DATE, "%Y-%m-%d", 10)


def _plain_datetime(values):
    return _parses(values, PLAIN_DATETIME, "%Y-%m-%d %H:%M:%S", 19)


def _plain_iso_datetime(values):
    return _parses(values, PLAIN_ISO_DATETIME, "%Y-%m-%dT%H:%M:%S", 19)


def _boolean_words(values):
    return pc.utf8_lower(pc.utf8_trim_whitespace(pc.replace_substring(values, ",", "")))


def _plain_boolean(values):
    # agate's Boolean: commas removed, stripped, lower-cased: true/false (or a NULL word)
    return pc.is_in(_boolean_words(values), pa.array(["true", "false", "", "null"]))


# -- values --------------------------------------------------------------------------------
def _text(raw, null):
    # agate's Text keeps the value as it is in the file (not stripped)
    return pc.if_else(null, pa.scalar(None, pa.string()), raw)


def _number(raw, stripped, null, plain, exotic, agate_type):
    exotic_values = [agate_type.cast(v) for v in stripped.filter(exotic).to_pylist()]
    places, whole = _plain_places(stripped.filter(pc.and_(plain, pc.invert(null))))
    for value in exotic_values:
        if value.is_nan() or value.is_infinite():
            continue
        _, digits, exponent = value.normalize().as_tuple()
        places = max(places, -exponent)
        whole = max(whole, len(digits) + exponent)
    if whole + places > DECIMAL_PRECISION:
        places = DECIMAL_PRECISION - whole
    if places:  # dbt-spark: double when any value has decimal places (a nonzero clip counts)
        out = pc.cast(pc.if_else(plain, stripped, pa.scalar(None, pa.string())), pa.float64())
        out = pc.add(out, pa.scalar(0.0))  # -0 is 0, as the bound Decimal was
        extra = pa.array([float(v) for v in exotic_values], pa.float64())
        return _fill(out, exotic, extra), DOUBLE
    integer = pc.extract_regex(pc.if_else(plain, stripped, pa.scalar(None, pa.string())),
                               r"^(?P<i>[+-]?\d*)")
    out = _to_int64(pc.struct_field(integer, [0]))
    extra = pa.array([_whole(v) for v in exotic_values], pa.int64())
    return _fill(out, exotic, extra), BIGINT


def _whole(value: Decimal) -> int:
    if not value.is_finite():
        raise SeedFileError(
            f"{value} in a column of whole numbers (bigint) has no bigint value; give the column "
            "a type in the seed's `column_types` (e.g. double)")
    return int(value)


def _to_int64(digits: pa.Array) -> pa.Array:
    """Integer parts ("+7", "-", "" for ".0") as int64."""
    digits = pc.replace_substring_regex(digits, r"^\+", "")
    empty = pc.is_in(digits, pa.array(["", "-"]))
    return pc.cast(pc.if_else(empty, pa.scalar("0"), digits), pa.int64())


def _fill(out: pa.Array, mask: pa.Array, extra: pa.Array) -> pa.Array:
    if len(extra) == 0:
        return out
    return pc.replace_with_mask(out, mask, extra)


def _plain_places(values: pa.Array):
    """agate's MaxPrecision (decimal places of the normalized value) and the most whole
    digits, over plain Number values (no exponent: trailing zeros decide)."""
    if len(values) == 0:
        return 0, 1
    parts = pc.extract_regex(values, r"^[+-]?(?P<i>\d*)\.?(?P<f>\d*)$")
    fraction = pc.utf8_rtrim(pc.struct_field(parts, [1]), characters="0")
    places = pc.max(pc.utf8_length(fraction)).as_py() or 0
    integer = pc.utf8_ltrim(pc.struct_field(parts, [0]), characters="0")
    whole = max(1, pc.max(pc.utf8_length(integer)).as_py() or 0)
    return places, whole


def _temporal(spark_type: str, text=lambda values: values):
    def convert(raw, stripped, null, plain, exotic, agate_type):
        out = text(pc.if_else(plain, stripped, pa.scalar(None, pa.string())))
        extra = pa.array([_iso(agate_type.cast(v)) for v in stripped.filter(exotic).to_pylist()],
                         pa.string())
        return _fill(out, exotic, extra), spark_type
    return convert


def _iso_text(values: pa.Array) -> pa.Array:
    """Plain ISO datetimes as ``datetime.isoformat(sep=" ")`` writes them: a space for the
    ``T``, the fraction as 6 digits, none when it is zero."""
    parts = pc.extract_regex(values, r"^(?P<d>.{10})T(?P<t>.{8})\.?(?P<f>\d*)$")
    fraction = pc.utf8_rpad(pc.struct_field(parts, [2]), width=6, padding="0")
    base = pc.binary_join_element_wise(pc.struct_field(parts, [0]), pc.struct_field(parts, [1]),
                                       " ")
    with_fraction = pc.binary_join_element_wise(base, fraction, ".")
    return pc.if_else(pc.equal(fraction, "000000"), base, with_fraction)


def _iso(value) -> Optional[str]:
    """What the binding sent for a date or datetime: ISO text (with its offset, if any)."""
    if value is None:
        return None
    if hasattr(value, "hour"):
        return value.isoformat(sep=" ")
    return value.isoformat()


def _boolean(raw, stripped, null, plain, exotic, agate_type):
    words = _boolean_words(raw)
    out = pc.if_else(pc.equal(words, "true"), True,
                     pc.if_else(pc.equal(words, "false"), False, pa.scalar(None, pa.bool_())))
    return out, BOOLEAN


SAMPLE_ROWS = 10


def sample_agate(seed: SeedRows, rows: int = SAMPLE_ROWS):
    """At most ``rows`` random rows as an agate table: what ``dbt seed --show`` prints (dbt
    keeps the seed's agate table for it; a sample of it is all it shows)."""
    import numpy as np

    count = min(rows, seed.num_rows)
    picked = np.sort(np.random.default_rng().choice(seed.num_rows, count, replace=False))
    sample = seed.table.take(pa.array(picked, pa.int64()))
    records = [tuple(r.values()) for r in sample.to_pylist()]
    return agate_helper.table_from_rows(records, seed.columns)


# -- the seed materialization's rows (adapter.paimon_seed_rows, macros/seed.sql) ------------
def seed_rows(model: dict, identifier: str, empty: bool, session: Callable) -> Dict[str, Any]:
    """Read the seed's CSV. Returns {sql: the typed rows' select from ``view`` (registered by
    register_rows), columns: [(name, Spark type)], rows, unknown_overrides: column_types keys
    the file lacks, sample: an agate table of at most SAMPLE_ROWS random rows (what
    ``dbt seed --show`` prints), local_rows: the rows typed as Arrow here (None when only Spark
    can cast them), file: the SeedRows}. ``session()`` gives the Spark session, started only
    once the file is read; SeedFileError names the seed and its file."""
    from dbt.adapters.paimon.datasource.spark_types import quote_identifier
    from dbt.adapters.paimon.datasource.views import view_name

    path = os.path.join(model["root_path"], model["original_file_path"])
    config = model["config"]
    try:
        seed = read_seed(path, config.get("delimiter") or ",", config.get("column_types") or {},
                         bool(empty))
    except SeedFileError as exc:
        raise SeedFileError(f"Seed '{model['name']}' ({path}): {exc}") from None
    # a one-part name whatever the seed's name (dots, quotes)
    view = view_name("dbt_seed_rows", identifier)
    select = ", ".join(f"cast(`c{i}` as {spark_type}) as {quote_identifier(name)}"
                       for i, (name, spark_type) in enumerate(zip(seed.columns, seed.types)))
    time_zone = session().conf.get("spark.sql.session.timeZone")
    return {"sql": f"select {select} from {quote_identifier(view)}", "view": view,
            "columns": list(zip(seed.columns, seed.types)), "rows": seed.num_rows,
            "unknown_overrides": seed.unknown_overrides, "sample": sample_agate(seed),
            "local_rows": seed.typed(time_zone), "file": seed}


def register_rows(spark, seed: Dict[str, Any]) -> None:
    """Register the seed's rows (seed_rows) as the temporary view its ``sql`` reads."""
    from dbt.adapters.paimon.datasource.spark_types import spark_schema

    table = seed["file"].table
    # (the schema given: Spark Connect cannot infer one from an empty seed)
    spark.createDataFrame(table, schema=spark_schema(table.schema)) \
        .createOrReplaceTempView(seed["view"])


def drop_rows(spark, seed: Dict[str, Any]) -> None:
    """Drop the view register_rows made, once the seed is written."""
    spark.catalog.dropTempView(seed["view"])


# -- Spark's types, in Arrow ---------------------------------------------------------------
def _as(arrow_type: pa.DataType):
    def convert(values: pa.ChunkedArray, time_zone: str):
        return values.cast(arrow_type) if values.type == arrow_type else None
    return convert


def _date(values: pa.ChunkedArray, time_zone: str):
    # the text is ISO (YYYY-MM-DD): a plain value or agate's date.isoformat()
    parsed = pc.strptime(values, "%Y-%m-%d", unit="s")
    return parsed.cast(pa.date32())


def _timestamp(values: pa.ChunkedArray, time_zone: str):
    """Wall-clock text of the session time zone -> instants, as Spark's cast does it
    (java.time: in an overlap the earlier offset; a skipped time: Spark moves it, Arrow raises
    and the caller leaves the cast to Spark)."""
    if pc.any(pc.match_substring_regex(values, r"[+-]\d\d:\d\d$")).as_py():
        return None  # an offset in the text (agate's ISO parse): Spark reads it
    local = values.cast(pa.timestamp("us"))
    return pc.assume_timezone(local, time_zone, ambiguous="earliest",
                              nonexistent="raise").cast(pa.timestamp("us", tz="UTC"))


_TYPED = {BIGINT: _as(pa.int64()), DOUBLE: _as(pa.float64()), BOOLEAN: _as(pa.bool_()),
          STRING: _as(pa.string()), DATE: _date, TIMESTAMP: _timestamp}
