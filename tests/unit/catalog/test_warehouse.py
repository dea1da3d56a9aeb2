"""catalog/warehouse.py on the filesystem catalog: tables created, opened, renamed and dropped
through it, with errors that name what is missing."""
import pyarrow as pa
import pytest

from dbt.adapters.paimon.catalog.warehouse import (create_table, drop_table, list_databases,
                                                   list_tables, open_table, rename_table,
                                                   table_exists)
from dbt.adapters.paimon.format.errors import TableAlreadyExistsError, TableNotFoundError

ORDERS = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("name", pa.string()),
                    ("amount", pa.float64())])


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


def test_lifecycle(warehouse):
    assert list_databases(warehouse) == []
    assert list_tables(warehouse, "db") == []
    table = create_table(warehouse, "db", "t", ORDERS, primary_keys=["dt", "id"],
                         partition_keys=["dt"], options={"bucket": 4, "merge-engine":
                                                         "partial-update"})
    assert table.primary_keys == ["dt", "id"]
    assert table.options.options.to_map()["bucket"] == "4"  # values become strings
    assert list_databases(warehouse) == ["db"]
    assert list_tables(warehouse, "db") == ["t"]
    assert table_exists(warehouse, "db", "t")
    assert open_table(warehouse, "db", "t").partition_keys == ["dt"]

    rename_table(warehouse, "db", "t", "t2")
    assert not table_exists(warehouse, "db", "t") and table_exists(warehouse, "db", "t2")
    drop_table(warehouse, "db", "t2")
    assert list_tables(warehouse, "db") == []
    drop_table(warehouse, "db", "t2")  # missing_ok by default
    with pytest.raises(TableNotFoundError):
        drop_table(warehouse, "db", "t2", missing_ok=False)


def test_clear_errors(warehouse):
    with pytest.raises(TableNotFoundError, match="db.nope does not exist"):
        open_table(warehouse, "db", "nope")
    create_table(warehouse, "db", "t", ORDERS)
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        create_table(warehouse, "db", "t", ORDERS)
    create_table(warehouse, "db", "t", ORDERS, exist_ok=True)
    create_table(warehouse, "db", "u", ORDERS)
    with pytest.raises(TableAlreadyExistsError):
        rename_table(warehouse, "db", "t", "u")
    with pytest.raises(TableNotFoundError):
        rename_table(warehouse, "db", "missing", "v")
    with pytest.raises(ValueError, match="not in the schema"):
        create_table(warehouse, "db", "w", ORDERS, primary_keys=["nope"])


def test_schema_from_paimon_type_list(warehouse):
    table = create_table(warehouse, "db", "typed",
                         [("k", "INT"), ("d", "DECIMAL(20, 4)"), ("ts", "TIMESTAMP(6)"),
                          ("s", "STRING")], primary_keys=["k"], options={"bucket": "1"})
    types = {f.name: str(f.type) for f in table.fields}
    assert types["d"].startswith("DECIMAL(20, 4)") and types["ts"].startswith("TIMESTAMP(6)")
    assert types["k"].endswith("NOT NULL")  # primary key columns are NOT NULL
    with pytest.raises(ValueError, match="Arrow schema"):
        create_table(warehouse, "db", "nested", [("a", "ARRAY<INT>")])


def test_uri_warehouse(tmp_path):
    uri = "file://" + str(tmp_path / "wh")
    create_table(uri, "db", "t", pa.schema([("a", pa.int32())]))
    assert list_tables(uri, "db") == ["t"]
