"""Paimon Java 1.0's HiveCatalog (org.apache.paimon.hive.HiveCatalog, in the bundled jar, with
Hive 2.3's metastore client from pyspark's jars: tests/hive_metastore_server.py
``java_hive_client_classpath``) and ours on one Hive Metastore (the test process's): Java's
entry and ours for the same table are the same, Java lists and reads the tables we created and
wrote, we list, read and write a table Java created, and Java commits under the metastore lock
our commits also take."""
import itertools

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from dbt.adapters.paimon.write import write_primary_key_run
from tests.hive_metastore_server import java_hive_client_classpath
from tests.integration.write.write_helpers import read_back, sorted_rows
from tests.interop.conftest import catalog_spec

_databases = itertools.count(1)
# parameters the metastore itself adds or stamps (statistics, times)
METASTORE_STAMPS = {"transient_lastDdlTime", "numFiles", "totalSize", "COLUMN_STATS_ACCURATE",
                    "numRows", "rawDataSize"}


@pytest.fixture
def hive_java(tmp_path, hive_metastore, paimon_java):
    """(warehouse, our catalog options, Paimon Java with Hive's client, Java's catalog spec,
    a database name of this test, the metastore)."""
    before, after = java_hive_client_classpath()
    java = paimon_java.with_classpath(*after, before_jar=before)
    warehouse = str(tmp_path / "warehouse")
    options = parse_catalog(hive_metastore.catalog(warehouse, **{"lock.enabled": "true"})
                            ).pypaimon_options()
    return (warehouse, options, java, catalog_spec(options, warehouse),
            f"interop{next(_databases)}", hive_metastore)


def entry(metastore, database, table):
    connection = metastore.client()
    try:
        return connection.client.get_table(database, table)
    finally:
        connection.close()


def comparable(hms_table):
    """What an entry says about the table, without names, times and metastore statistics."""
    sd = hms_table.sd
    return {"tableType": hms_table.tableType, "owner": hms_table.owner,
            "retention": hms_table.retention, "partitionKeys": hms_table.partitionKeys,
            "parameters": {k: v for k, v in hms_table.parameters.items()
                           if k not in METASTORE_STAMPS},
            "cols": [(c.name, c.type, c.comment) for c in sd.cols],
            "inputFormat": sd.inputFormat, "outputFormat": sd.outputFormat,
            "serde": (sd.serdeInfo.serializationLib, sd.serdeInfo.parameters),
            "folder": sd.location.rsplit("/", 1)[0]}


def test_our_entry_is_the_one_paimon_java_writes(hive_java):
    warehouse, options, java, spec, db, metastore = hive_java
    fields = [("id", "BIGINT NOT NULL"), ("name", "STRING"), ("amount", "DECIMAL(10, 2)"),
              ("code", "VARCHAR(20)"), ("at", "TIMESTAMP(3)"), ("day", "DATE"),
              ("region", "STRING")]
    table_options = {"bucket": "2", "hive.team": "sales"}
    java.create(spec, f"{db}.by_java", fields, primary_keys=["id", "region"],
                partition_keys=["region"], options=table_options)
    wh.create_table(warehouse, db, "by_us", fields, primary_keys=["id", "region"],
                    partition_keys=["region"], options=table_options, catalog_options=options)
    java_entry, our_entry = entry(metastore, db, "by_java"), entry(metastore, db, "by_us")
    assert comparable(our_entry) == comparable(java_entry)
    assert our_entry.sd.location.endswith(f"{db}.db/by_us")
    assert java_entry.parameters["table_type"] == "PAIMON"  # the comparison compared something


def test_java_lists_and_reads_our_tables(spark, hive_java):
    warehouse, options, java, spec, db, _ = hive_java
    wh.create_table(warehouse, db, "ours", pa.schema([pa.field("id", pa.int64(), False),
                                                      ("name", pa.string())]),
                    primary_keys=["id"], options={"bucket": "2"}, catalog_options=options)
    location = TableRef(warehouse, db, "ours", options)
    write_primary_key_run(spark, spark.createDataFrame([(1, "a"), (2, "b")],
                                                       "id long, name string"),
                          location, write_path="in_process")
    write_primary_key_run(spark, spark.createDataFrame([(2, "B")], "id long, name string"),
                          location, write_path="distributed")
    rows = java.read(spec, f"{db}.ours")
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": 1, "name": "a"}, {"id": 2, "name": "B"}]


def test_we_list_read_and_write_a_table_java_created(spark, hive_java, tmp_path):
    warehouse, options, java, spec, db, _ = hive_java
    java.create(spec, f"{db}.theirs", [("id", "BIGINT NOT NULL"), ("name", "STRING")],
                primary_keys=["id"], options={"bucket": "1"})
    # Java commits with lock.enabled: it takes and releases the metastore's lock
    java.write(spec, f"{db}.theirs", [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}],
               tmp_path / "rows.jsonl")
    assert listing.list_tables(warehouse, db, options) == ["theirs"]
    location = TableRef(warehouse, db, "theirs", options)
    assert sorted_rows(read_back(location), ["id"]) == [{"id": 1, "name": "x"},
                                                        {"id": 2, "name": "y"}]
    write_primary_key_run(spark, spark.createDataFrame([(2, "Y"), (3, "z")],
                                                       "id long, name string"),
                          location, write_path="in_process")
    java.write(spec, f"{db}.theirs", [{"id": 4, "name": "w"}], tmp_path / "more.jsonl")
    rows = java.read(spec, f"{db}.theirs")
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 1, "name": "x"}, {"id": 2, "name": "Y"}, {"id": 3, "name": "z"},
        {"id": 4, "name": "w"}]
