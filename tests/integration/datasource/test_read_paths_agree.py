"""Property test: a Paimon table's catalog entry (Spark's own Parquet/ORC reader when no split
needs a merge, native_read.py) returns exactly the rows of the `paimon` Python data source (the
merged read), for random tables of every mode -- the four merge engines (compacted to one
sorted run; with deletion vectors: each run compacted above level 0; or uncompacted: every run's
files at level 0, a deduplicate table with or without a sequence field in either order, with
ignore-delete or not, read as a choice of stored rows; a partial-update or aggregation table
read from the Parquet files written of its merged read, by the dbt process or by Spark's tasks in
turn, the entry made as for a statement reading its rows) and append tables (with deletion
vectors: rows deleted) -- partitioned or not, in Parquet or ORC files, holding
every column type our writer takes (decimals of random precision and scale, timestamps of
millisecond and microsecond precision with and without time zone, dates, binary, arrays, maps,
structs and nesting of them), after a schema evolution step: one Spark's reader reads by the
current names (an added or dropped column), or one whose older files need a mapping (a renamed
column and a dropped column's name taken again: a projection by their stored names; INT widened
to BIGINT: Spark's Parquet reader widens it, ORC files keep the Python path).

Rows are compared as multisets of exact values (a float's sign and NaN, a decimal's scale, a
timestamp's microseconds) and both reads' column names and types must be equal. The entry's
`paimon.read` property says which path it took: exactly the one native_read.plan_native
promises for the case.

Run with ``--hypothesis-show-statistics`` to see what the examples covered.
"""
from __future__ import annotations

import collections
import datetime as dt
import decimal
import itertools
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from pypaimon.schema.data_types import PyarrowFieldParser
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.datasource import merge_here, native_read
from dbt.adapters.paimon.datasource.registry import (HIDDEN_DATABASE_SUFFIX, NATIVE,
                                                     NATIVE_WITH_DELETES, PYTHON, READ_PROPERTY,
                                                     PaimonTableRegistry)
from dbt.adapters.paimon.datasource.source import (TableRef, commit_append_files,
                                                   write_append_files)
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops import compact_table
from dbt.adapters.paimon.write import write_primary_key_run
from tests.integration.table_files import mark_deleted

DATABASE = "agree"
MODES = ("deduplicate", "first-row", "aggregation", "partial-update", "append")
# schema evolution steps whose older files Spark reads by the current names, and those whose
# older files need a mapping (Paimon's field ids: native_read.Projection; a widened type)
BY_NAME = ("none", "add", "drop", "add-drop")
MAPPED = ("rename", "widen", "name-reused")
# what each test case varies besides the mode: plain tables (primary-key ones compacted),
# deletion-vector tables and uncompacted primary-key tables with steps read by name; any
# table with a mapped step
LAYOUTS = ("plain", "deletion-vectors", "uncompacted", "mapped")
# the types a sequence.field may have (Paimon orders them; not BOOLEAN)
ORDERED_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "STRING", "DATE")
# a text without surrogates (Arrow and Parquet take UTF-8 only)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
# pyarrow's ORC reader (the Python path) reads timestamps as nanoseconds, which hold
# 1677-09-21 .. 2262-04-11 only: see test_orc_timestamps_outside_nanoseconds_fail_the_python_read
NANOSECOND_RANGE = (dt.datetime(1677, 9, 22), dt.datetime(2262, 4, 10))


# ---- column types: (name for messages, Arrow type, values) ---------------------------------
def _timestamps(unit, tz, orc):
    low, high = NANOSECOND_RANGE if orc else (dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30))
    step = dt.timedelta(milliseconds=1) if unit == "ms" else dt.timedelta(microseconds=1)
    stamps = st.datetimes(min_value=low, max_value=high).map(
        lambda t: t - (t - dt.datetime(1, 1, 1)) % step)
    if tz:
        stamps = stamps.map(lambda t: t.replace(tzinfo=dt.timezone.utc))
    return (f"TIMESTAMP{'_LTZ' if tz else ''}({3 if unit == 'ms' else 6})",
            pa.timestamp(unit, tz="UTC" if tz else None), stamps)


@st.composite
def _decimal(draw):
    precision = draw(st.sampled_from([1, 5, 9, 10, 18, 19, 28, 38]))
    scale = draw(st.integers(0, min(precision, 9)))
    # unscaled integers: the default decimal context (28 digits) would round a bound of 38
    context = decimal.Context(prec=precision + 2)
    values = st.integers(-(10 ** precision - 1), 10 ** precision - 1).map(
        lambda unscaled: decimal.Decimal(unscaled).scaleb(-scale, context))
    return f"DECIMAL({precision}, {scale})", pa.decimal128(precision, scale), values


def _nullable(values):
    return st.none() | values


INNER = pa.struct([("a", pa.int32()), ("b", pa.decimal128(10, 2))])
_INNER_VALUES = st.fixed_dictionaries({
    "a": _nullable(st.integers(-5, 5)),
    "b": _nullable(st.decimals(min_value=-99, max_value=99, places=2, allow_nan=False,
                               allow_infinity=False))})


def all_types(draw, orc: bool, orc_native: bool = False):
    """Every column type, in a drawn order: (name, Arrow type, values); with ``orc_native``
    not the dates and timestamps Spark's ORC reader cannot read as Paimon
    (native_read._spark_orc_reads_exactly)."""
    types = [
        ("TINYINT", pa.int8(), st.integers(-2**7, 2**7 - 1)),
        ("SMALLINT", pa.int16(), st.integers(-2**15, 2**15 - 1)),
        ("INT", pa.int32(), st.integers(-2**31, 2**31 - 1)),
        ("BIGINT", pa.int64(), st.integers(-2**63, 2**63 - 1)),
        ("STRING", pa.string(), TEXT),
        ("BOOLEAN", pa.bool_(), st.booleans()),
        ("FLOAT", pa.float32(), st.floats(width=32)),
        ("DOUBLE", pa.float64(), st.floats(width=64)),
        ("DATE", pa.date32(), st.dates()),
        ("BYTES", pa.binary(), st.binary(max_size=6)),
        draw(_decimal()),
        _timestamps("ms", False, orc), _timestamps("us", False, orc),
        _timestamps("ms", True, orc), _timestamps("us", True, orc),
        ("ARRAY<INT>", pa.list_(pa.int32()), st.lists(_nullable(st.integers(-5, 5)), max_size=3)),
        # a map's keys are distinct (Spark keeps one value per key)
        ("MAP<STRING, BIGINT>", pa.map_(pa.string(), pa.int64()),
         st.dictionaries(TEXT, _nullable(st.integers(-5, 5)), max_size=3).map(
             lambda d: list(d.items()))),
        ("ROW<x STRING, y DOUBLE>", pa.struct([("x", pa.string()), ("y", pa.float64())]),
         st.fixed_dictionaries({"x": _nullable(TEXT), "y": _nullable(st.floats(width=64))})),
        ("ARRAY<ROW<a INT, b DECIMAL(10, 2)>>", pa.list_(INNER),
         st.lists(_nullable(_INNER_VALUES), max_size=2)),
        ("MAP<INT, ARRAY<STRING>>", pa.map_(pa.int32(), pa.list_(pa.string())),
         st.dictionaries(st.integers(-3, 3), _nullable(st.lists(_nullable(TEXT), max_size=2)),
                         max_size=2).map(lambda d: list(d.items()))),
    ]
    if orc_native:
        types = [t for t in types if not _has_date_or_timestamp(t[1])]
    return draw(st.permutations(types))


PARTITION_TYPES = {
    "STRING": (pa.string(), st.sampled_from(["a", "b c", "10:00"])),
    "INT": (pa.int32(), st.integers(-2, 2)),
    "DATE": (pa.date32(), st.sampled_from([dt.date(2024, 2, 29), dt.date(1970, 1, 1)])),
}


def _aggregate_functions(arrow_type):
    functions = ["last_non_null_value", "first_value"]
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) \
            or pa.types.is_decimal(arrow_type) or pa.types.is_timestamp(arrow_type) \
            or pa.types.is_date(arrow_type) or pa.types.is_string(arrow_type):
        functions += ["max", "min"]
    if pa.types.is_floating(arrow_type):
        functions.append("sum")
    if pa.types.is_boolean(arrow_type):
        functions += ["bool_or", "bool_and"]
    return functions


# ---- tables --------------------------------------------------------------------------------
@st.composite
def table_cases(draw, mode, layout):
    primary_key = mode != "append"
    file_format = draw(st.sampled_from(["parquet", "orc"]))
    orc = file_format == "orc"
    # most ORC tables without the types that keep ORC on the Python path
    orc_native = orc and draw(st.sampled_from([True, True, False]))
    deletion_vectors = layout == "deletion-vectors" or (
        layout == "mapped" and mode != "first-row" and draw(st.booleans()))
    partition = draw(st.none() | st.sampled_from(sorted(PARTITION_TYPES)))
    columns = [(f"c{i}", t) for i, t in enumerate(all_types(draw, orc, orc_native))]
    options = {"file.format": file_format}
    if primary_key:
        options["bucket"] = str(draw(st.sampled_from([1, 2])))
        options["merge-engine"] = mode
    if mode == "aggregation":
        for name, (_, arrow_type, _) in columns:
            options[f"fields.{name}.aggregate-function"] = draw(
                st.sampled_from(_aggregate_functions(arrow_type)))
    if deletion_vectors:
        options["deletion-vectors.enabled"] = "true"
    uncompacted = layout == "uncompacted"
    if uncompacted and mode == "deduplicate":
        ordered = [n for n, t in columns if t[0] in ORDERED_TYPES or t[0].startswith(
            ("DECIMAL", "TIMESTAMP"))]
        if draw(st.booleans()):
            options["sequence.field"] = draw(st.sampled_from(ordered))
            options["sequence.field.sort-order"] = draw(st.sampled_from(
                ["ascending", "descending"]))
        if draw(st.booleans()):
            options["ignore-delete"] = "true"
    evolution = draw(st.sampled_from(MAPPED if layout == "mapped" else BY_NAME))
    # the column an evolution step changes (widen: the INT column)
    changed = next(n for n, t in columns if t[0] == "INT") if evolution == "widen" \
        else draw(st.sampled_from([n for n, _ in columns]))
    added = draw(st.sampled_from(all_types(draw, orc, orc_native))) \
        if evolution in ("add", "add-drop", "name-reused") else None

    key = st.integers(0, 5)
    part = PARTITION_TYPES[partition][1] if partition else st.none()
    kinds = st.sampled_from(["+I", "+I", "-D"]) if mode == "deduplicate" else st.just("+I")
    values = [_nullable(t[2]) for _, t in columns]

    def rows(extra):
        return st.lists(st.tuples(key, part, kinds, *values, *extra), min_size=1, max_size=5)

    # deletion vectors: a later run updating stored keys deletes their older rows
    runs = draw(st.lists(rows([]), min_size=2 if deletion_vectors else 1, max_size=3))
    # rows after an added column: an append or deletion-vector table's new files sit beside
    # the older ones (a primary-key table without deletion vectors would need a merge)
    later = draw(st.lists(rows([_nullable(added[2])]), max_size=2)) \
        if added and evolution != "name-reused" and (not primary_key or deletion_vectors) \
        else []
    written = sorted({row[0] for run in runs for row in run})
    deletes = draw(st.lists(st.sampled_from(written), min_size=1, max_size=3, unique=True)) \
        if deletion_vectors and not primary_key else []
    if evolution in ("drop", "add-drop") and changed == options.get("sequence.field"):
        evolution = "none"  # Paimon refuses to drop a sequence field
    return dict(mode=mode, format=file_format, partition=partition, columns=columns,
                options=options, evolution=evolution, changed=changed, added=added, runs=runs,
                later=later, deletes=deletes, uncompacted=uncompacted)


def _arrow_schema(case, with_added: bool, with_kind: bool = False) -> pa.Schema:
    fields = [pa.field("id", pa.int32(), nullable=False)]
    if case["partition"]:
        fields.append(pa.field("p", PARTITION_TYPES[case["partition"]][0], nullable=False))
    fields += [pa.field(name, t[1]) for name, t in case["columns"]]
    if with_added:
        fields.append(pa.field("added", case["added"][1]))
    if with_kind:
        fields.append(pa.field("_kind", pa.string()))
    return pa.schema(fields)


def _run_table(case, rows, with_added: bool) -> pa.Table:
    primary_key = case["mode"] != "append"
    schema = _arrow_schema(case, with_added, with_kind=primary_key)
    records = []
    for id_, p, kind, *values in rows:
        record = [id_] + ([p] if case["partition"] else []) + list(values)
        if primary_key:
            record.append(kind)
        records.append(dict(zip(schema.names, record)))
    return pa.Table.from_pylist(records, schema=schema)


def _some_file_partly_deleted(location) -> bool:
    """Whether a deletion vector deletes some rows of a file, not all (or an unknown number)."""
    for split in plan_splits(location.open()):
        for meta in split.files:
            vector = split.deletion_files.get(meta.file_name)
            if vector is not None and (vector.cardinality is None
                                       or vector.cardinality < meta.row_count):
                return True
    return False


def deletes_rows(case) -> bool:
    """Whether the case's deletes (of an append table) hit a written row."""
    return any(row[0] in case["deletes"] for run in case["runs"] for row in run)


def build(spark, warehouse, name, case) -> TableRef:
    """Create and fill the table, then take the case's schema evolution step."""
    primary_key = case["mode"] != "append"
    partition_keys = ["p"] if case["partition"] else []
    keys = partition_keys + ["id"] if primary_key else []
    wh.create_table(warehouse, DATABASE, name, _arrow_schema(case, False),
                    primary_keys=keys, partition_keys=partition_keys, options=case["options"])
    location = TableRef(warehouse, DATABASE, name, {})
    dv = case["options"].get("deletion-vectors.enabled") == "true"

    def write(rows, with_added):
        run = _run_table(case, rows, with_added)
        if not primary_key:
            table = location.open()
            commit_append_files(table, write_append_files(table, [run]))
            return
        write_primary_key_run(spark, spark.createDataFrame(run), location,
                              row_kind_column="_kind", model_name="agree")
        if dv:  # lifts the run above level 0 as Paimon's writer does with deletion vectors
            compact_table(spark, location)

    runs = list(case["runs"])
    if primary_key and dv:
        # 300 more keys in the first run: the later runs' files are then smaller than the
        # stored run's, and compaction lifts them above level 0 with deletion vectors for the
        # keys they update (runs of a size are merged whole, leaving no deletion vector)
        first = runs[0][0]
        filler = [(1000 + i, first[1], "+I") + (None,) * len(case["columns"]) for i in range(300)]
        runs[0] = filler + list(runs[0])
    for rows in runs:
        write(rows, False)
    if primary_key and not dv and not case["uncompacted"]:
        compact_table(spark, location, full=True)  # one sorted run: the native path's case
    if deletes_rows(case):
        mark_deleted(location, "id", case["deletes"])
    catalog = wh.open_catalog(warehouse)
    identifier, changed = f"{DATABASE}.{name}", case["changed"]
    evolution = case["evolution"]
    added_type = PyarrowFieldParser.to_paimon_type(case["added"][1], True) \
        if case["added"] else None
    if evolution == "name-reused":  # older files hold another column under that name
        catalog.alter_table(identifier, [SchemaChange.drop_column(changed)])
        catalog.alter_table(identifier, [SchemaChange.add_column(changed, added_type)])
    elif evolution in ("add", "add-drop"):
        catalog.alter_table(identifier, [SchemaChange.add_column("added", added_type)])
        for rows in case["later"]:
            write(rows, True)
        if evolution == "add-drop":
            catalog.alter_table(identifier, _drop(case, changed))
    elif evolution == "drop":
        catalog.alter_table(identifier, _drop(case, changed))
    elif evolution == "rename":
        catalog.alter_table(identifier, [SchemaChange.rename_column(changed, changed + "_r")])
    elif evolution == "widen":
        catalog.alter_table(identifier, [SchemaChange.update_column_type(
            changed, PyarrowFieldParser.to_paimon_type(pa.int64(), True))])
    return location


def _drop(case, column):
    """Dropping a column, with its field options (an aggregate function): Paimon's schema
    validation refuses options naming a column the table does not have (SchemaValidation
    validateFieldsPrefix), and the merge runtime reads them."""
    return [SchemaChange.drop_column(column)] + [
        SchemaChange.remove_option(key) for key in case["options"]
        if key.startswith(f"fields.{column}.")]


def merges_values(case) -> bool:
    """Whether the case's read needs a merge of values (kept as Parquet files)."""
    return case["uncompacted"] and case["mode"] not in ("deduplicate", "first-row")


def expected_read(case, location, rows: int) -> set:
    """The `paimon.read` values native_read.plan_native promises for the case."""
    if rows == 0:
        return {NATIVE, NATIVE_WITH_DELETES, PYTHON}  # "no data" may leave no file at all
    if merges_values(case):
        # the merge of values, made once: Parquet files of the Python path's merged read,
        # whatever the files' format and column types (those Spark reads)
        return {NATIVE}
    types = [t[1] for _, t in case["columns"]]
    if case["partition"]:
        types.append(PARTITION_TYPES[case["partition"]][0])
    if case["added"]:
        types.append(case["added"][1])
    if case["evolution"] in ("drop", "add-drop"):
        types.remove(dict(case["columns"])[case["changed"]][1])
    if case["evolution"] == "widen" and case["format"] == "orc":
        return {PYTHON}  # Spark's ORC reader does not widen (its Parquet reader widens INT to
        # BIGINT exactly: native_read._widens_exactly)
    if case["format"] == "orc" and any(_has_date_or_timestamp(t) for t in types):
        return {PYTHON}
    if case["uncompacted"]:  # every run's files at level 0
        if case["format"] == "orc":
            return {PYTHON}  # Spark gives no row positions in ORC files
        return {NATIVE, NATIVE_WITH_DELETES}  # each key's last (first) record: a choice of rows
    if not any(name in {f.file_name for f in s.files if f.level > 0 or not s.primary_key_table}
               for s in plan_splits(location.open()) for name in s.deletion_files):
        return {NATIVE}  # no vector of a file the read takes (a primary-key table's level 0
        # is not read)
    if case["format"] == "orc":
        return {PYTHON}  # Spark gives row positions (_metadata.row_index) for Parquet only
    if deletes_rows(case):
        # a file whose every row is deleted is not read at all: the rows left out may be none
        return {NATIVE_WITH_DELETES} if _some_file_partly_deleted(location) else {NATIVE}
    return {NATIVE, NATIVE_WITH_DELETES}  # a primary-key table's vectors may delete nothing


def _has_date_or_timestamp(arrow_type) -> bool:
    if pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type):
        return True
    if pa.types.is_list(arrow_type):
        return _has_date_or_timestamp(arrow_type.value_type)
    if pa.types.is_map(arrow_type):
        return _has_date_or_timestamp(arrow_type.key_type) or \
            _has_date_or_timestamp(arrow_type.item_type)
    if pa.types.is_struct(arrow_type):
        return any(_has_date_or_timestamp(f.type) for f in arrow_type)
    return False


# ---- comparison ----------------------------------------------------------------------------
def exact(value):
    """A hashable form of a collected value that tells apart what == does not: a float's sign
    and NaN, a decimal's scale, a value's type."""
    if hasattr(value, "asDict"):  # Row
        return ("row",) + tuple((k, exact(v)) for k, v in value.asDict().items())
    if isinstance(value, dict):
        return ("map",) + tuple(sorted(((exact(k), exact(v)) for k, v in value.items()),
                                       key=repr))
    if isinstance(value, (list, tuple)):
        return ("list",) + tuple(exact(v) for v in value)
    if isinstance(value, (float, decimal.Decimal, dt.datetime, dt.date, bytes, bytearray)):
        return (type(value).__name__, repr(value))
    return value


def rows_of(frame):
    return collections.Counter(exact(row) for row in frame.collect())


def read_property(spark, name) -> str:
    return {r.key: r.value for r in spark.sql(f"show tblproperties {name}").collect()}[
        READ_PROPERTY]


@pytest.fixture(scope="module")
def agree_warehouse(tmp_path_factory):
    return str(tmp_path_factory.mktemp("read-paths-agree") / "warehouse")


@pytest.fixture(scope="module")
def agree_registry(spark, agree_warehouse):
    registry = PaimonTableRegistry(spark, agree_warehouse, {})
    spark.sql(f"create database if not exists {DATABASE}")  # expose() makes tables only
    yield registry
    spark.sql(f"drop database if exists {DATABASE} cascade")
    spark.sql(f"drop database if exists {DATABASE}{HIDDEN_DATABASE_SUFFIX} cascade")


_names = itertools.count()
# who makes a case's merge of values, in turn: the dbt process (merge_here.py, a snapshot of at
# most merge_here.MAX_RECORDS records, every case's) or Spark's tasks (a larger snapshot's)
_MERGED_BY = itertools.cycle(("this process", "Spark's tasks"))


# no shrinking: each step writes and reads a table through Spark (minutes for one failure);
# a case is small enough to read as drawn
@pytest.mark.parametrize("mode,layout", [
    (mode, layout) for mode in MODES for layout in LAYOUTS
    if not (mode == "first-row" and layout == "deletion-vectors")  # Paimon refuses that
    and not (mode == "append" and layout == "uncompacted")])
@settings(max_examples=2, deadline=None, derandomize=True, database=None, print_blob=True,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_native_and_python_reads_return_the_same_rows(spark, agree_warehouse, agree_registry,
                                                      mode, layout, data):
    case = data.draw(table_cases(mode, layout), label="case")
    name = f"t{next(_names)}"
    location = build(spark, agree_warehouse, name, case)
    merged_by = next(_MERGED_BY) if merges_values(case) else None
    limit = merge_here.MAX_RECORDS
    merge_here.MAX_RECORDS = -1 if merged_by == "Spark's tasks" else limit
    try:
        agree_registry.expose(DATABASE, name, merge=True)
    finally:
        merge_here.MAX_RECORDS = limit
    entry = spark.table(f"{DATABASE}.{name}")
    python = spark.read.format("paimon").option("warehouse", agree_warehouse) \
        .option("table", f"{DATABASE}.{name}").load()
    assert [(f.name, f.dataType) for f in entry.schema] == \
        [(f.name, f.dataType) for f in python.schema]
    expected = rows_of(python)
    got = rows_of(entry)
    way = read_property(spark, f"{DATABASE}.{name}")
    assert got == expected, (f"{way} entry of {case}: rows only the Python source read: "
                             f"{expected - got}; rows only the entry read: {got - expected}")
    dv = " + deletion vectors" if "deletion-vectors.enabled" in case["options"] else ""
    partition = f"partitioned by {case['partition']}" if case["partition"] else "unpartitioned"
    by = f", merged by {merged_by}" if merged_by else ""
    event(f"{mode}{dv}, {case['format']}, {partition}, evolution {case['evolution']}: "
          f"read {way}{by}")
    assert way in expected_read(case, location, sum(expected.values()))
    if merged_by and sum(expected.values()):
        files = {path.name for path in Path(native_read.reads_root(agree_warehouse)).glob(
            f"{DATABASE}/{name}/{native_read.MERGED_PREFIX}*/*.parquet")}
        assert files and (merge_here.FILE_NAME in files) == (merged_by == "this process"), files


@pytest.mark.xfail(strict=True, raises=Exception, reason=(
    "pyarrow's ORC reader (the Arrow C++ adapter, which the Python path reads ORC files with) "
    "converts ORC timestamps to nanoseconds: a value outside 1677-09-21 .. 2262-04-11 "
    "overflows, and the read fails ('Casting from timestamp[ns, tz=UTC] to timestamp[us, "
    "tz=UTC] would lose data'); Spark's ORC reader, the other way, reads such a value in the "
    "Julian calendar before 1582-10-15, so ORC timestamps keep the Python path "
    "(native_read._spark_orc_reads_exactly)"))
def test_orc_timestamps_outside_nanoseconds_fail_the_python_read(spark, agree_warehouse,
                                                                 agree_registry):
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False),
                        ("ts", pa.timestamp("us", tz="UTC"))])
    name = f"t{next(_names)}"
    wh.create_table(agree_warehouse, DATABASE, name, schema, options={"file.format": "orc"})
    table = TableRef(agree_warehouse, DATABASE, name, {}).open()
    late = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)
    commit_append_files(table, write_append_files(
        table, [pa.Table.from_pylist([{"id": 1, "ts": late}], schema=schema)]))
    agree_registry.expose(DATABASE, name, merge=True)
    assert read_property(spark, f"{DATABASE}.{name}") == PYTHON
    assert [tuple(r) for r in spark.table(f"{DATABASE}.{name}").collect()] == [(1, late)]
