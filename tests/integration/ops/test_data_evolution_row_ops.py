"""UPDATE, DELETE and MERGE INTO on data-evolution tables (ops/data_evolution_row_ops.py,
through ops/row_ops.py's functions): pypaimon 2.1 writes the table, the operation changes rows by
row id, and pypaimon 2.1's read and ours give the expected rows. No data file is rewritten:
UPDATE writes files holding only the assigned columns, DELETE deletion vectors, MERGE both
and new rows whose row ids follow the table's last. Each is one snapshot, of the kind Paimon's
commit gives it: APPEND for new files, OVERWRITE for deletion vectors changed (its
``shouldBeOverwriteCommit``). Bad input fails before anything is written. UPDATE and MERGE
through the distributed executor (write/column_update_job.py) give the very table the
in-process one does, and leave it as it was when they fail."""
import pyarrow as pa
import pytest
from pypaimon import Schema

from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops.row_ops import delete_rows, merge_rows, update_rows
from tests.data_evolution_tables import (  # noqa: F401  (fixtures)
    EVOLUTION, catalog, create, our_rows, pypaimon_rows, warehouse, wide, write)
from dbt.adapters.paimon.format.errors import CommitConflictError
from dbt.adapters.paimon.ops import data_evolution_row_ops
from dbt.adapters.paimon.write import column_update_job
from ops_helpers import files_on_disk, kinds

DV = {"deletion-vectors.enabled": "true"}


def _table(catalog, warehouse, name, **options):
    create(catalog, name, partition_keys=["dt"], **EVOLUTION, **options)
    write(catalog.get_table(f"db.{name}"), wide(range(0, 4), "a"))
    write(catalog.get_table(f"db.{name}"), wide(range(4, 6), "b"))
    return TableRef(warehouse, "db", name, {})


def _rows(catalog, warehouse, name):
    rows = pypaimon_rows(catalog, name)
    assert our_rows(warehouse, name) == rows
    return {r[0]: r for r in rows}


def _data_files(location):
    return sorted(f.file_name for s in plan_splits(location.open()) for f in s.files
                  if not f.write_cols)


def test_update_writes_only_the_assigned_columns_by_row_id(spark, catalog, warehouse):
    location = _table(catalog, warehouse, "u")
    ids = dict(pypaimon_rows(catalog, "u", with_row_id=True))
    files = _data_files(location)
    result = update_rows(spark, location, "id % 2 = 1", values={"note": "odd"},
                         expressions={"score": "score * 100"})
    assert (result.updated, result.rewritten_files) == (3, 0)
    assert result.message == f"3 updated by row id, in-process (snapshot " \
                             f"{result.snapshot_id}; 0 data files rewritten)"
    assert kinds(location) == ["APPEND"] * 3
    rows = _rows(catalog, warehouse, "u")
    for i in range(6):
        name, score, note, dt = f"n{i}", i, f"note{i}", "a" if i < 4 else "b"
        if i % 2:
            score, note = i * 100, "odd"
        assert rows[i] == (i, name, score, note, dt)
    assert dict(pypaimon_rows(catalog, "u", with_row_id=True)) == ids
    # the rows' files are as they were; the new ones hold only the assigned columns
    assert _data_files(location) == files
    written = [f for s in plan_splits(location.open()) for f in s.files if f.write_cols]
    assert written and all(sorted(f.write_cols) == ["note", "score"] for f in written)
    # nothing matched: no commit
    assert update_rows(spark, location, "id > 100", values={"note": "x"}).snapshot_id is None
    assert len(kinds(location)) == 3


def test_delete_marks_rows_in_deletion_vectors(spark, catalog, warehouse):
    location = _table(catalog, warehouse, "d", **DV)
    files = _data_files(location)
    result = delete_rows(spark, location, "id in (1, 4)")
    assert (result.deleted, result.rewritten_files) == (2, 0)
    assert kinds(location) == ["APPEND", "APPEND", "OVERWRITE"]
    assert sorted(_rows(catalog, warehouse, "d")) == [0, 2, 3, 5]
    assert _data_files(location) == files
    (split_a, split_b) = plan_splits(location.open())
    assert split_a.deletion_files and split_b.deletion_files
    # a deleted row is no longer matched
    assert delete_rows(spark, location, "id = 1").snapshot_id is None


def test_delete_needs_deletion_vectors(spark, catalog, warehouse):
    location = _table(catalog, warehouse, "nodv")
    before = _rows(catalog, warehouse, "nodv")
    with pytest.raises(ValueError, match="whose rows Paimon deletes with deletion vectors, and "
                                         "it has none: set its table option 'deletion-vectors"
                                         ".enabled'"):
        delete_rows(spark, location, "id = 1")
    assert kinds(location) == ["APPEND"] * 2 and _rows(catalog, warehouse, "nodv") == before


def test_merge_updates_matched_rows_by_row_id_and_appends_the_others(spark, catalog,
                                                                      warehouse):
    location = _table(catalog, warehouse, "m")
    ids = dict(pypaimon_rows(catalog, "m", with_row_id=True))
    source = spark.createDataFrame([(1, "one", "a"), (5, "five", "b"), (7, "seven", "b"),
                                    (8, "eight", "a")], "id bigint, note string, dt string")
    result = merge_rows(spark, location, source, "t.id = s.id", update={"note": "s.note"},
                        insert={"id": "s.id", "note": "s.note", "dt": "s.dt",
                                "score": "cast(s.id * 10 as int)"})
    assert (result.updated, result.inserted) == (2, 2)
    assert kinds(location) == ["APPEND"] * 3
    rows = _rows(catalog, warehouse, "m")
    assert rows[1] == (1, "n1", 1, "one", "a") and rows[5] == (5, "n5", 5, "five", "b")
    assert rows[7] == (7, None, 70, "seven", "b") and rows[8] == (8, None, 80, "eight", "a")
    assert rows[2] == (2, "n2", 2, "note2", "a")
    after = dict(pypaimon_rows(catalog, "m", with_row_id=True))
    assert {i: after[i] for i in ids} == ids            # existing rows keep their ids
    assert sorted([after[7], after[8]]) == [6, 7]       # new rows after the table's last


def test_merge_writes_blob_and_vector_file_columns(spark, catalog, warehouse):
    """A BLOB column (.blob files) and a VECTOR column of vector files are assigned like any
    other: pypaimon's update writer writes their files for the matched rows' range, the new
    rows' values land in files of their own."""
    vector = pa.list_(pa.float32(), 2)
    schema = pa.schema([("id", pa.int64()), ("picture", pa.large_binary()), ("emb", vector)])
    catalog.create_table("db.media", Schema.from_pyarrow_schema(schema, options={
        **EVOLUTION, "blob-field": "picture", "vector-field": "emb",
        "field.emb.vector-dim": "2", "vector.file.format": "parquet"}), False)
    write(catalog.get_table("db.media"), pa.table({
        "id": pa.array([1, 2], pa.int64()), "picture": pa.array([b"a", b"b"], pa.large_binary()),
        "emb": pa.array([[1, 1], [2, 2]], vector)}, schema=schema))
    source = spark.createDataFrame([(2, bytearray(b"B2"), [5.0, 6.0]), (3, None, None)],
                                   "id bigint, picture binary, emb array<float>")
    result = merge_rows(spark, TableRef(warehouse, "db", "media", {}), source, "t.id = s.id",
                        update={"picture": "s.picture", "emb": "s.emb"}, insert="*")
    assert (result.updated, result.inserted) == (1, 1)
    assert pypaimon_rows(catalog, "media") == our_rows(warehouse, "media") == [
        (1, b"a", [1.0, 1.0]), (2, b"B2", [5.0, 6.0]), (3, None, None)]


def test_bad_input_fails_before_anything_is_written(spark, catalog, warehouse):
    location = _table(catalog, warehouse, "bad")
    before = _rows(catalog, warehouse, "bad")
    with pytest.raises(ValueError, match=r"update_rows on db.bad: db.bad is a data-evolution "
                                         r"table, whose rows are changed by row id: \['dt'\] "
                                         r"are partition columns"):
        update_rows(spark, location, "id = 1", values={"dt": "b"})
    twice = spark.createDataFrame([(1, "x"), (1, "y")], "id bigint, note string")
    for write_path in ("in_process", "distributed"):
        with pytest.raises(ValueError, match="match more than one source row"):
            merge_rows(spark, location, twice, "t.id = s.id", update={"note": "s.note"},
                       insert=None, write_path=write_path)
    with pytest.raises(ValueError, match="unknown|cannot be resolved|UNRESOLVED"):
        update_rows(spark, location, "nope = 1", values={"note": "x"})
    assert kinds(location) == ["APPEND"] * 2 and _rows(catalog, warehouse, "bad") == before


@pytest.mark.parametrize("write_path", ["in_process", "distributed"])
def test_a_merge_inserting_null_into_a_not_null_column_fails_before_its_commit(
        spark, catalog, warehouse, write_path):
    from pypaimon import Schema

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("note", pa.string())])
    catalog.create_table("db.strict", Schema.from_pyarrow_schema(schema, options=EVOLUTION),
                         False)
    write(catalog.get_table("db.strict"),
          pa.table({"id": pa.array([1], pa.int64()), "note": ["a"]}, schema=schema))
    location = TableRef(warehouse, "db", "strict", {})
    source = spark.createDataFrame([(2, "b")], "key bigint, note string")
    with pytest.raises(ValueError, match=r"1 source rows match no row and would be inserted "
                                         r"holding NULL in the NOT NULL column\(s\) \['id'\]"):
        merge_rows(spark, location, source, "t.id = s.key", update=None,
                   insert={"note": "s.note"}, write_path=write_path)
    assert kinds(location) == ["APPEND"]


def _all_columns(catalog, name):
    """Every column and _ROW_ID as pypaimon 2.1 reads them, ordered by _ROW_ID."""
    table = catalog.get_table(f"db.{name}")
    builder = table.new_read_builder().with_projection(list(table.field_names) + ["_ROW_ID"])
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted((tuple(r.values()) for r in data.to_pylist()), key=lambda r: r[-1])


def test_update_and_merge_in_spark_tasks_give_the_in_process_table(spark, catalog, warehouse):
    # new rows 9 (b), 8 (a), 10 (b): the commit numbers them partition by partition, in the
    # order partitions first appear in its messages (the column files' ranges first: a, b), in
    # the source's order within one
    source = spark.createDataFrame(
        [(5, "five", "b"), (9, "nine", "b"), (1, "one", "a"), (8, "eight", "a"),
         (10, "ten", "b")], "id bigint, note string, dt string")
    tables = {}
    for path, label in (("in_process", "in-process"), ("distributed", "distributed")):
        name = f"twin_{path}"
        location = _table(catalog, warehouse, name)
        # distributed: chosen by `auto`, the table's files over the in-process budget
        choice = {"write_path": path} if path == "in_process" else {"in_process_max_bytes": 0}
        updated = update_rows(spark, location, "id % 2 = 1", values={"note": "odd"},
                              expressions={"score": "score * 100"}, **choice)
        assert updated.message == f"3 updated by row id, {label} (snapshot 3; 0 data files " \
                                  f"rewritten)"
        merged = merge_rows(spark, location, source, "t.id = s.id", update={"note": "s.note"},
                            insert={"id": "s.id", "note": "s.note", "dt": "s.dt",
                                    "score": "cast(s.id * 10 as int)"}, write_path=path)
        assert (merged.updated, merged.inserted, merged.snapshot_id) == (2, 3, 4)
        assert merged.executor == f"by row id, {label}"
        assert kinds(location) == ["APPEND"] * 4
        tables[path] = _all_columns(catalog, name)
        assert sorted((r[:-1] for r in tables[path]), key=repr) == our_rows(warehouse, name)
        # nothing matched: no commit
        assert update_rows(spark, location, "id > 100", values={"note": "x"},
                           write_path=path).snapshot_id is None
        assert len(kinds(location)) == 4
    assert tables["in_process"] == [
        (0, "n0", 0, "note0", "a", 0), (1, "n1", 100, "one", "a", 1),
        (2, "n2", 2, "note2", "a", 2), (3, "n3", 300, "odd", "a", 3),
        (4, "n4", 4, "note4", "b", 4), (5, "n5", 500, "five", "b", 5),
        (8, None, 80, "eight", "a", 6), (9, None, 90, "nine", "b", 7),
        (10, None, 100, "ten", "b", 8)]
    assert tables["distributed"] == tables["in_process"]


def test_a_distributed_merge_failing_in_a_task_leaves_the_table_as_it_was(
        spark, catalog, warehouse, monkeypatch):
    location = _table(catalog, warehouse, "fails")
    before = (_all_columns(catalog, "fails"), kinds(location), files_on_disk(location))

    def failing(job, batches):  # the new rows' task, after the column files are written
        from dbt.adapters.paimon.write import task_errors
        from dbt.adapters.paimon.write.column_update_job import payload

        list(batches)
        yield payload([], 0, 0, 0, task_errors.encode(RuntimeError("disk full")))

    aborted = []
    abort = column_update_job._abort
    monkeypatch.setattr(column_update_job, "append_task", failing)
    monkeypatch.setattr(column_update_job, "_abort",
                        lambda table, messages: (aborted.append(len(messages)),
                                                 abort(table, messages)))
    source = spark.createDataFrame([(1, "one", "a"), (7, "seven", "b")],
                                   "id bigint, note string, dt string")
    with pytest.raises(RuntimeError, match="disk full"):
        merge_rows(spark, location, source, "t.id = s.id", update={"note": "s.note"},
                   insert={"id": "s.id", "note": "s.note", "dt": "s.dt"},
                   write_path="distributed")
    # the column file of the matched row's range was written, and deleted
    assert len(aborted) == 1 and aborted[0] >= 1
    assert (_all_columns(catalog, "fails"), kinds(location), files_on_disk(location)) == before


def test_a_distributed_update_conflicting_with_a_commit_since_its_snapshot_fails(
        spark, catalog, warehouse, monkeypatch):
    """The rows are read, and the writers merge, at the snapshot the commit's row-id check
    starts from: another writer's update of the same column committed meanwhile fails it."""
    location = _table(catalog, warehouse, "race")
    planned = data_evolution_row_ops._planned

    def racing(spark, location, table):
        found = planned(spark, location, table)
        other = catalog.get_table("db.race")
        builder = other.new_batch_write_builder()
        committer = builder.new_commit()
        committer.commit(builder.new_update().with_update_type(["note"])
                         .update_by_arrow_with_row_id(pa.table({
                             "_ROW_ID": pa.array([0], pa.int64()), "note": ["theirs"]})))
        committer.close()
        return found

    monkeypatch.setattr(data_evolution_row_ops, "_planned", racing)
    with pytest.raises(CommitConflictError):
        update_rows(spark, location, "id = 1", values={"note": "ours"},
                    write_path="distributed")
    rows = _rows(catalog, warehouse, "race")
    assert rows[0][3] == "theirs" and rows[1][3] == "note1" and len(kinds(location)) == 3
