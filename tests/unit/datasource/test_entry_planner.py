"""Which entries the registry makes, keeps, makes again or drops (datasource/entry_planner.py),
from plain values: no session, no warehouse."""

import pytest

from dbt.adapters.paimon.catalog.config import CatalogRoute
from dbt.adapters.paimon.datasource.catalog_entry import (BRANCH_PROPERTY, NATIVE,
                                                          NATIVE_ROWS_PROPERTY, PYTHON,
                                                          READ_PROPERTY, SCHEMA_ID_PROPERTY,
                                                          SNAPSHOT_PROPERTY, UNCHOSEN,
                                                          UNMERGED, CatalogEntry, reads_rows)
from dbt.adapters.paimon.datasource.entry_planner import (Refresh, WantedEntry, branch_moves,
                                                          keeps, moved_databases, plan_refresh,
                                                          plan_sync)
from dbt.adapters.paimon.datasource.entry_statements import forget_statements, write_target


def view(schema_id=0, snapshot="4.1", read=PYTHON, branch=""):
    return CatalogEntry("VIEW", "", {SCHEMA_ID_PROPERTY: str(schema_id),
                                     SNAPSHOT_PROPERTY: snapshot, READ_PROPERTY: read,
                                     BRANCH_PROPERTY: branch,
                                     NATIVE_ROWS_PROPERTY: f"{schema_id}:parquet:nullable"})


# -- sync ----------------------------------------------------------------------------------
def test_a_sync_exposes_every_table_in_name_order_and_forgets_only_its_own_vanished_entries():
    older_style = CatalogEntry("MANAGED", "paimon.db.older_style", {})
    entries = {"orders": view(read=NATIVE), "dropped": view(), "older_style": older_style,
               "someone_elses": CatalogEntry("MANAGED", "parquet", {})}
    plan = plan_sync({"orders", "new_table"}, entries)
    assert plan.expose == (("new_table", None), ("orders", entries["orders"]))
    assert plan.forget == (("dropped", entries["dropped"]), ("older_style", older_style))


def test_a_sync_of_an_unchanged_database_forgets_nothing():
    assert plan_sync(["orders"], {"orders": view()}).forget == ()


# -- keep, refuse or make ----------------------------------------------------------------------
WANTED = WantedEntry("db", "orders", "/wh", schema_id=1, snapshot="4.1", branch="",
                     choose=True)


def test_an_entry_reading_the_wanted_snapshot_is_kept_if_its_files_are_there():
    entry = view(1)
    assert keeps(entry, WANTED, lambda: True)
    assert not keeps(entry, WANTED, lambda: False)


@pytest.mark.parametrize("entry", [
    view(0), view(1, snapshot="3.1"), view(1, branch="audit"), view(1, read=UNCHOSEN), None])
def test_an_entry_behind_the_table_or_none_is_made(entry):
    asked = []
    assert not keeps(entry, WANTED, lambda: asked.append(1) or True)
    assert asked == []                         # the file list is looked at only if needed


def test_an_unchosen_entry_is_kept_while_no_choice_is_asked():
    unchosen = WantedEntry("db", "orders", "/wh", 1, "4.1", "", choose=False)
    assert keeps(view(1, read=UNCHOSEN), unchosen, lambda: True)


def test_a_spark_table_of_the_same_name_is_refused():
    with pytest.raises(ValueError, match=r"db.orders is both a Paimon table in /wh and a "
                                         r"Spark parquet table"):
        keeps(CatalogEntry("EXTERNAL", "parquet", {}), WANTED, lambda: True)


# -- refresh, branches, catalogs -------------------------------------------------------------
def test_a_refresh_makes_again_the_entries_behind_and_chooses_for_named_tables():
    exposed = {("db", "behind"): "1.5", ("db", "current"): "2.1", ("db", "unchosen"): "2.1",
               ("db", "unnamed_unchosen"): "2.1", ("remote", "t"): "1.1"}
    latest = {key: "2.1" for key in exposed if key[0] == "db"}   # remote: not refreshed so
    entries = {("db", "unchosen"): view(read=UNCHOSEN),
               ("db", "unnamed_unchosen"): view(read=UNCHOSEN)}
    sql = "select * from db.unchosen join db.behind"
    assert plan_refresh(exposed, latest, entries, sql) == [
        Refresh("db", "behind", True, True), Refresh("db", "unchosen", True, True)]
    assert plan_refresh(exposed, latest, entries, None) == [Refresh("db", "behind", False)]


def test_a_merge_of_values_is_made_for_a_statement_that_reads_the_named_table():
    """An UNMERGED entry is made again (merged) for a statement that names the table and reads
    rows; dbt's DESCRIBE of every relation it builds, a view's definition or a statement naming
    another table leave it as it is."""
    exposed = {("db", "totals"): "2.1", ("db", "other"): "2.1"}
    entries = {key: view(read=UNMERGED) for key in exposed}
    for sql in ("select * from db.totals", "/* dbt */ with t as (select * from db.totals) "
                "select 1", "create table x using parquet as select * from db.totals",
                "insert into db.x select * from db.totals"):
        assert plan_refresh(exposed, exposed, entries, sql) == [
            Refresh("db", "totals", True, True)], sql
    for sql in ("describe extended db.totals", "show tblproperties db.totals",
                "create or replace view db.v as select * from db.totals",
                "alter table db.totals set tblproperties ('a' = 'b')", "select 1", None):
        assert plan_refresh(exposed, exposed, entries, sql) == [], sql


def test_an_unmerged_entry_is_kept_until_a_merge_is_asked():
    unmerged = view(1, read=UNMERGED)
    assert keeps(unmerged, WANTED, lambda: True)      # a choice of rows asked: none needed
    merging = WantedEntry("db", "orders", "/wh", 1, "4.1", "", choose=True, merge=True)
    assert not keeps(unmerged, merging, lambda: True)
    assert keeps(view(1, read=NATIVE), merging, lambda: True)


@pytest.mark.parametrize("sql, reads", [
    ("select 1", True), ("  (select a from t)", True), ("-- dbt\nselect 1", True),
    ("with a as (select 1) select * from a", True), ("insert overwrite t select 1", True),
    ("merge into t using s on t.id = s.id when matched then delete", True),
    ("create or replace table t using parquet as (select 1)", True),
    ("describe extended t", False), ("show table extended in db like 't'", False),
    ("create view v as select * from t", False),
    ("create or replace temporary view v as select * from t", False),
    ("create table t (id int) using parquet", False), ("drop table t", False),
    ("explain select * from t", False)])
def test_which_statements_read_rows(sql, reads):
    assert reads_rows(sql) is reads


def test_the_entries_read_on_another_branch_than_now_move():
    entries = {("db", "orders"): view(), ("db", "customers"): view(),
               ("db", "audited"): view(branch="audit"), ("db", "gone"): view()}
    sources = {("db", "orders"): "orders$branch_audit", ("db", "customers"): "customers",
               ("db", "audited"): "audited"}
    assert branch_moves(entries, sources) == [("db", "orders"), ("db", "audited")]


def test_the_databases_whose_catalog_changed_in_name_order():
    a, b = CatalogRoute("a", "/a", {}), CatalogRoute("b", "/b", {})
    assert moved_databases({"x": a, "y": a}, {"y": a, "z": b, "w": b}) == ["w", "x", "z"]
    assert moved_databases({"x": a}, {"x": b}) == ["x"]
    assert moved_databases({"x": a}, {"x": a}) == []


# -- the statements that drop an entry or make an INSERT's target ----------------------------
def test_forgetting_drops_the_write_target_view_and_hidden_tables():
    assert forget_statements("db", "orders", 1, None) == [
        "drop table if exists `db`.`orders`",
        "drop table if exists `db__paimon`.`read_orders`",
        "drop table if exists `db__paimon`.`files_orders`",
        "drop table if exists `db__paimon`.`deletes_orders`",
        "drop table if exists `db__paimon`.`files_1_orders`"]
    assert forget_statements("db", "orders", 0, "w")[0] == "drop table if exists w"


def test_an_insert_target_of_a_branch_names_the_branch_s_provider():
    import pyarrow as pa

    name, statements = write_target("db", "orders$branch_audit",
                                    pa.schema([("id", pa.int64())]))
    assert name == "`db__paimon`.`write_orders__branch_audit`"
    assert statements == [
        "create database if not exists `db__paimon`",
        f"drop table if exists {name}",
        f"create table {name} (`id` bigint) using paimon.db.orders__branch_audit"]
