"""Reads through the registry's catalog entries: a snapshot that needs no merge is read by
Spark's own Parquet reader (native_read.py), anything else by the `paimon` Python data source,
and both give exactly the rows of the merged read, for every table mode and type."""
import datetime as dt
import decimal
import itertools
import os
import shutil

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrameWriter
from pypaimon.schema.data_types import DataTypeParser, PyarrowFieldParser
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.datasource.registry import HIDDEN_DATABASE_SUFFIX, PaimonTableRegistry
from dbt.adapters.paimon.datasource.source import (TableRef, commit_append_files,
                                                   write_append_files)
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops import compact_table
from dbt.adapters.paimon.write import write_primary_key_run
from tests.integration.datasource.counting_session import CountingSession
from tests.integration.table_files import mark_deleted

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])


def commit(table, rows, schema=SCHEMA):
    builder = table.new_batch_write_builder()
    write, committer = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows],
                                           schema=schema))
    committer.commit(write.prepare_commit())
    write.close()
    committer.close()


def python_rows(spark, warehouse, name):
    """The rows through the `paimon` data source (the merged read), sorted."""
    df = spark.read.format("paimon").option("warehouse", warehouse).option("table", name).load()
    return sorted(map(tuple, df.collect()), key=repr)


def entry_rows(spark, name):
    return sorted(map(tuple, spark.table(name).collect()), key=repr)


def read_way(spark, name) -> str:
    properties = {r.key: r.value for r in spark.sql(f"show tblproperties {name}").collect()}
    return properties["paimon.read"]


def named_by_a_statement(registry, name) -> None:
    """What dbt's next statement naming ``name`` does first: the table's choice of rows."""
    registry.activate(f"select * from {name}")


def scan_of(spark, name) -> str:
    return spark.table(name)._jdf.queryExecution().executedPlan().toString()


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def registry(spark, warehouse):
    registry = PaimonTableRegistry(spark, warehouse, {})
    yield registry
    for database in ("db",):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"drop database if exists {database}{HIDDEN_DATABASE_SUFFIX} cascade")


def test_append_table_is_read_by_sparks_parquet_reader(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "events", SCHEMA, partition_keys=["dt"])
    commit(table, [(1, "a", "2024-01-01"), (2, None, "2024-01-02")])
    commit(wh.open_table(warehouse, "db", "events"), [(3, "c", "2024-01-02")])
    registry.sync()
    assert read_way(spark, "db.events") == "native"
    plan = scan_of(spark, "db.events")
    assert "FileScan parquet" in plan and "PythonDataSource" not in plan
    # the partition column is the files' own value, not one inferred from dt=... folders
    assert entry_rows(spark, "db.events") == python_rows(spark, warehouse, "db.events") == [
        (1, "a", "2024-01-01"), (2, None, "2024-01-02"), (3, "c", "2024-01-02")]
    pruned = spark.table("db.events").where("id > 1").select("name")
    assert "ReadSchema: struct<id:bigint,name:string>" in \
        pruned._jdf.queryExecution().executedPlan().toString()
    assert sorted(r.name or "" for r in pruned.collect()) == ["", "c"]


def test_partition_folders_with_escaped_characters(spark, warehouse, registry):
    # Paimon escapes ':' and '%' in partition folder names (hour=10%3A00): the file list
    # names each file by its URI
    table = wh.create_table(warehouse, "db", "hours", SCHEMA, partition_keys=["dt"])
    commit(table, [(1, "a", "2024-01-03T10:00"), (2, "b", "50%"), (3, "c", "a b")])
    registry.sync()
    assert read_way(spark, "db.hours") == "native"
    assert entry_rows(spark, "db.hours") == python_rows(spark, warehouse, "db.hours") == [
        (1, "a", "2024-01-03T10:00"), (2, "b", "50%"), (3, "c", "a b")]


def test_a_new_snapshot_is_read_at_the_next_statement(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "log", SCHEMA)
    commit(table, [(1, "a", "d")])
    registry.sync()
    assert entry_rows(spark, "db.log") == [(1, "a", "d")]
    commit(wh.open_table(warehouse, "db", "log"), [(2, "b", "d")])  # another writer
    registry.activate()  # what every statement of the adapter's session does first
    assert entry_rows(spark, "db.log") == [(1, "a", "d"), (2, "b", "d")]
    folders = os.listdir(os.path.join(warehouse, ".spark", "paimon-reads", "db", "log"))
    assert len(folders) == 2  # the current snapshot's file list and the previous one


def test_level_0_runs_of_a_deduplicate_table_are_read_natively_without_superseded_rows(
        spark, warehouse, registry):
    """A deduplicate table's merged row is its key's last record: the merge is a choice of
    stored rows (runtime.merged_record_rows), which Spark reads itself, leaving out the rest."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()),
                        pa.field("dt", pa.string(), nullable=False)])
    wh.create_table(warehouse, "db", "users", schema, primary_keys=["dt", "id"],
                    partition_keys=["dt"], options={"bucket": "2"})
    location = TableRef(warehouse, "db", "users", {})
    for run in range(3):
        rows = pa.table({"id": pa.array(range(run * 5, run * 5 + 20), pa.int64()),
                         "v": pa.array([run] * 20, pa.int64()),
                         "dt": pa.array(["a" if i % 2 else "b"
                                         for i in range(run * 5, run * 5 + 20)])})
        write_primary_key_run(spark, spark.createDataFrame(rows.to_pandas()), location,
                              model_name="t")
    registry.sync()
    # read through the Python source until a statement names it (no keys read for a table a
    # command writes and never reads)
    assert read_way(spark, "db.users") == "python-until-read"
    named_by_a_statement(registry, "db.users")
    assert read_way(spark, "db.users") == "native-with-deleted-rows"
    assert "FileScan parquet" in scan_of(spark, "db.users")
    merged = python_rows(spark, warehouse, "db.users")
    assert entry_rows(spark, "db.users") == merged and len(merged) == 30
    assert sorted((i, v) for i, v, _ in merged) == \
        [(i, 0 if i < 5 else 1 if i < 10 else 2) for i in range(30)]
    # the next snapshot: a statement that does not name the table moves its entry without
    # reading keys; it reads the new rows through the Python source until one names it
    write_primary_key_run(spark, spark.createDataFrame(
        [(0, 9, "b")], "id long, v long, dt string"), location, model_name="t")
    registry.activate("select 1")
    assert read_way(spark, "db.users") == "python-until-read"
    merged = python_rows(spark, warehouse, "db.users")
    assert (0, 9, "b") in merged and entry_rows(spark, "db.users") == merged
    named_by_a_statement(registry, "`db`.`USERS`")
    assert read_way(spark, "db.users") == "native-with-deleted-rows"
    assert entry_rows(spark, "db.users") == merged
    compact_table(spark, location, full=True)
    registry.activate()
    assert read_way(spark, "db.users") == "native"
    assert "FileScan parquet" in scan_of(spark, "db.users")
    assert entry_rows(spark, "db.users") == merged


def test_a_superseded_null_in_a_column_made_not_null_later(spark, warehouse, registry):
    """A key's superseded record may hold NULL in a column made NOT NULL after it was written
    (Paimon's ALTER does not look at the rows: SchemaManager, UpdateColumnNullability). The
    native read leaves that record out, and its hidden files table declares every column
    nullable: declared NOT NULL there, Spark converts scanned rows without a NULL check, and
    without whole-stage code generation (a setting, or a query over more than
    spark.sql.codegen.maxFields columns) the read failed (NullPointerException) or, with
    interpreted expressions, gave (2, None)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
    wh.create_table(warehouse, "db", "strict", schema, primary_keys=["id"],
                    options={"bucket": "1", "alter-column-null-to-not-null.disabled": "false"})
    location = TableRef(warehouse, "db", "strict", {})
    for rows in ([(1, "a"), (2, None)], [(2, "b")]):
        write_primary_key_run(spark, spark.createDataFrame(rows, "id long, name string"),
                              location, model_name="t")
    wh.open_catalog(warehouse).alter_table(
        "db.strict", [SchemaChange.update_column_nullability("name", False)])
    registry.sync()
    named_by_a_statement(registry, "db.strict")
    assert read_way(spark, "db.strict") == "native-with-deleted-rows"
    merged = python_rows(spark, warehouse, "db.strict")
    assert merged == [(1, "a"), (2, "b")] and entry_rows(spark, "db.strict") == merged
    # time travel reads the same files through a temporary view
    latest = wh.open_table(warehouse, "db", "strict").snapshot_manager().get_latest_snapshot()
    assert registry.snapshot_view("db", "strict", latest.id, "strict_then")
    # off, interpreted, and a table wider than the limit (on the default settings: the same)
    for setting, value in (("spark.sql.codegen.wholeStage", "false"),
                           ("spark.sql.codegen.factoryMode", "NO_CODEGEN"),
                           ("spark.sql.codegen.maxFields", "1")):
        before = spark.conf.get(setting)
        spark.conf.set(setting, value)
        try:
            assert entry_rows(spark, "db.strict") == merged, setting
            assert entry_rows(spark, "strict_then") == merged, setting
        finally:
            spark.conf.set(setting, before)


def test_deletes_and_ignore_delete_in_level_0_runs(spark, warehouse, registry):
    """A key whose last record is a -D is left out; with ignore-delete the -D never counts.
    Every record of a key that ends deleted is left out, so a file may go unread."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    for name, options, expected in [
            ("plain", {}, [(1, 1), (3, 0)]),
            ("ignoring", {"ignore-delete": "true"}, [(0, 0), (1, 1), (2, 0), (3, 0)])]:
        wh.create_table(warehouse, "db", name, schema, primary_keys=["id"],
                        options={"bucket": "1", **options})
        location = TableRef(warehouse, "db", name, {})
        write_primary_key_run(spark, spark.createDataFrame(
            [(i, 0) for i in range(4)], "id long, v long"), location, model_name="t")
        write_primary_key_run(spark, spark.createDataFrame(
            [(1, 1)], "id long, v long"), location, model_name="t")
        write_primary_key_run(spark, spark.createDataFrame(
            [(0, 9, "-D"), (2, 9, "-D")], "id long, v long, kind string"), location,
            row_kind_column="kind", model_name="t")
        registry.sync()
        named_by_a_statement(registry, f"db.{name}")
        assert read_way(spark, f"db.{name}") == "native-with-deleted-rows", name
        assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}") \
            == expected, name


def merged_folders(warehouse, name):
    """The folders of merged rows the table's snapshots have."""
    from dbt.adapters.paimon.datasource import native_read

    folder = os.path.join(native_read.reads_root(warehouse), *name.split("."))
    return sorted(n for n in os.listdir(folder) if n.startswith(native_read.MERGED_PREFIX)) \
        if os.path.isdir(folder) else []


def test_a_merge_of_values_is_made_once_when_a_statement_reads_the_rows(
        spark, warehouse, registry, monkeypatch):
    """partial-update and aggregation tables merge values: the first statement that reads a
    snapshot's rows has Spark write its merged read as Parquet, which every later read of that
    snapshot (another session's too) scans with Spark's own reader; a DESCRIBE merges nothing.
    A new snapshot is merged again at its first read; the merges before it are deleted with
    their file lists."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()),
                        ("w", pa.int64())])
    for name, options, merged in [
            ("partial", {"merge-engine": "partial-update"}, [(1, 2, 4), (2, 7, None)]),
            ("summed", {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
             [(1, 3, 4), (2, 7, None)])]:
        wh.create_table(warehouse, "db", name, schema, primary_keys=["id"],
                        options={"bucket": "1", **options})
        location = TableRef(warehouse, "db", name, {})
        for run in range(2):
            write_primary_key_run(spark, spark.createDataFrame(
                [(1, run + 1, 5 - run)] + ([(2, 7, None)] if run else []),
                "id long, v long, w long"), location, model_name="t")
        registry.sync()
        assert read_way(spark, f"db.{name}") == "python-until-merged", name
        registry.activate(f"describe extended db.{name}")
        assert read_way(spark, f"db.{name}") == "python-until-merged", name
        assert merged_folders(warehouse, f"db.{name}") == []
        named_by_a_statement(registry, f"db.{name}")
        assert read_way(spark, f"db.{name}") == "native", name
        assert "FileScan parquet" in scan_of(spark, f"db.{name}")
        assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}") \
            == merged, name
        first = merged_folders(warehouse, f"db.{name}")
        assert len(first) == 1, first
        # a later command's session reads the merged rows natively: no merge again
        other = PaimonTableRegistry(spark, warehouse, {})
        other.sync()
        writes = []
        with monkeypatch.context() as patched:
            patched.setattr(DataFrameWriter, "parquet", lambda *a, **k: writes.append(a))
            other.activate(f"select * from db.{name}")
        assert writes == [] and read_way(spark, f"db.{name}") == "native", name
        assert merged_folders(warehouse, f"db.{name}") == first
        assert entry_rows(spark, f"db.{name}") == merged

        # two more snapshots, each read: merged again, the earlier merges deleted with their
        # file lists once the entry reads through the Python source
        for value in (10, 20):
            write_primary_key_run(spark, spark.createDataFrame(
                [(3, value, None)], "id long, v long, w long"), location, model_name="t")
            registry.activate("select 1")  # no statement reading the table: not merged yet
            assert read_way(spark, f"db.{name}") == "python-until-merged", name
            assert merged_folders(warehouse, f"db.{name}") == []
            named_by_a_statement(registry, f"db.{name}")
            assert read_way(spark, f"db.{name}") == "native", name
            now = merged_folders(warehouse, f"db.{name}")
            assert len(now) == 1 and now != first, now
        assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}") \
            == merged + [(3, 20 if name == "partial" else 30, None)], name


def test_a_merge_that_cannot_be_kept_or_is_too_large_reads_through_the_python_path(
        spark, warehouse, registry, monkeypatch):
    """A merge that fails to be written, by Spark (a snapshot of more than merge_here's
    MAX_RECORDS records) or by this process, leaves nothing behind and the entry reads through
    the Python source (whose read reports any error of the merge itself); a snapshot of more
    records than MAX_MERGED_RECORDS is merged at every read, not kept."""
    from dbt.adapters.paimon.datasource import merge_here, native_read

    def fail(_, path, **options):  # Spark's DataFrameWriter.parquet, pyarrow's write_table
        folder = os.path.dirname(path) if path.endswith(".parquet") else path
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "part-0.parquet"), "wb") as out:
            out.write(b"PAR1")  # a partly written file
        raise RuntimeError("No space left on device")

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    for name, limit in (("unwritable", None), ("unwritable_here", None), ("large", 11)):
        wh.create_table(warehouse, "db", name, schema, primary_keys=["id"],
                        options={"bucket": "1", "merge-engine": "aggregation",
                                 "fields.v.aggregate-function": "sum"})
        location = TableRef(warehouse, "db", name, {})
        for run in range(2):
            write_primary_key_run(spark, spark.createDataFrame(
                [(i, 1) for i in range(6)], "id long, v long"), location, model_name="t")
        registry.sync()
        with monkeypatch.context() as patched:
            if name == "unwritable":  # by Spark
                patched.setattr(merge_here, "MAX_RECORDS", 0)
                patched.setattr(DataFrameWriter, "parquet", fail)
            elif name == "unwritable_here":
                patched.setattr(merge_here.pq, "write_table", fail)
            else:
                patched.setattr(native_read, "MAX_MERGED_RECORDS", limit)  # the snapshot: 12
                assert native_read.plan_native(location.open(), merge_values=True)[1:] == (
                    None, "a snapshot too large to keep merged: merged at every read")
            named_by_a_statement(registry, f"db.{name}")
        assert read_way(spark, f"db.{name}") == "python", name
        assert entry_rows(spark, f"db.{name}") == [(i, 2) for i in range(6)], name
        folder = os.path.join(native_read.reads_root(warehouse), "db", name)
        assert not os.path.isdir(folder) or os.listdir(folder) == [], os.listdir(folder)


def test_a_table_turning_native_and_back_keeps_its_hidden_tables(spark, warehouse, registry,
                                                                  monkeypatch):
    """A partial-update table is read natively after a full compaction and through the Python
    source after the next write (until a statement reads its rows). Both hidden tables stay
    (the view's properties say which exist for which schema), so each turn costs the view and
    at most a moved location (the statements counted one by one; they go to Spark as one
    script: statement_batch.py)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()),
                        ("w", pa.int64())])
    wh.create_table(warehouse, "db", "turns", schema, primary_keys=["id"],
                    options={"bucket": "1", "merge-engine": "partial-update"})
    location = TableRef(warehouse, "db", "turns", {})

    def write(run):
        write_primary_key_run(spark, spark.createDataFrame(
            [(1, run, None), (run + 2, None, run)], "id long, v long, w long"), location,
            model_name="t")

    def refreshed():
        counting = CountingSession(spark)
        monkeypatch.setattr(registry, "spark", counting)
        registry.activate()
        monkeypatch.setattr(registry, "spark", spark)
        assert entry_rows(spark, "db.turns") == python_rows(spark, warehouse, "db.turns")
        return read_way(spark, "db.turns"), len(counting.statements)

    write(1)
    registry.sync()
    assert read_way(spark, "db.turns") == "python-until-merged"  # read by no statement yet
    compact_table(spark, location, full=True)
    assert refreshed()[0] == "native"  # its first native snapshot: files_turns is made
    for run in (2, 3):
        write(run)
        assert refreshed() == ("python-until-merged", 1)  # the view, over read_turns as it was
        compact_table(spark, location, full=True)
        assert refreshed() == ("native", 2)  # files_turns moved, and the view
    assert "FileScan parquet" in scan_of(spark, "db.turns")
    assert entry_rows(spark, "db.turns") == [(1, 3, None), (3, None, 1), (4, None, 2),
                                             (5, None, 3)]
    properties = {r.key: r.value for r in spark.sql("show tblproperties db.turns").collect()}
    assert properties["paimon.python-rows"] == "0"
    assert properties["paimon.native-rows"] == "0:parquet:nullable"
    # a column added: the native rows' table is made again for the new schema
    wh.open_catalog(warehouse).alter_table("db.turns", [SchemaChange.add_column(
        "x", DataTypeParser.parse_data_type("BIGINT"))])
    registry.sync()
    assert read_way(spark, "db.turns") == "native"
    assert entry_rows(spark, "db.turns")[0] == (1, 3, None, None)
    properties = {r.key: r.value for r in spark.sql("show tblproperties db.turns").collect()}
    assert properties["paimon.native-rows"] == "1:parquet:nullable"


def test_deletion_vectors_drop_their_rows_from_the_native_read(spark, warehouse, registry):
    wh.create_table(warehouse, "db", "dv", SCHEMA, options={"deletion-vectors.enabled": "true"})
    location = TableRef(warehouse, "db", "dv", {})
    commit(location.open(), [(i, "x", "d") for i in range(5)])
    commit(location.open(), [(i, "y", "e") for i in range(5, 8)])
    registry.sync()
    assert read_way(spark, "db.dv") == "native"  # no deleted row yet
    mark_deleted(location, "id", [1, 3, 6])
    assert any(s.deletion_files for s in plan_splits(location.open()))
    registry.activate()
    assert read_way(spark, "db.dv") == "native-with-deleted-rows"
    plan = scan_of(spark, "db.dv")
    assert "FileScan parquet" in plan and "BroadcastHashJoin" in plan
    assert entry_rows(spark, "db.dv") == python_rows(spark, warehouse, "db.dv") == [
        (0, "x", "d"), (2, "x", "d"), (4, "x", "d"), (5, "y", "e"), (7, "y", "e")]
    mark_deleted(location, "id", [0])  # the next snapshot: the same shape, other deletes
    registry.activate()
    assert entry_rows(spark, "db.dv") == [(2, "x", "d"), (4, "x", "d"), (5, "y", "e"),
                                          (7, "y", "e")]


def test_primary_key_deletion_vectors_read_natively(spark, warehouse, registry):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    # threshold 1: no file is rewritten for its deleted rows, so the vectors stay to be read
    wh.create_table(warehouse, "db", "pkdv", schema, primary_keys=["id"],
                    options={"bucket": "2", "deletion-vectors.enabled": "true",
                             "compaction.delete-ratio-threshold": "1"})
    location = TableRef(warehouse, "db", "pkdv", {})
    for run in range(3):
        rows = pa.table({"id": pa.array(range(run * 4, run * 4 + 10), pa.int64()),
                         "v": pa.array([run] * 10, pa.int64())})
        write_primary_key_run(spark, spark.createDataFrame(rows.to_pandas()), location,
                              model_name="t")
        compact_table(spark, location)  # lifts the run above level 0 as the writer's own does
    registry.sync()
    # each later run's compaction deleted the keys it updated from the files above level 0
    assert any(s.deletion_files for s in plan_splits(location.open()))
    assert read_way(spark, "db.pkdv") == "native-with-deleted-rows"
    rows = entry_rows(spark, "db.pkdv")
    assert rows == python_rows(spark, warehouse, "db.pkdv")
    assert sorted(rows) == [(i, 0 if i < 4 else 1 if i < 8 else 2) for i in range(18)]


def test_schema_evolution(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "evolving", SCHEMA)
    commit(table, [(1, "a", "d")])
    catalog = wh.open_catalog(warehouse)
    catalog.alter_table("db.evolving", [SchemaChange.add_column(
        "score", DataTypeParser.parse_data_type("DOUBLE"))])
    evolved = pa.schema(list(SCHEMA) + [pa.field("score", pa.float64())])
    commit(wh.open_table(warehouse, "db", "evolving"), [(2, "b", "d", 0.5)], evolved)
    registry.sync()
    # an added column: older files lack it, Spark's reader fills NULL as Paimon does
    assert read_way(spark, "db.evolving") == "native"
    assert entry_rows(spark, "db.evolving") == python_rows(spark, warehouse, "db.evolving") \
        == [(1, "a", "d", None), (2, "b", "d", 0.5)]
    # a renamed column: older files hold it under its old name, which only Paimon's field ids
    # tell; they are a projection of their own, read by that name and renamed in the view
    catalog.alter_table("db.evolving", [SchemaChange.rename_column("name", "label")])
    registry.activate()
    registry.sync()
    assert read_way(spark, "db.evolving") == "native"
    assert spark.table("db.evolving").columns == ["id", "label", "dt", "score"]
    assert entry_rows(spark, "db.evolving") == python_rows(spark, warehouse, "db.evolving") \
        == [(1, "a", "d", None), (2, "b", "d", 0.5)]
    # the files of schema 0 (no score) and of schema 1: a projection each, besides the
    # current schema's list (empty)
    assert scan_of(spark, "db.evolving").count("FileScan parquet") == 3
    # a dropped column's name taken by a new column: the older files hold another column
    # under it, which must read as NULL (the new column's files are read by name)
    catalog.alter_table("db.evolving", [SchemaChange.drop_column("score")])
    catalog.alter_table("db.evolving", [SchemaChange.add_column(
        "score", DataTypeParser.parse_data_type("STRING"))])
    now = pa.schema([pa.field("id", pa.int64(), nullable=False), ("label", pa.string()),
                     pa.field("dt", pa.string(), nullable=False), ("score", pa.string())])
    commit(wh.open_table(warehouse, "db", "evolving"), [(3, "c", "d", "new")], now)
    registry.activate()
    assert read_way(spark, "db.evolving") == "native"
    assert entry_rows(spark, "db.evolving") == python_rows(spark, warehouse, "db.evolving") \
        == [(1, "a", "d", None), (2, "b", "d", None), (3, "c", "d", "new")]
    properties = {r.key: r.value for r in spark.sql("show tblproperties db.evolving").collect()}
    # both older schemas' files are read by the columns (id, name, dt): one projection (the
    # older `score` is not among them)
    assert properties["paimon.projected-rows"].startswith("1:")
    # time travel to the snapshot before: the same projections, in a temporary view
    previous = wh.open_table(warehouse, "db", "evolving").snapshot_manager() \
        .get_latest_snapshot().id - 1
    assert registry.snapshot_view("db", "evolving", previous, "evolving_before")
    assert entry_rows(spark, "evolving_before") == [(1, "a", "d", None), (2, "b", "d", None)]
    # an overwrite writes every row in the current schema: no projection is left
    table = wh.open_table(warehouse, "db", "evolving")
    rewritten = pa.Table.from_pylist([dict(zip(now.names, r)) for r in entry_rows(
        spark, "db.evolving")], schema=now)
    commit_append_files(table, write_append_files(table, [rewritten]), overwrite="table")
    registry.activate()
    assert entry_rows(spark, "db.evolving") == [(1, "a", "d", None), (2, "b", "d", None),
                                                (3, "c", "d", "new")]
    properties = {r.key: r.value for r in spark.sql("show tblproperties db.evolving").collect()}
    assert properties["paimon.projected-rows"] == "0:"
    assert not [r.tableName for r in spark.sql(f"show tables in db{HIDDEN_DATABASE_SUFFIX}")
                .collect() if r.tableName.startswith("files_1_")]


def test_widened_columns_read_natively_from_parquet_files(spark, warehouse, registry):
    """Spark's Parquet reader widens older files' values as Paimon casts them; a change it does
    not widen exactly (BIGINT to DOUBLE: Arrow's cast refuses values past 2^53) keeps the
    Python path, as does any widening in ORC files."""
    types = {"i": ("INT", "BIGINT"), "t": ("TINYINT", "INT"), "f": ("FLOAT", "DOUBLE"),
             "d": ("DECIMAL(5, 2)", "DECIMAL(12, 4)"), "x": ("INT", "DOUBLE")}
    rows = [(1, 7, 2, 1.5, decimal.Decimal("1.25"), -3), (2, None, -1, None, None, 4)]
    catalog = wh.open_catalog(warehouse)
    for name, file_format, extra, way in (("wide", "parquet", {}, "native"),
                                          ("wide_orc", "orc", {}, "python"),
                                          ("to_double", "parquet", {"b": ("BIGINT", "DOUBLE")},
                                           "python")):
        columns = {**types, **extra}
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False)] + [
            (c, PyarrowFieldParser.from_paimon_type(DataTypeParser.parse_data_type(old)))
            for c, (old, _) in columns.items()])
        table = wh.create_table(warehouse, "db", name, schema,
                                options={"file.format": file_format})
        commit(table, [r + (5,) * len(extra) for r in rows], schema)
        catalog.alter_table(f"db.{name}", [
            SchemaChange.update_column_type(c, DataTypeParser.parse_data_type(new))
            for c, (_, new) in columns.items()])
        registry.sync()
        assert read_way(spark, f"db.{name}") == way, name
        assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}")
        assert [f.dataType.simpleString() for f in spark.table(f"db.{name}").schema][1:6] == \
            ["bigint", "int", "double", "decimal(12,4)", "double"]
    assert sorted(map(tuple, spark.table("db.wide").collect())) == [
        (1, 7, 2, 1.5, decimal.Decimal("1.2500"), -3.0), (2, None, -1, None, None, 4.0)]


def test_types_read_the_same_both_ways(spark, warehouse, registry):
    schema = pa.schema([
        pa.field("id", pa.int32(), nullable=False), ("b", pa.bool_()), ("t", pa.int8()),
        ("s", pa.int16()), ("f", pa.float32()), ("d", pa.float64()),
        ("dec", pa.decimal128(20, 4)), ("day", pa.date32()),
        ("ts_ms", pa.timestamp("ms")), ("ts_us", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")), ("bin", pa.binary()),
        ("arr", pa.list_(pa.int64())), ("m", pa.map_(pa.string(), pa.int32())),
        ("st", pa.struct([("x", pa.string()), ("y", pa.float64())])),
    ])
    rows = [
        (1, True, -3, 300, 1.5, -2.25, decimal.Decimal("12345.6789"), dt.date(2024, 2, 29),
         dt.datetime(2024, 1, 1, 12, 0, 0, 123000), dt.datetime(1969, 12, 31, 23, 59, 59, 1),
         dt.datetime(2024, 6, 1, 8, 30, tzinfo=dt.timezone.utc), b"\x00\xff",
         [1, None, 3], [("k", 1)], {"x": "s", "y": 0.5}),
        (2, None, None, None, None, None, None, None, None, None, None, None, None, None,
         None),
    ]
    table = wh.create_table(warehouse, "db", "typed", schema)
    commit(table, rows, schema)
    registry.sync()
    assert read_way(spark, "db.typed") == "native"
    native = spark.table("db.typed").orderBy("id").collect()
    python = spark.read.format("paimon").option("warehouse", warehouse) \
        .option("table", "db.typed").load().orderBy("id").collect()
    assert [r.asDict(recursive=True) for r in native] == \
        [r.asDict(recursive=True) for r in python]
    assert native[0]["dec"] == decimal.Decimal("12345.6789")


def test_sql_writes_into_a_paimon_table_are_refused(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "guarded", SCHEMA)
    commit(table, [(1, "a", "d")])
    registry.sync()
    with pytest.raises(Exception, match="EXPECT_TABLE_NOT_VIEW"):
        spark.sql("insert into db.guarded values (2, 'b', 'd')")
    assert entry_rows(spark, "db.guarded") == [(1, "a", "d")]


def test_dropped_table_leaves_no_entry_and_no_file_list(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "gone", SCHEMA)
    commit(table, [(1, "a", "d")])
    wh.open_catalog(warehouse).alter_table("db.gone", [SchemaChange.rename_column("name", "n")])
    renamed = pa.schema([SCHEMA.field("id"), ("n", pa.string()), SCHEMA.field("dt")])
    commit(wh.open_table(warehouse, "db", "gone"), [(2, "b", "d")], renamed)
    registry.sync()

    def hidden_tables():
        return [r.tableName for r in spark.sql(f"show tables in db{HIDDEN_DATABASE_SUFFIX}")
                .collect() if r.tableName.endswith("_gone")]

    assert "files_1_gone" in hidden_tables()  # the older file's projection
    wh.drop_table(warehouse, "db", "gone")
    PaimonTableRegistry(spark, warehouse, {}).sync()  # the next command's sync
    assert "gone" not in [r.tableName for r in spark.sql("show tables in db").collect()]
    assert not hidden_tables()
    assert not os.path.exists(os.path.join(warehouse, ".spark", "paimon-reads", "db", "gone"))


def test_time_travel_reads_an_older_snapshot_natively(spark, warehouse, registry):
    wh.create_table(warehouse, "db", "travel", SCHEMA, options={"deletion-vectors.enabled": "true"})
    location = TableRef(warehouse, "db", "travel", {})
    commit(location.open(), [(1, "a", "d"), (2, "b", "d")])          # snapshot 1
    mark_deleted(location, "id", [1])                                # snapshot 2
    commit(location.open(), [(3, "c", "d")])                         # snapshot 3
    for snapshot, expected in ((1, [(1, "a", "d"), (2, "b", "d")]), (2, [(2, "b", "d")]),
                               (3, [(2, "b", "d"), (3, "c", "d")])):
        view = registry.snapshot_view("db", "travel", snapshot, f"travel_at_{snapshot}")
        assert view == f"travel_at_{snapshot}"
        assert "FileScan parquet" in scan_of(spark, view)
        python = spark.read.format("paimon").option("warehouse", warehouse) \
            .option("table", "db.travel").option("snapshot_id", str(snapshot)).load()
        assert entry_rows(spark, view) == sorted(map(tuple, python.collect()), key=repr) \
            == expected
    # a deduplicate table's level-0 runs: each snapshot's own choice of rows
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    for name, options in (("merged", {}), ("partial", {"merge-engine": "partial-update"})):
        wh.create_table(warehouse, "db", name, schema, primary_keys=["id"],
                        options={"bucket": "1", **options})
        pk = TableRef(warehouse, "db", name, {})
        for run in range(2):
            rows = pa.table({"id": pa.array([1, 2], pa.int64()),
                             "v": pa.array([run] * 2, pa.int64())})
            write_primary_key_run(spark, spark.createDataFrame(rows.to_pandas()), pk,
                                  model_name="t")
    for snapshot in (1, 2):
        view = registry.snapshot_view("db", "merged", snapshot, f"merged_at_{snapshot}")
        assert entry_rows(spark, view) == [(1, snapshot - 1), (2, snapshot - 1)]
    # a snapshot whose merge combines values is left to the Python source
    assert registry.snapshot_view("db", "partial", 2, "partial_at_2") is None


def test_orc_files_are_read_by_sparks_orc_reader(spark, warehouse, registry):
    wh.create_table(warehouse, "db", "orc_log", SCHEMA, partition_keys=["dt"],
                    options={"file.format": "orc"})
    location = TableRef(warehouse, "db", "orc_log", {})
    commit(location.open(), [(1, "a", "d1"), (2, None, "d2")])
    registry.sync()
    assert read_way(spark, "db.orc_log") == "native"
    assert "FileScan orc" in scan_of(spark, "db.orc_log")
    assert entry_rows(spark, "db.orc_log") == python_rows(spark, warehouse, "db.orc_log") == [
        (1, "a", "d1"), (2, None, "d2")]


def test_a_deleted_file_list_is_made_again(spark, warehouse, registry):
    table = wh.create_table(warehouse, "db", "relisted", SCHEMA)
    commit(table, [(1, "a", "d")])
    registry.sync()
    shutil.rmtree(os.path.join(warehouse, ".spark", "paimon-reads"))
    # a new process has no cached file listing: it would look for the file list
    spark.catalog.refreshTable(f"db{HIDDEN_DATABASE_SUFFIX}.files_relisted")
    registry.sync()  # what the next dbt command does first
    assert entry_rows(spark, "db.relisted") == [(1, "a", "d")]


def test_orc_dates_and_timestamps_keep_the_python_path(spark, warehouse, registry):
    """Spark's ORC reader reads dates and timestamps in the hybrid Julian calendar (before
    1582-10-15 they came back days off: 0001-01-01 as 0001-01-03, 1500-01-01 as 1499-12-23)
    and fails on an ORC timestamp as TIMESTAMP_NTZ (UNSUPPORTED_FEATURE.ORC_TYPE_CAST);
    Paimon's days are proleptic Gregorian. An ORC table with such a column, also nested, is
    read by the Python path; one without stays native."""
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("day", pa.date32()),
                        ("ts", pa.timestamp("us")), ("ltz", pa.timestamp("us", tz="UTC")),
                        ("days", pa.list_(pa.date32())), ("n", pa.decimal128(5, 1))])
    rows = [(1, dt.date(1, 1, 1), dt.datetime(2024, 1, 1, 12, 0, 0, 123456),
             dt.datetime(2024, 6, 1, 8, 30, tzinfo=dt.timezone.utc), [dt.date(1500, 1, 1)],
             decimal.Decimal("1.5")),
            (2, dt.date(1582, 10, 4), None, None, None, None)]
    for name, columns in (("orc_dates", ["id", "day"]), ("orc_stamps", ["id", "ts"]),
                          ("orc_ltz", ["id", "ltz"]), ("orc_nested", ["id", "days"]),
                          ("orc_plain", ["id", "n"])):
        sub = pa.schema([schema.field(c) for c in columns])
        table = wh.create_table(warehouse, "db", name, sub, options={"file.format": "orc"})
        commit(table, [tuple(r[schema.names.index(c)] for c in columns) for r in rows], sub)
    registry.sync()
    assert entry_rows(spark, "db.orc_dates") == [(1, dt.date(1, 1, 1)), (2, dt.date(1582, 10, 4))]
    assert entry_rows(spark, "db.orc_nested") == [(1, [dt.date(1500, 1, 1)]), (2, None)]
    for name in ("orc_dates", "orc_stamps", "orc_ltz", "orc_nested"):
        assert read_way(spark, f"db.{name}") == "python", name
        assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}")
    assert read_way(spark, "db.orc_plain") == "native"
    assert entry_rows(spark, "db.orc_plain") == python_rows(spark, warehouse, "db.orc_plain")


@pytest.mark.parametrize("native", [True, False], ids=["native", "python-source"])
def test_entries_follow_the_branches_in_use_at_once(spark, warehouse, registry, native):
    """Setting the branches (a node's paimon_branch config, the invocation's default) re-points
    the entries of tables read on another branch now, for both read ways: a remote warehouse
    (no native reads) never refreshes entries before a statement, and the session's first sync
    ran before the invocation's branches were known."""
    from dbt.adapters.paimon.ops.branches import create_branch

    if not native:
        registry._reads_root = None  # as for a remote warehouse: the Python source reads
    table = wh.create_table(warehouse, "db", "t", SCHEMA)
    commit(table, [(1, "main", "d")])
    create_branch(TableRef(warehouse, "db", "t", {}), "b")
    commit(wh.open_table(warehouse, "db", "t$branch_b"), [(2, "branch", "d")])
    wh.create_table(warehouse, "db", "other", SCHEMA)
    registry.sync()
    assert entry_rows(spark, "db.t") == [(1, "main", "d")]

    registry.use_branches(None, {("db", "t"): "b"})
    assert entry_rows(spark, "db.t") == [(2, "branch", "d")]
    registry.use_branches("b", {("db", "t"): None})  # 'main' in the config over the default
    assert entry_rows(spark, "db.t") == [(1, "main", "d")]
    registry.use_branches("b", {})
    assert entry_rows(spark, "db.t") == [(2, "branch", "d")]
    assert registry.paimon_name("db", "other") == "other"  # no branch b: main


_last_record_tables = itertools.count()


@settings(max_examples=int(os.environ.get("LAST_RECORD_EXAMPLES", "6")), deadline=None,
          derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_choice_of_stored_rows_equals_the_merged_read(spark, warehouse, registry, data):
    """Random runs of a deduplicate or first-row table (every row kind, ignore-delete or not, a
    sequence field in either order or none, deletion vectors or not, one or two buckets,
    partitioned or not): the native read of each key's last (first) record returns exactly the
    merge runtime's rows."""
    partitioned = data.draw(st.booleans(), label="partitioned")
    engine = data.draw(st.sampled_from(["deduplicate", "deduplicate", "first-row"]),
                       label="engine")
    options = {"bucket": data.draw(st.sampled_from(["1", "2"]), label="bucket"),
               "merge-engine": engine}
    ignore_delete = data.draw(st.booleans(), label="ignore-delete")
    if ignore_delete:
        options["ignore-delete"] = "true"
    if engine == "deduplicate" and data.draw(st.booleans(), label="sequence.field"):
        options["sequence.field"] = "v"  # NULL orders first
        options["sequence.field.sort-order"] = data.draw(
            st.sampled_from(["ascending", "descending"]), label="order")
    # deletion vectors: each run compacted above level 0 as the writer's own runs are; a file
    # keeping -D records there still needs the choice, on top of its vector's rows (Paimon
    # refuses them on a first-row table)
    deletion_vectors = engine == "deduplicate" and \
        data.draw(st.sampled_from([False, False, True]), label="dv")
    if deletion_vectors:
        options["deletion-vectors.enabled"] = "true"
    # a first-row table refuses retractions unless it ignores them
    kinds = ["+I"] if engine == "first-row" and not ignore_delete \
        else ["+I", "+I", "+U", "-U", "-D"]
    row = st.tuples(st.integers(0, 7), st.sampled_from(["x", "y"]), st.sampled_from(kinds),
                    st.none() | st.integers(-5, 5), st.none() | st.text("ab", max_size=2))
    runs = data.draw(st.lists(st.lists(row, min_size=1, max_size=6), min_size=2, max_size=4),
                     label="runs")
    name = f"last{next(_last_record_tables)}"
    wh.create_table(warehouse, "db", name, pa.schema([
        pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string(), nullable=False),
        ("v", pa.int64()), ("s", pa.string())]), primary_keys=["p", "id"] if partitioned
        else ["id"], partition_keys=["p"] if partitioned else [], options=options)
    location = TableRef(warehouse, "db", name, {})
    for rows in runs:
        frame = spark.createDataFrame(
            [(i, p if partitioned else "x", kind, v, s) for i, p, kind, v, s in rows],
            "id long, p string, kind string, v long, s string")
        write_primary_key_run(spark, frame, location, row_kind_column="kind", model_name="t")
        if deletion_vectors:
            compact_table(spark, location)
    registry.sync()
    named_by_a_statement(registry, f"db.{name}")
    assert read_way(spark, f"db.{name}") in ("native", "native-with-deleted-rows")
    assert entry_rows(spark, f"db.{name}") == python_rows(spark, warehouse, f"db.{name}")


def test_every_key_deleted_reads_no_file(spark, warehouse, registry):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    wh.create_table(warehouse, "db", "emptied", schema, primary_keys=["id"],
                    options={"bucket": "1"})
    location = TableRef(warehouse, "db", "emptied", {})
    for kind in ("+I", "-D"):
        write_primary_key_run(spark, spark.createDataFrame(
            [(1, 1, kind), (2, 2, kind)], "id long, v long, kind string"), location,
            row_kind_column="kind", model_name="t")
    registry.sync()
    named_by_a_statement(registry, "db.emptied")
    assert read_way(spark, "db.emptied") == "native"  # both files wholly superseded: none read
    assert entry_rows(spark, "db.emptied") == python_rows(spark, warehouse, "db.emptied") == []


def test_a_split_too_large_to_choose_in_the_dbt_process_is_merged_by_spark(
        spark, warehouse, registry, monkeypatch):
    from dbt.adapters.paimon.datasource import native_read

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64())])
    wh.create_table(warehouse, "db", "big", schema, primary_keys=["id"], options={"bucket": "1"})
    location = TableRef(warehouse, "db", "big", {})
    for run in range(2):
        write_primary_key_run(spark, spark.createDataFrame(
            [(i, run) for i in range(6)], "id long, v long"), location, model_name="t")
    monkeypatch.setattr(native_read, "MAX_CHOICE_RECORDS", 11)  # the split holds 12 records
    assert native_read.plan_native(location.open())[1:] == (
        None, "a split too large to choose rows in this process")
    registry.sync()
    assert read_way(spark, "db.big") == "python"
    assert entry_rows(spark, "db.big") == [(i, 1) for i in range(6)]


def test_a_later_session_uses_the_entries_a_branch_session_left(spark, warehouse, registry):
    """Each dbt command is a process of its own whose session has registered none of the data
    sources an earlier one did: the entries a command on a branch leaves (the view's hidden
    table reads the branch's provider; an SQL INSERT's target table writes it) are dropped,
    re-made and read by later commands on main and on the branch, whichever way each reads
    (a remote warehouse's reads, or a snapshot needing a merge, go through the Python source's
    hidden table; a local table's through Spark's file reader), also when a command between
    them did not touch the Python source's hidden table."""
    from dbt.adapters.paimon.ops.branches import create_branch

    table = wh.create_table(warehouse, "db", "t", SCHEMA)
    commit(table, [(1, "main", "d")])
    create_branch(TableRef(warehouse, "db", "t", {}), "b")
    commit(wh.open_table(warehouse, "db", "t$branch_b"), [(2, "branch", "d")])

    def command(branch, native):
        session = spark.newSession()  # the metastore's entries, no registered data source
        session.conf.set("spark.sql.python.filterPushdown.enabled", "true")
        # Spark finds a provider through the thread's active session
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
        later = PaimonTableRegistry(session, warehouse, {})
        if not native:
            later._reads_root = None
        later.use_branches(branch, {})
        later.sync()
        return session, later

    try:
        rows = {None: [(1, "main", "d")], "b": [(2, "branch", "d")]}
        rounds = [("b", False), (None, True), (None, False), ("b", True), ("b", False),
                  (None, False), ("b", False), (None, True)]
        for number, (branch, native) in enumerate(rounds, start=3):
            session, later = command(branch, native)
            assert entry_rows(session, "db.t") == rows[branch], branch
            target = later.sql_write_target("db", "t")
            session.sql(f"insert into {target} values ({number}, 'sql', 'd')")
            rows[branch] = sorted(rows[branch] + [(number, "sql", "d")], key=repr)
            later.activate()  # what the next statement does first
            assert entry_rows(session, "db.t") == rows[branch], branch
        # a table dropped after a command on its branch: the next command forgets its entries
        wh.drop_table(warehouse, "db", "t")
        session, later = command(None, False)
        assert "t" not in [r.tableName for r in session.sql("show tables in db").collect()]
    finally:
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
