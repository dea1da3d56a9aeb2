"""The two executors of the row operations (ops/row_executors.py) make the same table: the same
operations (update by condition and by expression, delete, MERGE with updates and inserts, an
update matching nothing) run once in-process and once in Spark tasks on copies of one table
give the same snapshots, rows, row ids and sequence numbers, on plain, partitioned and
deletion-vector tables; every column type round-trips exactly through the local relation; bad
input fails the same way before anything is written; ``auto`` sizes the table from its
manifests.

Row ids and sequence numbers as Java's ``RowTrackingCommitUtils`` / ``UpdatePaimonTableCommand``
keep them (see tests/integration/ops/test_row_ops.py, seed 004).
"""
from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import (TableRef, commit_append_files,
                                                   write_append_files)
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.row_tracking import ROW_ID, SEQUENCE_NUMBER, SOURCE_FILE
from dbt.adapters.paimon.ops.row_ops import delete_rows, merge_rows, tracked_rows, update_rows
from tests.integration.table_files import mark_deleted

PATHS = ("in_process", "distributed")
LABELS = {"in_process": "in-process", "distributed": "distributed"}
SCHEMA = pa.schema([("id", pa.int32()), ("data", pa.string()), ("dt", pa.string()),
                    ("amount", pa.decimal128(12, 2))])
LAYOUTS = {
    "plain": ([], {}),
    "partitioned": (["dt"], {}),
    "deletion_vectors": (["dt"], {"deletion-vectors.enabled": "true"}),
}
DDL = "id int, data string, dt string, amount decimal(12,2)"


def _rows(ids):
    return pa.Table.from_pylist(
        [{"id": i, "data": f"v{i}", "dt": f"d{i % 2}", "amount": decimal.Decimal(i) / 4}
         for i in ids], SCHEMA)


def _append(location, rows):
    table = location.open()
    commit_append_files(table, write_append_files(table, [rows]))


def _table(tmp_path, name, layout):
    partitions, options = LAYOUTS[layout]
    root = str(tmp_path / "warehouse")
    wh.create_table(root, "db", name, SCHEMA, partition_keys=partitions,
                    options={"row-tracking.enabled": "true", **options})
    location = TableRef(root, "db", name, {})
    for ids in (range(0, 20), range(20, 30), range(30, 36)):
        _append(location, _rows(ids))
    if layout == "deletion_vectors":
        mark_deleted(location, "id", [3, 4, 21, 22])   # as Paimon Spark's DELETE leaves them
    return location


def _tracked(spark, location):
    """Every live row with its id and sequence number, read by the data source."""
    frame = tracked_rows(spark, location).select("id", "data", "dt", "amount", ROW_ID,
                                                 SEQUENCE_NUMBER)
    return sorted(tuple(r) for r in frame.collect())


def _operations(spark):
    source = spark.createDataFrame(
        [(5, "m5", "d1", decimal.Decimal("9.50")), (8, "m8", "d0", None),
         (40, "n40", "d0", decimal.Decimal("1.00")), (41, "n41", "d1", None),
         (42, "n42", "d0", None), (43, "n43", "d1", None)], DDL)
    more = spark.createDataFrame([(5, "not updated", "d1", None), (50, "n50", "d0", None)], DDL)
    return [
        lambda loc, path: update_rows(spark, loc, "id = 5 or id = 24", {"data": "u"},
                                      write_path=path),
        lambda loc, path: update_rows(spark, loc, "_ROW_ID >= 30",
                                      expressions={"amount": "amount * 2", "data": "upper(data)"},
                                      write_path=path),
        lambda loc, path: delete_rows(spark, loc, "id in (2, 23)", write_path=path),
        lambda loc, path: merge_rows(spark, loc, source, "t.id = s.id",
                                     update={"data": "s.data", "amount": "s.amount"},
                                     write_path=path),
        lambda loc, path: update_rows(spark, loc, "id = 999", {"data": "x"}, write_path=path),
        # inserts only: no file rewritten, an APPEND snapshot
        lambda loc, path: merge_rows(spark, loc, more, "t.id = s.id", update="none",
                                     write_path=path),
    ]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_both_executors_make_the_same_snapshots(spark, tmp_path, layout):
    locations = {path: _table(tmp_path, f"t_{path}", layout) for path in PATHS}
    before = _tracked(spark, locations["in_process"])
    assert before == _tracked(spark, locations["distributed"])
    row_ids = {r[0]: r[4] for r in before}   # by file: a partitioned append numbers per file
    for step, operation in enumerate(_operations(spark)):
        results = {path: operation(locations[path], path) for path in PATHS}
        for path, result in results.items():
            assert result.executor == LABELS[path], (step, result.message)
            assert LABELS[path] in result.message
        a, b = results["in_process"], results["distributed"]
        assert (a.updated, a.deleted, a.inserted, a.rewritten_files, a.snapshot_id) == \
            (b.updated, b.deleted, b.inserted, b.rewritten_files, b.snapshot_id), step
        assert _tracked(spark, locations["in_process"]) == \
            _tracked(spark, locations["distributed"]), step
    rows = {r[0]: r for r in _tracked(spark, locations["in_process"])}
    deleted = {2, 23} | ({3, 4, 21, 22} if layout == "deletion_vectors" else set())
    assert set(rows) == (set(range(36)) - deleted) | {40, 41, 42, 43, 50}
    # merge: 5 and 8 updated (their sequence number the merge's snapshot), 40-43 inserted with
    # ids after the largest assigned (36 rows appended: 0..35), partition by partition, each in
    # the source's order; then 50
    merge_snapshot = 7 if layout != "deletion_vectors" else 8   # after 3 appends (+ DELETE)
    assert rows[5][1:] == ("m5", "d1", decimal.Decimal("9.50"), row_ids[5], merge_snapshot)
    assert rows[8][1] == "m8" and rows[8][5] == merge_snapshot
    partitioned = bool(LAYOUTS[layout][0])
    order = sorted((40, 41, 42, 43), key=lambda i: (rows[i][2] if partitioned else "", i))
    assert {i: rows[i][4] for i in order} == dict(zip(order, range(36, 40)))
    assert rows[50][4:] == (40, merge_snapshot + 1)
    assert rows[31][1:] == ("V31", "d1", decimal.Decimal("15.50"), row_ids[31],
                            merge_snapshot - 2)
    assert rows[29][5] == 2   # untouched: its append's
    assert {i: r[4] for i, r in rows.items() if i < 36} == \
        {i: r for i, r in row_ids.items() if i in rows}
    kinds = {p: [s.commit_kind for s in splits.list_snapshots(loc.open())]
             for p, loc in locations.items()}
    assert kinds["in_process"] == kinds["distributed"]
    # the update matching nothing commits nothing
    assert kinds["in_process"][-5:] == ["OVERWRITE"] * 4 + ["APPEND"]
    tables = {p: loc.open() for p, loc in locations.items()}
    assert [t.snapshot_manager().get_latest_snapshot().next_row_id for t in tables.values()] \
        == [41, 41]


def _tracked_arrow(location):
    """The table's tracked rows as the data source hands them to Spark, by _ROW_ID."""
    from dbt.adapters.paimon.datasource.row_tracking_source import read_all_tracked_arrow
    from dbt.adapters.paimon.datasource.spark_types import spark_schema
    from dbt.adapters.paimon.format.row_tracking import tracked_schema

    table = location.open()
    rows = read_all_tracked_arrow(table, None, spark_schema(tracked_schema(table, True)))
    return rows.drop_columns([SOURCE_FILE]).sort_by(ROW_ID)


TYPED = pa.schema([
    ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("flag", pa.bool_()),
    ("small", pa.decimal128(10, 2)), ("wide", pa.decimal128(38, 10)),
    ("s", pa.string()), ("b", pa.binary()), ("day", pa.date32()),
    ("ts0", pa.timestamp("s")), ("ts3", pa.timestamp("ms")), ("ts6", pa.timestamp("us")),
    ("ts9", pa.timestamp("ns")),   # TIMESTAMP(9): Spark holds microseconds
    ("ltz", pa.timestamp("us", tz="UTC")),
    ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int64())),
    ("point", pa.struct([("x", pa.float64()), ("at", pa.timestamp("us")),
                         ("seen", pa.timestamp("us", tz="UTC"))])),
])


def _typed_rows():
    early = datetime.datetime(1901, 12, 13, 20, 45, 52, 123456)
    late = datetime.datetime(2262, 4, 11, 23, 47, 16, 999999)
    utc = datetime.timezone.utc
    return pa.Table.from_pylist([
        {"i8": -128, "i16": 32767, "i32": 1, "i64": -(2 ** 63), "f32": 1.5,
         "f64": float("inf"), "flag": True, "small": decimal.Decimal("-12345678.99"),
         "wide": decimal.Decimal("9999999999999999999999999999.9999999999"),
         "s": "ünï ✓", "b": b"\x00\xff", "day": datetime.date(1, 1, 1),
         "ts0": datetime.datetime(2024, 3, 10, 2, 30), "ts9": late.replace(year=2200),
         "ts3": datetime.datetime(2024, 3, 10, 2, 30, 0, 123000), "ts6": early,
         "ltz": late.replace(tzinfo=utc), "tags": ["a", None, ""],
         "attrs": [("k", 1), ("z", None)],
         "point": {"x": -0.0, "at": early, "seen": datetime.datetime(2024, 3, 31, 1, 0,
                                                                     tzinfo=utc)}},
        {"i8": None, "i16": None, "i32": 2, "i64": None, "f32": None, "f64": float("-inf"),
         "flag": None, "small": None, "wide": decimal.Decimal("-0.0000000001"), "s": None,
         "b": b"", "day": datetime.date(9999, 12, 31), "ts3": None, "ts0": None,
         "ts9": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
         "ts6": datetime.datetime(1970, 1, 1), "ltz": None, "tags": [], "attrs": [],
         "point": None},
    ], TYPED)


def test_every_column_type_round_trips_through_the_local_relation(spark, tmp_path):
    """An update of one column rewrites every column of its rows: through createDataFrame and
    toArrow in-process, through the data source's read and write distributed. In a session
    time zone that is not UTC (a shift there would move every timestamp)."""
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        root = str(tmp_path / "warehouse")
        stored = {}
        for path in PATHS:
            wh.create_table(root, "db", f"typed_{path}", TYPED,
                            options={"row-tracking.enabled": "true"})
            location = TableRef(root, "db", f"typed_{path}", {})
            _append(location, _typed_rows())
            original = _tracked_arrow(location)
            result = update_rows(spark, location, "true", expressions={"i32": "i32 + 10"},
                                 write_path=path)
            assert (result.updated, result.executor) == (2, LABELS[path])
            after = _tracked_arrow(location)
            assert after.column("i32").to_pylist() == [11, 12]
            unchanged = [c for c in after.column_names if c not in ("i32", SEQUENCE_NUMBER)]
            assert after.select(unchanged).equals(original.select(unchanged)), path
            stored[path] = after
        assert stored["in_process"].equals(stored["distributed"])
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("path", PATHS)
def test_bad_input_fails_the_same_before_anything_is_written(spark, tmp_path, path):
    location = _table(tmp_path, f"bad_{path}", "plain")
    twice = spark.createDataFrame([(11, "x", "d1", None), (11, "y", "d1", None)], DDL)
    cases = [
        (lambda: update_rows(spark, location, "nope = 1", {"data": "x"}, write_path=path),
         "UNRESOLVED_COLUMN"),
        (lambda: update_rows(spark, location, "id = 1", expressions={"data": "upper(data"},
                             write_path=path), "PARSE_SYNTAX_ERROR"),
        (lambda: delete_rows(spark, location, "id = = 1", write_path=path),
         "PARSE_SYNTAX_ERROR"),
        (lambda: merge_rows(spark, location, twice, "t.id = s.id", write_path=path),
         "more than one source row"),
        (lambda: update_rows(spark, location, "true", {"nope": 1}, write_path=path),
         r"'set' names \['nope'\]"),
        (lambda: delete_rows(spark, location, "true", write_path="everywhere"),
         "'write_path' is 'everywhere'; expected one of"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert [s.commit_kind for s in splits.list_snapshots(location.open())] == ["APPEND"] * 3


def test_bad_input_messages_are_the_same_on_both_executors(spark, tmp_path):
    messages = {}
    for path in PATHS:
        location = _table(tmp_path, f"msg_{path}", "plain")
        with pytest.raises(ValueError) as unknown:
            update_rows(spark, location, "nope = 1", {"data": "x"}, write_path=path)
        messages[path] = str(unknown.value)
    assert messages["in_process"].replace("msg_in_process", "T") == \
        messages["distributed"].replace("msg_distributed", "T")


def test_auto_sizes_the_table_from_its_manifests(spark, tmp_path):
    from dbt.adapters.paimon.format.splits import data_file_bytes

    location = _table(tmp_path, "auto", "partitioned")
    result = update_rows(spark, location, "id = 1", {"data": "a"})
    assert result.executor == "in-process" and "in-process" in result.message
    # over the budget: Spark tasks
    result = update_rows(spark, location, "id = 1", {"data": "b"}, in_process_max_bytes=10)
    assert result.executor == "distributed" and result.snapshot_id == 5
    from dbt.adapters.paimon.ops import row_executors

    table = location.open()
    choice = row_executors.choose(spark, location, table, 5, "t")
    assert choice.estimated_bytes == data_file_bytes(table) > 0
    assert "Paimon metadata of db.auto" in choice.reason
    # a MERGE weighs its source too: a query Spark can size adds its estimate; rows from a
    # Python list have no size in Spark (plan_size.py): distributed
    source = spark.sql("select * from values (1, 'c', 'd1', 1.5) as v(id, data, dt, amount)")
    with_source = row_executors.choose(spark, location, table, 5, "t", source=source)
    assert with_source.path == "in_process"
    assert with_source.estimated_bytes > choice.estimated_bytes
    assert "the source's estimate" in with_source.reason
    listed = spark.createDataFrame([(1, "c", "d1", None)], DDL)
    unknown = row_executors.choose(spark, location, table, 5, "t", source=listed)
    assert unknown.path == "distributed" and "cannot be estimated" in unknown.reason
