"""Makes the warehouse's Paimon tables resolvable by name in Spark SQL, in every session.

Spark keeps no options for a catalog table whose provider is a Python data source (the reader
gets an empty option map and no location), so a catalog entry cannot say which Paimon table it
is. Instead the identity is in the provider name: the entry for ``analytics.orders`` is
``CREATE TABLE analytics.orders (...) USING paimon.analytics.orders`` and every session registers
one small data-source class per table under that name. Entries live in the session's metastore
(Derby under the warehouse), so views and later dbt invocations resolve them like any table.
The Paimon warehouse is the source of truth: ``sync`` adds entries for tables written by other
Paimon writers, recreates entries whose schema changed and drops entries of vanished tables.

Over Spark Connect every dbt process joins one shared server session (environments/connect_client.py), and
a data source registered there stays registered for the next command. So the session's conf
records each registration (``spark.dbt.paimon.registered.<name>`` = a digest of what was
registered), read with one request, and a command registers only what is missing or differs:
a command on an unchanged warehouse sends no registration at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource.source import PaimonDataSource, arrow_schema_of, table_source_class
from dbt.adapters.paimon.datasource.spark_env import is_connect
from dbt.adapters.paimon.datasource.spark_types import quote_identifier, spark_ddl_columns
from dbt.adapters.paimon.format import listing
from dbt.adapters.paimon.format.errors import TableNotFoundError

PROVIDER_PREFIX = "paimon."
SCHEMA_ID_PROPERTY = "paimon.schema-id"
REGISTERED_CONF_PREFIX = "spark.dbt.paimon.registered."
_PROVIDER_LINE = re.compile(r"^Provider: (.*)$", re.MULTILINE)
_PROPERTIES_LINE = re.compile(r"^Table Properties: \[(.*)\]$", re.MULTILINE)
# Identifiers a provider name can carry unquoted; others are refused with a clear error.
_SAFE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def provider_name(database: str, table: str) -> str:
    return f"{PROVIDER_PREFIX}{database}.{table}"


def check_name(kind: str, name: str) -> str:
    if not _SAFE_NAME.match(name or ""):
        raise ValueError(
            f"Paimon {kind} name {name!r} is not supported: use lower-case letters, digits and "
            "underscores, starting with a letter or underscore (Spark's metastore lower-cases "
            "names, and the name is part of the table's Spark provider)."
        )
    return name


@dataclass(frozen=True)
class CatalogEntry:
    provider: str
    schema_id: Optional[int]


class PaimonTableRegistry:
    """The warehouse's Paimon tables as Spark catalog tables, for one Spark session."""

    def __init__(self, spark: SparkSession, warehouse: str, catalog_options: Dict[str, str]):
        self.spark = spark
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options)
        self._registered: Set[Tuple[str, str]] = set()
        self._sync_lock = threading.Lock()
        self._synced_for: Optional[str] = None
        # database -> `show table extended` rows of the last sync that changed nothing in it
        self._listed: Dict[str, list] = {}
        # Spark Connect: what the shared session has registered (name -> digest)
        self._session_registrations: Optional[Dict[str, str]] = None
        self.register_source(PaimonDataSource, "")

    def register_source(self, source: type, identity: str) -> None:
        """Register a data-source class in the session, unless the shared Spark Connect
        session holds it already: ``identity`` is what makes two registrations of the same name
        the same (e.g. the table location; the class code is the server's dbt-paimon, whose
        version the connection checked)."""
        if not is_connect(self.spark):
            self.spark.dataSource.register(source)
            return
        key = REGISTERED_CONF_PREFIX + source.name()
        digest = hashlib.sha256(f"{source.__module__}.{source.__qualname__}|{identity}"
                                .encode()).hexdigest()[:32]
        if self._session_registrations is None:
            self._session_registrations = {
                k: v for k, v in self.spark.conf.getAll.items()
                if k.startswith(REGISTERED_CONF_PREFIX)}
        if self._session_registrations.get(key) == digest:
            return
        self.spark.dataSource.register(source)
        self.spark.conf.set(key, digest)
        self._session_registrations[key] = digest

    def activate(self) -> SparkSession:
        """Make this session the active one of the calling thread, and return it.

        dbt runs models in worker threads. Spark resolves Python data sources in
        DataFrameWriter.save() through the thread's *active* session, which a new py4j thread
        does not have: without this, writes fail with DATA_SOURCE_NOT_FOUND. A Spark Connect
        session names itself in every request: nothing to do.
        """
        if is_connect(self.spark):
            return self.spark
        jvm = self.spark.sparkContext._jvm
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(self.spark._jsparkSession)
        return self.spark

    # -- queries -------------------------------------------------------------------------
    def is_paimon_table(self, database: str, table: str) -> bool:
        return listing.latest_schema_id(self.warehouse, database.lower(), table.lower(),
                                        self.catalog_options) is not None

    def open_table(self, database: str, table: str):
        from dbt.adapters.paimon.format import warehouse as wh

        return wh.open_table(self.warehouse, database, table, self.catalog_options)

    def take_listed_relations(self, database: str) -> Optional[list]:
        """The rows of ``show table extended in <database> like '*'`` as this invocation's sync
        read them, if the sync changed nothing in that database (dbt's relation cache asks the
        same question right after the sync); once, None after that or otherwise."""
        return self._listed.pop(database, None)

    # -- synchronisation -------------------------------------------------------------------
    def sync_once(self, key: str) -> None:
        """Sync once per ``key`` (a dbt invocation): a session outlives invocations (dbt's
        programmatic runner, orchestrators), and other writers create tables in between."""
        with self._sync_lock:
            if self._synced_for != key:
                self.sync()
                self._synced_for = key

    def sync(self, databases: Optional[List[str]] = None) -> None:
        """Bring Spark's catalog in line with the warehouse (all databases by default)."""
        if databases is None:
            self._listed.clear()
            databases = listing.list_databases(self.warehouse, self.catalog_options)
        for database in databases:
            self.sync_database(database)

    def sync_database(self, database: str) -> None:
        self._listed.pop(database, None)
        rows = self._show_tables(database, create_database=True)
        entries = _catalog_entries(rows)
        paimon_tables = set(listing.list_tables(self.warehouse, database, self.catalog_options))
        changed = False
        for table in sorted(paimon_tables):
            changed |= self.expose(database, table, entries.get(table))
        for table, entry in entries.items():
            if entry.provider.startswith(PROVIDER_PREFIX) and table not in paimon_tables:
                self._drop_entry(database, table)
                changed = True
        if not changed:
            self._listed[database] = rows

    def expose(self, database: str, table: str, entry: Optional[CatalogEntry] = None) -> bool:
        """Register the table's provider and create or refresh its catalog entry; whether the
        catalog entry changed."""
        check_name("database", database)
        check_name("table", table)
        schema_id = listing.latest_schema_id(self.warehouse, database, table,
                                             self.catalog_options)
        if schema_id is None:
            raise TableNotFoundError(
                f"Paimon table {database}.{table} does not exist in warehouse {self.warehouse}")
        self._register_provider(database, table)
        if entry is None:
            entry = self._catalog_entries(database).get(table)
        if entry is not None:
            if entry.provider == provider_name(database, table) and entry.schema_id == schema_id:
                return False
            if not entry.provider.startswith(PROVIDER_PREFIX):
                raise ValueError(
                    f"{database}.{table} is both a Paimon table in {self.warehouse} and a "
                    f"Spark {entry.provider} table; drop one of them."
                )
            self._drop_entry(database, table)
        self._listed.pop(database, None)
        paimon_table = self.open_table(database, table)
        schema_id = paimon_table.table_schema.id  # the schema the entry describes
        columns = spark_ddl_columns(arrow_schema_of(paimon_table))
        try:
            self.spark.sql(
                f"create table {quote_identifier(database)}.{quote_identifier(table)} "
                f"({columns}) using {provider_name(database, table)} "
                f"tblproperties ('{SCHEMA_ID_PROPERTY}' = '{schema_id}')"
            )
        except Exception as exc:
            # Another dbt process on the same Spark Connect server (one metastore) created the
            # entry meanwhile: fine if it is this table's, as of this schema.
            if "ALREADY_EXISTS" not in str(exc):
                raise
            entry = self._catalog_entries(database).get(table)
            if entry is None or entry.provider != provider_name(database, table) \
                    or entry.schema_id != schema_id:
                raise
        return True

    def forget(self, database: str, table: str) -> None:
        """Drop the catalog entry of a Paimon table that was dropped or renamed."""
        self._drop_entry(database, table)

    # -- internals -------------------------------------------------------------------------
    def _register_provider(self, database: str, table: str) -> None:
        if (database, table) in self._registered:
            return
        source = table_source_class(
            provider_name(database, table), self.warehouse, database, table, self.catalog_options
        )
        identity = json.dumps([self.warehouse, database, table, self.catalog_options],
                              sort_keys=True)
        self.register_source(source, identity)
        self._registered.add((database, table))

    def _drop_entry(self, database: str, table: str) -> None:
        self._listed.pop(database, None)
        self.spark.sql(
            f"drop table if exists {quote_identifier(database)}.{quote_identifier(table)}"
        )

    def _show_tables(self, database: str, create_database: bool = False) -> list:
        """`show table extended` of ``database``; with ``create_database``, a database missing
        from Spark's catalog is created first (asked only when the listing finds none: over
        Spark Connect each question is a round trip)."""
        sql = f"show table extended in {quote_identifier(database)} like '*'"
        try:
            return self.spark.sql(sql).collect()
        except Exception as exc:  # noqa: BLE001 - re-raised unless the database is missing
            if not create_database or "SCHEMA_NOT_FOUND" not in str(exc):
                raise
        self.spark.sql(f"create database if not exists {quote_identifier(database)}")
        return self.spark.sql(sql).collect()

    def _catalog_entries(self, database: str) -> Dict[str, CatalogEntry]:
        return _catalog_entries(self._show_tables(database))


def _catalog_entries(rows: list) -> Dict[str, CatalogEntry]:
    """The catalog entries (provider, Paimon schema id) among `show table extended` rows."""
    entries = {}
    for row in rows:
        if row.isTemporary:
            continue
        provider = _PROVIDER_LINE.search(row.information or "")
        properties = _PROPERTIES_LINE.search(row.information or "")
        schema_id = None
        if properties:
            for item in properties.group(1).split(", "):
                key, _, value = item.partition("=")
                if key == SCHEMA_ID_PROPERTY and value.isdigit():
                    schema_id = int(value)
        entries[row.tableName] = CatalogEntry(
            provider=(provider.group(1).strip() if provider else "view"),
            schema_id=schema_id,
        )
    return entries
