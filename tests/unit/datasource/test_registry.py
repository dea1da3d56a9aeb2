"""The registry's decisions (datasource/registry.py), without a Spark session: the names of
hidden tables and SQL names, routing to catalogs and branches, data-source registration over
Spark Connect, what a sync creates, keeps and drops, and the statements that make an entry.

The session is a stand-in that records statements and answers ``show table extended`` with a
given listing; the warehouse is a folder laid out as Paimon's (schema and snapshot files are
all the listing reads)."""

import os
import re
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource import catalog_entry
from dbt.adapters.paimon.datasource import registry as registry_module
from dbt.adapters.paimon.datasource.entry_statements import EntryRead
from dbt.adapters.paimon.datasource.native_read import NativeSnapshot, Projection
from dbt.adapters.paimon.datasource.registry import (
    NATIVE, NATIVE_WITH_DELETES, NO_PROJECTIONS, PYTHON, REGISTERED_CONF_PREFIX, UNCHOSEN,
    CatalogEntry, PaimonTableRegistry, check_name, hidden_database, hidden_table,
    projected_key, projected_table, provider_name, python_rows_key, sql_name)
from dbt.adapters.paimon.catalog.config import CatalogRoute
from dbt.adapters.paimon.format.errors import TableNotFoundError


# -- stand-ins ---------------------------------------------------------------------------
class _Conf:
    def __init__(self, values=None):
        self.values = dict(values or {})
        self.reads = 0

    @property
    def getAll(self):  # a property over Spark Connect
        self.reads += 1
        return dict(self.values)

    def set(self, key, value):
        self.values[key] = value

    def get(self, key, default=None):
        return self.values.get(key, default)


class FakeSpark:
    """The session calls the registry makes: ``sql`` (recorded; ``show table extended in
    <db>`` answers ``listings[db]``), ``dataSource.register``, ``conf``."""

    def __init__(self, listings=None, conf=None):
        self.statements = []
        self.registered = []
        self.listings = listings if listings is not None else {}
        self.conf = _Conf(conf)
        self.dataSource = SimpleNamespace(register=lambda s: self.registered.append(s.name()))
        self.sparkContext = SimpleNamespace(defaultParallelism=2)

    def sql(self, statement):
        self.statements.append(statement)
        rows = []
        if statement.startswith("show table extended in "):
            database = statement.split("`")[1]
            rows = self.listings.get(database, [])
        return SimpleNamespace(collect=lambda: list(rows))


class ConnectSpark(FakeSpark):
    """What spark_env.is_connect takes for a Spark Connect session."""


ConnectSpark.__module__ = "pyspark.sql.connect.session"


def listed(table, kind="VIEW", provider="", temporary=False, **properties):
    """A row of `show table extended`, as Spark prints an entry."""
    props = ", ".join(f"{k}={v}" for k, v in properties.items())
    information = f"Catalog: spark_catalog\nTable: {table}\nType: {kind}\n"
    if provider:
        information += f"Provider: {provider}\n"
    information += f"Table Properties: [{props}]\n"
    return SimpleNamespace(tableName=table, isTemporary=temporary, information=information)


def view_properties(schema_id=0, snapshot="", read=PYTHON, branch="", **hidden):
    return {"paimon.schema-id": str(schema_id), "paimon.snapshot-id": snapshot,
            "paimon.read": read, "paimon.branch": branch, **hidden}


def paimon_table(warehouse, database, table, schema_ids=(0,), snapshot=None, branches=()):
    """The files the listing reads of a local Paimon table (and of its branches)."""
    folder = os.path.join(warehouse, f"{database}.db", table)
    for path in [folder] + [os.path.join(folder, "branch", f"branch-{b}") for b in branches]:
        os.makedirs(os.path.join(path, "schema"), exist_ok=True)
        for schema_id in schema_ids:
            open(os.path.join(path, "schema", f"schema-{schema_id}"), "w").close()
        if snapshot is not None:
            os.makedirs(os.path.join(path, "snapshot"), exist_ok=True)
            open(os.path.join(path, "snapshot", f"snapshot-{snapshot}"), "w").close()
            with open(os.path.join(path, "snapshot", "LATEST"), "w") as hint:
                hint.write(str(snapshot))
    return folder


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def spark():
    return FakeSpark()


@pytest.fixture
def registry(spark, warehouse):
    return PaimonTableRegistry(spark, warehouse, {})


def stamp_of(warehouse, database, table):
    return registry_module.listing.latest_snapshot_stamp(warehouse, database, table)


# -- names -------------------------------------------------------------------------------
def test_a_branch_name_becomes_an_sql_name():
    assert sql_name("orders") == "orders"
    assert sql_name("orders$branch_audit") == "orders__branch_audit"
    assert provider_name("analytics", "orders") == "paimon.analytics.orders"
    assert provider_name("analytics", "orders$branch_audit") == \
        "paimon.analytics.orders__branch_audit"


def test_a_provider_names_its_paimon_table_back():
    from dbt.adapters.paimon.datasource.entry_names import paimon_source_of

    for table in ("orders", "orders$branch_audit", "a__b"):
        assert paimon_source_of(provider_name("db", table)) == table


def test_hidden_tables_live_in_the_hidden_database_quoted():
    assert hidden_database("analytics") == "analytics__paimon"
    assert hidden_table("analytics", "read_", "orders") == "`analytics__paimon`.`read_orders`"
    assert projected_table("analytics", "orders", 2) == "`analytics__paimon`.`files_2_orders`"


def test_the_python_rows_record_names_the_branch_off_main_only():
    assert python_rows_key(3, "") == "3"
    assert python_rows_key(3, "audit") == "3@audit"


def test_the_projection_record_counts_tables_and_digests_their_columns():
    plain = NativeSnapshot(1, "parquet", ())
    assert projected_key(0, plain) == NO_PROJECTIONS
    two = NativeSnapshot(1, "parquet", (), projected=(Projection(("a", None), ()),
                                                      Projection((None, "b"), ())))
    key = projected_key(0, two)
    assert key.startswith("2:") and len(key) == 2 + 16
    assert projected_key(0, two) == key                       # stable
    assert projected_key(1, two) != key                       # another schema
    other = NativeSnapshot(1, "parquet", (), projected=(Projection(("a", None), ()),
                                                        Projection((None, "c"), ())))
    assert projected_key(0, other) != key                     # other columns
    assert projected_key(0, NativeSnapshot(1, "orc", (), projected=two.projected)) != key


@pytest.mark.parametrize("name", ["orders", "_x", "t_2024"])
def test_safe_names_pass(name):
    assert check_name("table", name) == name


@pytest.mark.parametrize("name", ["Orders", "2024_t", "a-b", "a$branch_b", "", None, "a.b"])
def test_other_names_are_refused_by_kind_and_name(name):
    with pytest.raises(ValueError, match=re.escape(f"Paimon table name {name!r} is not supported")):
        check_name("table", name)


# -- catalog entries as listed -----------------------------------------------------------
def test_the_listing_is_read_into_entries_with_paimon_properties_only():
    rows = [listed("orders", **view_properties(2, "5.7", NATIVE), owner="me"),
            listed("tmp_view", temporary=True),
            listed("old", kind="MANAGED", provider="paimon.db.old"),
            listed("csv_table", kind="EXTERNAL", provider="csv")]
    entries = catalog_entry.catalog_entries(rows)
    assert set(entries) == {"orders", "old", "csv_table"}
    orders = entries["orders"]
    assert orders.kind == "VIEW" and orders.provider == ""
    assert orders.properties == view_properties(2, "5.7", NATIVE)
    assert (orders.schema_id, orders.snapshot, orders.read, orders.branch) == (2, "5.7", NATIVE, "")
    assert orders.ours
    assert entries["old"].ours and entries["old"].schema_id is None   # an older-style entry
    assert not entries["csv_table"].ours


def test_a_statement_names_a_table_as_a_word_in_any_case_or_quoting():
    names = catalog_entry.names_table
    assert names("select * from analytics.Orders", "orders")
    assert names("select * from `orders` o", "orders")
    assert not names("select * from analytics.orders_v", "orders")
    assert not names("select * from my_orders", "orders")
    assert not names("select * from orders$snapshots", "orders")
    assert not names(None, "orders")


def test_an_entry_reads_one_schema_snapshot_and_branch_with_its_choice_made_if_asked():
    entry = CatalogEntry("VIEW", "", view_properties(1, "4.2", UNCHOSEN, "audit"))
    assert entry.reads(1, "4.2", "audit", choose=False)
    assert not entry.reads(1, "4.2", "audit", choose=True)
    assert not entry.reads(0, "4.2", "audit", choose=False)
    assert not entry.reads(1, "5.2", "audit", choose=False)
    assert not entry.reads(1, "4.2", "", choose=False)
    assert not CatalogEntry("MANAGED", "", entry.properties).reads(1, "4.2", "audit", False)


def test_a_native_entry_with_not_null_files_tables_is_made_anew():
    """Files tables an older dbt-paimon declared with NOT NULL columns fail reads of superseded
    NULLs (entry_statements.file_columns): such an entry reads nothing wanted, so the next sync
    makes it again, though its snapshot is current; a Python entry reads no files table."""
    for read in (NATIVE, NATIVE_WITH_DELETES, PYTHON):
        properties = view_properties(1, "4.2", read, "", **{"paimon.native-rows": "1:parquet"})
        older = CatalogEntry("VIEW", "", properties)
        assert older.reads(1, "4.2", "", choose=True) == (read == PYTHON)
        current = CatalogEntry("VIEW", "", dict(properties, **{
            "paimon.native-rows": "1:parquet:nullable"}))
        assert current.reads(1, "4.2", "", choose=True)


def test_how_a_planned_snapshot_is_read():
    from dbt.adapters.paimon.datasource.native_read import CHOICE_DEFERRED, MERGE_DEFERRED

    assert catalog_entry.read_of(None, CHOICE_DEFERRED) == UNCHOSEN
    assert catalog_entry.read_of(None, MERGE_DEFERRED) == catalog_entry.UNMERGED
    assert catalog_entry.read_of(None, "a partial-update merge") == PYTHON
    assert catalog_entry.read_of(native_plan(), "") == NATIVE
    assert catalog_entry.read_of(native_plan(deleted=True), "") == NATIVE_WITH_DELETES


def test_an_unchosen_entry_has_a_python_entry_s_tables():
    assert catalog_entry.shape(UNCHOSEN) == PYTHON
    assert catalog_entry.shape(catalog_entry.UNMERGED) == PYTHON
    assert catalog_entry.shape(NATIVE) == NATIVE
    assert catalog_entry.projection_count({}) == 0
    assert catalog_entry.projection_count({"paimon.projected-rows": "3:abc"}) == 3


# -- routing to catalogs and branches ----------------------------------------------------
def test_a_routed_database_reads_its_catalog_the_others_the_profile_s(tmp_path, registry,
                                                                       warehouse):
    other = str(tmp_path / "other")
    route = CatalogRoute("lake", other, {"metastore": "filesystem", "warehouse": other})
    registry.use_catalogs({"raw": route})
    assert registry.warehouse_of("raw") == other and registry.options_of("raw") == route.options
    assert registry.catalog_name_of("raw") == "lake"
    assert registry.warehouse_of("analytics") == warehouse
    assert registry.options_of("analytics") == {} and registry.catalog_name_of("analytics") is None
    location = registry.table_location("raw", "events")
    assert (location.warehouse, location.database, location.table) == (other, "raw", "events")


def test_native_reads_stay_off_remote_catalogs(registry, warehouse):
    local_root = registry._reads_root_of("analytics")
    assert local_root == os.path.join(warehouse, ".spark", "paimon-reads")
    registry.use_catalogs({"raw": CatalogRoute("s3", "s3://bucket/lake", {})})
    assert registry._reads_root_of("raw") is None
    assert registry._reads_root_of("analytics") == local_root
    remote = PaimonTableRegistry(FakeSpark(), "s3://bucket/lake", {})
    assert remote._reads_root_of("analytics") is None


def test_the_databases_are_the_profile_s_unrouted_and_the_routed_ones_present(
        tmp_path, registry, warehouse):
    other = str(tmp_path / "other")
    for database in ("analytics", "raw", "staging"):
        os.makedirs(os.path.join(warehouse, f"{database}.db"))
    os.makedirs(os.path.join(other, "raw.db"))
    route = CatalogRoute("lake", other, {})
    registry.use_catalogs({"raw": route, "missing": route})
    assert registry._databases() == ["analytics", "staging", "raw"]


def test_a_catalog_change_forgets_the_database_s_registrations_and_syncs_it_if_synced(
        registry, warehouse, monkeypatch):
    registry._registered.update({("raw", "events"): (), ("analytics", "orders"): ()})
    synced = []
    monkeypatch.setattr(registry, "sync_database", synced.append)
    route, kept = CatalogRoute("lake", warehouse + "-lake", {}), CatalogRoute("k", "/k", {})
    registry.use_catalogs({"raw": route, "kept": kept})
    assert set(registry._registered) == {("analytics", "orders")}
    assert synced == []                                   # no sync yet: nothing to redo
    registry._registered.update({("raw", "events"): (), ("kept", "t"): ()})
    registry._synced_for = "invocation-1"
    registry.use_catalogs({"raw": route, "kept": kept})   # unchanged: nothing
    assert synced == []
    registry.use_catalogs({"kept": kept})                 # raw back to the profile's catalog
    assert synced == ["raw"]
    assert set(registry._registered) == {("analytics", "orders"), ("kept", "t")}


def test_a_table_is_read_on_its_own_branch_else_the_default_one(registry):
    registry.resolver.branch = "audit"
    registry.resolver.table_branches = {("db", "pinned"): "dev", ("db", "main_only"): None}
    assert registry.branch_of("db", "orders") == "audit"
    assert registry.branch_of("db", "pinned") == "dev"
    assert registry.branch_of("db", "main_only") is None


def test_an_entry_stands_for_its_branch_when_the_table_has_it(registry, warehouse):
    paimon_table(warehouse, "db", "orders", branches=("audit",))
    paimon_table(warehouse, "db", "customers")
    assert registry.paimon_name("db", "orders") == "orders"          # main: no branch asked
    registry.resolver.branch = "audit"
    assert registry.paimon_name("db", "orders") == "orders$branch_audit"
    assert registry.paimon_name("db", "customers") == "customers"    # no such branch
    assert registry.paimon_name("db", "orders$branch_x") == "orders$branch_x"
    assert registry.location("db", "orders").table == "orders$branch_audit"
    assert registry.table_location("db", "orders").table == "orders"


def test_a_paimon_table_is_one_with_a_schema(registry, warehouse):
    paimon_table(warehouse, "db", "orders")
    os.makedirs(os.path.join(warehouse, "db.db", "empty"))
    assert registry.is_paimon_table("DB", "Orders")
    assert not registry.is_paimon_table("db", "empty")
    assert not registry.is_paimon_table("db", "nothing")


# -- data-source registration ------------------------------------------------------------
def test_an_embedded_session_registers_every_time(spark, registry):
    source = SimpleNamespace(name=lambda: "paimon.db.t", __module__="m", __qualname__="T")
    registry.register_source(source, "x")
    registry.register_source(source, "x")
    assert spark.registered == ["paimon", "paimon.db.t", "paimon.db.t"]
    assert spark.conf.values == {}


def test_a_connect_session_registers_only_what_it_lacks_or_has_otherwise(warehouse):
    spark = ConnectSpark()
    PaimonTableRegistry(spark, warehouse, {})
    assert spark.registered == ["paimon"]
    assert set(spark.conf.values) == {REGISTERED_CONF_PREFIX + "paimon"}
    # the next command on the shared session: one read of the conf, no registration
    spark.registered.clear()
    reads = spark.conf.reads
    second = PaimonTableRegistry(spark, warehouse, {})
    assert spark.registered == [] and spark.conf.reads == reads + 1
    source = SimpleNamespace(name=lambda: "paimon.db.t", __module__="m", __qualname__="T")
    second.register_source(source, "location-1")
    second.register_source(source, "location-1")
    assert spark.registered == ["paimon.db.t"]
    second.register_source(source, "location-2")          # the table moved: again
    assert spark.registered == ["paimon.db.t", "paimon.db.t"]
    assert spark.conf.reads == reads + 1                   # the conf is read once per registry


def test_a_table_s_provider_is_registered_once_per_registry(spark, registry):
    registry._register_provider("db", "orders")
    registry._register_provider("db", "orders")
    registry._register_provider("db", "orders$branch_audit")
    assert spark.registered == ["paimon", "paimon.db.orders", "paimon.db.orders__branch_audit"]


def test_the_providers_an_entry_names_are_registered_before_it_is_dropped(spark, registry):
    entry = CatalogEntry("VIEW", "", view_properties(branch="audit",
                                                     **{"paimon.python-rows": "0@dev"}))
    registry._register_entry_providers("db", "orders", entry)
    assert sorted(spark.registered[1:]) == ["paimon.db.orders__branch_audit",
                                            "paimon.db.orders__branch_dev"]
    spark.registered.clear()
    older = CatalogEntry("MANAGED", "paimon.db.orders__branch_old", {})
    registry._register_entry_providers("db", "orders", older)
    assert sorted(spark.registered) == ["paimon.db.orders", "paimon.db.orders__branch_old"]


# -- sync --------------------------------------------------------------------------------
def record_decisions(monkeypatch, registry, changed=True):
    decisions = []

    def expose(database, table, entry=None, choose=True, fresh=False):
        decisions.append(("expose", table, entry.read if entry else None, choose))
        return changed

    def forget(database, table, entry=None):
        decisions.append(("forget", table))

    monkeypatch.setattr(registry, "expose", expose)
    monkeypatch.setattr(registry, "forget", forget)
    return decisions


def test_sync_exposes_every_paimon_table_and_forgets_only_its_own_vanished_entries(
        spark, registry, warehouse, monkeypatch):
    paimon_table(warehouse, "db", "orders")
    paimon_table(warehouse, "db", "new_table")
    spark.listings["db"] = [listed("orders", **view_properties(read=NATIVE)),
                            listed("dropped", **view_properties()),
                            listed("older_style", kind="MANAGED", provider="paimon.db.older_style"),
                            listed("someone_elses", kind="MANAGED", provider="parquet")]
    decisions = record_decisions(monkeypatch, registry)
    registry.sync_database("db")
    assert decisions == [("expose", "new_table", None, False),
                         ("expose", "orders", NATIVE, False),
                         ("forget", "dropped"), ("forget", "older_style")]
    assert registry.take_listed_relations("db") is None      # changed: dbt lists again


def test_a_sync_that_changes_nothing_hands_its_listing_to_dbt_once(
        spark, registry, warehouse, monkeypatch):
    paimon_table(warehouse, "db", "orders")
    spark.listings["db"] = [listed("orders", **view_properties())]
    record_decisions(monkeypatch, registry, changed=False)
    registry.sync_database("db")
    assert [r.tableName for r in registry.take_listed_relations("db")] == ["orders"]
    assert registry.take_listed_relations("db") is None


def test_sync_covers_every_database_and_sync_once_once_per_invocation(
        spark, registry, warehouse, monkeypatch):
    paimon_table(warehouse, "a", "t1")
    paimon_table(warehouse, "b", "t2")
    decisions = record_decisions(monkeypatch, registry)
    registry.sync_once("invocation-1")
    registry.sync_once("invocation-1")
    assert [d[1] for d in decisions] == ["t1", "t2"]
    registry.sync_once("invocation-2")
    assert [d[1] for d in decisions] == ["t1", "t2", "t1", "t2"]


def test_a_missing_database_is_created_when_the_listing_says_so(warehouse):
    class Missing(FakeSpark):
        def sql(self, statement):
            if statement.startswith("show") and not any(
                    s.startswith("create database") for s in self.statements):
                self.statements.append(statement)
                raise RuntimeError("[SCHEMA_NOT_FOUND] The schema `db` cannot be found")
            return super().sql(statement)

    spark = Missing()
    registry = PaimonTableRegistry(spark, warehouse, {})
    registry.sync_database("db")
    assert spark.statements == ["show table extended in `db` like '*'",
                                "create database if not exists `db`",
                                "show table extended in `db` like '*'"]


# -- expose: keep, refuse or make ----------------------------------------------------------
class _Made(Exception):
    """The registry went on to make the entry (it opens the table first)."""


@pytest.fixture
def stop_at_making(registry, monkeypatch):
    def open_table(database, table):
        raise _Made(table)

    monkeypatch.setattr(registry, "open_table", open_table)


def test_an_up_to_date_entry_is_kept_without_a_statement(spark, registry, warehouse,
                                                          stop_at_making):
    paimon_table(warehouse, "db", "orders", schema_ids=(0, 1), snapshot=4)
    stamp = stamp_of(warehouse, "db", "orders")
    entry = CatalogEntry("VIEW", "", view_properties(1, stamp, PYTHON))
    assert registry.expose("db", "orders", entry) is False
    assert spark.statements == []
    assert registry._exposed[("db", "orders")] == stamp
    assert registry._entries[("db", "orders")] == entry


@pytest.mark.parametrize("change", [
    {"schema_id": 0}, {"snapshot": "3.1"}, {"branch": "audit"}, {"read": UNCHOSEN}])
def test_an_entry_behind_the_table_is_made_again(registry, warehouse, stop_at_making, change):
    paimon_table(warehouse, "db", "orders", schema_ids=(0, 1), snapshot=4)
    properties = dict(schema_id=1, snapshot=stamp_of(warehouse, "db", "orders"), read=PYTHON)
    properties.update(change)
    with pytest.raises(_Made):
        registry.expose("db", "orders", CatalogEntry("VIEW", "", view_properties(**properties)))


def test_an_unchosen_entry_is_kept_until_a_choice_is_asked(registry, warehouse, stop_at_making):
    paimon_table(warehouse, "db", "orders", snapshot=4)
    entry = CatalogEntry("VIEW", "", view_properties(0, stamp_of(warehouse, "db", "orders"),
                                                     UNCHOSEN))
    assert registry.expose("db", "orders", entry, choose=False) is False
    with pytest.raises(_Made):
        registry.expose("db", "orders", entry, choose=True)


def test_a_native_entry_whose_file_list_is_gone_is_made_again(registry, warehouse,
                                                               stop_at_making):
    paimon_table(warehouse, "db", "orders", snapshot=4)
    stamp = stamp_of(warehouse, "db", "orders")
    entry = CatalogEntry("VIEW", "", view_properties(0, stamp, NATIVE, **{
        "paimon.native-rows": "0:parquet:nullable"}))
    with pytest.raises(_Made):
        registry.expose("db", "orders", entry)
    os.makedirs(os.path.join(registry._reads_root, "db", "orders",
                             f"snapshot-{stamp}-schema-0", "_spark_metadata"))
    assert registry.expose("db", "orders", entry) is False


def test_an_entry_on_a_branch_is_kept_as_the_branch_s(registry, warehouse, stop_at_making):
    paimon_table(warehouse, "db", "orders", snapshot=4, branches=("audit",))
    registry.resolver.branch = "audit"
    stamp = stamp_of(warehouse, "db", "orders$branch_audit")
    entry = CatalogEntry("VIEW", "", view_properties(0, stamp, PYTHON, "audit"))
    assert registry.expose("db", "orders", entry) is False


def test_a_spark_table_of_the_same_name_is_refused(registry, warehouse):
    paimon_table(warehouse, "db", "orders")
    with pytest.raises(ValueError, match="both a Paimon table .* and a Spark parquet table"):
        registry.expose("db", "orders", CatalogEntry("EXTERNAL", "parquet", {}))


def test_an_entry_not_yet_seen_is_looked_up_by_its_name_alone(warehouse, monkeypatch):
    """Spark describes every entry a listing names: the lookup of one table's entry lists that
    name only, whatever else the database holds."""
    paimon_table(warehouse, "db", "orders")
    spark = FakeSpark({"db": [listed("orders", "EXTERNAL", "parquet"), listed("other")]})
    registry = PaimonTableRegistry(spark, warehouse, {})
    with pytest.raises(ValueError, match="both a Paimon table .* and a Spark parquet table"):
        registry.expose("db", "orders")
    assert spark.statements == ["show table extended in `db` like 'orders'"]


def test_a_missing_table_or_an_unsafe_name_is_refused(registry):
    with pytest.raises(TableNotFoundError, match="db.orders does not exist"):
        registry.expose("db", "orders")
    with pytest.raises(ValueError, match="table name 'Orders'"):
        registry.expose("db", "Orders")


# -- refresh before a statement ------------------------------------------------------------
def test_refresh_makes_again_the_entries_behind_and_chooses_for_named_tables(
        registry, warehouse, monkeypatch):
    for table in ("behind", "current", "unchosen", "unnamed_unchosen"):
        paimon_table(warehouse, "db", table, snapshot=2)
    stamp = stamp_of(warehouse, "db", "current")
    registry._exposed = {("db", "behind"): "1.5", ("db", "current"): stamp,
                         ("db", "unchosen"): stamp_of(warehouse, "db", "unchosen"),
                         ("db", "unnamed_unchosen"): stamp_of(warehouse, "db", "unnamed_unchosen")}
    registry._entries = {key: CatalogEntry("VIEW", "", view_properties(read=UNCHOSEN))
                         for key in [("db", "unchosen"), ("db", "unnamed_unchosen")]}
    again = []
    monkeypatch.setattr(registry, "_expose_again",
                        lambda db, table, entry, choose=True, merge=False:
                        again.append((table, choose, merge)))
    registry.refresh_stale("select * from db.unchosen join db.behind")
    assert sorted(again) == [("behind", True, True), ("unchosen", True, True)]
    again.clear()
    registry.refresh_stale("describe extended db.behind")
    assert again == [("behind", True, False)]
    again.clear()
    registry.refresh_stale(None)
    assert again == [("behind", False, False)]


def test_a_table_gone_since_its_entry_is_no_longer_refreshed(registry, monkeypatch):
    registry._exposed[("db", "gone")] = "1.1"

    def expose(*args, **kwargs):
        raise TableNotFoundError("gone")

    monkeypatch.setattr(registry, "expose", expose)
    assert registry._expose_again("db", "gone", None) is False
    assert ("db", "gone") not in registry._exposed


def test_an_entry_another_process_changed_is_made_from_scratch(registry, monkeypatch):
    calls = []

    def expose(database, table, entry=None, choose=True, fresh=False, merge=False):
        calls.append(fresh)
        if not fresh:
            raise RuntimeError("[TABLE_OR_VIEW_NOT_FOUND]")
        return True

    monkeypatch.setattr(registry, "expose", expose)
    assert registry._expose_again("db", "t", None) is True
    assert calls == [False, True]


def test_a_branch_change_makes_again_the_entries_read_on_another_branch(
        registry, warehouse, monkeypatch):
    paimon_table(warehouse, "db", "orders", branches=("audit",))
    paimon_table(warehouse, "db", "customers")
    registry._entries = {("db", "orders"): CatalogEntry("VIEW", "", view_properties()),
                         ("db", "customers"): CatalogEntry("VIEW", "", view_properties())}
    again = []
    monkeypatch.setattr(registry, "_expose_again",
                        lambda db, table, entry, choose=True: again.append(table) or True)
    registry.use_branches("audit", {})
    assert again == ["orders"]                 # customers has no branch audit: still main
    registry.use_branches("audit", {})
    assert again == ["orders"]                 # the same branches: nothing to do


# -- forget ------------------------------------------------------------------------------
def test_forget_drops_the_view_and_every_hidden_table(spark, registry, warehouse):
    registry._write_targets[("db", "orders")] = "`db__paimon`.`write_orders`"
    file_lists = os.path.join(registry._reads_root, "db", "orders", "snapshot-1.1-schema-0")
    os.makedirs(file_lists)
    entry = CatalogEntry("VIEW", "", view_properties(**{"paimon.projected-rows": "2:ab"}))
    registry.forget("db", "orders", entry)
    assert spark.statements == [
        "drop table if exists `db__paimon`.`write_orders`",
        "drop table if exists `db`.`orders`",
        "drop table if exists `db__paimon`.`read_orders`",
        "drop table if exists `db__paimon`.`files_orders`",
        "drop table if exists `db__paimon`.`deletes_orders`",
        "drop table if exists `db__paimon`.`files_1_orders`",
        "drop table if exists `db__paimon`.`files_2_orders`"]
    assert "paimon.db.orders" in spark.registered      # Spark resolves a provider to drop
    assert not os.path.exists(os.path.dirname(file_lists))
    assert ("db", "orders") not in registry._write_targets


def test_forget_database_drops_the_hidden_database(spark, registry):
    registry._write_targets = {("db", "a"): "x", ("other", "b"): "y"}
    registry.forget_database("db")
    assert spark.statements == ["drop database if exists `db__paimon` cascade"]
    assert registry._write_targets == {("other", "b"): "y"}


# -- the statements that make an entry ---------------------------------------------------
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])
# the Python source's table declares the schema's NOT NULL; the tables reading stored files
# (superseded records, rows from before a column became NOT NULL) declare every column nullable
COLUMNS = "`id` bigint not null, `name` string"
FILE_COLUMNS = "`id` bigint, `name` string"


@pytest.fixture
def make_entry(registry, monkeypatch):
    """registry._make_entry of db.orders on a table of SCHEMA; returns (statements, properties
    of the view, the snapshot's file-list folder)."""
    monkeypatch.setattr(registry_module, "arrow_schema_of", lambda table: SCHEMA)

    def make(entry, plan, read, schema_id=0, snapshot="7.1", source="orders", fresh=False):
        registry.spark.statements.clear()
        target = EntryRead("db", "orders", source, schema_id, snapshot, read, plan)
        properties = registry._make_entry(target, entry, object(), fresh)
        folder = os.path.join(registry._reads_root, "db", source,
                              f"snapshot-{snapshot}-schema-{schema_id}")
        return registry.spark.statements, properties, folder

    return make


def native_plan(deleted=False, projections=0):
    return NativeSnapshot(
        7, "parquet", (("/data/f1.parquet", 10),),
        deleted={"f1.parquet": np.array([1])} if deleted else {},
        projected=tuple(Projection(("old_id", None), (("/data/f0.parquet", 5),))
                        for _ in range(projections)))


def test_a_first_python_entry_creates_its_read_table_and_view(make_entry):
    statements, properties, _ = make_entry(None, None, PYTHON)
    assert statements == [
        "create database if not exists `db__paimon`",
        "drop table if exists `db__paimon`.`read_orders`",
        f"create table `db__paimon`.`read_orders` ({COLUMNS}) using paimon.db.orders",
        "create or replace view `db`.`orders` tblproperties ('paimon.schema-id' = '0', "
        "'paimon.snapshot-id' = '7.1', 'paimon.read' = 'python', 'paimon.branch' = '', "
        "'paimon.python-rows' = '0') as select * from `db__paimon`.`read_orders`"]
    assert properties == view_properties(0, "7.1", PYTHON, **{"paimon.python-rows": "0"})


def test_a_first_native_entry_creates_every_table_it_reads(make_entry):
    statements, properties, folder = make_entry(None, native_plan(deleted=True, projections=1),
                                                NATIVE_WITH_DELETES)
    key = projected_key(0, native_plan(projections=1))
    assert statements[:7] == [
        "create database if not exists `db__paimon`",
        "drop table if exists `db__paimon`.`files_orders`",
        f"create table `db__paimon`.`files_orders` ({FILE_COLUMNS}) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}'",
        "drop table if exists `db__paimon`.`files_1_orders`",
        "create table `db__paimon`.`files_1_orders` (`old_id` bigint) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}/projection-1'",
        "drop table if exists `db__paimon`.`deletes_orders`",
        "create table `db__paimon`.`deletes_orders` (file_name string, words array<bigint>) "
        f"using parquet location '{folder}/deleted-rows-bitmaps'"]
    assert len(statements) == 8 and statements[7].startswith(
        "create or replace view `db`.`orders` tblproperties (")
    assert "union all" in statements[7] and "`db__paimon`.`deletes_orders` d" in statements[7]
    assert properties == view_properties(0, "7.1", NATIVE_WITH_DELETES, **{
        "paimon.native-rows": "0:parquet:nullable", "paimon.projected-rows": key,
        "paimon.deleted-rows": "bitmaps"})
    assert os.path.isdir(os.path.join(folder, "_spark_metadata"))


def test_a_new_snapshot_of_the_same_shape_moves_locations_and_view_properties(make_entry):
    plan = native_plan(deleted=True, projections=1)
    _, before, _ = make_entry(None, plan, NATIVE_WITH_DELETES)
    statements, properties, folder = make_entry(CatalogEntry("VIEW", "", before), plan,
                                                NATIVE_WITH_DELETES, snapshot="8.1")
    assert statements[:3] == [
        f"alter table `db__paimon`.`files_orders` set location '{folder}'",
        f"alter table `db__paimon`.`files_1_orders` set location '{folder}/projection-1'",
        f"alter table `db__paimon`.`deletes_orders` set location '{folder}/deleted-rows-bitmaps'"]
    assert len(statements) == 4 and statements[3].startswith(
        "alter view `db`.`orders` set tblproperties ('paimon.schema-id' = '0', "
        "'paimon.snapshot-id' = '8.1'")
    assert properties == dict(before, **{"paimon.snapshot-id": "8.1"})


def test_files_tables_an_older_entry_declared_not_null_are_made_anew(make_entry):
    plan = native_plan(projections=1)
    _, before, _ = make_entry(None, plan, NATIVE)
    older = dict(before, **{"paimon.native-rows": "0:parquet",
                            "paimon.projected-rows": "1:0123456789abcdef"})
    statements, properties, folder = make_entry(CatalogEntry("VIEW", "", older), plan, NATIVE,
                                                snapshot="8.1")
    assert statements[:4] == [
        "drop table if exists `db__paimon`.`files_orders`",
        f"create table `db__paimon`.`files_orders` ({FILE_COLUMNS}) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}'",
        "drop table if exists `db__paimon`.`files_1_orders`",
        "create table `db__paimon`.`files_1_orders` (`old_id` bigint) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}/projection-1'"]
    assert properties["paimon.native-rows"] == before["paimon.native-rows"] \
        == "0:parquet:nullable"
    assert properties["paimon.projected-rows"] == before["paimon.projected-rows"]


def test_turning_native_keeps_the_python_table_and_turning_back_reuses_it(make_entry):
    _, python, _ = make_entry(None, None, PYTHON)
    statements, native, folder = make_entry(CatalogEntry("VIEW", "", python), native_plan(),
                                            NATIVE, snapshot="8.1")
    assert statements[:2] == [
        "drop table if exists `db__paimon`.`files_orders`",
        f"create table `db__paimon`.`files_orders` ({FILE_COLUMNS}) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}'"]
    assert statements[2].startswith("create or replace view")    # it reads other tables now
    assert native["paimon.python-rows"] == "0" and native["paimon.projected-rows"] == "0:"
    statements, back, _ = make_entry(CatalogEntry("VIEW", "", native), None, PYTHON,
                                     snapshot="9.1")
    assert len(statements) == 1 and statements[0].startswith("create or replace view")
    assert back["paimon.native-rows"] == "0:parquet:nullable"


def test_fewer_projections_drop_the_extra_tables_after_the_new_view(make_entry):
    _, before, _ = make_entry(None, native_plan(projections=2), NATIVE)
    statements, properties, folder = make_entry(CatalogEntry("VIEW", "", before),
                                                native_plan(projections=1), NATIVE, snapshot="8.1")
    assert statements[0] == f"alter table `db__paimon`.`files_orders` set location '{folder}'"
    assert statements[1:3] == [
        "drop table if exists `db__paimon`.`files_1_orders`",
        "create table `db__paimon`.`files_1_orders` (`old_id` bigint) using parquet options "
        f"(recursiveFileLookup 'true') location '{folder}/projection-1'"]
    assert statements[3].startswith("create or replace view")
    assert statements[4:] == ["drop table if exists `db__paimon`.`files_2_orders`"]
    assert properties["paimon.projected-rows"].startswith("1:")


def test_another_branch_keeps_only_the_python_rows_record(make_entry):
    _, before, _ = make_entry(None, None, PYTHON)
    before["paimon.native-rows"] = "0:parquet"
    statements, properties, _ = make_entry(CatalogEntry("VIEW", "", before), native_plan(),
                                           NATIVE, source="orders$branch_audit")
    assert statements[0] == "drop table if exists `db__paimon`.`files_orders`"
    assert properties["paimon.branch"] == "audit"
    assert properties["paimon.python-rows"] == "0"       # names main's provider: kept
    assert "paimon.native-rows" in properties             # made anew for the branch


def test_a_fresh_or_older_style_entry_trusts_no_hidden_table(make_entry):
    _, before, _ = make_entry(None, None, PYTHON)
    statements, _, _ = make_entry(CatalogEntry("VIEW", "", before), None, PYTHON, fresh=True)
    assert statements[:2] == ["create database if not exists `db__paimon`",
                              "drop table if exists `db__paimon`.`read_orders`"]
    statements, _, _ = make_entry(CatalogEntry("MANAGED", "paimon.db.orders", {}), None, PYTHON)
    assert statements[:3] == ["drop table if exists `db`.`orders`",
                              "create database if not exists `db__paimon`",
                              "drop table if exists `db__paimon`.`read_orders`"]


def test_an_entry_another_process_made_meanwhile_is_taken_as_it_is(spark, make_entry,
                                                                   monkeypatch):
    monkeypatch.setattr(registry_module, "ENTRY_RACE_PAUSE_SECONDS", 0)
    stored = view_properties(0, "7.1", PYTHON, **{"paimon.python-rows": "0"})

    def sql(statement):
        if statement.startswith("show"):
            return SimpleNamespace(collect=lambda: [listed("orders", **stored)])
        raise RuntimeError("[TABLE_OR_VIEW_ALREADY_EXISTS] `db__paimon`.`read_orders`")

    spark.sql = sql
    _, properties, _ = make_entry(None, None, PYTHON)
    assert properties == stored
    stored["paimon.snapshot-id"] = "6.1"     # another snapshot's, each time: tried, then an error
    with pytest.raises(RuntimeError, match="ALREADY_EXISTS"):
        make_entry(None, None, PYTHON)


def test_an_entry_another_process_is_half_way_through_is_made_again(spark, make_entry,
                                                                    monkeypatch):
    """The other process has made the hidden table but not yet its view (a Connect test once
    failed so): this process makes the entry again, trusting no hidden table, and ends with
    its own view."""
    monkeypatch.setattr(registry_module, "ENTRY_RACE_PAUSE_SECONDS", 0)
    ran, failed = [], []

    def sql(statement):
        if statement.startswith("show"):
            return SimpleNamespace(collect=lambda: [])      # no view yet
        if statement.startswith("create table") and not failed:
            failed.append(statement)
            raise RuntimeError("[TABLE_OR_VIEW_ALREADY_EXISTS] `db__paimon`.`read_orders`")
        ran.append(statement)

    spark.sql = sql
    _, properties, _ = make_entry(None, None, PYTHON)
    assert failed and ran[-3:-1] == ["drop table if exists `db__paimon`.`read_orders`",
                                     failed[0]]
    assert ran[-1].startswith("create or replace view `db`.`orders`")
    assert properties["paimon.snapshot-id"] == "7.1"


# -- the active session of a thread ----------------------------------------------------------
class _Jvm:
    """py4j's view of the JVM: each attribute of a package path is a lookup (counted)."""

    def __init__(self):
        self.lookups = 0
        self.activated = []

    def __getattr__(self, name):
        if name in ("lookups", "activated"):
            raise AttributeError(name)
        self.lookups += 1
        return self if name != "SparkSession" else SimpleNamespace(
            setActiveSession=self.activated.append)


def test_activate_resolves_the_jvm_session_class_once(warehouse):
    spark = FakeSpark()
    spark.sparkContext._jvm = _Jvm()
    spark._jsparkSession = "session"
    registry = PaimonTableRegistry(spark, warehouse, {})
    for _ in range(3):
        assert registry.activate() is spark
    assert spark.sparkContext._jvm.activated == ["session"] * 3
    assert spark.sparkContext._jvm.lookups == len("org.apache.spark.sql.SparkSession".split("."))
