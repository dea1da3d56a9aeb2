"""expire_snapshots and remove_orphan_files: never a file a retained snapshot or tag needs."""
import os
import time

import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops import compact_table, expire_snapshots, remove_orphan_files
from dbt.adapters.paimon.ops.expire import parse_duration_ms
from ops_helpers import files_on_disk, make_table, read_back, sorted_rows, write_run

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _run(seed, n=50):
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(rng.integers(0, 60, n), pa.int64()),
                     "v": pa.array(rng.integers(0, 100, n), pa.int64())})


def _history(spark, tmp_path, name="t"):
    location = make_table(tmp_path, name, SCHEMA, ["id"], [], {"bucket": "1"})
    for seed in range(4):
        write_run(spark, location, _run(seed))
    compact_table(spark, location, full=True)          # snapshot 5: old files replaced
    write_run(spark, location, _run(10))               # snapshot 6
    return location


def test_durations():
    assert parse_duration_ms("7d") == 7 * 86_400_000
    assert parse_duration_ms("12h") == 12 * 3_600_000
    assert parse_duration_ms("1 h") == 3_600_000 and parse_duration_ms("30 min") == 1_800_000
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_ms("7 parsecs")


def test_expire_keeps_everything_retained_snapshots_read(spark, tmp_path):
    location = _history(spark, tmp_path)
    reads = {s.id: read_back(location, s.id) for s in list_snapshots(location.open())}
    # defaults: num-retained.min 10, time-retained 1 h -> nothing expires
    assert expire_snapshots(location).expired_snapshots == []
    before = set(files_on_disk(location))
    result = expire_snapshots(location, retain_last=2, older_than="0 ms")
    assert result.expired_snapshots == [1, 2, 3, 4]
    assert [s.id for s in list_snapshots(location.open())] == [5, 6]
    for sid in (5, 6):
        assert sorted_rows(read_back(location, sid), ["id"]) == sorted_rows(reads[sid], ["id"])
    gone = before - set(files_on_disk(location))
    # the 4 level-0 files compacted away in snapshot 5, and metadata of snapshots 1-4
    assert sum(1 for f in gone if f.startswith("bucket-0/")) == 4
    assert {f for f in gone if f.startswith("snapshot/")} == {f"snapshot/snapshot-{i}"
                                                               for i in range(1, 5)}
    with open(os.path.join(location.warehouse, "db.db", "t", "snapshot", "EARLIEST")) as f:
        assert f.read().strip() == "5"


def test_expire_honours_time_and_table_options(spark, tmp_path):
    location = _history(spark, tmp_path)
    # younger than 7 days: nothing expires even with retain_last 1
    assert expire_snapshots(location, retain_last=1, older_than="7d").expired_snapshots == []
    # snapshot.num-retained.max = 3 expires regardless of age
    from pypaimon.schema.schema_change import SchemaChange
    from dbt.adapters.paimon.catalog import warehouse as wh
    wh.open_catalog(location.warehouse).alter_table(
        "db.t", [SchemaChange.set_option("snapshot.num-retained.max", "3"),
                 SchemaChange.set_option("snapshot.num-retained.min", "1")])
    result = expire_snapshots(location)
    assert result.expired_snapshots == [1, 2, 3]
    assert sorted_rows(read_back(location), ["id"]) == sorted_rows(read_back(location, 6), ["id"])


def test_tags_protect_their_files(spark, tmp_path):
    location = _history(spark, tmp_path)
    table = location.open()
    tagged = read_back(location, 2)
    from pypaimon.tag.tag_manager import TagManager
    TagManager(table.file_io, table.table_path).create_tag(
        table.snapshot_manager().get_snapshot_by_id(2), "keep")
    result = expire_snapshots(location, retain_last=1, older_than="0 ms")
    assert result.expired_snapshots == [1, 2, 3, 4, 5]
    assert result.kept_by_tags == ["keep"]
    # the tag still reads: its files survived
    from dbt.adapters.paimon.format.kv_files import read_split_records  # noqa: F401
    tag = TagManager(table.file_io, table.table_path).get("keep")
    from dbt.adapters.paimon.ops.expire import References
    for path in References(location.open()).files(tag):
        assert os.path.exists(path.replace("file://", "")), path
    assert tagged.num_rows > 0


def test_remove_orphan_files(spark, tmp_path):
    location = _history(spark, tmp_path)
    root = os.path.join(location.warehouse, "db.db", "t")
    stray = os.path.join(root, "bucket-0", "data-stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"x")
    before = read_back(location)
    # too young for the default margin (1 day)
    assert remove_orphan_files(location).deleted == []
    old = time.time() - 3 * 86400
    os.utime(stray, (old, old))
    dry = remove_orphan_files(location, dry_run=True)
    assert dry.deleted == ["bucket-0/data-stray.parquet"] and os.path.exists(stray)
    result = remove_orphan_files(location, older_than="1d")
    assert result.deleted == ["bucket-0/data-stray.parquet"] and not os.path.exists(stray)
    # every snapshot still reads: nothing referenced was touched (all files are young)
    for s in list_snapshots(location.open()):
        read_back(location, s.id)
    assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
    # files compacted away but still in snapshots 1-4 are referenced: kept even when old
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
    assert remove_orphan_files(location).deleted == []
    # a snapshot's temporary file left by a process killed before its rename is debris
    leftover = os.path.join(root, "snapshot", ".snapshot-9.0f1e.tmp")
    with open(leftover, "w") as f:
        f.write("{}")
    os.utime(leftover, (old, old))
    assert remove_orphan_files(location).deleted == ["snapshot/.snapshot-9.0f1e.tmp"]
    assert sorted_rows(read_back(location), ["id"]) == sorted_rows(before, ["id"])
