"""Tags and rollback shared with Apache Paimon 1.0 Java: Java reads our tags, we read Java's,
and a rollback made by either leaves the same table (snapshots, tags, rows) that the other
reads, also after the next commit reuses the removed snapshot ids."""
from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableLocation
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
    java_location = TableLocation(str(java_root / "warehouse"), "db", "t", {})

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
    ours_branch = TableLocation(wh, "db", branch_table_name("t", "ours"), {})
    write_run(spark, ours_branch, _run(7))
    assert _sorted(paimon_java.read(wh, "db.t$branch_ours")) == _sorted(ours(ours_branch))
    # Java's branch from the same tag, written by Java: we read it
    paimon_java.create_branch(wh, name, "javas", "two")
    paimon_java.write(wh, "db.t$branch_javas", [{"id": 1, "v": -1}, {"id": 99, "v": -99}],
                      tmp_path / "rows.jsonl")
    javas = TableLocation(wh, "db", branch_table_name("t", "javas"), {})
    assert [s.id for s in list_snapshots(javas.open())] == [2, 3]
    assert _sorted(ours(javas)) == _sorted(paimon_java.read(wh, "db.t$branch_javas"))
    # main untouched by either
    assert _sorted(ours(location)) == _sorted(paimon_java.read(wh, name, 4))
