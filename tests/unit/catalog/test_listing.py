"""catalog/listing.py reads a local warehouse's folders as pypaimon's filesystem catalog does:
the same databases, tables and latest schema ids, without importing pypaimon."""

import os
import shutil
import subprocess
import sys

import pytest
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh

COLUMNS = [("id", "INT"), ("v", "STRING")]


@pytest.fixture
def layout(tmp_path):
    """Two databases, tables with one and with three schemas, and folders pypaimon's listing
    skips or keeps (a dot folder, a file named like a database, a database without tables)."""
    root = str(tmp_path / "wh")
    wh.create_table(root, "sales", "orders", COLUMNS, primary_keys=["id"])
    wh.create_table(root, "sales", "items", COLUMNS)
    wh.create_table(root, "ops", "log", COLUMNS)
    catalog = wh.open_catalog(root)
    for name in ("a", "b"):
        catalog.alter_table("sales.items", [SchemaChange.add_column(name, wh.DataTypeParser
                                                                     .parse_data_type("INT"))])
    wh.create_database(root, "empty")
    os.makedirs(os.path.join(root, "sales.db", ".staging"))
    os.makedirs(os.path.join(root, "sales.db", "no_schema_yet"))
    open(os.path.join(root, "notes.db"), "w").close()
    return root


def test_the_listing_is_pypaimons(layout):
    assert listing.list_databases(layout) == wh.list_databases(layout) == \
        ["empty", "ops", "sales"]
    for database in ("sales", "ops", "empty", "missing"):
        assert listing.list_tables(layout, database) == wh.list_tables(layout, database)
    assert listing.list_tables(layout, "sales") == ["items", "no_schema_yet", "orders"]
    for database, table in (("sales", "orders"), ("sales", "items"), ("ops", "log")):
        assert listing.latest_schema_id(layout, database, table) == \
            wh.open_table(layout, database, table).table_schema.id
    assert listing.latest_schema_id(layout, "sales", "items") == 2
    # no schema: pypaimon has no such table
    assert listing.latest_schema_id(layout, "sales", "no_schema_yet") is None
    assert not wh.table_exists(layout, "sales", "no_schema_yet")
    assert listing.latest_schema_id(layout, "sales", "missing") is None


def test_a_file_uri_and_a_missing_warehouse(layout, tmp_path):
    assert listing.list_databases("file://" + layout) == ["empty", "ops", "sales"]
    assert listing.latest_schema_id("file://" + layout, "sales", "orders") == 0
    assert listing.list_databases(str(tmp_path / "nothing")) == []
    assert listing.local_folder("s3://bucket/wh") is None


def test_names_that_leave_the_warehouse_are_refused(layout):
    with pytest.raises(ValueError, match="not allowed"):
        listing.latest_schema_id(layout, "sales", "../ops.db/log")


def test_listing_does_not_import_pypaimons_catalog(layout):
    code = (f"import sys; from dbt.adapters.paimon.catalog import listing; "
            f"print(listing.list_tables({layout!r}, 'sales'), "
            f"listing.latest_schema_id({layout!r}, 'sales', 'items')); "
            f"print(sorted(m for m in ('pypaimon.catalog.filesystem_catalog', 'polars', "
            f"'pyarrow.dataset') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["['items', 'no_schema_yet', 'orders'] 2", "[]"]


def _snapshot_folder(root, table="t", ids=(1,)):
    folder = root / "db.db" / table / "snapshot"
    folder.mkdir(parents=True, exist_ok=True)
    for snapshot_id in ids:
        (folder / f"snapshot-{snapshot_id}").write_text("{}")
    (folder / "LATEST").write_text(str(max(ids)))
    return folder


def _settled(folder, seconds_ago=10):
    """The folder's time set as if its last change were ``seconds_ago`` in the past."""
    then = os.stat(folder).st_mtime_ns - seconds_ago * 1_000_000_000
    os.utime(folder, ns=(then, then))


def test_a_settled_snapshot_folder_keeps_its_stamp_without_reading_it(tmp_path, monkeypatch):
    folder = _snapshot_folder(tmp_path, ids=(1, 2))
    _settled(folder)
    first = listing.latest_snapshot_stamp(str(tmp_path), "db", "t")
    assert first.startswith("2.")
    reads = []
    real = listing._latest_id_in
    monkeypatch.setattr(listing, "_latest_id_in",
                        lambda *args: reads.append(args) or real(*args))
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t") == first
    assert reads == []  # the folder's time unchanged: the stamp read before

    # a commit (a new entry in the folder) is seen at once, settled or not
    (folder / "snapshot-3").write_text("{}")
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t").startswith("3.")
    assert len(reads) == 1


def test_a_folder_changed_within_the_settling_time_is_read_every_time(tmp_path, monkeypatch):
    """Two changes within one tick of the file clock leave the folder one time: a folder whose
    time is that recent is never trusted, so a second commit in the same tick is not missed."""
    folder = _snapshot_folder(tmp_path, ids=(1,))
    stamp = listing.latest_snapshot_stamp(str(tmp_path), "db", "t")
    assert stamp.startswith("1.")
    changed = os.stat(folder).st_mtime_ns
    (folder / "snapshot-2").write_text("{}")
    os.utime(folder, ns=(changed, changed))  # the second commit within the same tick
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t").startswith("2.")


def test_a_rollback_that_reuses_an_id_gives_a_new_stamp(tmp_path):
    folder = _snapshot_folder(tmp_path, ids=(1, 2))
    snapshot = folder / "snapshot-2"
    os.utime(snapshot, ns=(1_000_000_000, 1_000_000_000))
    _settled(folder)
    before = listing.latest_snapshot_stamp(str(tmp_path), "db", "t")
    assert before == "2.1000000000"
    snapshot.unlink()  # rolled back to 1, then a new commit 2
    (folder / "snapshot-2").write_text("{}")
    after = listing.latest_snapshot_stamp(str(tmp_path), "db", "t")
    assert after.startswith("2.") and after != before


def test_a_table_without_snapshots_and_a_dropped_table(tmp_path):
    (tmp_path / "db.db" / "t" / "schema").mkdir(parents=True)
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t") == ""
    folder = _snapshot_folder(tmp_path, ids=(4,))
    _settled(folder)
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t").startswith("4.")
    shutil.rmtree(tmp_path / "db.db" / "t")
    assert listing.latest_snapshot_stamp(str(tmp_path), "db", "t") == ""
