"""Tags and rollback shared with Apache Paimon 1.0 Java: Java reads our tags, we read Java's,
and a rollback made by either leaves the same table (snapshots, tags, rows) that the other
reads, also after the next commit reuses the removed snapshot ids."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.format.commit import commit_properties
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops.rollback import rollback
from dbt.adapters.paimon.ops.tags import create_tag
from test_java_reads_our_tables import make_table, ours, write_run

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _run(seed):
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(rng.integers(0, 30, 25), pa.int64()),
                     "v": pa.array(rng.integers(0, 1000, 25), pa.int64())})


def _sorted(rows):
    return sorted(rows, key=lambda r: r["id"])


def _history(spark, tmp_path, name):
    location = make_table(tmp_path, name, SCHEMA, ["id"], options={"bucket": "2"})
    for seed in range(4):
        # commits that carry snapshot properties: Java 1.0 ignores the field
        with commit_properties({"dbt.invocation-id": f"inv-{seed}", "dbt.node": name}):
            write_run(spark, location, _run(seed))
    return location


def test_java_reads_our_tags_and_we_read_javas(spark, tmp_path, paimon_java):
    location = _history(spark, tmp_path, "t")
    wh, name = location.warehouse, "db.t"
    create_tag(location, "ours", snapshot_id=2)
    create_tag(location, "kept", snapshot_id=1, time_retained="30d")
    paimon_java.create_tag(wh, name, "javas", 3)
    assert paimon_java.tags(wh, name) == {"ours": 2, "kept": 1, "javas": 3}
    assert {n: t.id for n, t in time_travel.tags(location.open()).items()} == \
        {"ours": 2, "kept": 1, "javas": 3}
    for tag, sid in (("ours", 2), ("kept", 1), ("javas", 3)):
        java = _sorted(paimon_java.read_tag(wh, name, tag))
        assert java == _sorted(paimon_java.read(wh, name, sid))
        assert java == _sorted(ours(location, time_travel.travel(location.open(), tag=tag).id))


def test_rollback_matches_paimon_java(spark, tmp_path, paimon_java):
    ours_location = _history(spark, tmp_path / "a", "t")
    create_tag(ours_location, "two", snapshot_id=2)
    create_tag(ours_location, "four", snapshot_id=4)
    java_root = tmp_path / "b"
    shutil.copytree(tmp_path / "a", java_root)
    java_location = TableRef(str(java_root / "warehouse"), "db", "t", {})

    rollback(ours_location, snapshot_id=3)
    paimon_java.rollback(java_location.warehouse, "db.t", 3)
    for location in (ours_location, java_location):
        assert [s.id for s in list_snapshots(location.open())] == [1, 2, 3]
        assert paimon_java.tags(location.warehouse, "db.t") == {"two": 2}
    assert _sorted(paimon_java.read(ours_location.warehouse, "db.t")) == \
        _sorted(paimon_java.read(java_location.warehouse, "db.t")) == \
        _sorted(ours(ours_location))

    # snapshot 4 again, other rows: Java reads ours, we read the one Java rolled back
    write_run(spark, ours_location, _run(9))
    write_run(spark, java_location, _run(9))
    for location in (ours_location, java_location):
        assert _sorted(paimon_java.read(location.warehouse, "db.t")) == _sorted(ours(location))
    paimon_java.rollback(ours_location.warehouse, "db.t", "two")
    rollback(java_location, tag="two")
    for location in (ours_location, java_location):
        assert [s.id for s in list_snapshots(location.open())] == [1, 2]
        assert _sorted(paimon_java.read(location.warehouse, "db.t")) == \
            _sorted(ours(location)) == _sorted(paimon_java.read_tag(location.warehouse,
                                                                   "db.t", "two"))


def test_branches_shared_with_paimon_java(spark, tmp_path, paimon_java):
    from dbt.adapters.paimon.ops.branches import branch_table_name, create_branch

    location = _history(spark, tmp_path, "t")
    wh, name = location.warehouse, "db.t"
    create_tag(location, "two", snapshot_id=2)
    # our branch, written by our write path: Java reads its snapshots and schema
    create_branch(location, "ours", tag="two")
    ours_branch = TableRef(wh, "db", branch_table_name("t", "ours"), {})
    write_run(spark, ours_branch, _run(7))
    assert _sorted(paimon_java.read(wh, "db.t$branch_ours")) == _sorted(ours(ours_branch))
    # Java's branch from the same tag, written by Java: we read it
    paimon_java.create_branch(wh, name, "javas", "two")
    paimon_java.write(wh, "db.t$branch_javas", [{"id": 1, "v": -1}, {"id": 99, "v": -99}],
                      tmp_path / "rows.jsonl")
    javas = TableRef(wh, "db", branch_table_name("t", "javas"), {})
    assert [s.id for s in list_snapshots(javas.open())] == [2, 3]
    assert _sorted(ours(javas)) == _sorted(paimon_java.read(wh, "db.t$branch_javas"))
    # main untouched by either
    assert _sorted(ours(location)) == _sorted(paimon_java.read(wh, name, 4))


def test_changes_between_tags_and_times_of_an_append_table_match_java(spark, tmp_path,
                                                                      paimon_java):
    """paimon_changes_between of an append table reads what Paimon 1.0 Java's
    ``incremental-between`` and ``incremental-between-timestamp`` read. Between tags
    (IncrementalTagStartingScanner -> readIncrementalDiff, RawFileSplitRead ignoring the before
    files): the rows of the files the end tag has and the start tag has not, so a compaction in
    between returns the compacted rows again. Between times: the APPEND commits of the snapshots
    Java selects (IncrementalTimeStampStartingScanner)."""
    from dbt.adapters.paimon.datasource.changes import change_range, read_changes
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files
    from dbt.adapters.paimon.ops.compact import compact_table
    from test_java_reads_our_tables import render

    location = make_table(tmp_path, "log", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                          options={"bucket": "1", "bucket-key": "id"})

    def append(ids):
        table = location.open()
        commit_append_files(table, write_append_files(table, [pa.table({
            "id": pa.array(list(ids), pa.int64()), "v": [f"v{i}" for i in ids]})]))

    append(range(0, 3))
    create_tag(location, "a", snapshot_id=1)
    append(range(3, 6))
    append(range(6, 9))
    create_tag(location, "b", snapshot_id=3)
    assert compact_table(spark, location, full=True).snapshot_id == 4   # COMPACT
    append(range(9, 12))
    create_tag(location, "c", snapshot_id=5)
    table = location.open()
    times = {s.id: s.time_millis for s in list_snapshots(table)}

    def ours(**options):
        rows = read_changes(table, change_range(table, {k: str(v) for k, v in options.items()}))
        return sorted((render(r["id"]), render(r["v"]), r["_row_kind"]) for r in rows.to_pylist())

    by_tags = {("a", "b"): (1, 3), ("b", "c"): (3, 5), ("a", "c"): (1, 5)}
    by_times = [(times[1], times[3]), (times[1] - 10_000, times[2]),
                (times[3], times[5] + 10_000), (times[5] + 1, times[5] + 100)]
    commands = [["readopts", location.warehouse, "db.log", f"incremental-between={s},{e}"]
                for s, e in by_tags] + \
               [["readopts", location.warehouse, "db.log", f"incremental-between-timestamp={s},{e}"]
                for s, e in by_times]
    outputs = paimon_java.batch(commands, tmp_path / "commands.jsonl")
    java = [sorted((r["id"], r["v"], r["_row_kind"]) for r in
                   (json.loads(line) for line in out.splitlines() if line.strip()))
            for out in outputs]

    expected_tags = [ours(changes_from=s, changes_to=e, changes_mode="diff")
                     for s, e in by_tags.values()]
    assert java[:3] == expected_tags
    assert [r[0] for r in expected_tags[0]] == list(range(3, 9))
    assert [r[0] for r in expected_tags[1]] == list(range(0, 12))  # compacted: all again
    expected_times = []
    for start, end in by_times:
        first, last = time_travel.incremental_between_timestamps(table, start, end)
        expected_times.append(ours(changes_from=first, changes_to=last))
    assert java[3:] == expected_times
    assert [[r[0] for r in rows] for rows in expected_times] == [
        list(range(3, 9)), list(range(0, 6)), list(range(9, 12)), []]


def test_java_reads_our_clone_and_it_keeps_its_snapshot(spark, tmp_path, paimon_java):
    """`dbt clone`'s table (ops/clone.py: hard links of the source's files, its latest
    snapshot) is a Paimon table of its own for Paimon Java, unchanged by the source's next
    commit."""
    from dbt.adapters.paimon.ops.clone import clone_table

    location = _history(spark, tmp_path, "t")
    wh = location.warehouse
    clone = TableRef(wh, "other", "t", {})
    result = clone_table(location, clone)
    assert result.snapshot_id == 4 and result.linked > 0 and result.copied == 0
    at_clone = _sorted(paimon_java.read(wh, "db.t"))
    assert _sorted(paimon_java.read(wh, "other.t")) == at_clone == _sorted(ours(clone))
    write_run(spark, location, _run(7))
    assert _sorted(paimon_java.read(wh, "db.t")) != at_clone
    assert _sorted(paimon_java.read(wh, "other.t")) == at_clone
