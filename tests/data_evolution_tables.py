"""Data-evolution tables for the tests: a five-column table pypaimon 2.1 creates
and writes (``create``, ``write``, ``wide``), and its rows as pypaimon reads them and as
dbt-paimon's data-evolution reader does (format/data_evolution.py)."""
import pyarrow as pa
import pytest
from pypaimon import CatalogFactory, Schema

from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.format.data_evolution import iter_data_evolution_split

EVOLUTION = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
WIDE = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.int32()),
                  ("note", pa.string()), ("dt", pa.string())])


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse):
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    return catalog


def wide(ids, dt="a"):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "score": pa.array(ids, pa.int32()), "note": [f"note{i}" for i in ids],
                     "dt": [dt] * len(ids)}, schema=WIDE)


def create(catalog, name, partition_keys=(), primary_keys=(), **options):
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        WIDE, partition_keys=list(partition_keys), primary_keys=list(primary_keys),
        options=options), False)
    return catalog.get_table(f"db.{name}")


def write(table, data):
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(data)
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()


def pypaimon_rows(catalog, name, with_row_id=False):
    table = catalog.get_table(f"db.{name}")
    builder = table.new_read_builder()
    if with_row_id:
        builder = builder.with_projection(["id", "_ROW_ID"])
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted((tuple(r.values()) for r in data.to_pylist()), key=repr)


def our_rows(warehouse, name):
    table = open_table(warehouse, "db", name)
    rows = []
    for split in splits_mod.plan_splits(table):
        for batch in iter_data_evolution_split(table, split, list(table.field_names)):
            rows.extend(tuple(r.values()) for r in batch.to_pylist())
    return sorted(rows, key=repr)
