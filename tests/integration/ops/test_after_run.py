"""after_run: the automatic maintenance after each dbt run (compaction triggers, expiry)."""
import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops import after_run
from ops_helpers import kinds, levels, make_table, read_back, sorted_rows, write_run

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _run(seed, n=40):
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(rng.integers(0, 50, n), pa.int64()),
                     "v": pa.array(rng.integers(0, 100, n), pa.int64())})


def test_full_compaction_every_delta_commits(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["id"], [],
                          {"bucket": "1", "full-compaction.delta-commits": "2",
                           "num-sorted-run.compaction-trigger": "10"})
    for seed in range(4):
        write_run(spark, location, _run(seed))
        before = read_back(location)
        result = after_run(spark, location)
        assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
    assert kinds(location) == ["APPEND", "APPEND", "COMPACT", "APPEND", "APPEND", "COMPACT"]
    assert result.compaction.full and levels(location) == {10: 1}   # num-levels = trigger 10 + 1


def test_sorted_run_trigger_and_first_row_level0(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["id"], [],
                          {"bucket": "1", "num-sorted-run.compaction-trigger": "3"})
    for seed in range(2):
        write_run(spark, location, _run(seed))
        assert after_run(spark, location).compaction.snapshot_id is None  # 2 runs < 3
    for seed in range(2, 4):
        write_run(spark, location, _run(seed))
        before = read_back(location)
        after_run(spark, location)
        assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
    # 3 runs compact when their sizes say so (size ratio); more than 3 always do
    assert "COMPACT" in kinds(location)
    runs = levels(location)
    assert runs.get(0, 0) + len([lvl for lvl in runs if lvl > 0]) < 3
    first = make_table(tmp_path, "f", SCHEMA, ["id"], [],
                       {"bucket": "1", "merge-engine": "first-row"})
    write_run(spark, first, _run(0))
    after_run(spark, first)                         # level 0 lifted at once for first-row
    assert 0 not in levels(first)


def test_automatic_expiry_and_write_only(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["id"], [],
                          {"bucket": "1", "snapshot.num-retained.min": "1",
                           "snapshot.num-retained.max": "2",
                           "num-sorted-run.compaction-trigger": "10"})
    for seed in range(4):
        write_run(spark, location, _run(seed))
        after_run(spark, location)
    assert [s.id for s in list_snapshots(location.open())] == [3, 4]
    quiet = make_table(tmp_path, "q", SCHEMA, ["id"], [],
                       {"bucket": "1", "write-only": "true", "snapshot.num-retained.max": "1",
                        "snapshot.num-retained.min": "1"})
    for seed in range(2):
        write_run(spark, quiet, _run(seed))
        result = after_run(spark, quiet)
    assert result.compaction is None and result.expiry is None
    assert len(list_snapshots(quiet.open())) == 2


def test_bucketed_append_table_compacts_the_buckets_a_run_wrote(spark, tmp_path):
    """Java's BucketedAppendCompactManager after each write: the first window of
    ``compaction.min.file-num`` files of each bucket the writer has open; buckets the run did
    not write are left; unbucketed append tables are not compacted after a run."""
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files
    from dbt.adapters.paimon.format.splits import plan_splits

    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])

    def append(location, dt, ids):
        table = location.open()
        rows = pa.table({"dt": pa.array([dt] * len(ids)), "id": pa.array(ids, pa.int64())})
        commit_append_files(table, write_append_files(table, [rows]))

    queue = make_table(tmp_path, "q", schema, [], ["dt"],
                       {"bucket": "1", "bucket-key": "id", "compaction.min.file-num": "3"})
    for n in range(3):
        append(queue, "a", [n])
        append(queue, "b", [n])
    append(queue, "a", [9])             # 'a' has 4 files, 'b' 3 (unwritten: untouched)
    assert after_run(spark, queue, expire=False).compaction.snapshot_id == 8
    files = {s.partition_values: [f.row_count for f in s.files]
             for s in plan_splits(queue.open())}
    assert files == {("a",): [3, 1], ("b",): [1, 1, 1]}
    unaware = make_table(tmp_path, "u", schema, [], ["dt"], {})
    for n in range(6):
        append(unaware, "a", [n])
    assert after_run(spark, unaware, expire=False).compaction is None
