"""Paimon Java 1.0's JdbcCatalog and ours on one catalog database, SQLite and then PostgreSQL (the
test process's server, tests/postgres_server.py): Java lists and reads the tables our JDBC
catalog created and wrote, we list, read and write the tables Java created there. Needs
Debian's JDBC drivers (libxerial-sqlite-jdbc-java, libpostgresql-jdbc-java), which the fixture
installs with apt-get when they are missing."""
import json

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from dbt.adapters.paimon.write import write_primary_key_run
from tests.integration.write.write_helpers import read_back, sorted_rows
from tests.interop.conftest import catalog_spec, jdbc_driver_jar


@pytest.fixture
def sqlite_driver():
    return jdbc_driver_jar("sqlite")


@pytest.fixture
def sqlite_catalog(tmp_path, sqlite_driver, paimon_java):
    """(warehouse, our catalog options, Paimon Java with the SQLite driver, its catalog spec,
    its catalog spec for writing). Java writes without its commit lock: Paimon 1.0's
    JdbcCatalogLock on SQLite fails its own commit with SQLITE_BUSY even when nothing else uses
    the database (its catalog and its lock hold two connections to one SQLite file); ours keeps
    lock.enabled."""
    java = paimon_java.with_classpath(sqlite_driver)
    options = parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
                             "lock.enabled": "true"}).pypaimon_options()
    warehouse = str(tmp_path / "warehouse")
    return (warehouse, options, java, catalog_spec(options, warehouse),
            catalog_spec({**options, "lock.enabled": "false"}, warehouse))


@pytest.fixture
def postgres_catalog(tmp_path, postgres_server, paimon_java):
    """The same on a new database of the test process's PostgreSQL server. Ours with
    lock.enabled, Java's without: Paimon 1.0 has no lock on PostgreSQL (see the test below)."""
    java = paimon_java.with_classpath(jdbc_driver_jar("postgresql"))
    database = postgres_server.new_database("interop")
    options = parse_catalog(postgres_server.catalog(database, **{"lock.enabled": "true"})
                            ).pypaimon_options()
    warehouse = str(tmp_path / "warehouse")
    spec = catalog_spec({**options, "lock.enabled": "false"}, warehouse)
    return warehouse, options, java, spec, spec


@pytest.fixture(params=["sqlite_catalog", "postgres_catalog"], ids=["sqlite", "postgresql"])
def jdbc_catalog(request):
    return request.getfixturevalue(request.param)


def test_paimon_java_1_0_has_no_catalog_lock_on_postgresql(postgres_catalog):
    """Paimon 1.0's JdbcCatalog creates its lock table when it opens with lock.enabled, through
    DistributedLockDialectFactory, whose JdbcProtocol knows SQLITE, MYSQL and MARIADB only (the
    PostgreSQL dialect came later): opening the catalog fails. When the Java jar knows it, this
    test fails: then give Java's side lock.enabled in the fixture above."""
    warehouse, options, java, spec, _ = postgres_catalog
    # (JavaError, matched by its text: pytest imports this conftest under another module name)
    with pytest.raises(Exception, match="No enum constant "
                                        ".*DistributedLockDialectFactory.JdbcProtocol.POSTGRESQL"):
        java.run("read", json.dumps({**json.loads(spec), "lock.enabled": "true"}), "db.t")


def test_java_lists_and_reads_our_tables(spark, jdbc_catalog):
    warehouse, options, java, spec, _ = jdbc_catalog
    wh.create_table(warehouse, "db", "ours", pa.schema([pa.field("id", pa.int64(), False),
                                                        ("name", pa.string())]),
                    primary_keys=["id"], options={"bucket": "2"}, catalog_options=options)
    location = TableRef(warehouse, "db", "ours", options)
    write_primary_key_run(spark, spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string"),
                          location, write_path="in_process")
    write_primary_key_run(spark, spark.createDataFrame([(2, "B")], "id long, name string"),
                          location, write_path="in_process")
    rows = java.read(spec, "db.ours")
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": 1, "name": "a"}, {"id": 2, "name": "B"}]


def test_we_list_read_and_write_javas_tables(spark, jdbc_catalog, tmp_path):
    warehouse, options, java, _, spec = jdbc_catalog
    java.create(spec, "db.theirs", [["id", "BIGINT NOT NULL"], ["name", "STRING"]],
                primary_keys=["id"], options={"bucket": "1"})
    java.write(spec, "db.theirs", [{"id": 1, "name": "x"}], tmp_path / "rows.json")
    assert listing.list_tables(warehouse, "db", options) == ["theirs"]
    location = TableRef(warehouse, "db", "theirs", options)
    write_primary_key_run(spark, spark.createDataFrame([(2, "y")], "id long, name string"),
                          location, write_path="in_process")
    expected = [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}]
    assert sorted_rows(read_back(location), ["id"]) == expected
    assert sorted(java.read(spec, "db.theirs"), key=lambda r: r["id"]) == expected
