"""The registry's catalog statements as one SQL script (datasource/statement_batch.py) on a
real Spark: an entry's change is sent as one script, the script runs its statements in order,
and the first that fails stops it with that statement's own error, which the registry's retry
of a race with another process (registry._make_entry) tells by its error class."""

import pytest

from dbt.adapters.paimon.datasource.registry import HIDDEN_DATABASE_SUFFIX, PaimonTableRegistry
from dbt.adapters.paimon.datasource.statement_batch import run_statements, runs_scripts
from dbt.adapters.paimon.catalog import warehouse as wh
from tests.integration.datasource.counting_session import CountingSession
from tests.integration.datasource.test_native_reads import SCHEMA, commit


@pytest.fixture
def database(spark):
    yield "scripts_db"
    for name in ("scripts_db", f"scripts_db{HIDDEN_DATABASE_SUFFIX}"):
        spark.sql(f"drop database if exists {name} cascade")


def test_this_spark_runs_scripts(spark):
    assert runs_scripts(spark)  # Spark 4's default, which the statements below rely on


def test_a_new_snapshots_entry_change_is_one_script(spark, tmp_path, database):
    warehouse = str(tmp_path / "warehouse")
    commit(wh.create_table(warehouse, database, "log", SCHEMA), [(1, "a", "d")])
    session = CountingSession(spark)
    registry = PaimonTableRegistry(session, warehouse, {})
    registry.sync()
    commit(wh.open_table(warehouse, database, "log"), [(2, "b", "d")])  # another writer
    session.calls.clear()
    session.statements.clear()
    registry.activate()  # what every statement of the adapter's session does first
    assert len(session.calls) == 1 and session.calls[0].startswith("begin\n"), session.calls
    assert [s.split(" ")[:2] + s.split(" ")[3:5] for s in session.statements] == [
        ["alter", "table", "set", "location"], ["alter", "view", "set", "tblproperties"]]
    assert sorted(map(tuple, spark.table(f"{database}.log").collect())) == [(1, "a", "d"),
                                                                          (2, "b", "d")]


def test_the_first_failing_statement_stops_the_script_with_its_own_error(spark, database):
    statements = [f"create database if not exists {database}",
                  f"create table {database}.first (a int) using parquet",
                  f"create table {database}.first (a int) using parquet",
                  f"create table {database}.never (a int) using parquet"]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        run_statements(spark, statements, scripts=True)
    tables = {row.tableName for row in spark.sql(f"show tables in {database}").collect()
              if not row.isTemporary}  # (other tests' temporary views are listed too)
    assert tables == {"first"}
