"""The Spark tasks of a distributed data_evolution_update (write/column_update_job.py), run here
without Spark: ``keys_task`` reads a pypaimon-written table's keys with their row-id range
starts, the rows are grouped by range as the shuffle groups them, each group goes through
``update_task``, and the payloads' commit messages make ONE commit whose table reads as the
in-process write would make it. A task that fails reports its error, deletes its own files and
sends no message. (Spark itself: tests/functional/paimon/test_data_evolution_update.py.)"""
import os
import pickle

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import column_update_job as job_mod
from dbt.adapters.paimon.write.column_update import commit_update, snapshot_splits
from dbt.adapters.paimon.write.column_update_job import (
    FIRST_ROW_ID, UpdateJob, first_error, keys_task, range_starts, summed, update_task)
from dbt.adapters.paimon.write.task_errors import decode
from tests.data_evolution_tables import (  # noqa: F401  (fixtures)
    EVOLUTION, catalog, create, pypaimon_rows, warehouse, wide, write)


def test_each_row_id_takes_the_start_of_the_range_holding_it():
    starts = [0, 6, 10]
    got = range_starts(pa.array([7, 0, 5, 6, 12, 9], pa.int64()), starts)
    assert got.type == pa.int64() and got.to_pylist() == [6, 0, 0, 6, 10, 6]
    assert range_starts(pa.array([], pa.int64()), starts).to_pylist() == []
    with pytest.raises(ValueError, match="before the table's first row-id range"):
        range_starts([3], [5, 9])


def test_the_run_raises_a_data_error_before_any_other_and_sums_the_tasks():
    other, data = RuntimeError("disk"), PaimonDataError("bad row")
    assert first_error([other, data]) is data
    assert first_error([other]) is other
    assert summed([{"rows": 2, "files": 1, "inserted": 0},
                   {"rows": 3, "files": 2, "inserted": 4}]) == (5, 3, 4)


def _table(catalog, warehouse):
    """Two row-id ranges: ids 0-5 (rows 0-5) and 6-9 (rows 6-9)."""
    create(catalog, "facts", **EVOLUTION)
    write(catalog.get_table("db.facts"), wide(range(0, 6)))
    write(catalog.get_table("db.facts"), wide(range(6, 10)))
    return TableRef(warehouse, "db", "facts", {}), open_table(warehouse, "db", "facts")


def _stored(location, table, key):
    splits, files = snapshot_splits(table)
    batch = pa.RecordBatch.from_arrays([pa.array([pickle.dumps(s) for s in splits],
                                                 pa.binary())], names=["split"])
    return pa.Table.from_batches(list(keys_task(location, key, files.first_row_ids,
                                                [batch]))), files


def _joined(model, stored):
    """``model`` LEFT JOIN ``stored`` on id, as Spark's join makes it (Arrow's join carries no
    list column: only the row numbers go through it)."""
    numbered = pa.table({"id": model["id"], "n": pa.array(range(model.num_rows), pa.int64())})
    matches = numbered.join(stored, "id", join_type="left outer")
    taken = model.take(matches["n"])
    return taken.append_column(job_mod.ROW_ID, matches[job_mod.ROW_ID]).append_column(
        FIRST_ROW_ID, matches[FIRST_ROW_ID])


def _run_tasks(job, routed):
    """``routed`` grouped by range start as the shuffle groups it (rows matching none in one
    task of their own), each group through update_task; the decoded payloads."""
    groups = [routed.filter(pc.equal(routed[FIRST_ROW_ID], s))
              for s in pc.unique(routed[FIRST_ROW_ID].drop_null()).to_pylist()]
    unmatched = routed.filter(pc.is_null(routed[FIRST_ROW_ID]))
    if unmatched.num_rows:
        groups.append(unmatched)
    payloads = []
    for group in groups:
        (row,) = list(update_task(job, group.to_batches()))
        payloads.append(pickle.loads(row.column(0)[0].as_py()))
    return payloads


def _data_files(warehouse):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(warehouse) for f in fs
                  if f.endswith(".parquet"))


def test_tasks_write_their_ranges_and_new_rows_for_one_commit(catalog, warehouse):
    location, table = _table(catalog, warehouse)
    stored, files = _stored(location, table, "id")
    assert sorted(zip(stored["id"].to_pylist(), stored[FIRST_ROW_ID].to_pylist())) == \
        [(i, 0 if i < 6 else 6) for i in range(10)]
    # the model's rows (ids 1 and 7 in two ranges, 42 new) LEFT JOIN the table's keys
    model = pa.table({"id": pa.array([7, 1, 42], pa.int64()),
                      "score": pa.array([700, 100, 4200], pa.int32())})
    routed = _joined(model, stored)
    job = UpdateJob(location, "scores", "id", ("score",), (), True, files)
    job = pickle.loads(pickle.dumps(job))  # as Spark ships it to a task
    before = table.snapshot_manager().get_latest_snapshot().id
    payloads = _run_tasks(job, routed)
    assert all(p["error"] is None for p in payloads)
    assert summed(payloads) == (2, 2, 1)  # two ranges, one column file each; one new row
    messages = [m for p in payloads for m in p["messages"]]
    assert commit_update(open_table(warehouse, "db", "facts"), messages) == before + 1
    rows = {r[0]: r for r in pypaimon_rows(catalog, "facts")}
    assert rows[1] == (1, "n1", 100, "note1", "a") and rows[7] == (7, "n7", 700, "note7", "a")
    assert rows[42] == (42, None, 4200, None, None) and rows[3] == (3, "n3", 3, "note3", "a")
    assert len(rows) == 11


def test_a_failing_task_reports_its_error_and_leaves_none_of_its_files(catalog, warehouse):
    location, table = _table(catalog, warehouse)
    stored, files = _stored(location, table, "id")
    before = _data_files(warehouse)
    # an unmatched key without when_not_matched='insert': refused before a file is written
    routed = _joined(pa.table({"id": pa.array([1, 99], pa.int64()),
                               "score": pa.array([5, 6], pa.int32())}), stored)
    job = UpdateJob(location, "scores", "id", ("score",), (), False, files)
    (row,) = list(update_task(job, routed.to_batches()))
    result = pickle.loads(row.column(0)[0].as_py())
    error = decode(result["error"])
    assert isinstance(error, PaimonDataError) and "1 of the model's rows match no row" in \
        str(error) and "[99]" in str(error)
    assert result["messages"] == [] and _data_files(warehouse) == before
    # a task that fails after writing its column file (a new row's key that does not fit the
    # table's type): its file is deleted, no message is sent
    routed = pa.table({"id": pa.array(["1", "x"]), "score": pa.array([5, 6], pa.int32()),
                       job_mod.ROW_ID: pa.array([1, None], pa.int64()),
                       FIRST_ROW_ID: pa.array([0, None], pa.int64())})
    job = UpdateJob(location, "scores", "id", ("score",), (), True, files)
    (row,) = list(update_task(job, routed.to_batches()))
    result = pickle.loads(row.column(0)[0].as_py())
    assert "does not fit" in str(decode(result["error"]))
    assert result["messages"] == [] and _data_files(warehouse) == before
    # no rows: nothing written, nothing to commit
    (row,) = list(update_task(job, []))
    assert pickle.loads(row.column(0)[0].as_py()) == {
        "messages": [], "rows": 0, "files": 0, "inserted": 0, "error": None}


PICTURES = pa.schema([("id", pa.int64()), ("picture", pa.large_binary()), ("note", pa.string())])
VECTORS = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32(), 2)),
                     ("note", pa.string())])


@pytest.mark.parametrize("schema, options, stored, model, want", [
    # a BLOB column: the range's new values in a .blob file of its own, a new row's in another
    (PICTURES, {"blob-field": "picture"}, [b"a", b"bb", None],
     pa.array([b"NEW", None, b"nine"], pa.binary()),
     [(1, b"a", "x"), (2, b"NEW", "y"), (3, None, "z"), (9, b"nine", None)]),
    # a VECTOR column in vector files, from Spark's lists of doubles
    (VECTORS, {"vector-field": "emb", "field.emb.vector-dim": "2", "vector.file.format":
               "parquet"}, [[1, 1], [2, 2], [3, 3]],
     pa.array([[5, None], None, [9, 9]], pa.list_(pa.float64())),
     [(1, [1.0, 1.0], "x"), (2, [5.0, None], "y"), (3, None, "z"), (9, [9.0, 9.0], None)]),
])
def test_blob_and_vector_columns_are_written_by_the_tasks_as_in_process(
        catalog, warehouse, schema, options, stored, model, want):
    from pypaimon import Schema

    column = schema.field(1).name
    catalog.create_table("db.media", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **options}), False)
    write(catalog.get_table("db.media"), pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), column: pa.array(stored, schema.field(1).type),
        "note": ["x", "y", "z"]}, schema=schema))
    location = TableRef(warehouse, "db", "media", {})
    keys, files = _stored(location, open_table(warehouse, "db", "media"), "id")
    routed = _joined(pa.table({"id": pa.array([2, 3, 9], pa.int64()), column: model}), keys)
    job = UpdateJob(location, "m", "id", (column,), (), True, files)
    payloads = _run_tasks(job, routed)
    assert [p["error"] for p in payloads] == [None, None]
    assert summed(payloads)[::2] == (2, 1)
    commit_update(open_table(warehouse, "db", "media"),
                  [m for p in payloads for m in p["messages"]])
    assert pypaimon_rows(catalog, "media") == sorted(want, key=repr)


def test_an_update_of_the_same_column_committed_after_the_match_fails_the_commit(
        catalog, warehouse):
    """The tasks write against the snapshot the keys were read at: another writer's update of
    the same column of the same range, committed meanwhile, fails the run's commit."""
    from dbt.adapters.paimon.format.errors import CommitConflictError

    location, table = _table(catalog, warehouse)
    stored, files = _stored(location, table, "id")
    routed = _joined(pa.table({"id": pa.array([2], pa.int64()),
                               "score": pa.array([9], pa.int32())}), stored)
    payloads = _run_tasks(UpdateJob(location, "m", "id", ("score",), (), False, files), routed)
    builder = catalog.get_table("db.facts").new_batch_write_builder()
    committer = builder.new_commit()
    committer.commit(builder.new_update().with_update_type(["score"]).update_by_arrow_with_row_id(
        pa.table({"_ROW_ID": pa.array([1], pa.int64()), "score": pa.array([5], pa.int32())})))
    committer.close()
    with pytest.raises(CommitConflictError):
        commit_update(open_table(warehouse, "db", "facts"),
                      [m for p in payloads for m in p["messages"]])
    rows = {r[0]: r for r in pypaimon_rows(catalog, "facts")}
    assert rows[1][2] == 5 and rows[2][2] == 2


def test_new_rows_are_appended_by_their_own_task_and_a_bad_one_writes_nothing(catalog,
                                                                              warehouse):
    """A MERGE's inserts (whole rows): append_task writes them as new files for the run's one
    commit, which numbers them after the table's last row id; a row that does not fit the
    table is reported, with no file left and no message."""
    location, table = _table(catalog, warehouse)
    files = snapshot_splits(table)[1]
    job = UpdateJob(location, "merge", "_ROW_ID", ("note",), (), False, files)
    before = _data_files(warehouse)
    bad = pa.table({"id": pa.array(["x"]), "name": ["n"], "score": pa.array([1], pa.int32()),
                    "note": ["b"], "dt": ["a"]})
    (row,) = list(job_mod.append_task(job, bad.to_batches()))
    result = pickle.loads(row.column(0)[0].as_py())
    assert "does not fit" in str(decode(result["error"]))
    assert result["messages"] == [] and _data_files(warehouse) == before
    new = pa.table({"id": pa.array([20, 21], pa.int64()), "score": pa.array([1, 2], pa.int32()),
                    "note": ["x", None]})  # columns left out are NULL
    (row,) = list(job_mod.append_task(job, new.to_batches()))
    result = pickle.loads(row.column(0)[0].as_py())
    assert result["error"] is None and summed([result]) == (0, 0, 2)
    commit_update(open_table(warehouse, "db", "facts"), result["messages"])
    rows = dict(pypaimon_rows(catalog, "facts", with_row_id=True))
    assert (rows[20], rows[21]) == (10, 11) and len(rows) == 12
    assert {r[0]: r for r in pypaimon_rows(catalog, "facts")}[21] == (21, None, 2, None, None)


def test_messages_are_committed_in_range_order_with_new_rows_last():
    """The commit numbers new rows partition by partition in the order partitions first appear
    in its messages: the tasks' messages are put in the in-process writer's order (column files
    by range, then new rows' files in the tasks' order)."""
    from types import SimpleNamespace as Message
    from types import SimpleNamespace as File

    new_a, new_b = Message(new_files=[File(first_row_id=None)]), \
        Message(new_files=[File(first_row_id=None)])
    range_6 = Message(new_files=[File(first_row_id=6)])
    range_0 = Message(new_files=[File(first_row_id=0), File(first_row_id=None)])
    got = sorted([new_a, range_6, new_b, range_0], key=job_mod._range_start)
    assert [id(m) for m in got] == [id(m) for m in (range_0, range_6, new_a, new_b)]
