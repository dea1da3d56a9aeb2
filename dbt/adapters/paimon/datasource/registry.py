"""Makes the warehouse's Paimon tables resolvable by name in Spark SQL, in every session.

Spark keeps no options for a catalog table whose provider is a Python data source (the reader
gets an empty option map and no location), so a catalog entry cannot say which Paimon table it
is. Instead the identity is in the provider name: the entry for ``analytics.orders`` is
``CREATE TABLE analytics.orders (...) USING paimon.analytics.orders`` and every session registers
one small data-source class per table under that name. Entries live in the session's metastore
(Derby under the warehouse), so views and later dbt invocations resolve them like any table.
The Paimon warehouse is the source of truth: ``sync`` adds entries for tables written by other
Paimon writers, recreates entries whose schema changed and drops entries of vanished tables.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource.source import PaimonDataSource, arrow_schema_of, table_source_class
from dbt.adapters.paimon.datasource.spark_env import is_connect
from dbt.adapters.paimon.datasource.spark_types import quote_identifier, spark_ddl_columns
from dbt.adapters.paimon.format import warehouse as wh

PROVIDER_PREFIX = "paimon."
SCHEMA_ID_PROPERTY = "paimon.schema-id"
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
        spark.dataSource.register(PaimonDataSource)

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
        return wh.table_exists(self.warehouse, database.lower(), table.lower(),
                               self.catalog_options)

    def open_table(self, database: str, table: str):
        return wh.open_table(self.warehouse, database, table, self.catalog_options)

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
            databases = wh.list_databases(self.warehouse, self.catalog_options)
        for database in databases:
            self.sync_database(database)

    def sync_database(self, database: str) -> None:
        if not self.spark.catalog.databaseExists(database):
            self.spark.sql(f"create database if not exists {quote_identifier(database)}")
        entries = self._catalog_entries(database)
        paimon_tables = set(wh.list_tables(self.warehouse, database, self.catalog_options))
        for table in sorted(paimon_tables):
            self.expose(database, table, entries.get(table))
        for table, entry in entries.items():
            if entry.provider.startswith(PROVIDER_PREFIX) and table not in paimon_tables:
                self._drop_entry(database, table)

    def expose(self, database: str, table: str, entry: Optional[CatalogEntry] = None) -> None:
        """Register the table's provider and create or refresh its catalog entry."""
        check_name("database", database)
        check_name("table", table)
        paimon_table = self.open_table(database, table)
        self._register_provider(database, table)
        schema_id = paimon_table.table_schema.id
        if entry is None:
            entry = self._catalog_entries(database).get(table)
        if entry is not None:
            if entry.provider == provider_name(database, table) and entry.schema_id == schema_id:
                return
            if not entry.provider.startswith(PROVIDER_PREFIX):
                raise ValueError(
                    f"{database}.{table} is both a Paimon table in {self.warehouse} and a "
                    f"Spark {entry.provider} table; drop one of them."
                )
            self._drop_entry(database, table)
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
        self.spark.dataSource.register(source)
        self._registered.add((database, table))

    def _drop_entry(self, database: str, table: str) -> None:
        self.spark.sql(
            f"drop table if exists {quote_identifier(database)}.{quote_identifier(table)}"
        )

    def _catalog_entries(self, database: str) -> Dict[str, CatalogEntry]:
        rows = self.spark.sql(
            f"show table extended in {quote_identifier(database)} like '*'"
        ).collect()
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
