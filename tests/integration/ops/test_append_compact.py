"""Compaction of append tables (ops/append_compact.py): the files Paimon picks, rewritten in
order into fewer files, one COMPACT snapshot; rows, row ids and deletion vectors kept.

Java sources the expectations follow: AppendCompactCoordinator (unaware-bucket planning),
BucketedAppendCompactManager (bucketed planning: pickCompactBefore, FullCompactTask),
BaseAppendFileStoreWrite.compactRewrite (rows in file order, sequence numbers from the first
file's minimum, FileSource.COMPACT)."""
import dataclasses

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files
from dbt.adapters.paimon.format.kv_files import read_append_split
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops import compact_table
from dbt.adapters.paimon.ops.append_compact import AppendCompactionConfig, plan_append_units
from tests.integration.table_files import live_file_metadata, mark_deleted
from ops_helpers import kinds, live_files, make_table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("s", pa.string())])


def _append(location, ids, dt=lambda i: f"d{i % 2}"):
    rows = pa.table({"dt": pa.array([dt(i) for i in ids], pa.string()),
                     "id": pa.array(list(ids), pa.int64()),
                     "s": pa.array([f"s{i}" * (1 + i % 3) for i in ids], pa.string())})
    table = location.open()
    commit_append_files(table, write_append_files(table, [rows]))


def _rows_in_read_order(location):
    """Each (partition, bucket)'s rows in the order a read returns them (files by sequence
    number, rows by position)."""
    table = location.open()
    return {(s.partition_values, s.bucket): read_append_split(table, s).column("id").to_pylist()
            for s in plan_splits(table)}


def _all_ids(location):
    return sorted(i for ids in _rows_in_read_order(location).values() for i in ids)


def test_unaware_table_small_files_become_one_file_per_partition(spark, tmp_path):
    location = make_table(tmp_path, "logs", SCHEMA, [], ["dt"], {})
    for n in range(6):
        _append(location, range(10 * n, 10 * n + 10))
    before = _all_ids(location)
    old = {s.partition_values: s.files for s in plan_splits(location.open())}
    result = compact_table(spark, location)
    assert result.snapshot_id == 7 and kinds(location) == ["APPEND"] * 6 + ["COMPACT"]
    assert result.files_before == 12 and result.files_after == 2 and result.buckets == 2
    assert _all_ids(location) == before
    table = location.open()
    for split in plan_splits(table):
        (new,) = split.files
        # the task's files smallest first (ties by sequence number); rows numbered from the
        # first one's minimum sequence number
        inputs = sorted(old[split.partition_values],
                        key=lambda f: (f.file_size, f.min_sequence_number))
        expected = []
        for f in inputs:
            one = dataclasses.replace(split, files=[f], levels=[0])
            expected += read_append_split(table, one).column("id").to_pylist()
        assert read_append_split(table, split).column("id").to_pylist() == expected
        assert (new.level, new.file_source, new.row_count) == (0, 1, 30)
        assert (new.min_sequence_number, new.max_sequence_number) == \
            (inputs[0].min_sequence_number, inputs[0].min_sequence_number + 29)
    # nothing left to do: one file per partition
    assert compact_table(spark, location).snapshot_id is None


def test_unaware_table_picks_only_small_files_and_enough_of_them(spark, tmp_path):
    location = make_table(tmp_path, "logs", SCHEMA, [], [], {"compaction.min.file-num": "3"})
    _append(location, range(400))                          # one large file
    for n in range(2):
        _append(location, [1000 + n])
    sizes = sorted(f.file_size for f in live_files(location))
    # target size between the small files and the large one: only small files are candidates
    options = {"target-file-size": f"{int(sizes[-1] / 0.7) - 1} b",
               "compaction.min.file-num": "3", "source.split.open-file-cost": "0 b"}
    config = AppendCompactionConfig.from_options(options)
    splits = plan_splits(location.open())
    assert plan_append_units(splits, config, bucketed=False, full=True) == []  # 2 < 3 files
    _append(location, [2000])
    (unit,) = plan_append_units(plan_splits(location.open()), config, bucketed=False,
                                full=False)
    assert [f.row_count for f in unit.split.files] == [1, 1, 1]


def test_unaware_bins_close_at_twice_the_target_size(tmp_path):
    location = make_table(tmp_path, "logs", SCHEMA, [], [], {})
    for n in range(6):
        _append(location, range(10 * n, 10 * n + 10))
    splits = plan_splits(location.open())
    size = max(f.file_size for f in splits[0].files)
    # each file costs its size + the open cost, at least the target: two files fill a bin
    # (2 x target), the next file starts a new one
    config = AppendCompactionConfig.from_options({"target-file-size": f"{2 * size} b",
                                                  "compaction.small-file-ratio": "1.0",
                                                  "source.split.open-file-cost":
                                                      f"{2 * size} b"})
    units = plan_append_units(splits, config, bucketed=False, full=False)
    assert [len(u.split.files) for u in units] == [2, 2, 2]


def _bucketed(tmp_path, name, **options):
    return make_table(tmp_path, name, SCHEMA, [], ["dt"],
                      {"bucket": "2", "bucket-key": "id", **options})


def test_bucketed_full_compaction_keeps_each_buckets_write_order(spark, tmp_path):
    location = _bucketed(tmp_path, "queue")
    for n in range(4):
        _append(location, range(20 * n, 20 * n + 20))
    before = _rows_in_read_order(location)
    files_before = {(s.partition_values, s.bucket): s.files for s in plan_splits(location.open())}
    result = compact_table(spark, location, full=True)
    assert result.snapshot_id == 5 and result.files_after == 4
    assert _rows_in_read_order(location) == before
    for split in plan_splits(location.open()):
        (new,) = split.files
        old = files_before[(split.partition_values, split.bucket)]
        assert (new.min_sequence_number, new.max_sequence_number) == \
            (old[0].min_sequence_number, old[-1].max_sequence_number)
    # a bucket of one file is left alone (FULL_COMPACT_MIN_FILE = 3)
    assert compact_table(spark, location, full=True).snapshot_id is None


def test_bucketed_full_compaction_needs_three_files_mostly_small(spark, tmp_path):
    location = _bucketed(tmp_path, "queue")
    for n in range(2):
        _append(location, range(20 * n, 20 * n + 20))
    assert compact_table(spark, location, full=True).snapshot_id is None  # 2 files a bucket
    forced = _bucketed(tmp_path, "forced", **{"compaction.force-rewrite-all-files": "true"})
    _append(forced, range(20))
    assert compact_table(spark, forced, full=True).snapshot_id == 2
    # files at least the compaction size are kept at the head and counted as large
    _append(location, range(40, 60))
    splits = plan_splits(location.open())
    sizes = sorted(f.file_size for s in splits for f in s.files)
    config = AppendCompactionConfig.from_options(
        {"target-file-size": f"{sizes[0]} b", "compaction.small-file-ratio": "1.0"})
    assert plan_append_units(splits, config, bucketed=True, full=True) == []


def test_bucketed_minor_compaction_takes_the_first_min_file_num_window(spark, tmp_path):
    location = _bucketed(tmp_path, "queue", **{"compaction.min.file-num": "3"})
    for n in range(4):
        _append(location, range(20 * n, 20 * n + 20), dt=lambda i: "d")
    before = _rows_in_read_order(location)
    (split_before,) = [s for s in plan_splits(location.open()) if s.bucket == 0]
    compact_table(spark, location)
    assert _rows_in_read_order(location) == before
    (split,) = [s for s in plan_splits(location.open()) if s.bucket == 0]
    first, rest = split.files[0], split.files[1:]
    assert first.file_source == 1 and first.row_count == sum(
        f.row_count for f in split_before.files[:3])
    assert [f.file_name for f in rest] == [split_before.files[3].file_name]


def test_row_tracking_table_keeps_row_ids_and_sequence_numbers(spark, tmp_path):
    from dbt.adapters.paimon.format.row_tracking import (ROW_ID, SEQUENCE_NUMBER,
                                                         read_tracked_split)

    location = make_table(tmp_path, "items", SCHEMA, [], [], {"row-tracking.enabled": "true"})
    for n in range(5):
        _append(location, range(10 * n, 10 * n + 10))

    def tracked():
        table = location.open()
        rows = [r for s in plan_splits(table) for r in read_tracked_split(
            table, s, ["id", ROW_ID, SEQUENCE_NUMBER]).to_pylist()]
        return sorted(rows, key=lambda r: r["id"])

    before = tracked()
    assert compact_table(spark, location).snapshot_id == 6
    (new,) = live_files(location)
    assert new.first_row_id is None and "_ROW_ID" in new.write_cols
    assert (new.min_sequence_number, new.max_sequence_number) == (1, 5)
    assert tracked() == before
    # new rows still get fresh ids after the compacted ones
    _append(location, [100, 101])
    after = {r["id"]: r for r in tracked()}
    assert (after[100][ROW_ID], after[101][ROW_ID]) == (50, 51)
    assert after[100][SEQUENCE_NUMBER] == 7


def test_deletion_vector_table_drops_deleted_rows_and_their_vectors(spark, tmp_path):
    location = make_table(tmp_path, "logs", SCHEMA, [], [],
                          {"deletion-vectors.enabled": "true"})
    _append(location, range(100))   # large: picked only for its delete ratio
    _append(location, range(100, 110))
    _append(location, range(110, 120))
    large = max(live_files(location), key=lambda f: f.row_count)
    options = {"target-file-size": f"{int(large.file_size / 0.7)} b"}
    table_options = location.open().table_schema.options
    mark_deleted(location, "id", list(range(0, 30)) + [105])
    config = AppendCompactionConfig.from_options({**table_options, **options})
    (unit,) = plan_append_units(plan_splits(location.open()), config, bucketed=False,
                                full=False)
    # the two files with vectors share an index file: one bin, always compacted; the one
    # small file without a vector is left (a single file is never packed)
    assert sorted(f.row_count for f in unit.split.files) == [10, 100]
    result = compact_table(spark, location)
    assert result.snapshot_id is not None
    assert _all_ids(location) == [i for i in range(120) if i >= 30 and i != 105]
    (split,) = plan_splits(location.open())
    assert split.deletion_files == {}
    assert len(split.files) == 2 and not split.deletion_index_files


@pytest.mark.parametrize("bucketed", [False, True], ids=["unaware", "bucketed"])
def test_threads_and_spark_tasks_compact_append_tables_to_the_same_files(spark, tmp_path,
                                                                         bucketed):
    tables = {}
    for path in ("in_process", "distributed"):
        tables[path] = _bucketed(tmp_path, path) if bucketed else \
            make_table(tmp_path, path, SCHEMA, [], ["dt"], {})
        for n in range(5):
            _append(tables[path], range(10 * n, 10 * n + 10))
    for path, location in tables.items():
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            assert compact_table(spark, location, full=True).snapshot_id == 6
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
    a, b = tables["in_process"], tables["distributed"]
    assert live_file_metadata(a) == live_file_metadata(b)
    assert _rows_in_read_order(a) == _rows_in_read_order(b)
