"""A warehouse whose tables are listed by a Hive Metastore (catalog/hive_catalog.py), on a real
Hive Metastore 2.3 server (tests/hive_metastore_server.py, one per test process; metastore
database names are global, so each test takes its own): tables are created, written, listed,
altered, renamed and dropped through the metastore with the entries Paimon's HiveCatalog
writes; a table registered by hand as Paimon Java registers it is listed and read; a folder the
metastore does not list is not a table; commits take the metastore's table lock
(HiveCatalogLock) when lock.enabled; an unreachable metastore is named."""
import itertools
import os
import socket

import pyarrow as pa
import pytest

from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.errors import (CatalogUnreachableError, PaimonFormatError,
                                               TableNotFoundError)
from dbt.adapters.paimon.write import write_primary_key_run
from tests.integration.write.write_helpers import read_back, sorted_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
_databases = itertools.count(1)
# Paimon's HiveCatalog.java (release 1.0), spelled out here rather than imported from the code
# under test
PAIMON_INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
PAIMON_OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
PAIMON_SERDE = "org.apache.paimon.hive.PaimonSerDe"
PAIMON_STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"


class Hive:
    """One test's view of the metastore: its warehouse, catalog options and database name."""

    def __init__(self, server, warehouse, database):
        self.server, self.warehouse, self.database = server, warehouse, database

    def options(self, **extra):
        return parse_catalog(self.server.catalog(self.warehouse, **extra)).pypaimon_options()

    def call(self, method, *args):
        """A metastore call on a connection of its own."""
        connection = self.server.client()
        try:
            return getattr(connection.client, method)(*args)
        finally:
            connection.close()

    def entry(self, table):
        return self.call("get_table", self.database, table)


@pytest.fixture
def hive(hive_metastore, tmp_path):
    return Hive(hive_metastore, str(tmp_path / "warehouse"), f"db{next(_databases)}")


def rows(spark, *pairs):
    return spark.createDataFrame(list(pairs), "id long, name string")


def test_a_table_is_registered_as_paimons_hive_catalog_registers_it(spark, hive):
    options = hive.options()
    db = hive.database
    wh.create_table(hive.warehouse, db, "orders", SCHEMA, primary_keys=["id"],
                    options={"bucket": "2", "hive.owner_team": "sales"}, comment="all orders",
                    catalog_options=options)
    database = hive.call("get_database", db)
    assert database.locationUri == f"file:{hive.warehouse}/{db}.db"

    entry = hive.entry("orders")
    assert entry.tableType == "MANAGED_TABLE"
    assert entry.sd.inputFormat == PAIMON_INPUT_FORMAT
    assert entry.sd.outputFormat == PAIMON_OUTPUT_FORMAT
    assert entry.sd.serdeInfo.serializationLib == PAIMON_SERDE
    assert entry.sd.location == f"file:{hive.warehouse}/{db}.db/orders"
    assert [(c.name, c.type) for c in entry.sd.cols] == [("id", "bigint"), ("name", "string")]
    assert entry.partitionKeys == []
    params = entry.parameters
    assert params["table_type"] == "PAIMON"
    assert params["storage_handler"] == PAIMON_STORAGE_HANDLER
    assert params["owner_team"] == "sales"  # hive.* options, prefix removed
    assert params["comment"] == "all orders"
    assert "bucket" not in params and "EXTERNAL" not in params
    assert os.path.isfile(f"{hive.warehouse}/{db}.db/orders/schema/schema-0")

    assert db in listing.list_databases(hive.warehouse, options)
    assert listing.list_tables(hive.warehouse, db, options) == ["orders"]
    assert listing.latest_schema_id(hive.warehouse, db, "orders", options) == 0
    location = TableRef(hive.warehouse, db, "orders", options)
    write_primary_key_run(spark, rows(spark, (1, "a"), (2, "b")), location,
                          write_path="in_process")
    write_primary_key_run(spark, rows(spark, (2, "B"), (3, "c")), location,
                          write_path="distributed")
    assert sorted_rows(read_back(location), ["id"]) == [
        {"id": 1, "name": "a"}, {"id": 2, "name": "B"}, {"id": 3, "name": "c"}]


def test_column_types_partitions_and_external_tables(hive):
    types = pa.schema([
        pa.field("k", pa.int32(), nullable=False), ("small", pa.int16()), ("tiny", pa.int8()),
        ("f", pa.float32()), ("d", pa.float64()), ("flag", pa.bool_()),
        ("amount", pa.decimal128(12, 3)), ("day", pa.date32()), ("ts", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")), ("raw", pa.binary()),
        ("tags", pa.list_(pa.string())), ("attrs", pa.map_(pa.string(), pa.int64())),
        ("address", pa.struct([("city", pa.string()), ("zip", pa.int32())])),
        ("region", pa.string())])
    wh.create_table(hive.warehouse, hive.database, "typed", types, primary_keys=["k", "region"],
                    partition_keys=["region"], catalog_options=hive.options())
    entry = hive.entry("typed")
    assert [(c.name, c.type) for c in entry.sd.cols] == [
        ("k", "int"), ("small", "smallint"), ("tiny", "tinyint"), ("f", "float"),
        ("d", "double"), ("flag", "boolean"), ("amount", "decimal(12,3)"), ("day", "date"),
        ("ts", "timestamp"), ("ltz", "timestamp"), ("raw", "binary"),
        ("tags", "array<string>"), ("attrs", "map<string,bigint>"),
        ("address", "struct<city:string,zip:int>"), ("region", "string")]
    # metastore.partitioned-table is off (Paimon's default): the partition key stays a column
    assert entry.partitionKeys == []

    wh.create_table(hive.warehouse, hive.database, "ext", SCHEMA,
                    options={"external": "true"}, catalog_options=hive.options())
    external = hive.entry("ext")
    assert external.tableType == "EXTERNAL_TABLE"
    assert external.parameters["EXTERNAL"] == "TRUE"
    wh.drop_table(hive.warehouse, hive.database, "ext", catalog_options=hive.options())
    # an external table's files stay when its entry goes (dropTableImpl)
    assert os.path.isdir(f"{hive.warehouse}/{hive.database}.db/ext/schema")
    assert listing.list_tables(hive.warehouse, hive.database, hive.options()) == ["typed"]


def register_as_paimon_java(hive, table, location):
    """The entry HiveCatalog.createHiveTable writes, built here from Hive's Thrift types."""
    from hmsclient.genthrift.hive_metastore import ttypes

    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("id", "bigint", None), ttypes.FieldSchema("name", "string", None)],
        location=location, inputFormat=PAIMON_INPUT_FORMAT, outputFormat=PAIMON_OUTPUT_FORMAT,
        serdeInfo=ttypes.SerDeInfo(serializationLib=PAIMON_SERDE, parameters={}))
    hive.call("create_table", ttypes.Table(
        tableName=table, dbName=hive.database, owner="flink", createTime=0, lastAccessTime=0,
        retention=2**31 - 1, sd=sd, partitionKeys=[], tableType="MANAGED_TABLE",
        parameters={"table_type": "PAIMON", "storage_handler": PAIMON_STORAGE_HANDLER}))


EVENTS = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])


def write_events(table, columns) -> None:
    """A commit of (id, name) rows by another writer (pypaimon's own)."""
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    write.write_arrow(pa.table(columns, schema=EVENTS))
    builder.new_commit().commit(write.prepare_commit())
    write.close()


def shop_events_table(hive, columns):
    """The shop's table ``<database>.events`` as another engine leaves it: its database in the
    metastore, its files (one commit of ``columns``) and the entry Paimon Java's HiveCatalog
    writes for it. Returns the pypaimon table."""
    from hmsclient.genthrift.hive_metastore import ttypes

    folder = f"{hive.warehouse}/{hive.database}.db"
    hive.call("create_database", ttypes.Database(name=hive.database,
                                                 locationUri=f"file:{folder}", parameters={}))
    events = wh.create_table(hive.warehouse, hive.database, "events", EVENTS,
                             primary_keys=["id"], options={"bucket": "1"})
    write_events(events, columns)
    register_as_paimon_java(hive, "events", f"file:{folder}/events")
    return events


def test_a_table_paimon_java_registered_is_listed_and_read(spark, hive):
    from hmsclient.genthrift.hive_metastore import ttypes

    db = hive.database
    hive.call("create_database", ttypes.Database(
        name=db, locationUri=f"file:{hive.warehouse}/{db}.db", parameters={}))
    # the table's files, written through the filesystem catalog (no metastore entry yet)
    files_only = TableRef(hive.warehouse, db, "events", {})
    wh.create_table(hive.warehouse, db, "events", SCHEMA, primary_keys=["id"])
    write_primary_key_run(spark, rows(spark, (1, "x"), (2, "y")), files_only,
                          write_path="in_process")
    options = hive.options()
    assert listing.list_tables(hive.warehouse, db, options) == []  # a folder is no table

    register_as_paimon_java(hive, "events", f"file:{hive.warehouse}/{db}.db/events")
    # and a Hive table of another kind in the same database: not a Paimon table
    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("a", "int", None)], location=f"file:{hive.warehouse}/csv",
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=ttypes.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
            parameters={}))
    hive.call("create_table", ttypes.Table(tableName="csv_logs", dbName=db, sd=sd,
                                           partitionKeys=[], parameters={},
                                           tableType="EXTERNAL_TABLE"))

    assert listing.list_tables(hive.warehouse, db, options) == ["events"]
    location = TableRef(hive.warehouse, db, "events", options)
    assert sorted_rows(read_back(location), ["id"]) == [{"id": 1, "name": "x"},
                                                        {"id": 2, "name": "y"}]
    write_primary_key_run(spark, rows(spark, (3, "z")), location, write_path="in_process")
    assert listing.latest_snapshot_id(hive.warehouse, db, "events") == 2
    with pytest.raises(TableNotFoundError):
        wh.open_table(hive.warehouse, db, "csv_logs", options)


def test_a_folder_the_metastore_does_not_list_is_not_written_over(hive):
    options = hive.options()
    db = hive.database
    wh.create_table(hive.warehouse, db, "listed", SCHEMA, catalog_options=options)
    wh.create_table(hive.warehouse, db, "stray", SCHEMA)  # files only, no entry
    assert listing.list_tables(hive.warehouse, db, options) == ["listed"]
    assert not wh.table_exists(hive.warehouse, db, "stray", options)
    with pytest.raises(PaimonFormatError, match="holds a table that the Hive catalog does not "
                                                "list") as error:
        wh.create_table(hive.warehouse, db, "stray", SCHEMA, catalog_options=options)
    assert f"{db}.db/stray" in str(error.value)
    assert listing.list_tables(hive.warehouse, db, options) == ["listed"]


def test_alter_rename_and_drop_go_through_the_metastore(hive):
    from pypaimon.schema.data_types import DataTypeParser
    from pypaimon.schema.schema_change import SchemaChange

    options = hive.options()
    db, warehouse = hive.database, hive.warehouse
    wh.create_table(warehouse, db, "t", SCHEMA, primary_keys=["id"], catalog_options=options)
    wh.open_catalog(warehouse, options).alter_table(
        f"{db}.t", [SchemaChange.add_column("qty", DataTypeParser.parse_data_type("INT")),
                    SchemaChange.set_option("hive.stage", "gold")])
    assert listing.latest_schema_id(warehouse, db, "t", options) == 1
    entry = hive.entry("t")
    assert [c.name for c in entry.sd.cols] == ["id", "name", "qty"]
    assert entry.parameters["stage"] == "gold"

    # a change the entry cannot take (a type Hive cannot name): the new schema file goes again
    with pytest.raises(ValueError, match="no Hive type for the Paimon type 'VARIANT'"):
        wh.open_catalog(warehouse, options).alter_table(
            f"{db}.t", [SchemaChange.add_column("v", DataTypeParser.parse_data_type("VARIANT"))])
    assert listing.latest_schema_id(warehouse, db, "t", options) == 1
    assert [c.name for c in hive.entry("t").sd.cols] == ["id", "name", "qty"]

    wh.rename_table(warehouse, db, "t", "t2", catalog_options=options)
    assert listing.list_tables(warehouse, db, options) == ["t2"]
    assert hive.entry("t2").sd.location == f"file:{warehouse}/{db}.db/t2"
    assert wh.open_table(warehouse, db, "t2", options).field_names == ["id", "name", "qty"]
    assert not os.path.exists(f"{warehouse}/{db}.db/t")

    wh.drop_table(warehouse, db, "t2", catalog_options=options)
    assert listing.list_tables(warehouse, db, options) == []
    assert not os.path.exists(f"{warehouse}/{db}.db/t2")
    assert "t2" not in hive.call("get_all_tables", db)

    wh.create_table(warehouse, db, "t3", SCHEMA, catalog_options=options)
    wh.drop_database(warehouse, db, catalog_options=options)
    assert db not in listing.list_databases(warehouse, options)


def hold_lock(hive, table):
    from hmsclient.genthrift.hive_metastore import ttypes

    component = ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE,
                                     level=ttypes.LockLevel.TABLE, dbname=hive.database,
                                     tablename=table)
    response = hive.call("lock", ttypes.LockRequest(component=[component], user="java",
                                                    hostname="flink-task"))
    assert response.state == ttypes.LockState.ACQUIRED
    return response.lockid


def held_locks(hive):
    from hmsclient.genthrift.hive_metastore import ttypes

    return [(lock.dbname, lock.tablename)
            for lock in hive.call("show_locks", ttypes.ShowLocksRequest()).locks or []
            if lock.dbname == hive.database]


def test_commits_take_the_metastore_lock(spark, hive):
    from hmsclient.genthrift.hive_metastore import ttypes

    options = hive.options(**{"lock.enabled": "true", "lock-acquire-timeout": "1 s",
                              "lock-check-max-sleep": "100 ms"})
    db = hive.database
    wh.create_table(hive.warehouse, db, "t", SCHEMA, primary_keys=["id"],
                    catalog_options=options)
    assert held_locks(hive) == []  # creating took and released the table's lock
    location = TableRef(hive.warehouse, db, "t", options)
    write_primary_key_run(spark, rows(spark, (1, "a")), location, write_path="in_process")
    assert held_locks(hive) == []

    java_lock = hold_lock(hive, "t")  # another writer (a Flink job) is committing
    with pytest.raises(Exception, match=f"could not take the Hive Metastore lock of table "
                                        f"{db}.t within 1000 ms"):
        write_primary_key_run(spark, rows(spark, (2, "b")), location, write_path="in_process")
    assert listing.latest_snapshot_id(hive.warehouse, db, "t") == 1  # nothing committed
    assert held_locks(hive) == [(db, "t")]  # ours, left WAITING, was given back

    hive.call("unlock", ttypes.UnlockRequest(lockid=java_lock))
    write_primary_key_run(spark, rows(spark, (2, "b")), location, write_path="in_process")
    assert listing.latest_snapshot_id(hive.warehouse, db, "t") == 2
    assert held_locks(hive) == []


def test_names_and_places_dbt_paimon_cannot_keep_are_refused_before_writing(hive):
    from hmsclient.genthrift.hive_metastore import ttypes

    options = hive.options()
    db = hive.database
    with pytest.raises(PaimonFormatError, match="upper-case letters"):
        wh.create_table(hive.warehouse, db, "Orders", SCHEMA, catalog_options=options)
    with pytest.raises(PaimonFormatError, match="metastore.partitioned-table"):
        wh.create_table(hive.warehouse, db, "p", SCHEMA, partition_keys=["name"],
                        options={"metastore.partitioned-table": "true"},
                        catalog_options=options)
    assert not os.path.exists(f"{hive.warehouse}/{db}.db/p")
    # a database the metastore keeps elsewhere (e.g. made by Hive under its own warehouse)
    other = f"{db}_elsewhere"
    hive.call("create_database", ttypes.Database(
        name=other, locationUri=f"file:{hive.warehouse}-other/{other}.db", parameters={}))
    with pytest.raises(PaimonFormatError, match=f"database {other} is at "
                                                f"file:{hive.warehouse}-other/{other}.db, not "
                                                f"at {hive.warehouse}/{other}.db"):
        wh.create_table(hive.warehouse, other, "t", SCHEMA, catalog_options=options)
    # neither it nor Hive's default database (under Hive's own warehouse) is listed: their
    # tables are not this warehouse's
    listed = listing.list_databases(hive.warehouse, options)
    assert other not in listed and "default" not in listed
    # a Paimon entry of this database pointing elsewhere: not listed, named when opened
    register_as_paimon_java(hive, "moved", f"file:{hive.warehouse}-other/moved")
    assert listing.list_tables(hive.warehouse, db, options) == []
    with pytest.raises(PaimonFormatError, match=f"table {db}.moved is at "
                                                f"file:{hive.warehouse}-other/moved"):
        wh.open_table(hive.warehouse, db, "moved", options)
    # (the metastore made the database's folder itself; no table folder anywhere)
    assert not os.path.exists(f"{hive.warehouse}-other/{other}.db/t")
    assert not os.path.exists(f"{hive.warehouse}/{other}.db")


def test_an_unreachable_metastore_names_its_uri(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    warehouse = str(tmp_path / "warehouse")
    options = parse_catalog({"type": "hive", "uri": f"thrift://127.0.0.1:{port}"}
                            ).pypaimon_options()
    with pytest.raises(CatalogUnreachableError,
                       match=f"cannot reach the Hive Metastore thrift://127.0.0.1:{port} .*"
                             "Check the profile's catalog uri"):
        wh.create_table(warehouse, "db", "t", SCHEMA, catalog_options=options)
    assert not os.path.exists(warehouse)  # nothing written
