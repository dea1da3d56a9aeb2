"""Tags, time travel by tag/timestamp/watermark, rollback and undoing a dbt invocation, with
Paimon Java's rules (TagManager, TimeTravelUtil, RollbackHelper: cited in the modules)."""
import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.format.commit import commit_properties
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops import compact_table, expire_snapshots, remove_orphan_files
from dbt.adapters.paimon.ops.invocations import (INVOCATION_PROPERTY, NODE_PROPERTY,
                                                 rollback_invocation, warehouse_tables)
from dbt.adapters.paimon.ops.rollback import rollback
from dbt.adapters.paimon.ops.table_info import table_info
from dbt.adapters.paimon.ops.tags import (create_tag, delete_tag, expire_tags, rename_tag,
                                          replace_tag)
from ops_helpers import files_on_disk, make_table, read_back, sorted_rows, write_run

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _run(seed, n=40):
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(rng.integers(0, 50, n), pa.int64()),
                     "v": pa.array(rng.integers(0, 100, n), pa.int64())})


def _rows(location, snapshot_id=None):
    return sorted_rows(read_back(location, snapshot_id), ["id"])


@pytest.fixture
def history(spark, tmp_path):
    """Snapshots 1-4 (3: a full compaction), and the rows each one reads."""
    location = make_table(tmp_path, "t", SCHEMA, ["id"], [], {"bucket": "1"})
    write_run(spark, location, _run(1))
    write_run(spark, location, _run(2))
    compact_table(spark, location, full=True)
    write_run(spark, location, _run(3))
    return location, {sid: _rows(location, sid) for sid in range(1, 5)}


def test_tags_create_replace_rename_delete(history):
    location, rows = history
    assert create_tag(location, "latest").snapshot_id == 4
    assert create_tag(location, "second", snapshot_id=2).snapshot_id == 2
    with pytest.raises(ValueError, match="already exists"):
        create_tag(location, "second", snapshot_id=3)
    assert create_tag(location, "second", snapshot_id=3, ignore_if_exists=True).snapshot_id \
        is None
    with pytest.raises(ValueError, match="shouldn't be blank"):
        create_tag(location, "  ")
    with pytest.raises(ValueError, match="has no snapshot 9"):
        create_tag(location, "nine", snapshot_id=9)
    table = location.open()
    assert {n: t.id for n, t in time_travel.tags(table).items()} == {"latest": 4, "second": 2}
    assert _rows(location, time_travel.travel(table, tag="second").id) == rows[2]

    assert replace_tag(location, "second", snapshot_id=3).snapshot_id == 3
    with pytest.raises(ValueError, match="doesn't exist"):
        replace_tag(location, "missing")
    rename_tag(location, "second", "third")
    with pytest.raises(ValueError, match="already exists"):
        rename_tag(location, "third", "latest")
    assert {n: t.id for n, t in time_travel.tags(location.open()).items()} == \
        {"latest": 4, "third": 3}
    result = delete_tag(location, "third,nope")
    assert result.tags == ["third"] and "no such tag(s): ['nope']" in result.message
    assert list(time_travel.tags(location.open())) == ["latest"]


def test_time_travel_selects_snapshots_as_paimon_java(history):
    location, _ = history
    table = location.open()
    snapshots = list_snapshots(table)
    # timestamp: the latest snapshot committed at or before it (earlierOrEqualTimeMills)
    assert time_travel.travel(table, timestamp=snapshots[1].time_millis).id == 2
    assert time_travel.travel(table, timestamp=snapshots[-1].time_millis + 10_000).id == 4
    text = dt.datetime.fromtimestamp(snapshots[2].time_millis / 1000).isoformat(
        sep=" ", timespec="milliseconds")
    assert time_travel.travel(table, timestamp=text).id == 3
    with pytest.raises(ValueError, match="no snapshot .* earlier than or equal to timestamp"):
        time_travel.travel(table, timestamp=snapshots[0].time_millis - 1)
    # our writes carry no watermark: no snapshot qualifies (Java's laterOrEqualWatermark)
    with pytest.raises(ValueError, match="later than or equal to watermark"):
        time_travel.travel(table, watermark=0)
    # version: a tag name first, then a snapshot id (TimeTravelUtil.adaptScanVersion)
    create_tag(location, "2", snapshot_id=3)
    assert time_travel.travel(location.open(), version="2").id == 3
    assert time_travel.travel(location.open(), version="1").id == 1
    with pytest.raises(ValueError, match="exactly one"):
        time_travel.travel(table, snapshot_id=1, tag="2")


def test_a_tag_keeps_an_expired_snapshot_readable_and_deleting_it_frees_its_files(history):
    location, rows = history
    create_tag(location, "first", snapshot_id=1)
    assert expire_snapshots(location, retain_last=1, older_than="0 ms").expired_snapshots == \
        [1, 2, 3]
    table = location.open()
    # read by id (the tag keeps it, Java's findSnapshot) and by tag
    assert _rows(location, 1) == rows[1]
    assert time_travel.travel(table, tag="first").id == 1
    with pytest.raises(ValueError, match="has no snapshot 2"):
        time_travel.travel(table, snapshot_id=2)
    before = set(files_on_disk(location))
    result = delete_tag(location, "first")
    assert result.deleted_files > 0  # the level-0 file of snapshot 1 that only the tag kept
    gone = before - set(files_on_disk(location))
    assert any(f.startswith("bucket-0/") for f in gone)
    assert _rows(location) == rows[4]
    # nothing the latest snapshot reads was deleted, and nothing is left over
    assert remove_orphan_files(location, older_than=0, dry_run=True).deleted == []


def test_expire_tags_by_retention_and_age(history):
    location, _ = history
    create_tag(location, "short", time_retained="1 h")
    create_tag(location, "long", time_retained="30d")
    create_tag(location, "plain", snapshot_id=2)
    later = dt.datetime.now() + dt.timedelta(hours=2)
    assert expire_tags(location, now=later).tags == ["short"]
    # older_than: tags created before it, a tag without create time by its file's age
    assert sorted(expire_tags(location, older_than="0 ms", now=later).tags) == ["long", "plain"]


def test_rollback_to_snapshot_tag_and_timestamp(history, spark):
    location, rows = history
    create_tag(location, "at2", snapshot_id=2)
    create_tag(location, "at4", snapshot_id=4)
    result = rollback(location, snapshot_id=3)
    assert (result.previous_latest, result.snapshot_id, result.removed_snapshots,
            result.removed_tags) == (4, 3, [4], ["at4"])
    assert result.deleted_files > 0  # snapshot 4's new file
    assert [s.id for s in list_snapshots(location.open())] == [1, 2, 3]
    assert _rows(location) == rows[3]
    assert remove_orphan_files(location, older_than=0, dry_run=True).deleted == []
    # the next commit reuses id 4 for other rows
    write_run(spark, location, _run(7))
    assert [s.id for s in list_snapshots(location.open())] == [1, 2, 3, 4]
    assert _rows(location) != rows[4]
    assert rollback(location, tag="at2").snapshot_id == 2
    assert _rows(location) == rows[2]
    first = list_snapshots(location.open())[0]
    assert rollback(location, timestamp=first.time_millis).snapshot_id == 1
    assert _rows(location) == rows[1]
    assert "nothing rolled back" in rollback(location, snapshot_id=1).message
    with pytest.raises(ValueError, match="exactly one"):
        rollback(location)
    with pytest.raises(ValueError, match="doesn't exist"):
        rollback(location, snapshot_id=3)


def test_rollback_to_a_tag_whose_snapshot_expired_writes_it_back(history):
    location, rows = history
    create_tag(location, "first", snapshot_id=1)
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    result = rollback(location, tag="first")
    assert result.removed_snapshots == [4]
    assert [s.id for s in list_snapshots(location.open())] == [1]
    root = os.path.join(location.warehouse, "db.db", "t", "snapshot")
    assert open(os.path.join(root, "EARLIEST")).read().strip() == "1"
    assert open(os.path.join(root, "LATEST")).read().strip() == "1"
    assert _rows(location) == rows[1]


def test_undo_an_invocation_across_tables(spark, tmp_path):
    a = make_table(tmp_path, "a", SCHEMA, ["id"], [], {"bucket": "1"})
    b = make_table(tmp_path, "b", SCHEMA, ["id"], [], {"bucket": "1"})
    c = make_table(tmp_path, "c", SCHEMA, ["id"], [], {"bucket": "1"})
    for location in (a, b, c):
        with commit_properties({INVOCATION_PROPERTY: "inv-1", NODE_PROPERTY: "setup"}):
            write_run(spark, location, _run(1))
    before = {loc.table: _rows(loc) for loc in (a, b, c)}
    for location in (a, b, c):
        with commit_properties({INVOCATION_PROPERTY: "inv-2", NODE_PROPERTY: location.table}):
            write_run(spark, location, _run(2))
            if location is a:
                compact_table(spark, location, full=True)  # the same invocation: undone too
    write_run(spark, c, _run(3))  # another writer commits to c afterwards
    snapshot = c.open().snapshot_manager().get_latest_snapshot()
    assert INVOCATION_PROPERTY not in (snapshot.properties or {})
    info = table_info(a)
    assert "inv-1" in info and "setup" in info and "inv-2" in info

    plan = rollback_invocation(warehouse_tables(a.warehouse, {}), dry_run=True)
    assert plan.invocation_id == "inv-2"  # the latest invocation that committed
    assert [u.table for u in plan.rolled_back] == ["db.a", "db.b"]
    assert _rows(a) != before["a"]  # a dry run changes nothing

    result = rollback_invocation(warehouse_tables(a.warehouse, {}), "inv-2")
    assert {u.table: u.target for u in result.rolled_back} == {"db.a": 1, "db.b": 1}
    assert [u.table for u in result.refused] == ["db.c"]
    assert "snapshot 3 was committed afterwards by commit user" in result.message
    assert _rows(a) == before["a"] and _rows(b) == before["b"]
    assert [s.id for s in list_snapshots(c.open())] == [1, 2, 3]
    # inv-1 created the tables: nothing earlier to return to
    refused = rollback_invocation(warehouse_tables(a.warehouse, {}), "inv-1", dry_run=True).refused
    assert {u.table for u in refused} >= {"db.a", "db.b"}
    assert all("created it" in u.refused for u in refused if u.table != "db.c")


def _branch(location, name):
    from dbt.adapters.paimon.datasource.source import TableRef
    from dbt.adapters.paimon.ops.branches import branch_table_name

    return TableRef(location.warehouse, location.database,
                         branch_table_name(location.table, name), location.catalog_options)


def test_branches_write_apart_keep_their_files_and_fast_forward(history, spark):
    from dbt.adapters.paimon.ops.branches import (branches, create_branch, delete_branch,
                                                  fast_forward)

    location, rows = history
    create_tag(location, "t2", snapshot_id=2)
    create_branch(location, "audit", tag="t2")
    create_branch(location, "scratch")
    with pytest.raises(ValueError, match="already exists"):
        create_branch(location, "audit")
    with pytest.raises(ValueError, match="pure numeric"):
        create_branch(location, "123")
    with pytest.raises(ValueError, match="has no tag 'nope'"):
        create_branch(location, "x", tag="nope")
    assert branches(location.open()) == ["audit", "scratch"]
    audit = _branch(location, "audit")
    assert [s.id for s in list_snapshots(audit.open())] == [2]
    assert _rows(audit) == rows[2]
    write_run(spark, audit, _run(8))           # snapshot 3 of the branch
    on_branch = _rows(audit)
    assert on_branch != rows[2] and _rows(location) == rows[4]  # main untouched
    write_run(spark, _branch(location, "scratch"), _run(9))
    assert [s.id for s in list_snapshots(_branch(location, "scratch").open())] == [1]

    # main's expiry and orphan removal never delete what a branch reads
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    delete_tag(location, "t2")
    assert remove_orphan_files(location, older_than=0).deleted == []
    assert _rows(audit) == on_branch

    # main moved on since the branch started at snapshot 2: refused unless forced
    with pytest.raises(ValueError, match=r"commits made after branch 'audit' started at "
                                         r"snapshot 2 \(main's snapshot\(s\) 4\)"):
        fast_forward(location, "audit")
    result = fast_forward(location, "audit", force=True)
    assert "snapshots 2..3" in result.message
    assert [s.id for s in list_snapshots(location.open())] == [2, 3]
    assert _rows(location) == on_branch
    with pytest.raises(ValueError, match="doesn't exist"):
        fast_forward(location, "nope")
    delete_branch(location, "audit,scratch")
    assert branches(location.open()) == []
    # the scratch branch's file is an orphan now; main's files are not
    assert any(p.startswith("bucket-0/") for p in
               remove_orphan_files(location, older_than=0).deleted)
    assert _rows(location) == on_branch


def test_changes_between_tags_of_an_append_table_and_between_times(spark, tmp_path):
    """The diff read of an append table between two tags whose snapshots expired, and the
    snapshots incremental-between-timestamp selects (Java's rules: interop test_tags_java)."""
    from dbt.adapters.paimon.datasource.changes import change_range, read_changes
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files

    location = make_table(tmp_path, "log", SCHEMA, [], [], {"bucket": "-1"})

    def append(ids):
        table = location.open()
        commit_append_files(table, write_append_files(table, [pa.table({
            "id": pa.array(list(ids), pa.int64()), "v": pa.array(list(ids), pa.int64())})]))

    def ids(table, **options):
        rows = read_changes(table, change_range(table, {k: str(v) for k, v in options.items()}))
        assert set(rows.column("_row_kind").to_pylist()) <= {"+I"}
        return sorted(rows.column("id").to_pylist())

    for start in (0, 10, 20, 30):
        append(range(start, start + 10))
    create_tag(location, "one", snapshot_id=1)
    create_tag(location, "three", snapshot_id=3)
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    table = location.open()
    assert [s.id for s in list_snapshots(table)] == [4]
    assert ids(table, changes_from=1, changes_to=3, changes_mode="diff") == list(range(10, 30))
    assert ids(table, changes_from=3, changes_to=4, changes_mode="diff") == list(range(30, 40))
    with pytest.raises(ValueError, match="has no snapshot 2 .neither retained nor tagged"):
        change_range(table, {"changes_from": "2", "changes_to": "4", "changes_mode": "diff"})
    with pytest.raises(ValueError, match="needs a start snapshot before the end snapshot 3"):
        change_range(table, {"changes_from": "3", "changes_to": "3", "changes_mode": "diff"})
    keyed = make_table(tmp_path, "keyed", SCHEMA, ["id"], [], {"bucket": "1"})
    write_run(spark, keyed, _run(1))
    write_run(spark, keyed, _run(2))
    with pytest.raises(ValueError, match="primary-key table: the difference .* by key"):
        change_range(keyed.open(), {"changes_from": "1", "changes_to": "2",
                                    "changes_mode": "diff"})

    # times: (start, end] between the retained snapshots at or before each time
    t1, t2 = (s.time_millis for s in list_snapshots(keyed.open()))
    select = time_travel.incremental_between_timestamps
    assert select(keyed.open(), t1, t2) == (1, 2)
    assert select(keyed.open(), t1 - 1, t2 + 1) == (0, 2)     # before the first: it counts
    assert select(keyed.open(), t2 + 1, t2 + 5) == (2, 2)     # after the latest: nothing
    assert select(keyed.open(), t1 - 9, t1 - 1) == (2, 2)     # before the earliest: nothing
    assert select(keyed.open(), t1, t1) == (2, 2)
    with pytest.raises(ValueError, match="Ending timestamp .* should be >= starting"):
        select(keyed.open(), t2, t1)
    assert select(make_table(tmp_path, "empty", SCHEMA, ["id"], [], {"bucket": "1"}).open(),
                  0, 10) == (0, 0)
