"""The Python data source skips data files by their statistics (format/file_stats.py): a filter
on any column of an append table, on the keys of a primary-key table. Skipping only leaves out
files that cannot hold a matching row: every read returns the rows of the unfiltered read that
match, whatever the filter."""
import datetime as dt

import pyarrow as pa
import pytest
from pyspark.sql.datasource import (EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNotNull,
                                    IsNull, LessThan, StringStartsWith)
from pypaimon.schema.data_types import DataTypeParser
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.datasource.source import (PaimonPushdownReader, TableRef,
                                                   commit_append_files, write_append_files)
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.write import write_primary_key_run

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                    ("day", pa.date32()), ("score", pa.float64())])


def rows_of(run, count=100):
    ids = range(run * count, (run + 1) * count)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": [f"n{run}-{i % 7}" for i in ids],
                     "day": [dt.date(2024, 1, 1 + run)] * count,
                     "score": [float(i) for i in ids]}, schema=SCHEMA)


def planned_files(location, filters):
    """The data files the reader Spark plans for ``filters`` would open."""
    reader = PaimonPushdownReader(location, schema=None, snapshot_id=None)
    remaining = list(reader.pushFilters(filters))
    assert len(remaining) == len(filters)  # Spark still applies every filter
    return sum(len(p.split.files) for p in reader.partitions() if p.split is not None)


def read(spark, location, where):
    df = (spark.read.format("paimon").option("warehouse", location.warehouse)
          .option("table", location.name).option("filter_pushdown", "true").load())
    return sorted(map(tuple, df.where(where).collect()))


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path)


# (Spark's pushed filter, the same as SQL, files of the 3 runs that can match)
APPEND_CASES = [
    ([GreaterThan(("id",), 250)], "id > 250", 1),
    ([GreaterThanOrEqual(("id",), 100), LessThan(("id",), 200)], "id >= 100 and id < 200", 1),
    ([EqualTo(("name",), "n1-3")], "name = 'n1-3'", 1),
    ([StringStartsWith(("name",), "n2")], "name like 'n2%'", 1),
    ([In(("id",), [5, 205])], "id in (5, 205)", 2),
    ([EqualTo(("day",), dt.date(2024, 1, 2))], "day = date'2024-01-02'", 1),
    ([LessThan(("score",), 10.0)], "score < 10.0", 3),  # floating point: never skipped
    ([IsNull(("name",))], "name is null", 0),
    ([IsNotNull(("name",))], "name is not null", 3),
    ([EqualTo(("id",), 1000)], "id = 1000", 0),
]


@pytest.mark.parametrize("filters, where, files", APPEND_CASES,
                         ids=[case[1] for case in APPEND_CASES])
def test_an_append_table_skips_files_by_any_columns_statistics(spark, warehouse, filters, where,
                                                                files):
    table = wh.create_table(warehouse, "db", "log", SCHEMA)
    for run in range(3):
        commit_append_files(table, write_append_files(table, [rows_of(run)]))
    location = TableRef(warehouse, "db", "log", {})
    assert planned_files(location, []) == 3
    assert planned_files(location, filters) == files
    everything = sorted(map(tuple, spark.read.format("paimon").option("warehouse", warehouse)
                            .option("table", "db.log").load().where(where).collect()))
    assert read(spark, location, where) == everything


def test_a_column_older_files_lack_is_null_in_them(spark, warehouse):
    """Files written before a column was added hold NULLs in it: an IS NULL filter reads them,
    and skips the later files that have no NULL there."""
    table = wh.create_table(warehouse, "db", "grown", SCHEMA)
    commit_append_files(table, write_append_files(table, [rows_of(0)]))
    wh.open_catalog(warehouse).alter_table("db.grown", [SchemaChange.add_column(
        "extra", DataTypeParser.parse_data_type("BIGINT"))])
    table = wh.open_table(warehouse, "db", "grown")
    grown = rows_of(1).append_column("extra", pa.array(range(100), pa.int64()))
    commit_append_files(table, write_append_files(table, [grown]))
    location = TableRef(warehouse, "db", "grown", {})
    assert planned_files(location, [IsNull(("extra",))]) == 1
    # the older file has no statistics of `extra` at all: kept (it cannot be known to hold only
    # NULLs from its statistics), never wrongly skipped
    assert planned_files(location, [EqualTo(("extra",), 5)]) == 2
    assert len(read(spark, location, "extra is null")) == 100
    assert read(spark, location, "extra = 5")[0][0] == 105


def test_a_primary_key_table_skips_files_by_key_statistics_only(spark, warehouse):
    """A key none of whose records is read cannot match a filter on keys; a value filter skips
    nothing, as a skipped file could hold the update that supersedes a matching record."""
    wh.create_table(warehouse, "db", "users", SCHEMA, primary_keys=["id"],
                    options={"bucket": "2"})
    location = TableRef(warehouse, "db", "users", {})
    for run in range(3):  # runs 0-99, 100-199, 200-299, then an update of 150-249
        write_primary_key_run(spark, spark.createDataFrame(rows_of(run).to_pandas()), location,
                              model_name="t")
    updates = rows_of(1).set_column(1, "name", pa.array(["updated"] * 100))
    updates = updates.set_column(0, "id", pa.array(range(150, 250), pa.int64()))
    write_primary_key_run(spark, spark.createDataFrame(updates.to_pandas()), location,
                          model_name="t")
    every_file = planned_files(location, [])
    assert planned_files(location, [LessThan(("id",), 100)]) < every_file
    assert planned_files(location, [GreaterThan(("id",), 1000)]) == 0
    assert planned_files(location, [EqualTo(("name",), "n0-1")]) == every_file
    full = spark.read.format("paimon").option("warehouse", warehouse) \
        .option("table", "db.users").load()
    for where in ["id < 100", "id between 140 and 160", "id in (1, 155, 260)", "id = 249",
                  "name = 'updated' and id > 240", "name like 'n1%'"]:
        assert read(spark, location, where) == \
            sorted(map(tuple, full.where(where).collect())), where
    assert {r[1] for r in read(spark, location, "id between 140 and 160")} == \
        {"updated"} | {f"n1-{i % 7}" for i in range(140, 150)}
