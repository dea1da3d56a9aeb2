"""catalog/listing.py reads a local warehouse's folders as pypaimon's filesystem catalog does:
the same databases, tables and latest schema ids, without importing pypaimon."""

import os
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
