import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.commit import (abort, commit_append, commit_compact,
                                               commit_overwrite)
from dbt.adapters.paimon.format.errors import CommitConflictError
from dbt.adapters.paimon.format.kv_files import (new_commit_message, next_sequence_number,
                                                 read_split_records, write_kv_file)
from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits
from paimon_format_helpers import orders, pypaimon_read, pypaimon_write, records, sort_rows

DAY = "2024-01-01"
TOP_LEVEL = 5


def _latest_per_key(raw: pa.Table) -> pa.Table:
    """Deduplicate for the tests: the record with the largest _seq per key, deletes dropped
    (the real merge lives in the runtime)."""
    ordered = raw.sort_by([("id", "ascending"), ("_seq", "descending")])
    ids = ordered.column("id").to_numpy()
    first = pa.array([True] + list(ids[1:] != ids[:-1]))
    latest = ordered.filter(first)
    return latest.filter(pc.is_in(latest.column("_row_kind"), pa.array(["+I", "+U"])))


def _compact_all(table):
    messages = []
    for split in plan_splits(table):
        merged = _latest_per_key(read_split_records(table, split)).drop(["_level"])
        files = write_kv_file(table, split.partition, split.bucket, merged, level=TOP_LEVEL)
        messages.append(new_commit_message(split.partition_values, split.bucket, files,
                                           deleted_files=split.files))
    return messages


def _data_files(table):
    return sorted(f for _, _, names in os.walk(table.table_path) for f in names
                  if f.startswith(("data-", "changelog-")))


def test_compact_snapshot(pk_table):
    pypaimon_write(pk_table, orders(DAY, list(range(30))))
    pypaimon_write(pk_table, orders(DAY, list(range(20, 40)), names=["new"] * 20))
    # a delete that pypaimon alone would not apply right: -D with our writer
    base = {s.bucket: next_sequence_number(pk_table, s) for s in plan_splits(pk_table)}
    deletes = []
    for split in plan_splits(pk_table):
        ids = [i for i in (0, 1, 2, 3) if i in
               read_split_records(pk_table, split).column("id").to_pylist()]
        rows = records(orders(DAY, ids), kinds=["-D"] * len(ids))
        files = write_kv_file(pk_table, split.partition, split.bucket, rows,
                              sequence_base=base[split.bucket])
        deletes.append(new_commit_message(split.partition_values, split.bucket, files))
    commit_append(pk_table, deletes)
    before = sort_rows(pa.concat_tables(
        [_latest_per_key(read_split_records(pk_table, s)).drop(["_seq", "_row_kind", "_level"])
         for s in plan_splits(pk_table)]))
    assert [r["id"] for r in before] == list(range(4, 40))

    snapshot_id = commit_compact(pk_table, _compact_all(pk_table))
    snapshots = list_snapshots(pk_table)
    assert snapshots[-1].id == snapshot_id and snapshots[-1].commit_kind == "COMPACT"
    splits = plan_splits(pk_table)
    assert [len(s.files) for s in splits] == [1, 1]
    assert all(s.levels == [TOP_LEVEL] and s.files[0].delete_row_count == 0 for s in splits)
    # pypaimon reads the single top-level file "raw convertible": same rows as before
    assert sort_rows(pypaimon_read(pk_table)) == before
    # a later write continues the sequence numbers after the compacted file
    for split in splits:
        assert next_sequence_number(pk_table, split) == split.files[0].max_sequence_number + 1
    pypaimon_write(pk_table, orders(DAY, [4], names=["after-compact"]))
    assert {r["id"]: r["name"] for r in pypaimon_read(pk_table).to_pylist()}[4] == \
        "after-compact"


def test_compact_conflicts_with_a_concurrent_compaction(pk_table):
    pypaimon_write(pk_table, orders(DAY, list(range(10))))
    pypaimon_write(pk_table, orders(DAY, list(range(5, 15))))
    first, second = _compact_all(pk_table), _compact_all(pk_table)
    commit_compact(pk_table, first)
    with pytest.raises(CommitConflictError, match="conflict"):
        commit_compact(pk_table, second)
    abort(pk_table, second)
    assert len(_data_files(pk_table)) == 2 + 2 + 2  # two writes, one compaction, per bucket


def test_overwrite_partitions_and_table(pk_table):
    for day in ("d1", "d2", "d3"):
        pypaimon_write(pk_table, orders(day, [1, 2, 3]))

    def rewrite(day, ids):
        messages = []
        part = records(orders(day, ids))
        buckets = bucket_ids(part.select(["id"]), 2)
        for bucket in (0, 1):
            files = write_kv_file(pk_table, {"dt": day}, bucket,
                                  part.filter(pa.array(buckets == bucket)))
            messages.append(new_commit_message((day,), bucket, files))
        return messages

    commit_overwrite(pk_table, rewrite("d2", [7]), partitions=[{"dt": "d2"}, {"dt": "d3"}])
    assert list_snapshots(pk_table)[-1].commit_kind == "OVERWRITE"
    assert sorted((r["dt"], r["id"]) for r in pypaimon_read(pk_table).to_pylist()) == \
        [("d1", 1), ("d1", 2), ("d1", 3), ("d2", 7)]
    with pytest.raises(ValueError, match="not among the overwritten partitions"):
        commit_overwrite(pk_table, rewrite("d1", [1]), partitions=[{"dt": "d2"}])
    commit_overwrite(pk_table, rewrite("d9", [4]))
    assert [(r["dt"], r["id"]) for r in pypaimon_read(pk_table).to_pylist()] == [("d9", 4)]
    commit_overwrite(pk_table, [])  # truncate
    assert pypaimon_read(pk_table).num_rows == 0


def test_abort_deletes_only_the_written_files(pk_table):
    pypaimon_write(pk_table, orders(DAY, [1, 2]))
    committed = _data_files(pk_table)
    files = write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, [10, 11])),
                          sequence_base=100)
    log = write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, [10, 11])),
                        sequence_base=100, changelog=True)
    assert len(_data_files(pk_table)) == len(committed) + 2
    split = plan_splits(pk_table)[0]
    abort(pk_table, [new_commit_message((DAY,), 0, files, deleted_files=split.files,
                                        changelog_files=log)])
    assert _data_files(pk_table) == committed
    assert pypaimon_read(pk_table).num_rows == 2


def test_append_rejects_stale_or_overlapping_sequence_numbers(pk_table):
    pypaimon_write(pk_table, orders(DAY, [1, 2, 3, 4]))
    split = plan_splits(pk_table)[0]
    stale = write_kv_file(pk_table, split.partition, split.bucket,
                          records(orders(DAY, [1])), sequence_base=0)
    with pytest.raises(CommitConflictError, match="already holds numbers"):
        commit_append(pk_table, [new_commit_message(split.partition_values, split.bucket,
                                                    stale)])
    base = next_sequence_number(pk_table, split)
    # two tasks of one bucket number from the same base: key ranges [1, 3] and [2, 2] overlap
    # (files of disjoint key ranges may share numbers: one writer's rolled run has them)
    task_a = write_kv_file(pk_table, split.partition, split.bucket,
                           records(orders(DAY, [1, 3])), sequence_base=base)
    task_b = write_kv_file(pk_table, split.partition, split.bucket,
                           records(orders(DAY, [2])), sequence_base=base)
    both = [new_commit_message(split.partition_values, split.bucket, task_a),
            new_commit_message(split.partition_values, split.bucket, task_b)]
    with pytest.raises(CommitConflictError, match="two tasks wrote the same bucket"):
        commit_append(pk_table, both)
    assert commit_append(pk_table, []) is None
    assert commit_append(pk_table, both[:1]) == 2


def test_messages_pickle_across_processes(pk_table):
    import pickle

    files = write_kv_file(pk_table, {"dt": DAY}, 1, records(orders(DAY, [1])))
    message = pickle.loads(pickle.dumps(new_commit_message((DAY,), 1, files)))
    assert commit_append(pk_table, [message]) == 1
    assert pypaimon_read(pk_table).column("id").to_pylist() == [1]
