"""Makes the warehouse's Paimon tables resolvable by name in Spark SQL, in every session.

Spark keeps no options for a catalog table whose provider is a Python data source (the reader
gets an empty option map and no location), so a catalog entry cannot say which Paimon table it
is. Instead the identity is in the provider name: the table through which the entry of
``analytics.orders`` reads the Python source is ``CREATE TABLE analytics__paimon.read_orders
(...) USING paimon.analytics.orders``, and every session registers one small data-source class
per table under that name. Entries live in the session's metastore
(Derby under the warehouse), so views and later dbt invocations resolve them like any table.
The Paimon warehouse is the source of truth: ``sync`` adds entries for tables written by other
Paimon writers, recreates entries whose schema changed and drops entries of vanished tables.

Over Spark Connect every dbt process joins one shared server session
(environments/connect_client.py): a data source is registered there once (session_sources.py).

The entry a query names is a view, ``analytics.orders``, over hidden tables in
``analytics__paimon`` that read the table's latest snapshot one of two ways (native_read.py):
when no split needs a merge of values, Spark's own Parquet/ORC reader over the snapshot's exact
data files (``files_orders``: ``USING parquet LOCATION <file list>``, joined with
``deletes_orders``, the rows to leave out, if any), or, for a partial-update or aggregation
table whose splits need a merge of values, the same reader over that snapshot's merged rows,
which the first statement reading the table's rows makes once (``_merged_rows``); otherwise the
``paimon`` Python data source (``read_orders``: ``USING paimon.analytics.orders``). The view's
properties record the Paimon schema id, the snapshot it reads, which way, and which hidden
tables exist for which schema:
they stay when the table turns to the other way, so that a snapshot costs a moved location and
at most a new view. A view also keeps SQL writes out: Spark
refuses ``INSERT INTO`` a view, where a Parquet table would take the rows into a folder no
Paimon reader sees: the adapter's connection sends an SQL ``INSERT`` into a Paimon table to a
table of the ``paimon`` source instead (``sql_write_target``), which appends or overwrites as
one commit. Each statement of the session first brings every entry whose table has a
newer snapshot up to date (``refresh_stale``), so a read always sees the table as it is.

The names of the hidden tables are in entry_names.py, the entry as listed in catalog_entry.py,
which entries to make, keep, make again or drop in entry_planner.py, the statements that make
or drop one in entry_statements.py, which catalog holds a table in table_resolver.py; this
module gathers what they decide from and runs their answers on the session.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource import native_read
# the names other modules import from here: the registry's vocabulary
from dbt.adapters.paimon.datasource.catalog_entry import (  # noqa: F401
    BRANCH_PROPERTY, DELETED_ROWS_PROPERTY, HIDDEN_TABLE_PROPERTIES, NATIVE, NATIVE_ROWS_PROPERTY,
    NATIVE_WITH_DELETES, NO_PROJECTIONS, PROJECTED_ROWS_PROPERTY, PYTHON, PYTHON_ROWS_PROPERTY,
    READ_OPTIONS_PROPERTY, READ_PROPERTY, SCHEMA_ID_PROPERTY, SNAPSHOT_PROPERTY, UNCHOSEN,
    CatalogEntry, catalog_entries, names_table, projected_key, projection_count, python_rows_key,
    read_of, shape)
from dbt.adapters.paimon.datasource.entry_names import (  # noqa: F401
    DELETES_PREFIX, FILES_PREFIX, HIDDEN_DATABASE_SUFFIX, PROVIDER_PREFIX, READ_PREFIX,
    SQL_BRANCH_SEPARATOR, WRITE_PREFIX, check_name, entry_view, hidden_database, hidden_table,
    is_safe_name, paimon_source_of, projected_table, provider_name, sql_name)
from dbt.adapters.paimon.datasource.entry_planner import (WantedEntry, branch_moves, keeps,
                                                          moved_databases, plan_refresh,
                                                          plan_sync)
from dbt.adapters.paimon.datasource.entry_statements import (EntryRead, entry_change,
                                                             forget_statements, write_target)
from dbt.adapters.paimon.datasource.merge_here import merge_here
from dbt.adapters.paimon.datasource.session_options import (ReadOptions, encode, paimon_confs,
                                                             table_read_options)
from dbt.adapters.paimon.datasource.session_sources import (REGISTERED_CONF_PREFIX,  # noqa: F401
                                                            SessionSources)
from dbt.adapters.paimon.datasource.source import (PARALLELISM_OPTION, PaimonDataSource,
                                                   arrow_schema_of, table_source_class,
                                                   with_read_options)
from dbt.adapters.paimon.datasource.spark_env import default_parallelism, is_connect
from dbt.adapters.paimon.datasource.statement_batch import run_statements, runs_scripts
from dbt.adapters.paimon.datasource.table_resolver import TableResolver
from dbt.adapters.paimon.datasource.spark_types import quote_identifier, spark_schema
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog.config import CatalogRoute
from dbt.adapters.paimon.format.errors import TableNotFoundError

# Two dbt processes on one Spark Connect server may make one table's entry at once; the one
# whose statement met the other's tries again, after a pause that grows and differs by process.
ENTRY_RACE_ATTEMPTS = 5
ENTRY_RACE_PAUSE_SECONDS = 0.2


class PaimonTableRegistry:
    """The warehouse's Paimon tables as Spark catalog entries, for one Spark session."""

    def __init__(self, spark: SparkSession, warehouse: str, catalog_options: Dict[str, str]):
        self.spark = spark
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options)
        # which catalog holds a database, its tables, and the branch each is read and written
        # on (no Spark: table_resolver.py)
        self.resolver = TableResolver(warehouse, catalog_options)
        # (database, table) of each provider registered -> the read options it has (the
        # session's when it was registered)
        self._registered: Dict[Tuple[str, str], ReadOptions] = {}
        # the session's spark.paimon.* settings, read as each command starts (sync_once)
        self._paimon_confs: Dict[str, str] = {}
        self._sync_lock = threading.RLock()
        self._synced_for: Optional[str] = None
        # database -> `show table extended` rows of the last sync that changed nothing in it
        self._listed: Dict[str, list] = {}
        self._sources = SessionSources(spark)
        # (database, table) -> the snapshot its entry reads ('' when the table has none):
        # what refresh_stale compares with the warehouse before each statement
        self._exposed: Dict[Tuple[str, str], str] = {}
        # ... and the entry itself as last made or seen (a refresh needs no listing)
        self._entries: Dict[Tuple[str, str], CatalogEntry] = {}
        # tables SQL has inserted into: (database, table) -> the write table's name
        self._write_targets: Dict[Tuple[str, str], str] = {}
        # the branches last applied to the entries (use_branches)
        self._branches_applied: Tuple[Optional[str], Dict] = (None, {})
        # the session's task slots, asked once (read_tasks.py spreads a read over them)
        self._task_slots: Optional[int] = None
        # called with the session each time a thread activates it for a statement: the dbt
        # layer labels the thread's Spark jobs with its node (job_labels.py)
        self.on_activate: Optional[Callable[[SparkSession], None]] = None
        self._session_class = None  # the JVM's SparkSession class (activate)
        self._runs_scripts: Optional[bool] = None  # whether Spark runs SQL scripts (_run)
        folder = listing.local_folder(warehouse)
        # Spark's own readers read the data files of local warehouses (a remote one would
        # need the JVM's file system for its scheme: its reads stay in the Python source)
        self._reads_root = native_read.reads_root(folder) if folder is not None else None
        self.register_source(PaimonDataSource, "")

    def register_source(self, source: type, identity: str) -> None:
        """Register a data-source class in the session (once per shared Spark Connect session:
        SessionSources.register)."""
        self._sources.register(source, identity)

    def activate(self, sql: Optional[str] = None, refresh: bool = True) -> SparkSession:
        """Make this session the active one of the calling thread, bring the entries of tables
        committed to since they were made up to date (``refresh``), and return the session.
        ``sql``: the statement about to run; the tables it names get their choice of rows
        (UNCHOSEN entries), the others keep it for a statement that reads them.

        dbt runs models in worker threads. Spark resolves Python data sources in
        DataFrameWriter.save() through the thread's *active* session, which a new py4j thread
        does not have: without this, writes fail with DATA_SOURCE_NOT_FOUND. A Spark Connect
        session names itself in every request: nothing to do there.
        """
        if refresh:
            self.refresh_stale(sql)
        if self.on_activate is not None:
            self.on_activate(self.spark)
        if is_connect(self.spark):
            return self.spark
        if self._session_class is None:
            # resolving the class by its package path costs py4j a reflection lookup per
            # package, ~3 ms a call, where the resolved class's call is one round trip
            self._session_class = self.spark.sparkContext._jvm.org.apache.spark.sql.SparkSession
        self._session_class.setActiveSession(self.spark._jsparkSession)
        return self.spark

    def refresh_stale(self, sql: Optional[str] = None) -> None:
        """Re-make the entry of every table whose latest snapshot is not the one its entry
        reads: a native entry reads a fixed file list, and a table can turn native (a
        compaction) or stop being so (an uncompacted write). Local warehouses only: a
        snapshot id there is one small file read; a remote table's entry reads its latest
        snapshot through the Python source anyway.

        A choice of rows (reading every key of the files to merge) is made only for the tables
        ``sql`` names: a table a command writes and never reads costs no such read."""
        if self._reads_root is None or not self._exposed:
            return
        with self._sync_lock:
            latest = {(database, table): listing.latest_snapshot_stamp(
                          self.warehouse_of(database), database,
                          self.paimon_name(database, table))
                      for database, table in self._exposed
                      if self._reads_root_of(database) is not None}
            for step in plan_refresh(self._exposed, latest, self._entries, sql):
                self._expose_again(step.database, step.table,
                                   self._entries.get((step.database, step.table)),
                                   choose=step.choose, merge=step.merge)

    def _expose_again(self, database: str, table: str, entry, choose: bool = True,
                      merge: bool = False) -> bool:
        """Make a table's catalog entry again from its current snapshot (from scratch if another
        process changed the entry); False if the table is gone."""
        try:
            try:
                self.expose(database, table, entry, choose, merge=merge)
            except TableNotFoundError:
                raise
            except Exception:  # noqa: BLE001 - another process changed the entry
                self.expose(database, table, choose=choose, fresh=True, merge=merge)
            return True
        except TableNotFoundError:
            self._exposed.pop((database, table), None)
            return False

    # -- catalogs ------------------------------------------------------------------------
    def use_catalogs(self, routes: Dict[str, CatalogRoute]) -> None:
        """Read and write ``database`` in ``routes[database]``'s catalog from now on, every
        other database in the profile's. The entries of a database whose catalog changed are
        made again from the catalog that holds it now."""
        with self._sync_lock:
            if routes == self.resolver.routes:
                return
            moved = moved_databases(self.resolver.routes, routes)
            self.resolver.routes = dict(routes)
            for database in moved:
                for key in [k for k in self._registered if k[0] == database]:
                    del self._registered[key]
                if self._synced_for is not None:
                    self.sync_database(database)

    def warehouse_of(self, database: str) -> str:
        return self.resolver.warehouse_of(database)

    def options_of(self, database: str) -> Dict[str, str]:
        return self.resolver.options_of(database)

    def catalog_name_of(self, database: str) -> Optional[str]:
        return self.resolver.catalog_name_of(database)

    def locations(self) -> list:
        return self.resolver.locations()

    def _databases(self) -> List[str]:
        return self.resolver.databases()

    def _reads_root_of(self, database: str) -> Optional[str]:
        """Where native reads keep their file lists, if Spark's own readers may read
        ``database``'s files: those of a local warehouse (a remote one would need the JVM's
        file system for its scheme: its reads stay in the Python source)."""
        route = self.resolver.routes.get(database)
        if route is None or self._reads_root is None:
            return self._reads_root
        return self._reads_root if listing.local_folder(route.warehouse) is not None else None

    # -- queries -------------------------------------------------------------------------
    def is_paimon_table(self, database: str, table: str) -> bool:
        return self.resolver.is_paimon_table(database, table)

    def open_table(self, database: str, table: str):
        """The Paimon table (the branch of this process, if the table has it)."""
        from dbt.adapters.paimon.catalog import warehouse as wh

        return wh.open_table(self.warehouse_of(database), database,
                             self.paimon_name(database, table), self.options_of(database))

    def use_branches(self, default: Optional[str],
                     tables: Dict[Tuple[str, str], Optional[str]]) -> None:
        """Read and write on these branches from now on (branch_of); when they differ from the
        ones in use, every entry whose table is read on another branch now is made again at
        once (refresh_stale does so only for local warehouses, and the session's first sync
        may have run under another invocation's branches)."""
        wanted = (default, dict(tables))
        if self._branches_applied == wanted:
            return
        with self._sync_lock:
            if self._branches_applied == wanted:
                return
            self.resolver.branch, self.resolver.table_branches = default, wanted[1]
            sources = {}
            for database, table in self._entries:
                try:
                    sources[(database, table)] = self.paimon_name(database, table)
                except Exception:  # noqa: BLE001 - dropped meanwhile: its next read says so
                    continue
            for database, table in branch_moves(self._entries, sources):
                if not self._expose_again(database, table, self._entries[(database, table)]):
                    self._entries.pop((database, table), None)
            self._branches_applied = wanted

    # the branches this process reads and writes (write-audit-publish): an entry db.t reads
    # t's branch when t has it, main otherwise: the resolver's (use_branches sets them)
    def branch_of(self, database: str, table: str) -> Optional[str]:
        return self.resolver.branch_of(database, table)

    def paimon_name(self, database: str, table: str) -> str:
        return self.resolver.paimon_name(database, table)

    def location(self, database: str, table: str):
        return self.resolver.location(database, table)

    def table_location(self, database: str, table: str):
        """The Paimon table named ``table`` (or branch name ``orders$branch_audit``) in
        ``database``; ``location`` picks the name for this invocation."""
        return self.resolver.table_location(database, table)

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
                self._paimon_confs = self._session_paimon_confs()
                self.sync()
                self._synced_for = key

    def sync(self, databases: Optional[List[str]] = None) -> None:
        """Bring Spark's catalog in line with the warehouse (all databases by default)."""
        with self._sync_lock:
            if databases is None:
                self._listed.clear()
                databases = self._databases()
            for database in databases:
                self.sync_database(database)

    def sync_database(self, database: str) -> None:
        self._listed.pop(database, None)
        rows = self._show_tables(database, create_database=True)
        plan = plan_sync(listing.list_tables(self.warehouse_of(database), database,
                                             self.options_of(database)), catalog_entries(rows))
        changed = bool(plan.forget)
        for table, entry in plan.expose:
            changed |= self.expose(database, table, entry, choose=False)
        for table, entry in plan.forget:
            self.forget(database, table, entry)
        if not changed:
            self._listed[database] = rows

    def expose(self, database: str, table: str, entry: Optional[CatalogEntry] = None,
               choose: bool = True, fresh: bool = False, merge: bool = False) -> bool:
        """Register the table's provider and create or bring up to date its catalog entry;
        whether the entry changed. Without ``choose`` a snapshot that needs a choice of rows
        gets an UNCHOSEN entry (refresh_stale makes the choice when a statement names it);
        without ``merge`` one that needs a merge of values an UNMERGED entry (refresh_stale
        makes the merge when a statement reads the table's rows)."""
        with self._sync_lock:
            return self._expose(database, table, entry, choose, fresh, merge)

    def _expose(self, database: str, table: str, entry: Optional[CatalogEntry],
                choose: bool, fresh: bool = False, merge: bool = False) -> bool:
        check_name("database", database)
        check_name("table", table)
        source = self.paimon_name(database, table)  # (a branch exists only with its table)
        branch = source.partition(listing.BRANCH_SEPARATOR)[2]
        warehouse = self.warehouse_of(database)
        schema_id = listing.latest_schema_id(warehouse, database, source,
                                             self.options_of(database))
        if schema_id is None:
            raise TableNotFoundError(
                f"Paimon table {database}.{table} does not exist in warehouse {warehouse}")
        self._register_provider(database, source)
        snapshot = self._latest_snapshot(database, source)
        if entry is None:
            entry = self._catalog_entry(database, table)
        read_options = self.read_options_of(database, table)
        wanted = WantedEntry(database, table, warehouse, schema_id, snapshot, branch, choose,
                             merge, encode(read_options))
        if keeps(entry, wanted, lambda: self._files_present(database, source, entry)):
            self._exposed[(database, table)] = snapshot
            self._entries[(database, table)] = entry
            return False
        self._listed.pop(database, None)
        paimon_table = with_read_options(self.open_table(database, table), read_options)
        schema_id = paimon_table.table_schema.id  # the schema the entry describes
        plan, why = None, ""
        if self._reads_root_of(database) is not None:
            latest, plan, why = native_read.plan_native(paimon_table, choose=choose,
                                                        merge_values=merge)
            snapshot = listing.snapshot_stamp(warehouse, database, source, latest)
            if why == native_read.VALUES_TO_MERGE:
                plan, why = self._merged_rows(database, source, latest, schema_id, snapshot)
        target = EntryRead(database, table, source, schema_id, snapshot, read_of(plan, why), plan,
                           encode(read_options))
        properties = self._make_entry(target, entry, paimon_table, fresh)
        self._exposed[(database, table)] = snapshot
        self._entries[(database, table)] = CatalogEntry("VIEW", "", properties)
        written = self._write_targets.pop((database, table), None)
        if written:  # its columns (or branch) may have changed
            self.spark.sql(f"drop table if exists {written}")
        return True

    def _make_entry(self, target: EntryRead, entry: Optional[CatalogEntry], paimon_table,
                    fresh: bool = False) -> Dict[str, str]:
        """Create or move the listed ``entry`` to read ``target`` (of the opened
        ``paimon_table``), by the statements entry_statements.py decides (``fresh``: trusting
        none of the hidden tables the entry records). Returns the view's properties."""
        database, table, source = target.database, target.table, target.source
        schema_id, snapshot = target.schema_id, target.snapshot
        self._register_entry_providers(database, table, entry)
        folder = None
        if target.plan is not None:
            folder = native_read.write_file_list(self._reads_root_of(database), database, source,
                                                 target.plan, schema_id, snapshot)
        schema = arrow_schema_of(paimon_table)
        for attempt in range(ENTRY_RACE_ATTEMPTS):
            try:
                change = entry_change(target, entry, schema, folder, fresh)
                self._run(change.statements + change.afterwards)
                properties = change.properties
                break
            except Exception as exc:
                # Another dbt process on the same Spark Connect server (one metastore) is
                # making the entry meanwhile (its drop-and-create of a hidden table met ours):
                # fine if its entry reads this schema and snapshot with the same session read
                # options; otherwise made again, from
                # the entry as listed now and trusting none of its hidden tables.
                if "ALREADY_EXISTS" not in str(exc) and "TABLE_OR_VIEW_NOT_FOUND" not in str(exc):
                    raise
                now = self._catalog_entry(database, table)
                if now is not None and now.schema_id == schema_id and now.snapshot == snapshot \
                        and now.properties.get(READ_OPTIONS_PROPERTY, "") == target.read_options:
                    properties = now.properties
                    break
                if attempt == ENTRY_RACE_ATTEMPTS - 1:
                    raise
                time.sleep(ENTRY_RACE_PAUSE_SECONDS * (attempt + 1) * (1 + random.random()))
                entry, fresh = now, True
        if self._reads_root_of(database) is not None:
            native_read.prune_file_lists(self._reads_root_of(database), database, source, folder)
        return properties

    def _merged_rows(self, database: str, source: str, snapshot_id: int, schema_id: int,
                     stamp: str) -> Tuple[Optional[native_read.NativeSnapshot], str]:
        """Merge the snapshot's values once into Parquet files beside its file list, which
        every later read of the snapshot reads with Spark's own reader: a small snapshot in this
        process (merge_here.py), a larger one by Spark, writing the Python source's merged read
        (the merge runtime, in Spark's tasks); merged by another process already, those files
        are used. Best effort: if the merge cannot be kept, the entry reads through the Python
        source, whose read reports any error of the merge."""
        reads_root = self._reads_root_of(database)
        folder = native_read.merged_folder(reads_root, database, source, stamp, schema_id)
        if not os.path.isdir(folder):
            staging = native_read.staging_folder(reads_root, database, source)
            location = self.table_location(database, source)
            try:
                if not merge_here(location, snapshot_id, staging):
                    options = {**location.source_options(), "snapshot_id": str(snapshot_id),
                               PARALLELISM_OPTION: str(self._parallelism())}
                    self.spark.read.format("paimon").options(**options).load() \
                        .write.parquet(staging)
            except Exception as exc:  # noqa: BLE001 - the Python source's read says why
                shutil.rmtree(staging, ignore_errors=True)
                return None, f"the merge of values could not be kept: {str(exc)[:200]}"
            native_read.put_in_place(staging, folder)
        plan = native_read.merged_snapshot(snapshot_id, folder)
        return plan, "" if plan is not None else "no data"

    def sql_write_target(self, database: str, table: str) -> Optional[str]:
        """The table an SQL ``INSERT`` into the Paimon table ``database.table`` writes to: a
        table of the ``paimon`` Python source, ``<database>__paimon.write_<table>`` (Spark
        refuses INSERT into the view that names it; ``write_<table>__branch_<b>`` for a branch,
        so that the provider a later command must register to drop it follows from its name);
        None when it is no Paimon table."""
        with self._sync_lock:
            key = (database, table)
            if key not in self._write_targets:
                if not is_safe_name(database) or not is_safe_name(table) \
                        or listing.latest_schema_id(self.warehouse_of(database), database,
                                                    table, self.options_of(database)) is None:
                    return None
                source = self.paimon_name(database, table)
                self._register_provider(database, source)
                name, statements = write_target(database, source,
                                                arrow_schema_of(self.open_table(database, table)))
                self._run(statements)
                self._write_targets[key] = name
            return self._write_targets[key]

    def forget(self, database: str, table: str, entry: Optional[CatalogEntry] = None) -> None:
        """Drop the catalog entry of a Paimon table that was dropped or renamed, and its hidden
        tables (``entry``: the entry as listed, when this process has not made it)."""
        with self._sync_lock:
            self._listed.pop(database, None)
            self._exposed.pop((database, table), None)
            entry = self._entries.pop((database, table), None) or entry
            self._register_entry_providers(database, table, entry)
            self._run(forget_statements(
                database, table, projection_count(entry.properties if entry else {}),
                self._write_targets.pop((database, table), None)))
            if self._reads_root is not None:
                native_read.forget_file_lists(self._reads_root, database, table)

    def snapshot_view(self, database: str, table: str, snapshot_id: int,
                      view: str) -> Optional[str]:
        """A temporary view ``view`` of the table as of ``snapshot_id`` read by Spark's own
        file reader, if no split of that snapshot needs a merge; None otherwise (the caller
        reads it through the Python source). Temporary: a time-travel read belongs to the
        session that asked for it."""
        reads_root = self._reads_root_of(database)
        if reads_root is None:
            return None
        source = self.paimon_name(database, table)
        paimon_table = with_read_options(self.open_table(database, source),
                                         self.read_options_of(database, table))
        _, plan, _ = native_read.plan_native(paimon_table, snapshot_id)
        if plan is None:
            return None
        schema_id = paimon_table.table_schema.id
        stamp = listing.snapshot_stamp(self.warehouse_of(database), database, source,
                                       plan.snapshot_id)
        folder = native_read.write_file_list(reads_root, database, source, plan, schema_id,
                                             stamp, prefix=native_read.TRAVEL_PREFIX)
        from pyspark.sql import functions as F

        schema = arrow_schema_of(paimon_table)
        bitmaps = (self.spark.read.format("parquet").schema(native_read.BITMAPS_DDL)
                   .load(native_read.deletes_folder(folder))) if plan.deleted else None

        def live_rows(location: str, columns) -> "DataFrame":  # noqa: F821
            rows = (self.spark.read.format(plan.file_format)
                    .schema(spark_schema(native_read.files_schema(columns)))
                    .option("recursiveFileLookup", "true").load(location))
            if bitmaps is None:
                return rows
            names = rows.columns
            located = rows.select("*", F.col("_metadata.file_name").alias("__file"),
                                  F.col("_metadata.row_index").alias("__row"))
            return (located.join(F.broadcast(bitmaps), located["__file"] == bitmaps["file_name"],
                                 "left")
                    .where(F.expr(native_read.live_row("__row", "words")))
                    .select(*[F.col(quote_identifier(n)) for n in names]))

        rows = live_rows(folder, schema)
        for number, projection in enumerate(plan.projected, start=1):
            renamed = live_rows(native_read.projection_folder(folder, number),
                                native_read.projection_schema(projection, schema))
            rows = rows.unionAll(renamed.select(*[
                (F.col(quote_identifier(stored)) if stored is not None
                 else F.lit(None).cast(column.dataType)).alias(column.name)
                for stored, column in zip(projection.columns, spark_schema(schema).fields)]))
        rows.createOrReplaceTempView(view)
        return view

    def forget_database(self, database: str) -> None:
        """Drop the hidden database of a Paimon database that was dropped."""
        with self._sync_lock:
            self.spark.sql(f"drop database if exists "
                           f"{quote_identifier(hidden_database(database))} cascade")
            for key in [k for k in self._write_targets if k[0] == database]:
                self._write_targets.pop(key)

    # -- internals -------------------------------------------------------------------------
    def _run(self, statements: List[str]) -> None:
        """The statements in order, as one SQL script where the session runs them
        (statement_batch.py: over Spark Connect, one round trip and one metastore store)."""
        if self._runs_scripts is None:
            self._runs_scripts = runs_scripts(self.spark)
        run_statements(self.spark, statements, self._runs_scripts)

    def _files_present(self, database: str, table: str, entry: CatalogEntry) -> bool:
        """Whether a native entry's file list is on disk (someone may have deleted
        ``.spark/paimon-reads``): if not, the entry is made again."""
        reads_root = self._reads_root_of(database)
        if shape(entry.read) == PYTHON or reads_root is None or not entry.snapshot:
            return True
        return native_read.has_file_list(native_read.file_list_folder(
            reads_root, database, table, entry.snapshot, entry.schema_id))

    def _latest_snapshot(self, database: str, table: str) -> str:
        if self._reads_root_of(database) is None:
            return ""
        return listing.latest_snapshot_stamp(self.warehouse_of(database), database, table)

    def _parallelism(self) -> int:
        if self._task_slots is None:
            self._task_slots = default_parallelism(self.spark)
        return self._task_slots

    def _register_provider(self, database: str, table: str) -> None:
        read_options = self.read_options_of(database, table)
        if self._registered.get((database, table)) == read_options:
            return
        warehouse, options = self.warehouse_of(database), self.options_of(database)
        source = table_source_class(provider_name(database, table), warehouse, database, table,
                                    options, self._parallelism(), read_options)
        identity = json.dumps([warehouse, database, table, options, encode(read_options)],
                              sort_keys=True)
        self.register_source(source, identity)
        self._registered[(database, table)] = read_options

    def read_options_of(self, database: str, table: str) -> ReadOptions:
        """The table options the session sets for reads of ``database.table`` (or of a branch
        of it: the table's), session_options.py."""
        return table_read_options(self._paimon_confs, database,
                                  table.partition(listing.BRANCH_SEPARATOR)[0])

    def _session_paimon_confs(self) -> Dict[str, str]:
        """The session's spark.paimon.* settings (one round trip over Spark Connect)."""
        try:
            return paimon_confs(self.spark.conf.getAll)
        except Exception:  # noqa: BLE001 - a session that lists no settings sets none
            return {}

    def _register_entry_providers(self, database: str, table: str,
                                  entry: Optional[CatalogEntry]) -> None:
        """Register the providers the hidden tables of ``entry`` name, whichever process made
        it: Spark resolves a table's provider even to drop it, and an entry made by a command
        on a branch reads the branch's provider, which a
        later command on main has no reason to register. Registering a provider reads nothing:
        a branch deleted since costs nothing."""
        if entry is None:  # hidden tables left without their view: made on main, if any
            self._register_provider(database, table)
            return
        recorded = entry.properties.get(PYTHON_ROWS_PROPERTY, "").partition("@")[2]
        for branch in {entry.branch, recorded}:
            self._register_provider(database, table if not branch else
                                    f"{table}{listing.BRANCH_SEPARATOR}{branch}")
        if entry.provider.startswith(PROVIDER_PREFIX) and \
                entry.provider != provider_name(database, table):  # an older-style entry
            self._register_provider(database, paimon_source_of(entry.provider))

    def _show_tables(self, database: str, create_database: bool = False,
                     pattern: str = "*") -> list:
        """`show table extended` of ``database`` (of the entries ``pattern`` names); with
        ``create_database``, a database missing from Spark's catalog is created first (asked
        only when the listing finds none: over Spark Connect each question is a round trip)."""
        sql = f"show table extended in {quote_identifier(database)} like '{pattern}'"
        try:
            return self.spark.sql(sql).collect()
        except Exception as exc:  # noqa: BLE001 - re-raised unless the database is missing
            if not create_database or "SCHEMA_NOT_FOUND" not in str(exc):
                raise
        self.spark.sql(f"create database if not exists {quote_identifier(database)}")
        return self.spark.sql(sql).collect()

    def _catalog_entry(self, database: str, table: str) -> Optional[CatalogEntry]:
        """The entry named ``table`` as Spark lists it, if any. The listing names the table
        (a checked name: no pattern character): Spark describes each entry it lists, so a
        listing of the whole database costs as much as the database holds entries."""
        return catalog_entries(self._show_tables(database, pattern=check_name("table", table))
                               ).get(table)

