"""A warehouse whose tables are listed by Paimon's JDBC catalog (catalog/jdbc_catalog.py), on
SQLite and on a real PostgreSQL server (tests/postgres_server.py, one per test process, a
database per test): tables are created, written (the real write path, both executors),
listed, altered, renamed and dropped through the catalog; a folder the catalog does not list
is not a table; commits take the catalog's lock (Java's JdbcCatalogLock protocol) when
lock.enabled."""
import os
import sqlite3

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


class SqliteCatalogDb:
    """The catalog database as a SQLite file, read and written with sqlite3."""

    def __init__(self, db_file):
        self.db_file = db_file

    def options(self, **extra):
        return parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{self.db_file}",
                              **extra}).pypaimon_options()

    def query(self, sql, args=()):
        with sqlite3.connect(self.db_file) as con:
            return [tuple(row) for row in con.execute(sql, args).fetchall()]

    def hold_lock(self, lock_id, age_seconds=0, expire_seconds=480):
        self.query("INSERT INTO paimon_distributed_locks (lock_id, acquired_at, "
                   "expire_time_seconds) VALUES (?, datetime('now', ?), ?)",
                   (lock_id, f"-{age_seconds} seconds", expire_seconds))


class PostgresCatalogDb:
    """The catalog database as a database of the test process's PostgreSQL server."""

    def __init__(self, server, database):
        self.server, self.database = server, database

    def options(self, **extra):
        return parse_catalog(self.server.catalog(self.database, **extra)).pypaimon_options()

    def query(self, sql, args=()):
        connection = self.server.connect(self.database)
        try:
            with connection, connection.cursor() as cursor:  # commits
                cursor.execute(sql.replace("?", "%s"), args)
                return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        finally:
            connection.close()

    def hold_lock(self, lock_id, age_seconds=0, expire_seconds=480):
        self.query("INSERT INTO paimon_distributed_locks (lock_id, acquired_at, "
                   "expire_time_seconds) VALUES (?, LOCALTIMESTAMP - make_interval(secs => ?), ?)",
                   (lock_id, age_seconds, expire_seconds))


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog_db(request, tmp_path):
    if request.param == "sqlite":
        return SqliteCatalogDb(tmp_path / "catalog.db")
    server = request.getfixturevalue("postgres_server")
    return PostgresCatalogDb(server, server.new_database())


@pytest.fixture
def jdbc(tmp_path, catalog_db):
    """(warehouse, catalog options, the catalog database)."""
    return str(tmp_path / "warehouse"), catalog_db.options(), catalog_db


def catalog_rows(db):
    return sorted(db.query("SELECT catalog_key, database_name, table_name FROM paimon_tables"))


def rows(spark, *pairs):
    return spark.createDataFrame(list(pairs), "id long, name string")


@pytest.mark.parametrize("write_path", ["in_process", "distributed"])
def test_a_table_is_created_written_and_listed_through_the_catalog(spark, jdbc, write_path):
    warehouse, options, db = jdbc
    wh.create_table(warehouse, "db", "orders", SCHEMA, primary_keys=["id"],
                    options={"bucket": "2"}, catalog_options=options)
    assert catalog_rows(db) == [("jdbc", "db", "orders")]
    assert listing.list_databases(warehouse, options) == ["db"]
    assert listing.list_tables(warehouse, "db", options) == ["orders"]
    assert listing.latest_schema_id(warehouse, "db", "orders", options) == 0

    location = TableRef(warehouse, "db", "orders", options)
    write_primary_key_run(spark, rows(spark, (1, "a"), (2, "b")), location, write_path=write_path)
    write_primary_key_run(spark, rows(spark, (2, "B"), (3, "c")), location, write_path=write_path)
    assert sorted_rows(read_back(location), ["id"]) == [
        {"id": 1, "name": "a"}, {"id": 2, "name": "B"}, {"id": 3, "name": "c"}]
    assert listing.latest_snapshot_id(warehouse, "db", "orders") == 2


def test_a_folder_the_catalog_does_not_list_is_not_a_table(jdbc):
    warehouse, options, db = jdbc
    wh.create_table(warehouse, "db", "listed", SCHEMA, primary_keys=["id"],
                    catalog_options=options)
    # the same warehouse through the filesystem catalog: a folder with a schema, no catalog row
    wh.create_table(warehouse, "db", "stray", SCHEMA, primary_keys=["id"])
    assert listing.list_tables(warehouse, "db") == ["listed", "stray"]

    assert listing.list_tables(warehouse, "db", options) == ["listed"]
    assert listing.latest_schema_id(warehouse, "db", "stray", options) is None
    assert not wh.table_exists(warehouse, "db", "stray", options)
    with pytest.raises(TableNotFoundError):
        wh.open_table(warehouse, "db", "stray", options)
    with pytest.raises(PaimonFormatError, match="holds a table that the JDBC catalog does not "
                                                "list") as error:
        wh.create_table(warehouse, "db", "stray", SCHEMA, primary_keys=["id"],
                        catalog_options=options)
    assert "db.db/stray" in str(error.value)
    assert catalog_rows(db) == [("jdbc", "db", "listed")]
    # and a catalog row whose database has no folder yet still lists its database
    assert listing.list_databases(warehouse, options) == ["db"]


def test_alter_rename_and_drop_go_through_the_catalog(jdbc):
    from pypaimon.schema.data_types import DataTypeParser
    from pypaimon.schema.schema_change import SchemaChange

    warehouse, options, db = jdbc
    wh.create_table(warehouse, "db", "t", SCHEMA, primary_keys=["id"], catalog_options=options)
    wh.open_catalog(warehouse, options).alter_table(
        "db.t", [SchemaChange.add_column("qty", DataTypeParser.parse_data_type("INT"))])
    assert listing.latest_schema_id(warehouse, "db", "t", options) == 1

    wh.rename_table(warehouse, "db", "t", "t2", catalog_options=options)
    assert catalog_rows(db) == [("jdbc", "db", "t2")]
    assert listing.list_tables(warehouse, "db", options) == ["t2"]
    assert wh.open_table(warehouse, "db", "t2", options).field_names == ["id", "name", "qty"]
    assert not os.path.exists(f"{warehouse}/db.db/t")

    wh.drop_table(warehouse, "db", "t2", catalog_options=options)
    assert catalog_rows(db) == []
    assert listing.list_tables(warehouse, "db", options) == []
    assert not os.path.exists(f"{warehouse}/db.db/t2")


def test_another_catalog_key_sees_other_tables(jdbc):
    warehouse, options, db = jdbc
    other = db.options(**{"catalog-key": "other"})
    wh.create_table(warehouse, "db", "mine", SCHEMA, catalog_options=options)
    assert listing.list_databases(warehouse, other) == []
    wh.create_table(warehouse, "db", "theirs", SCHEMA, catalog_options=other)
    assert listing.list_tables(warehouse, "db", options) == ["mine"]
    assert listing.list_tables(warehouse, "db", other) == ["theirs"]


def locks(db):
    return db.query("SELECT lock_id FROM paimon_distributed_locks")


def test_commits_take_the_catalog_lock(spark, tmp_path, catalog_db):
    db = catalog_db
    warehouse = str(tmp_path / "warehouse")
    options = db.options(**{"lock.enabled": "true", "lock-acquire-timeout": "1 s",
                            "lock-check-max-sleep": "100 ms"})
    wh.create_table(warehouse, "db", "t", SCHEMA, primary_keys=["id"], catalog_options=options)
    assert locks(db) == []  # creating took and released the table's lock
    location = TableRef(warehouse, "db", "t", options)
    write_primary_key_run(spark, rows(spark, (1, "a")), location, write_path="in_process")
    assert locks(db) == []

    db.hold_lock("jdbc.db.t")  # another writer (e.g. Paimon Java) is committing
    with pytest.raises(Exception, match="could not take the JDBC catalog lock 'jdbc.db.t'"):
        write_primary_key_run(spark, rows(spark, (2, "b")), location, write_path="in_process")
    assert listing.latest_snapshot_id(warehouse, "db", "t") == 1  # nothing committed

    db.query("DELETE FROM paimon_distributed_locks")
    db.hold_lock("jdbc.db.t", age_seconds=60, expire_seconds=1)  # left by a dead writer
    write_primary_key_run(spark, rows(spark, (2, "b")), location, write_path="in_process")
    assert listing.latest_snapshot_id(warehouse, "db", "t") == 2
    assert locks(db) == []


def test_an_unreachable_catalog_names_its_uri(tmp_path):
    options = SqliteCatalogDb(tmp_path / "no" / "such" / "folder" / "catalog.db").options()
    with pytest.raises(CatalogUnreachableError, match="cannot open the JDBC catalog "
                                                      "jdbc:sqlite:.*/no/such/folder/catalog.db"):
        listing.list_databases(str(tmp_path / "warehouse"), options)


def test_a_postgresql_server_that_does_not_answer_or_refuses_the_password(tmp_path,
                                                                          postgres_server):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    warehouse = str(tmp_path / "warehouse")
    options = parse_catalog({"type": "jdbc", "uri": f"jdbc:postgresql://127.0.0.1:{port}/x",
                             "jdbc.user": "paimon"}).pypaimon_options()
    with pytest.raises(CatalogUnreachableError, match=f"cannot open the JDBC catalog "
                                                      f"jdbc:postgresql://127.0.0.1:{port}/x: "
                                                      "OperationalError"):
        listing.list_databases(warehouse, options)

    database = postgres_server.new_database()
    wrong = postgres_server.catalog(database, **{"jdbc.password": "not-the-password"})
    with pytest.raises(CatalogUnreachableError, match="password authentication failed") as error:
        wh.create_table(warehouse, "db", "t", SCHEMA,
                        catalog_options=parse_catalog(wrong).pypaimon_options())
    assert "not-the-password" not in str(error.value)
    assert not os.path.exists(f"{warehouse}/db.db")  # nothing written
