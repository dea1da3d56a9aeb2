"""Compaction on real tables written by the write path: same rows, fewer files, COMPACT
snapshots, first-row tables visible to level-0-skipping readers."""
import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import is_raw_convertible
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops import compact_table
from dbt.adapters.paimon.write import write_primary_key_run
from tests.integration.table_files import live_file_metadata
from ops_helpers import (kinds, levels, live_files, make_table, pypaimon_rows, read_back,
                         sorted_rows, write_run)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()),
                    ("s", pa.string()), ("op", pa.string())])
TABLE_SCHEMA = pa.schema([f for f in SCHEMA if f.name != "op"])


def _runs(seed: int, n_runs: int = 4, n: int = 120, deletes: bool = True):
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(n_runs):
        ids = rng.integers(0, 80, n)
        dts = rng.choice(["2024-03-11", "2024-03-12"], n)
        ops = rng.choice(["+I", "+I", "+I", "-D"] if deletes and r else ["+I"], n)
        runs.append(pa.table({
            "dt": pa.array(dts, pa.string()), "id": pa.array(ids, pa.int64()),
            "v": pa.array(rng.integers(0, 100, n), pa.int64()),
            "s": pa.array([None if x % 7 == 0 else f"s{x}" for x in rng.integers(0, 50, n)],
                          pa.string()),
            "op": pa.array(ops, pa.string())}))
    return runs


def _table(tmp_path, name, options):
    return make_table(tmp_path, name, TABLE_SCHEMA, ["dt", "id"], ["dt"],
                      {"bucket": "2", **options})


ENGINES = [
    ("deduplicate", {}, True),
    ("aggregation", {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                     "fields.s.aggregate-function": "last_non_null_value"}, False),
    ("partial-update", {"merge-engine": "partial-update"}, False),
    ("first-row", {"merge-engine": "first-row"}, False),
]


@pytest.mark.parametrize("engine,options,deletes", ENGINES, ids=[e[0] for e in ENGINES])
def test_full_compaction_keeps_rows_and_later_writes_merge_the_same(spark, tmp_path, engine,
                                                                    options, deletes):
    runs = _runs(7, deletes=deletes)
    compacted = _table(tmp_path, "compacted", options)
    plain = _table(tmp_path, "plain", options)
    for location in (compacted, plain):
        for run in runs[:3]:
            write_run(spark, location, run, "op")
    before = read_back(compacted)
    files_before = len(live_files(compacted))
    result = compact_table(spark, compacted, full=True)
    assert result.snapshot_id == 4 and result.full
    assert kinds(compacted) == ["APPEND"] * 3 + ["COMPACT"]
    assert sorted_rows(read_back(compacted), ["dt", "id"]) == sorted_rows(before, ["dt", "id"])
    assert levels(compacted) == {5: 4}          # 2 partitions x 2 buckets, all at the top
    assert files_before == 12 and result.files_before == 12 and result.files_after == 4
    assert all(f.delete_row_count == 0 for f in live_files(compacted))
    # one top-level run per bucket: the reader skips the merge (the rows above came that way)
    assert all(is_raw_convertible(s) for s in plan_splits(compacted.open()))
    assert not any(is_raw_convertible(s) for s in plan_splits(plain.open()))
    # a later run merges with the compacted files exactly as with the uncompacted ones
    for location in (compacted, plain):
        write_run(spark, location, runs[3], "op")
    assert sorted_rows(read_back(compacted), ["dt", "id"]) == \
        sorted_rows(read_back(plain), ["dt", "id"])
    # and compacting again changes nothing visible
    again = compact_table(spark, compacted, full=True)
    assert again.snapshot_id == 6 and levels(compacted) == {5: 4}
    assert sorted_rows(read_back(compacted), ["dt", "id"]) == \
        sorted_rows(read_back(plain), ["dt", "id"])


def test_full_compaction_of_compacted_table_is_a_no_op(spark, tmp_path):
    location = _table(tmp_path, "t", {})
    write_run(spark, location, _runs(1, 1)[0], "op")
    assert compact_table(spark, location, full=True).snapshot_id == 2
    result = compact_table(spark, location, full=True)
    assert result.snapshot_id is None and "nothing to compact" in result.message
    assert kinds(location) == ["APPEND", "COMPACT"]


def test_first_row_table_is_visible_to_level0_skipping_readers_after_compaction(spark, tmp_path):
    location = _table(tmp_path, "first", {"merge-engine": "first-row"})
    for run in _runs(3, 3, deletes=False):
        write_run(spark, location, run, "op")
    ours = read_back(location)
    assert ours.num_rows > 0
    assert pypaimon_rows(location).num_rows == 0      # pypaimon skips level 0
    compact_table(spark, location, full=False)         # even a minor one lifts level 0
    assert 0 not in levels(location)
    theirs = pypaimon_rows(location)
    assert sorted_rows(theirs.select(ours.column_names), ["dt", "id"]) == \
        sorted_rows(ours, ["dt", "id"])


def test_partitions_select_what_is_compacted(spark, tmp_path):
    location = _table(tmp_path, "t", {})
    for run in _runs(5, 3):
        write_run(spark, location, run, "op")
    before = read_back(location)
    result = compact_table(spark, location, partitions=[{"dt": "2024-03-12"}], full=True)
    assert result.buckets == 2 and result.files_before == 6 and result.files_after == 2
    by_partition = {}
    from dbt.adapters.paimon.format.splits import plan_splits
    for split in plan_splits(location.open()):
        by_partition.setdefault(split.partition["dt"], set()).update(split.levels)
    assert by_partition == {"2024-03-11": {0}, "2024-03-12": {5}}
    assert sorted_rows(read_back(location), ["dt", "id"]) == sorted_rows(before, ["dt", "id"])


def test_minor_compaction_follows_the_sorted_run_trigger(spark, tmp_path):
    location = make_table(tmp_path, "t", TABLE_SCHEMA, ["id"], [],
                          {"bucket": "1", "num-sorted-run.compaction-trigger": "3"})
    runs = [r.drop_columns(["dt"]).append_column("dt", pa.array(["x"] * r.num_rows))
            for r in _runs(11, 6)]
    write_run(spark, location, runs[0], "op")
    write_run(spark, location, runs[1], "op")
    assert compact_table(spark, location).snapshot_id is None   # 2 runs < trigger 3
    write_run(spark, location, runs[2], "op")
    before = read_back(location)
    result = compact_table(spark, location)
    assert result.snapshot_id is not None and not result.full
    assert levels(location) == {3: 1}       # num-levels = trigger + 1: top level 3
    assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
    for run in runs[3:]:
        write_run(spark, location, run, "op")
    before = read_back(location)
    compact_table(spark, location)
    assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
    assert sum(levels(location).values()) < 4


def _changelog(location):
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager
    from pypaimon.utils.file_store_path_factory import canonical_data_file_path

    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.format.splits import Split

    table = location.open()
    snapshot = table.snapshot_manager().get_latest_snapshot()
    rows = []
    for meta in ManifestListManager(table).read_changelog(snapshot):
        for entry in ManifestFileManager(table).read(meta.file_name):
            f = entry.file
            f.file_path = canonical_data_file_path(table, tuple(entry.partition.values),
                                                   entry.bucket, f.file_name)
            split = Split({}, (), entry.bucket, [f], snapshot.id)
            records = read_split_records(table, split)
            rows += [(r["_row_kind"], r["id"], r["v"]) for r in records.to_pylist()]
    return sorted(rows, key=lambda r: (r[1], r[0] not in ("-U", "-D")))


def test_full_compaction_changelog_producer(spark, tmp_path):
    location = make_table(tmp_path, "cl", TABLE_SCHEMA.remove(0), ["id"], [],
                          {"bucket": "1", "changelog-producer": "full-compaction",
                           "changelog-producer.row-deduplicate": "true"})

    def run(ids, vs, ops):
        return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array(vs, pa.int64()),
                         "s": pa.array(["x"] * len(ids)), "op": pa.array(ops)})

    write_run(spark, location, run([1, 2, 3], [10, 20, 30], ["+I"] * 3), "op")
    compact_table(spark, location, full=True)
    assert _changelog(location) == [("+I", 1, 10), ("+I", 2, 20), ("+I", 3, 30)]
    write_run(spark, location, run([1, 2, 3, 4], [11, 20, 30, 40], ["+U", "-D", "+I", "+I"]),
              "op")
    compact_table(spark, location, full=True)
    # 3 rewritten with the same value: deduplicated away
    assert _changelog(location) == [("-U", 1, 10), ("+U", 1, 11), ("-D", 2, 20), ("+I", 4, 40)]


@pytest.mark.parametrize("full", [False, True], ids=["minor", "full"])
def test_threads_and_spark_tasks_compact_to_the_same_files(spark, tmp_path, full):
    """A small compaction runs in the dbt process's threads; the same units in Spark tasks
    (writePath 'distributed') write files with the same rows, levels, sequence numbers and
    statistics."""
    options = {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
               "fields.s.aggregate-function": "last_non_null_value",
               "num-sorted-run.compaction-trigger": "2"}
    tables = {path: _table(tmp_path, path, options) for path in ("in_process", "distributed")}
    for location in tables.values():
        for run in _runs(11, 4, deletes=False):
            write_run(spark, location, run, "op")
    for path, location in tables.items():
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            assert compact_table(spark, location, full=full).snapshot_id == 5
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
    a, b = tables["in_process"], tables["distributed"]
    assert live_file_metadata(a) == live_file_metadata(b)
    assert sorted_rows(read_back(a), ["dt", "id"]) == sorted_rows(read_back(b), ["dt", "id"])


@pytest.mark.parametrize("options", [{"deletion-vectors.enabled": "true"},
                                     {"changelog-producer": "lookup"}],
                         ids=["deletion-vectors", "lookup-changelog"])
def test_nested_columns_in_lookup_compaction(spark, tmp_path, options):
    """A run updating stored keys: the compaction of a deletion-vector table finds the keys'
    older records, and a lookup changelog their before-images, by the key columns alone (an
    Arrow join refused list, struct and map columns beside the keys)."""
    schema = pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string())),
                        ("attrs", pa.map_(pa.string(), pa.int64())),
                        ("point", pa.struct([("x", pa.int32()), ("y", pa.float64())]))])
    location = make_table(tmp_path, "nested", schema, ["id"], [], {"bucket": "1", **options})

    def write(rows):  # from Arrow: a pandas frame cannot carry the nested values
        run = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)
        write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="nested")

    write([(1, ["a"], [("k", 1)], {"x": 1, "y": 0.5}),
           (2, None, None, None)])
    compact_table(spark, location)
    write([(2, ["b", None], [("k", 2), ("j", None)], {"x": None, "y": -1.0})])
    compact_table(spark, location)
    assert sorted_rows(read_back(location), ["id"]) == [
        {"id": 1, "tags": ["a"], "attrs": [("k", 1)], "point": {"x": 1, "y": 0.5}},
        {"id": 2, "tags": ["b", None], "attrs": [("k", 2), ("j", None)],
         "point": {"x": None, "y": -1.0}}]


@pytest.mark.parametrize("threshold,purged", [(None, True), ("0.5", False)],
                         ids=["default-0.2", "0.5"])
def test_deletion_vector_compaction_rewrites_a_file_mostly_deleted(spark, tmp_path, threshold,
                                                                  purged):
    """A deletion-vector table's file left out of a compaction, whose vector then deletes more
    than ``compaction.delete-ratio-threshold`` of its rows, is rewritten at its level without
    them, in the same COMPACT snapshot: the rows a read scans stay near the live ones. The
    rewritten file keeps its rows' sequence numbers, so a later update still wins."""
    options = {"bucket": "1", "deletion-vectors.enabled": "true"}
    if threshold is not None:
        options["compaction.delete-ratio-threshold"] = threshold
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
    location = make_table(tmp_path, "dv", schema, ["id"], [], options)
    rng = np.random.default_rng(3)
    n = 20_000
    values = np.zeros(n, np.int64)

    def run(start, stop):  # new values for ids start..stop-1, then the run's compaction
        values[start:stop] = rng.integers(1, 1 << 40, stop - start)
        write_run(spark, location, pa.table({"id": pa.array(np.arange(start, stop)),
                                             "v": pa.array(values[start:stop])}))
        compact_table(spark, location)

    def bottom():
        [split] = plan_splits(location.open())
        top = max(f.level for f in split.files)
        return [(f.row_count, f.file_name in split.deletion_files)
                for f in split.files if f.level == top]

    def expected():
        return [{"id": i, "v": int(v)} for i, v in enumerate(values)]

    run(0, n)                                 # every key lifted to the top level
    assert bottom() == [(n, False)]
    run(0, n // 10)                           # 10% of them superseded: under both thresholds
    assert bottom() == [(n, True)]
    run(n // 10, n * 35 // 100)               # 35% superseded
    assert kinds(location)[-1] == "COMPACT"
    assert bottom() == ([(n * 65 // 100, False)] if purged else [(n, True)])
    assert sorted_rows(read_back(location), ["id"]) == expected()
    run(n - 100, n)                           # an update of a rewritten file's keys wins
    assert sorted_rows(read_back(location), ["id"]) == expected()
    assert sorted_rows(pypaimon_rows(location), ["id"]) == expected()
