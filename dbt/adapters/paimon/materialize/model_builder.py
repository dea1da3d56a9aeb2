"""One dbt run of a Paimon model (``paimon_pk``, ``partial_update``, ``paimon_append``, and
dbt's ``table``, ``incremental``, ``seed`` with file_format='paimon'): one atomic Paimon commit.

Order of work (nothing is written before every check passed):
1. analyse the model's query (Spark plans it; no rows are computed) and validate the config;
2. create the table on the first run, or plan the changes to the existing one;
3. write the rows as one snapshot, or nothing on failure: primary-key tables through the merge
   write path (``write.write_primary_key_run``), append tables through the data source;
4. refresh the table's Spark catalog entry.
``--full-refresh`` builds a fresh table beside the old one and swaps it in only after its commit.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import pyarrow as pa
from pypaimon.schema.data_types import PyarrowFieldParser
from pypaimon.schema.schema_change import SchemaChange
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.paimon.materialize.schema_changes import (ChangeRequest, SchemaPlan,
                                                            StoredTable, plan_changes)
from dbt.adapters.paimon.materialize.standard_writes import WriteRequest
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.config import TableDefinition, table_definition
from dbt.adapters.paimon.config.blob_vector import stored_types
from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.datasource.source import TableRef, arrow_schema_of
from dbt.adapters.paimon.datasource.spark_types import (arrow_schema_for_spark, quote_identifier,
                                                        spark_schema)
from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

logger = AdapterLogger("Paimon")


@dataclass(frozen=True)
class BuildResult:
    message: str
    rows: int
    snapshot_id: Optional[int]
    created: bool
    # automatic maintenance after the commit (ops.after_run): what it did, or why it failed
    maintenance: Optional[str] = None
    maintenance_error: Optional[BaseException] = None


def paimon_columns(arrow_schema: pa.Schema) -> List[Tuple[str, str]]:
    """[(name, Paimon SQL type)] of an Arrow schema, nullability aside (compared separately)."""
    return [
        (f.name, str(f.type).replace(" NOT NULL", ""))
        for f in PyarrowFieldParser.to_paimon_schema(arrow_schema)
    ]


def stored_schema(query: pa.Schema, definition: TableDefinition) -> pa.Schema:
    """The table's Arrow schema for a query: key columns NOT NULL (Paimon requires it), all other
    columns nullable unless the model's contract says not_null. Spark's nullability inference
    (a literal is NOT NULL) is no contract: a later run may well bring NULLs, and Paimon cannot
    add NOT NULL columns."""
    keys = set(definition.primary_keys) | set(definition.not_null)
    return stored_types(pa.schema(  # BLOB and VECTOR columns at their Paimon types
        [
            f.with_nullable(f.name not in keys)
            for f in query
            if f.name != definition.row_kind_column
        ]
    ), definition.options)


def query_schema(df: DataFrame) -> pa.Schema:
    # Spark's timestamp is instant-based (Paimon TIMESTAMP_LTZ), timestamp_ntz is Paimon TIMESTAMP.
    return arrow_schema_for_spark(df.schema)


def check_typed(model: str, df: DataFrame) -> None:
    """Every column of the query has a type: an untyped NULL (``null as v``) is Spark's void
    type, which no Paimon column has (PaimonConfigError naming the columns, before any write)."""
    untyped = [f.name for f in df.schema.fields if _has_void(f.dataType)]
    if untyped:
        raise PaimonConfigError(
            f"Model '{model}': column(s) {untyped} have no type: the query gives an untyped "
            f"NULL (Spark's void type), and a Paimon column needs one. Cast it in the query, "
            f"e.g. `cast(null as string) as {untyped[0]}`.")


def _has_void(data_type) -> bool:
    from pyspark.sql.types import ArrayType, MapType, NullType, StructType

    if isinstance(data_type, NullType):
        return True
    if isinstance(data_type, ArrayType):
        return _has_void(data_type.elementType)
    if isinstance(data_type, MapType):
        return _has_void(data_type.keyType) or _has_void(data_type.valueType)
    if isinstance(data_type, StructType):
        return any(_has_void(f.dataType) for f in data_type.fields)
    return False


def check_not_null(df: DataFrame, definition: TableDefinition, samples: int = 5) -> None:
    """An enforced contract's not_null columns hold no NULL: PaimonDataError naming the columns
    and sample rows before anything is written. (Primary-key columns are checked by the write
    path itself, as Paimon requires.)"""
    columns = [c for c in definition.not_null if c not in definition.primary_keys]
    rows = null_rows(df, columns, samples)
    if rows:
        named = null_columns(rows, columns)
        raise PaimonDataError(
            f"NULL in not_null column(s) {named} of the model's contract; "
            f"nothing was written. Sample rows: {rows}. Filter or fill the NULLs in the model's "
            "query, or remove the not_null constraint.")


def null_rows(df: DataFrame, columns: List[str], samples: int = 5) -> List[dict]:
    """Up to ``samples`` rows of ``df`` holding a NULL in one of ``columns``."""
    if not columns:
        return []
    any_null = F.lit(False)
    for column in columns:
        any_null = any_null | F.col(f"`{column}`").isNull()
    return [row.asDict() for row in df.where(any_null).limit(samples).collect()]


def null_columns(rows: List[dict], columns: List[str]) -> List[str]:
    """Which of ``columns`` the sample ``rows`` (from null_rows) hold a NULL in."""
    return sorted({c for row in rows for c in columns if row.get(c) is None})


def stored_not_null(table, definition: TableDefinition, columns) -> List[str]:
    """Non-key ``columns`` the stored table has NOT NULL although the model's contract does not
    say not_null (an earlier contract's constraint, or the table's creator)."""
    return [f.name for f in table.table_schema.fields
            if not f.type.nullable and f.name in columns
            and f.name not in table.primary_keys and f.name not in definition.not_null]


@dataclass(frozen=True)
class ModelRun:
    """One model run's inputs (ModelBuilder.build): the model's ``definition`` written to
    Paimon table ``database.table`` from the query ``sql``."""

    definition: TableDefinition
    database: str
    table: str
    sql: str
    full_refresh: bool = False
    on_schema_change: str = "ignore"   # dbt's ignore / fail / append_new_columns / sync_all_columns
    # append models with incremental_strategy='insert_overwrite': replace the partitions the
    # run writes instead of appending
    overwrite_partitions: bool = False
    # how a dbt materialization (table, incremental, seed) writes an existing table
    # (standard_writes.py); None for dbt-paimon's own materializations
    request: Optional[WriteRequest] = None
    # the rows as Arrow in this process, written by _write_local or not at all (build returns
    # None: the run needs the query's path)
    local_rows: Optional[pa.Table] = None


# One writer at a time per Paimon table within this process. dbt runs independent nodes at once
# with --threads, and models that write one table (partial_update models assembling a shared
# table) are independent nodes; a run numbers its records from the bucket's sequence numbers when
# it starts writing, so the later of two overlapping runs is refused at commit ("another writer
# committed"). Within one dbt process the right answer is to wait; writers in other processes
# still meet the commit's check.
_table_locks: Dict[Tuple[str, str, str], threading.RLock] = {}
_table_locks_guard = threading.Lock()


def table_write_lock(warehouse: str, database: str, paimon_name: str) -> threading.RLock:
    """The lock the builds of Paimon table ``database.paimon_name`` (a branch included) of
    ``warehouse`` hold in this process (re-entrant: a thread never waits for itself)."""
    with _table_locks_guard:
        return _table_locks.setdefault((warehouse, database, paimon_name), threading.RLock())


class ModelBuilder:
    def __init__(self, registry: PaimonTableRegistry):
        self.registry = registry
        self.spark = registry.activate()

    def definition(self, model: str, materialization: str, config: dict, sql: str,
                   not_null: Tuple[str, ...] = (), arrow_schema: Optional[pa.Schema] = None
                   ) -> TableDefinition:
        """``arrow_schema``: the query's columns when its rows are Arrow this process holds
        (Spark is not asked)."""
        if arrow_schema is None:
            self.registry.activate(sql)  # the tables it names get their choice of rows
            df = self.spark.sql(sql)
            check_typed(model, df)
            arrow_schema = query_schema(df)
        columns = paimon_columns(arrow_schema)
        definition = table_definition(model, materialization, config, columns)
        return dataclasses.replace(definition, not_null=tuple(not_null))

    def build(self, run: ModelRun) -> Optional[BuildResult]:
        """Build the model, then run the table's automatic maintenance as Paimon's writers do
        after a commit (compaction triggers, snapshot expiry). The commit stands even if the
        maintenance fails: that is reported, not raised. None: ``run.local_rows`` were given
        and the run needs the query's path (nothing was written). Builds of one table in this
        process run one at a time (``table_write_lock``)."""
        lock = table_write_lock(self.registry.warehouse_of(run.database), run.database,
                                self.registry.paimon_name(run.database, run.table))
        with lock:
            result = self._build(run)
            if result is None or result.snapshot_id is None:
                return result
            from dbt.adapters.paimon.ops import after_run

            location = self.registry.location(run.database, run.table)
            try:
                done = after_run(self.spark, location)
            except Exception as exc:  # noqa: BLE001 - reported as a warning by the adapter
                return dataclasses.replace(result, maintenance_error=exc)
            return dataclasses.replace(result, maintenance="; ".join(done.messages) or None)

    def _build(self, run: ModelRun) -> Optional[BuildResult]:
        definition, database, table = run.definition, run.database, run.table
        sql, full_refresh, request = run.sql, run.full_refresh, run.request
        on_schema_change, local_rows = run.on_schema_change, run.local_rows
        if local_rows is not None:
            return self._write_local(definition, database, table, local_rows, request)
        if request is not None and request.schema_evolution and request.strategy == "merge" \
                and on_schema_change == "ignore":
            # Delta's MERGE WITH SCHEMA EVOLUTION: the run's new columns join the table; the
            # columns it lacks keep their stored values in matched rows (fill_kept_columns)
            on_schema_change = "append_new_columns"
        df = self._query(sql, request)
        schema = stored_schema(query_schema(df), definition)
        check_not_null(df, definition)
        if definition.target:
            if full_refresh:
                raise PaimonConfigError(
                    f"Model '{definition.model}' writes into the shared table {database}.{table} "
                    "(config `target`); --full-refresh would drop the other models' columns. "
                    "Drop the table with `dbt run-operation paimon_drop_table --args "
                    f"'{{relation: {database}.{table}}}'` and run all its writer models again."
                )
            # A shared wide table grows by each writer's columns; other writers' columns are
            # written as NULL, which partial-update leaves unchanged.
            on_schema_change = "append_new_columns"
        exists = self.registry.is_paimon_table(database, table)
        if not exists:
            self._create(definition, database, table, schema)
            try:
                self._on_branch(database, table)
                result = self._write(definition, database, table, df)
            except BaseException:  # a failed first run leaves no table behind
                wh.drop_table(self.registry.warehouse_of(database), database, table,
                              catalog_options=self.registry.options_of(database))
                raise
            self.registry.expose(database, table)
            return BuildResult(result.message, result.rows, result.snapshot_id, True)
        self._on_branch(database, table)
        if request is not None and (full_refresh or request.strategy == "replace"):
            return self._replace(definition, database, table, schema, df)
        if full_refresh:
            return self._rebuild(definition, database, table, schema, df)

        current = self.registry.open_table(database, table)
        plan = _plan_changes(definition, current, paimon_columns(schema), on_schema_change,
                             f"{database}.{table}")
        if plan.not_null_columns:
            self._check_stored_not_null(definition, database, table, plan.not_null_columns)
        if not definition.has_primary_key:
            # (the primary-key write path checks every NOT NULL column itself)
            self._check_run_fits_not_null(definition, current, df, f"{database}.{table}")
        if plan.changes_schema:
            self._alter(database, table, plan)
            # the query may read this table ({{ this }}): Spark plans it again against the
            # altered table, whose files no longer have the dropped columns
            self.registry.expose(database, table)
        try:
            if plan.changes_schema:
                df = self._query(sql, request)
            # stored columns the query no longer returns keep their values; columns this run
            # drops (on_schema_change='sync_all_columns') are gone from the table already
            absent = [c for c, _ in paimon_columns(arrow_schema_of(current))
                      if c not in df.columns and c not in plan.drop_columns]
            df = self._align(df, database, table, definition, plan)
            if request is not None:
                result = self._write_standard(definition, database, table, df, request, absent)
            else:
                result = self._write(definition, database, table, df, run.overwrite_partitions)
        except BaseException:
            if plan.changes_schema:  # a failed run leaves the table exactly as it was
                wh.retract_schema_changes(current, current.table_schema.id)
                self.registry.expose(database, table)
            raise
        return BuildResult(result.message, result.rows, result.snapshot_id, False)

    def _write_local(self, definition: TableDefinition, database: str, table: str,
                     rows: pa.Table, request: Optional[WriteRequest]) -> Optional[BuildResult]:
        """A new version of an append table from rows this process holds (a seed's file):
        written and committed here, with no Spark query (Spark would plan the rows, compute
        them and send them back as Arrow: seconds in a fresh process). Only when that is the
        whole job: a table without keys, contract or shared target, that is new (APPEND) or
        keeps exactly its columns (OVERWRITE). None otherwise: the query's path writes it."""
        if (definition.has_primary_key or definition.merge_keys or definition.not_null
                or definition.target or request is None or request.strategy != "replace"
                or self.registry.branch_of(database, table)):
            return None
        schema = stored_schema(rows.schema, definition)
        location = self.registry.location(database, table)
        if not self.registry.is_paimon_table(database, table):
            self._create(definition, database, table, schema)
            try:
                snapshot = _commit_local(location, rows, overwrite=None)
            except BaseException:  # a failed first run leaves no table behind
                wh.drop_table(self.registry.warehouse_of(database), database, table,
                              catalog_options=self.registry.options_of(database))
                raise
            self.registry.expose(database, table)
            return BuildResult(_local_message("APPEND", snapshot), rows.num_rows, snapshot,
                               True)
        current = self.registry.open_table(database, table)
        try:
            plan = _plan_changes(definition, current, paimon_columns(schema),
                                 "sync_all_columns", f"{database}.{table}")
        except PaimonConfigError:
            return None
        stored = arrow_schema_of(current)
        if (plan.changes_schema or plan.not_null_columns or stored.names != schema.names
                or paimon_columns(stored) != paimon_columns(schema)
                or stored_not_null(current, definition, schema.names)):
            return None
        snapshot = _commit_local(location, rows, overwrite="table")
        return BuildResult(_local_message("OVERWRITE", snapshot), rows.num_rows, snapshot,
                           False)

    def _query(self, sql: str, request: Optional[WriteRequest]) -> DataFrame:
        """The model's rows (not computed here)."""
        self.registry.activate(sql)
        df = self.spark.sql(sql)
        if request is not None and request.strategy == "microbatch" and request.window() is not None:
            # a batch writes only its window: rows outside it are other batches' (an upstream
            # model without event_time is not filtered by dbt)
            df = df.filter(request.window())
        return df

    # -- steps -----------------------------------------------------------------------------
    def _create(self, definition: TableDefinition, database: str, table: str, schema: pa.Schema):
        wh.create_table(
            self.registry.warehouse_of(database),
            database,
            table,
            schema,
            primary_keys=definition.primary_keys,
            partition_keys=definition.partition_keys,
            options=definition.options,
            catalog_options=self.registry.options_of(database),
        )

    def _on_branch(self, database: str, table: str) -> None:
        """A table written on a branch has it before anything is written to it: a new one
        starts from main's latest snapshot (ops/branches.py)."""
        branch = self.registry.branch_of(database, table)
        if branch:
            from dbt.adapters.paimon.ops.branches import ensure_branch

            main = self.registry.table_location(database, table)
            if ensure_branch(main, branch):
                self.registry.expose(database, table)

    def _rebuild(self, definition, database, table, schema, df) -> BuildResult:
        branch = self.registry.branch_of(database, table)
        if branch:
            raise PaimonConfigError(
                f"Model '{definition.model}' would rebuild {database}.{table} (a new table: "
                f"--full-refresh, or a change of keys, partitions or column types) on branch "
                f"'{branch}', which a branch cannot hold: only main can be rebuilt. Build it "
                f"on main (paimon_branch config 'main', or no paimon_branch var or profile "
                f"branch), or drop the branch's change.")
        staging = f"{table}__dbt_rebuild_{uuid.uuid4().hex[:8]}"
        self._create(definition, database, staging, schema)
        warehouse = self.registry.warehouse_of(database)
        options = self.registry.options_of(database)
        try:
            result = self._write(definition, database, staging, df)
        except Exception:
            wh.drop_table(warehouse, database, staging, catalog_options=options)
            raise
        # The old table stays readable until its replacement is committed and complete.
        wh.drop_table(warehouse, database, table, catalog_options=options)
        wh.rename_table(warehouse, database, staging, table, catalog_options=options)
        # the new table may have the old one's schema id with other columns: a new entry
        self.registry.forget(database, table)
        self.registry.expose(database, table)
        return BuildResult(result.message, result.rows, result.snapshot_id, True)

    def _replace(self, definition, database, table, schema, df) -> BuildResult:
        """A new version of the whole table as ONE OVERWRITE commit (table, seed, incremental
        --full-refresh): readers never see it missing, time travel still reads the previous
        version. Added or dropped columns evolve the schema first (retracted if the write
        fails); a change Paimon cannot evolve (keys, partitions, bucket count, merge options,
        column types or order) rebuilds beside the table and swaps it in (_rebuild)."""
        current = self.registry.open_table(database, table)
        wanted = paimon_columns(schema)
        try:
            plan = _plan_changes(definition, current, wanted, "sync_all_columns",
                                 f"{database}.{table}")
        except PaimonConfigError:
            return self._rebuild(definition, database, table, schema, df)
        stored = [n for n, _ in paimon_columns(arrow_schema_of(current))]
        evolved = [n for n in stored if n not in plan.drop_columns] + \
            [n for n, _ in plan.add_columns]
        if evolved != [n for n, _ in wanted] or (
                plan.not_null_columns and self._stored_nulls(database, table,
                                                             plan.not_null_columns)):
            # (a column altered to NOT NULL while stored rows hold NULLs in it would show
            # them until the OVERWRITE lands: the new table is built beside instead)
            return self._rebuild(definition, database, table, schema, df)
        # the new version's columns are nullable unless the contract says not_null (Paimon
        # always lets a non-key column become nullable)
        plan.nullable_columns = stored_not_null(current, definition, schema.names)
        if plan.changes_schema:
            self._alter(database, table, plan)
        try:
            df = self._align(df, database, table, definition, plan)
            result = self._write(definition, database, table, df, overwrite="table")
        except BaseException:
            if plan.changes_schema:
                wh.retract_schema_changes(current, current.table_schema.id)
            raise
        if plan.changes_schema:
            self.registry.expose(database, table)
        return BuildResult(result.message, result.rows, result.snapshot_id, False)

    def _write_standard(self, definition: TableDefinition, database: str, table: str,
                        df: DataFrame, request: WriteRequest, absent: List[str]) -> BuildResult:
        """An incremental run of a dbt materialization into its existing table (see
        standard_writes.py for what each strategy commits)."""
        from dbt.adapters.paimon.materialize import standard_writes as sw
        from dbt.adapters.paimon.format.splits import current_snapshot_id

        location = self.registry.location(database, table)
        before = current_snapshot_id(location.open())
        strategy = request.strategy
        keyed = definition.has_primary_key
        if strategy == "insert_overwrite":
            return self._write(definition, database, table, df, overwrite="partitions")
        if request.not_matched_by_source_action == "delete" and not keyed:
            raise PaimonConfigError(
                f"Model '{definition.model}': not_matched_by_source_action='delete' needs a "
                f"unique_key (the stored rows a run does not match are found by key): set "
                f"unique_key, or remove not_matched_by_source_action.")
        if request.has_merge_clauses and not (strategy == "merge" and keyed):
            raise PaimonConfigError(
                f"Model '{definition.model}': matched_condition, not_matched_condition, "
                f"skip_matched_step and skip_not_matched_step choose the rows of a merge: set "
                f"incremental_strategy='merge' with a unique_key, or remove them.")
        if strategy == "merge" and keyed:
            keys = list(definition.primary_keys)
            source = df
            df = sw.merge_clauses(self.spark, location, df, keys, request)
            kept = set(absent)
            if request.merge_update_columns is not None:
                kept |= {c for c in df.columns if c not in request.merge_update_columns}
            kept |= set(request.merge_exclude_columns)
            kept -= set(keys)
            df = sw.fill_kept_columns(self.spark, location, df, keys,
                                      [c for c in df.columns if c in kept], request.predicates)
            if request.not_matched_by_source_action == "delete":
                rows = sw.merge_deleting_unmatched(self.spark, location, definition, df, request,
                                                   source=source)
                return self._merge_write(definition, location, rows, sw.ROW_KIND)
            return self._write(definition, database, table, df)
        if strategy == "delete+insert" and not keyed:
            sw.delete_insert(self.spark, location, definition, df, request.unique_key,
                                    request.predicates)
            return self._committed("DELETE+INSERT", location, before)
        if strategy == "microbatch" and keyed:
            rows = sw.microbatch_primary_key(self.spark, location, definition, df, request)
            return self._merge_write(definition, location, rows, sw.ROW_KIND)
        if strategy == "microbatch":
            sw.microbatch_append(self.spark, location, definition, df, request)
            return self._committed("MICROBATCH window replaced", location, before)
        # append; delete+insert / merge on a primary-key table: a merge by key
        return self._write(definition, database, table, df)

    def _committed(self, verb: str, location: TableRef, before: Optional[int]
                   ) -> BuildResult:
        from dbt.adapters.paimon.format.splits import current_snapshot_id

        after = current_snapshot_id(location.open())
        snapshot = after if after != before else None
        return BuildResult(verb + (f" (snapshot {snapshot})" if snapshot else " (no change)"),
                           -1, snapshot, False)

    def _alter(self, database: str, table: str, plan: SchemaPlan) -> None:
        changes = [SchemaChange.set_option(k, v) for k, v in plan.set_options.items()]
        for name, type_name in plan.add_columns:
            from pypaimon.schema.data_types import DataTypeParser

            changes.append(SchemaChange.add_column(name, DataTypeParser.parse_data_type(type_name)))
        changes += [SchemaChange.drop_column(name) for name in plan.drop_columns]
        changes += [SchemaChange.update_column_nullability(name, True)
                    for name in plan.nullable_columns]
        catalog = wh.open_catalog(self.registry.warehouse_of(database),
                                  self.registry.options_of(database))
        name = f"{database}.{self.registry.paimon_name(database, table)}"  # or its branch
        if changes:
            catalog.alter_table(name, changes)
        if plan.not_null_columns:
            # a second ALTER: Paimon reads 'alter-column-null-to-not-null.disabled' from the
            # schema before the change, which the options above may just have set
            catalog.alter_table(name, [
                SchemaChange.update_column_nullability(name, False)
                for name in plan.not_null_columns])

    def _stored_nulls(self, database: str, table: str, columns: List[str]) -> List[dict]:
        """Sample stored rows holding a NULL in one of ``columns``."""
        from dbt.adapters.paimon.materialize.standard_writes import read_table

        location = self.registry.location(database, table)
        return null_rows(read_table(self.spark, location), columns)

    def _check_run_fits_not_null(self, definition: TableDefinition, current, df: DataFrame,
                                 relation: str) -> None:
        """The run's rows hold no NULL in a column the stored table has NOT NULL (the contract
        no longer saying not_null does not make the stored column nullable)."""
        columns = stored_not_null(current, definition, df.columns)
        rows = null_rows(df, columns)
        if rows:
            named = null_columns(rows, columns)
            raise PaimonDataError(
                f"Model '{definition.model}': column(s) {named} are NOT NULL in {relation}, and "
                f"the run's rows hold NULL there; nothing was written. Sample rows: {rows}. "
                f"Filter or fill the NULLs in the model's query, or rebuild with `dbt run "
                f"--full-refresh -s {definition.model}` (the columns are then nullable unless "
                f"the contract says not_null).")

    def _check_stored_not_null(self, definition: TableDefinition, database: str, table: str,
                               columns: List[str]) -> None:
        """Before a column becomes NOT NULL, no stored row may hold a NULL in it (Paimon's
        ALTER does not look at the data; a NOT NULL column holding NULLs would mislead every
        reader): PaimonDataError naming the columns and sample rows, nothing changed."""
        found = self._stored_nulls(database, table, columns)
        if found:
            named = null_columns(found, columns)
            raise PaimonDataError(
                f"Model '{definition.model}': its contract makes column(s) {named} not_null, "
                f"but stored rows of {database}.{table} hold NULL there, so the column cannot "
                f"become NOT NULL; nothing was changed. Sample rows: {found}. Give those rows "
                f"values first (a run without the constraint whose rows replace them), or "
                f"rebuild with `dbt run --full-refresh -s {definition.model}`.")

    def _align(self, df: DataFrame, database, table, definition, plan: SchemaPlan) -> DataFrame:
        """The query's rows in the table's column order; columns the table lacks get NULL."""
        stored = arrow_schema_of(self.registry.open_table(database, table))
        present = set(df.columns)
        spark_types = {f.name: f.dataType for f in spark_schema(stored).fields}
        # SQL text, which Spark parses in the one projection call: each classic PySpark Column
        # function first resolves `functions` through py4j's JVM view (~2 ms a column). A cast
        # is to an integer, DECIMAL or DOUBLE type (schema_changes.widens), whose simpleString
        # is its SQL name.
        columns = [
            f"cast({quote_identifier(f.name)} as {spark_types[f.name].simpleString()}) as "
            f"{quote_identifier(f.name)}"
            if f.name in plan.cast_columns  # a narrower type, widened exactly (plan_changes)
            else quote_identifier(f.name) if f.name in present
            else f"null as {quote_identifier(f.name)}"
            for f in stored
        ]
        if definition.row_kind_column:
            columns.append(quote_identifier(definition.row_kind_column))
        return df.selectExpr(*columns)

    def _write(self, definition: TableDefinition, database: str, table: str, df: DataFrame,
               overwrite_partitions: bool = False, overwrite: Optional[str] = None):
        """``overwrite``: None writes the rows into the table (merge or append); 'table'
        replaces the whole table, 'partitions' the partitions the rows write (one OVERWRITE)."""
        location = self.registry.location(database, table)
        if overwrite is None and overwrite_partitions:
            overwrite = "partitions"
        if definition.merge_keys:
            return self._merge_rows(definition, location, df)
        if not definition.has_primary_key:
            return self._append(definition, location, df, overwrite)
        return self._merge_write(definition, location, df, definition.row_kind_column,
                                 overwrite)

    def _merge_write(self, definition: TableDefinition, location: TableRef, df: DataFrame,
                     row_kind_column: Optional[str], overwrite: Optional[str] = None):
        from dbt.adapters.paimon.write import write_primary_key_run

        result = write_primary_key_run(
            self.spark,
            df,
            location,
            row_kind_column=row_kind_column,
            model_name=definition.model,
            write_path=definition.write_path,
            in_process_max_bytes=definition.in_process_max_bytes,
            overwrite=overwrite,
        )
        verb = "MERGE" if overwrite is None else "OVERWRITE"
        logger.debug(f"Model '{definition.model}' written {result.path_label}: "
                     f"{result.path_reason}")
        message = f"{verb} {result.records} rows {result.path_label}" + (
            f" (snapshot {result.snapshot_id})" if result.snapshot_id is not None else ""
        )
        return BuildResult(message, result.records, result.snapshot_id, False)

    def _merge_rows(self, definition: TableDefinition, location: TableRef, df: DataFrame):
        """paimon_append with incremental_strategy='merge' (row tracking): MERGE INTO the table
        ON the unique_key, matched rows updated (keeping their _ROW_ID), the rest inserted, by
        the executor the model's write_path / in_process_max_bytes choose."""
        from dbt.adapters.paimon.ops.row_ops import merge_rows

        on = " and ".join(f"t.`{k}` <=> s.`{k}`" for k in definition.merge_keys)
        try:
            result = merge_rows(self.spark, location, df, on,
                                write_path=definition.write_path,
                                in_process_max_bytes=definition.in_process_max_bytes)
        except ValueError as exc:
            raise PaimonConfigError(f"Model '{location.table}': {exc}") from exc
        return BuildResult(f"MERGE {result.message}", result.updated + result.inserted,
                           result.snapshot_id, False)

    def _append(self, definition: TableDefinition, location: TableRef, df: DataFrame,
                overwrite: Optional[str]):
        from dbt.adapters.paimon.write.append_run import write_append_run

        result = write_append_run(self.spark, df, location, definition.model, overwrite,
                                  write_path=definition.write_path,
                                  in_process_max_bytes=definition.in_process_max_bytes)
        logger.debug(f"Model '{definition.model}' written {result.choice.label}: "
                     f"{result.choice.reason}")
        verb = {"partitions": "OVERWRITE partitions", "table": "OVERWRITE"}.get(overwrite,
                                                                               "APPEND")
        committed = result.snapshot_id
        return BuildResult(
            f"{verb} {result.choice.label}"
            + (f" (snapshot {committed})" if committed is not None else " (no rows)"),
            -1, committed, False,
        )


def _commit_local(location: TableRef, rows: pa.Table, overwrite: Optional[str]
                  ) -> Optional[int]:
    """``rows`` as new files of the append table and ONE commit (APPEND, or OVERWRITE of the
    whole table); its snapshot id. On failure no file of the run stays."""
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files
    from dbt.adapters.paimon.format.commit import abort_unless_committed
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    table = location.open()
    before = current_snapshot_id(table)
    written = write_append_files(table, [rows]) if rows.num_rows else []
    try:
        commit_append_files(table, written, overwrite)
    except BaseException:
        abort_unless_committed(table, written)
        raise
    after = current_snapshot_id(location.open())
    return after if after != before else None


def _local_message(verb: str, snapshot: Optional[int]) -> str:
    return f"{verb} in-process" + (f" (snapshot {snapshot})" if snapshot is not None
                                   else " (no rows)")


def _plan_changes(definition: TableDefinition, current, query_columns, on_schema_change: str,
                  relation: str) -> SchemaPlan:
    """What a run must change in the existing Paimon table ``current`` (schema_changes)."""
    stored = StoredTable(
        primary_keys=tuple(current.primary_keys),
        partition_keys=tuple(current.partition_keys),
        options=dict(current.table_schema.options),
        columns=tuple(paimon_columns(arrow_schema_of(current))),
        nullable=tuple(f.name for f in current.table_schema.fields if f.type.nullable),
    )
    return plan_changes(ChangeRequest(definition, stored, tuple(query_columns),
                                      on_schema_change, relation))
