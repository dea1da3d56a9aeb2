"""Commits racing each other, decided at the exact moment one commit publishes its snapshot.

No Spark: files are written with the format layer; the race is staged through the test-only
pause point ``commit-manifests-written`` (format/pause_points.py), at which a second writer
commits first. What each test proves would fail without the guards in format/commit.py.
"""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import commit as commit_mod
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.errors import CommitConflictError
from dbt.adapters.paimon.format.kv_files import (new_commit_message, next_sequence_number,
                                                 write_kv_file)
from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits
from dbt.adapters.paimon.ops.compact import commit_units, compact_unit
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig, pick_full

from reliability_helpers import read_merged

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def location(tmp_path):
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "t", SCHEMA, primary_keys=["id"], partition_keys=[],
                           options={"bucket": "1"})
    return TableRef(wh, "db", "t", {})


def _bucket_file(table, ids, value):
    """Files of one write of ``ids`` to bucket 0, numbered from the bucket's current floor."""
    records = pa.table({"id": pa.array(sorted(ids), pa.int64()),
                        "v": pa.array([value] * len(ids)),
                        "_row_kind": pa.array(["+I"] * len(ids)),
                        "_seq": pa.array(range(len(ids)), pa.int64())})
    base = next_sequence_number(table, {}, 0)
    return [new_commit_message((), 0, new_files=write_kv_file(table, (), 0, records,
                                                               sequence_base=base))]


def _while_publishing(monkeypatch, action):
    """Run ``action`` once, at the moment the next commit is about to publish its snapshot."""
    done = []

    def pause_at(point):
        if point == "commit-manifests-written" and not done:
            done.append(point)
            action()
    monkeypatch.setattr(commit_mod, "pause_at", pause_at)
    return done


def test_concurrent_writer_of_the_same_bucket_is_a_conflict_not_overlapping_numbers(
        location, monkeypatch):
    table = location.open()
    commit_mod.commit_append(table, _bucket_file(table, [1, 2], "base"))
    mine = _bucket_file(table, [1, 3], "mine")        # both read snapshot 1: same floor
    theirs = _bucket_file(table, [1, 4], "theirs")
    raced = _while_publishing(monkeypatch, lambda: commit_mod.commit_append(
        location.open(), theirs))
    with pytest.raises(CommitConflictError, match="sequence number"):
        commit_mod.commit_append(table, mine)
    assert raced
    # their commit landed whole, mine not at all; no two files overlap in numbers
    assert [s.id for s in list_snapshots(table)] == [1, 2]
    assert read_merged(location).to_pylist() == [
        {"id": 1, "v": "theirs"}, {"id": 2, "v": "base"}, {"id": 4, "v": "theirs"}]
    ranges = sorted((f.min_sequence_number, f.max_sequence_number)
                    for s in plan_splits(table) for f in s.files)
    assert all(high < low for (_, high), (low, _) in zip(ranges, ranges[1:]))


def test_one_writers_run_rolled_into_files_of_interleaved_numbers_commits(tmp_path):
    """A bucket's run is sorted by key and rolls into files at ``target-file-size``; its
    numbers count arrival, so the rolled files' number ranges interleave (Java's
    MergeTreeWriter writes them so). Their keys are disjoint: the commit takes them."""
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "rolled", SCHEMA, primary_keys=["id"], partition_keys=[],
                           options={"bucket": "1", "target-file-size": "4 kb"})
    location = TableRef(wh, "db", "rolled", {})
    table = location.open()
    ids = list(range(2000))
    records = pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids],
                        "_row_kind": ["+I"] * len(ids),
                        # arrival order unlike key order (7919 is prime to 2000)
                        "_seq": pa.array([i * 7919 % 2000 for i in ids], pa.int64())})
    files = write_kv_file(table, (), 0, records, sequence_base=0)
    assert len(files) > 2
    assert files[1].min_sequence_number <= files[0].max_sequence_number
    commit_mod.commit_append(table, [new_commit_message((), 0, new_files=files)])
    assert read_merged(location).column("v").to_pylist() == [f"v{i}" for i in ids]


def test_two_writers_files_of_one_bucket_in_one_commit_are_a_conflict(location):
    """Two tasks that wrote one bucket number from the same floor: their files overlap in
    numbers and keys, and the commit refuses them (either version of key 3 could win)."""
    table = location.open()
    mine = _bucket_file(table, [1, 3], "mine")
    theirs = _bucket_file(table, [2, 3], "theirs")
    with pytest.raises(CommitConflictError, match="overlap in sequence numbers .* and in keys"):
        commit_mod.commit_append(table, mine + theirs)
    assert list_snapshots(table) == []


def test_concurrent_writer_of_other_buckets_is_retried_and_both_land(tmp_path, monkeypatch):
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "p", SCHEMA, primary_keys=["id"], partition_keys=[],
                           options={"bucket": "2"})
    location = TableRef(wh, "db", "p", {})
    table = location.open()

    def rows_of(bucket, ids, value):
        records = pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([value] * len(ids)),
                            "_row_kind": pa.array(["+I"] * len(ids)),
                            "_seq": pa.array(range(len(ids)), pa.int64())})
        return [new_commit_message((), bucket, new_files=write_kv_file(
            table, (), bucket, records, sequence_base=0))]
    theirs = rows_of(0, [10, 11], "theirs")
    _while_publishing(monkeypatch, lambda: commit_mod.commit_append(location.open(), theirs))
    assert commit_mod.commit_append(table, rows_of(1, [20], "mine")) == 2  # retried on top
    assert sorted(r["id"] for r in read_merged(location).to_pylist()) == [10, 11, 20]


def test_a_snapshot_another_process_published_is_never_replaced(location):
    """pypaimon's local rename replaces an existing snapshot file if another process wrote it
    after the existence check; the guarded commit publishes with a link that cannot."""
    table = location.open()
    commit_mod.commit_append(table, _bucket_file(table, [1], "first"))
    snapshot = table.snapshot_manager().get_latest_snapshot()
    path = table.snapshot_manager().get_snapshot_path(snapshot.id)
    before = open(path).read()
    rival = json.loads(before)
    rival["commitUser"] = "someone-else"
    guarded = commit_mod.GuardedSnapshotCommit(table.new_snapshot_commit())
    from pypaimon.common.json_util import JSON
    from pypaimon.snapshot.snapshot import Snapshot
    assert guarded.commit(None, JSON.from_json(json.dumps(rival), Snapshot), []) is False
    assert open(path).read() == before


def test_compaction_whose_inputs_another_compaction_replaced_fails_and_loses_nothing(
        location, monkeypatch):
    table = location.open()
    for i in range(3):
        commit_mod.commit_append(table, _bucket_file(table, [i, i + 1], f"run{i}"))
    expected = read_merged(location).to_pylist()
    config = CompactionConfig.from_options({})
    mine = [compact_unit(table, pick_full(s, config)) for s in plan_splits(table)]
    theirs = [compact_unit(table, pick_full(s, config)) for s in plan_splits(table)]
    _while_publishing(monkeypatch, lambda: commit_units(location.open(), theirs))
    with pytest.raises(CommitConflictError, match="deletion conflicts"):
        commit_units(table, mine)
    assert [s.commit_kind for s in list_snapshots(table)] == ["APPEND"] * 3 + ["COMPACT"]
    assert read_merged(location).to_pylist() == expected
    # the failed compaction deleted its own output; the winner's files are the live ones
    live = {f.file_name for s in plan_splits(table) for f in s.files}
    assert live == {f.file_name for m in theirs for f in m.new_files}
    assert not any(table.file_io.exists(f"{location.warehouse}/db.db/t/bucket-0/{f.file_name}")
                   for m in mine for f in m.new_files)


def test_compaction_and_a_concurrent_write_both_land_without_losing_rows(location,
                                                                          monkeypatch):
    table = location.open()
    for i in range(2):
        commit_mod.commit_append(table, _bucket_file(table, [i, 5], f"run{i}"))
    config = CompactionConfig.from_options({})
    compaction = [compact_unit(table, pick_full(s, config)) for s in plan_splits(table)]
    write = _bucket_file(table, [5, 9], "late")
    _while_publishing(monkeypatch, lambda: commit_mod.commit_append(location.open(), write))
    commit_units(table, compaction)
    assert [s.commit_kind for s in list_snapshots(table)] == ["APPEND"] * 3 + ["COMPACT"]
    # the write after the compaction's base snapshot still wins for key 5
    assert read_merged(location).to_pylist() == [
        {"id": 0, "v": "run0"}, {"id": 1, "v": "run1"}, {"id": 5, "v": "late"},
        {"id": 9, "v": "late"}]


def test_a_file_system_without_hard_links_falls_back_to_pypaimons_rename(location,
                                                                         monkeypatch):
    def no_links(source, target):
        raise PermissionError("hard links not supported")
    monkeypatch.setattr(commit_mod.os, "link", no_links)
    table = location.open()
    assert commit_mod.commit_append(table, _bucket_file(table, [7], "x")) == 1
    assert read_merged(location).to_pylist() == [{"id": 7, "v": "x"}]
    snapshot_dir = f"{location.warehouse}/db.db/t/snapshot"
    assert not [n for n in os.listdir(snapshot_dir) if n.endswith(".tmp")]
