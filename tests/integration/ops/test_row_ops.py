"""Row tracking on append tables: ids assigned at commit, kept by update/merge/delete (copy on
write, one commit each), sequence numbers = the snapshot that last changed a row (seed 004)."""

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.ops.row_ops import delete_rows, merge_rows, tracked_rows, update_rows

SCHEMA = pa.schema([("id", pa.int32()), ("data", pa.string())])


def append(location, rows, schema=SCHEMA):
    table = location.open()
    builder = table.new_batch_write_builder()
    write, committer = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema))
    committer.commit(write.prepare_commit())
    write.close()
    committer.close()


def tracked(spark, location):
    frame = tracked_rows(spark, location).select("id", "data", "_ROW_ID", "_SEQUENCE_NUMBER")
    return sorted(tuple(r) for r in frame.collect())


def kinds(location):
    return [s.commit_kind for s in splits.list_snapshots(location.open())]


@pytest.fixture
def location(tmp_path):
    wh.create_table(str(tmp_path), "db", "t", SCHEMA, options={"row-tracking.enabled": "true"})
    return TableRef(str(tmp_path), "db", "t", {})


def test_seed_004_walk_through(spark, location):
    append(location, [(11, "a"), (22, "b")])
    assert tracked(spark, location) == [(11, "a", 0, 1), (22, "b", 1, 1)]

    result = update_rows(spark, location, "id = 11", {"data": "new-data-update"})
    assert (result.updated, result.snapshot_id) == (1, 2)
    assert tracked(spark, location) == [(11, "new-data-update", 0, 2), (22, "b", 1, 1)]

    source = spark.createDataFrame([(22, "new-data-merge"), (33, "c")], "id int, data string")
    result = merge_rows(spark, location, source, "t.id = s.id", update={"data": "s.data"})
    assert (result.updated, result.inserted, result.snapshot_id) == (1, 1, 3)
    assert tracked(spark, location) == [
        (11, "new-data-update", 0, 2), (22, "new-data-merge", 1, 3), (33, "c", 2, 3)]

    result = delete_rows(spark, location, "id = 11")
    assert (result.deleted, result.snapshot_id) == (1, 4)
    assert tracked(spark, location) == [(22, "new-data-merge", 1, 3), (33, "c", 2, 3)]
    assert kinds(location) == ["APPEND", "OVERWRITE", "OVERWRITE", "OVERWRITE"]


def test_by_row_id_and_nothing_matched(spark, location):
    append(location, [(11, "a"), (22, "b")])
    append(location, [(33, "c")])
    # update by the hidden row id; only the first file is rewritten
    result = update_rows(spark, location, "_ROW_ID = 0", expressions={"data": "upper(data)"})
    assert (result.updated, result.rewritten_files) == (1, 1)
    assert tracked(spark, location) == [(11, "A", 0, 3), (22, "b", 1, 1), (33, "c", 2, 2)]
    assert update_rows(spark, location, "id = 99", {"data": "x"}).snapshot_id is None
    assert delete_rows(spark, location, "_ROW_ID = 2").deleted == 1
    assert tracked(spark, location) == [(11, "A", 0, 3), (22, "b", 1, 1)]
    # ids are never reused: the next append continues after the largest id ever assigned
    append(location, [(44, "d")])
    assert tracked(spark, location)[-1] == (44, "d", 3, 5)


def test_merge_errors_before_writing(spark, location):
    append(location, [(11, "a")])
    twice = spark.createDataFrame([(11, "x"), (11, "y")], "id int, data string")
    with pytest.raises(ValueError, match="more than one source row"):
        merge_rows(spark, location, twice, "t.id = s.id")
    with pytest.raises(ValueError, match="'set' names \\['nope'\\]"):
        update_rows(spark, location, "true", {"nope": 1})
    with pytest.raises(ValueError, match="argument 'where' is required"):
        delete_rows(spark, location, None)
    assert kinds(location) == ["APPEND"]


def test_merge_into_a_table_without_a_snapshot_inserts_every_row(spark, location):
    """A merge model's first run: no row to match, so merge_rows skips its joins with the
    table; the rows get their ids in the source's order all the same, and a condition naming
    a column neither side has fails before anything is written."""
    source = spark.createDataFrame([(33, "c"), (11, "a"), (22, "b")], "id int, data string")
    with pytest.raises(ValueError, match="nope"):
        merge_rows(spark, location, source, "t.nope = s.id")
    assert kinds(location) == []
    result = merge_rows(spark, location, source, "t.id = s.id", update={"data": "s.data"})
    assert (result.updated, result.inserted, result.rewritten_files, result.snapshot_id) == \
        (0, 3, 0, 1)
    assert tracked(spark, location) == [(11, "a", 1, 1), (22, "b", 2, 1), (33, "c", 0, 1)]
    assert kinds(location) == ["APPEND"]  # no file rewritten


def test_refused_without_row_tracking(spark, tmp_path):
    wh.create_table(str(tmp_path), "db", "plain", SCHEMA)
    with pytest.raises(ValueError, match="row-tracking.enabled"):
        delete_rows(spark, TableRef(str(tmp_path), "db", "plain", {}), "true")


def test_rewrite_of_files_removed_meanwhile_is_refused(location):
    from dbt.adapters.paimon.format.errors import CommitConflictError
    from dbt.adapters.paimon.format.row_tracking import commit_rewrite

    append(location, [(11, "a")])
    name = splits.plan_splits(location.open())[0].files[0].file_name
    assert commit_rewrite(location.open(), [], [name], 1) == 2  # another operation won
    with pytest.raises(CommitConflictError, match="deletion conflicts"):
        commit_rewrite(location.open(), [], [name], 1)  # ours read snapshot 1: refused
    assert kinds(location) == ["APPEND", "OVERWRITE"]
