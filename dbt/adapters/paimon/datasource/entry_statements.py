"""The SQL that makes or moves a Paimon table's catalog entry (catalog_entry.py): decided from
the entry as listed and the snapshot to read, without a session.

The hidden tables of each way of reading stay when the entry turns to another (a table often
alternates between native and Python reads: a compaction, then a write), and the view's
properties record which exist for which schema: a snapshot read the other way then costs a
moved location and a new view, not a new set of tables (over Spark Connect each statement is
a round trip)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import pyarrow as pa

from dbt.adapters.paimon.datasource import native_read
from dbt.adapters.paimon.datasource.catalog_entry import (
    BRANCH_PROPERTY, DELETED_ROWS_PROPERTY, FILE_COLUMNS, HIDDEN_TABLE_PROPERTIES,
    NATIVE_ROWS_PROPERTY, NATIVE_WITH_DELETES, NO_PROJECTIONS, PROJECTED_ROWS_PROPERTY,
    PYTHON_ROWS_PROPERTY, READ_OPTIONS_PROPERTY, READ_PROPERTY, SCHEMA_ID_PROPERTY,
    SNAPSHOT_PROPERTY, CatalogEntry, projected_key, projection_count, python_rows_key, shape)
from dbt.adapters.paimon.datasource.entry_names import (DELETES_PREFIX, FILES_PREFIX, READ_PREFIX,
                                                        WRITE_PREFIX, entry_view,
                                                        hidden_database, hidden_table,
                                                        projected_table, provider_name,
                                                        sql_name, sql_text)
from dbt.adapters.paimon.datasource.spark_types import quote_identifier, spark_ddl_columns
from dbt.adapters.paimon.catalog import listing


@dataclass(frozen=True)
class EntryChange:
    """What makes an entry: ``statements`` in order, then ``afterwards`` (the tables the new
    view no longer reads, dropped once it is in place); ``properties``: the view's."""

    statements: List[str]
    afterwards: List[str]
    properties: Dict[str, str]


@dataclass(frozen=True)
class EntryRead:
    """What the entry of ``database.table`` is to read: Paimon table ``source`` (``table`` or
    one of its branches) as of schema ``schema_id`` and snapshot stamp ``snapshot``, the way
    ``read`` says (catalog_entry.py): through the Python source (``plan`` None) or natively,
    the snapshot ``plan`` (native_read.plan_native)."""

    database: str
    table: str
    source: str
    schema_id: int
    snapshot: str
    read: str
    plan: Optional["native_read.NativeSnapshot"] = None
    read_options: str = ""   # the session's, encoded (session_options.py)


def entry_change(target: EntryRead, entry: Optional[CatalogEntry], schema: pa.Schema,
                 folder: Optional[str], fresh: bool = False) -> EntryChange:
    """The change that makes the listed ``entry`` (None: there is none) read ``target``, whose
    columns are ``schema``, natively from the snapshot's file list ``folder`` if it has a
    ``plan``. ``fresh``: trust none of the hidden tables the entry records."""
    database, table, source = target.database, target.table, target.source
    schema_id, snapshot, plan, read = target.schema_id, target.snapshot, target.plan, target.read
    branch = source.partition(listing.BRANCH_SEPARATOR)[2]
    view = entry_view(database, table)
    # kept across branches: read_<t> records the branch whose provider it names, so that a
    # command on another branch knows to register that provider before dropping it
    before = entry.properties if (not fresh and entry is not None
                                  and entry.kind == "VIEW") else {}
    # what the hidden tables hold after this change, as the view's properties say it
    hidden = {key: before[key] for key in HIDDEN_TABLE_PROPERTIES if key in before}
    if before and entry.branch != branch:
        # another branch's schema ids name other columns: only read_<t>'s record stays
        # (its value names the branch, so the table is made anew)
        hidden = {key: value for key, value in hidden.items() if key == PYTHON_ROWS_PROPERTY}
    statements = []
    if entry is not None and entry.kind != "VIEW":
        statements.append(f"drop table if exists {view}")  # an older-style entry
    if not hidden:
        statements.append(f"create database if not exists "
                          f"{quote_identifier(hidden_database(database))}")
    # a hidden table the properties do not record as it is needed is made anew (a table of
    # that name may be left by an older entry: dropped first)
    columns = spark_ddl_columns(schema)
    python_key = python_rows_key(schema_id, branch)
    if plan is None and hidden.get(PYTHON_ROWS_PROPERTY) != python_key:
        python_rows = hidden_table(database, READ_PREFIX, table)
        statements += [f"drop table if exists {python_rows}",
                       f"create table {python_rows} ({columns}) "
                       f"using {provider_name(database, source)}"]
        hidden[PYTHON_ROWS_PROPERTY] = python_key
    afterwards = []
    if plan is not None:
        # recursiveFileLookup: no partition columns inferred from the files' folders
        # (dt=2024-01-01/): Paimon's files hold every column themselves
        files_table = f"using {plan.file_format} options (recursiveFileLookup 'true')"
        native_shape = f"{schema_id}:{plan.file_format}:{FILE_COLUMNS}"
        statements += located(hidden_table(database, FILES_PREFIX, table), folder,
                              hidden.get(NATIVE_ROWS_PROPERTY) == native_shape,
                              f"({file_columns(schema)}) {files_table}")
        hidden[NATIVE_ROWS_PROPERTY] = native_shape
        key = projected_key(schema_id, plan)
        had = projection_count(hidden)
        for number, projection in enumerate(plan.projected, start=1):
            stored = file_columns(native_read.projection_schema(projection, schema))
            statements += located(projected_table(database, table, number),
                                  native_read.projection_folder(folder, number),
                                  hidden.get(PROJECTED_ROWS_PROPERTY) == key,
                                  f"({stored}) {files_table}")
        afterwards += [f"drop table if exists {projected_table(database, table, number)}"
                       for number in range(len(plan.projected) + 1, had + 1)]
        hidden[PROJECTED_ROWS_PROPERTY] = key
    if read == NATIVE_WITH_DELETES:
        statements += located(hidden_table(database, DELETES_PREFIX, table),
                              native_read.deletes_folder(folder),
                              DELETED_ROWS_PROPERTY in hidden,
                              f"({native_read.BITMAPS_DDL}) using parquet")
        hidden[DELETED_ROWS_PROPERTY] = "bitmaps"
    properties = {SCHEMA_ID_PROPERTY: str(schema_id), SNAPSHOT_PROPERTY: snapshot,
                  READ_PROPERTY: read, BRANCH_PROPERTY: branch, **hidden}
    if target.read_options:
        properties[READ_OPTIONS_PROPERTY] = target.read_options
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
    # (ALTER VIEW SET TBLPROPERTIES keeps a property it does not name: a change of the read
    # options makes the view anew)
    if before and entry.branch == branch and entry.schema_id == schema_id \
            and before.get(READ_OPTIONS_PROPERTY, "") == target.read_options \
            and shape(entry.read) == shape(read) \
            and before.get(PROJECTED_ROWS_PROPERTY, NO_PROJECTIONS) == \
            hidden.get(PROJECTED_ROWS_PROPERTY, NO_PROJECTIONS):
        # the view reads the same tables: only its properties change
        statements.append(f"alter view {view} set tblproperties ({listed})")
    else:
        statements.append(f"create or replace view {view} tblproperties ({listed}) "
                          f"as {view_query(database, table, plan, read, schema)}")
    return EntryChange(statements, afterwards, properties)


def file_columns(schema: pa.Schema) -> str:
    """The column list of a hidden table reading a snapshot's files: every column nullable
    (native_read.files_schema says why)."""
    return spark_ddl_columns(native_read.files_schema(schema))


def located(name: str, location: str, kept: bool, definition: str) -> List[str]:
    """The statements that make hidden table ``name`` read the files at ``location``: a moved
    location when the view's properties record it as needed (``kept``), otherwise the table
    dropped (a table of that name may be left by an older entry) and created as
    ``definition`` (its columns and provider)."""
    location = sql_text(location)
    if kept:
        return [f"alter table {name} set location '{location}'"]
    return [f"drop table if exists {name}",
            f"create table {name} {definition} location '{location}'"]


def forget_statements(database: str, table: str, projected: int,
                      written: Optional[str]) -> List[str]:
    """The statements that drop ``database.table``'s entry: its SQL INSERT target
    (``written``), the view, and every hidden table it may have (``projected``: how many
    projection tables its properties record)."""
    return ([f"drop table if exists {written}"] if written else []) + [
        f"drop table if exists {name}" for name in (
            entry_view(database, table),
            *(hidden_table(database, prefix, table)
              for prefix in (READ_PREFIX, FILES_PREFIX, DELETES_PREFIX)),
            *(projected_table(database, table, number) for number in range(1, projected + 1)))]


def write_target(database: str, source: str, schema: pa.Schema) -> Tuple[str, List[str]]:
    """The table an SQL ``INSERT`` into Paimon table ``source`` (a table or one of its
    branches) of ``schema`` writes to, ``<database>__paimon.write_<source>``, and the statements
    that make it anew."""
    name = hidden_table(database, WRITE_PREFIX, sql_name(source))
    return name, [f"create database if not exists {quote_identifier(hidden_database(database))}",
                  f"drop table if exists {name}",
                  f"create table {name} ({spark_ddl_columns(schema)}) "
                  f"using {provider_name(database, source)}"]


def view_query(database: str, table: str, plan: Optional["native_read.NativeSnapshot"],
               read: str, schema: pa.Schema) -> str:
    """The query of an entry's view: the Python source's table, or the snapshot's files (and
    each Projection's, renamed) without the rows to leave out."""
    if plan is None:
        return f"select * from {hidden_table(database, READ_PREFIX, table)}"
    deletes = hidden_table(database, DELETES_PREFIX, table) \
        if read == NATIVE_WITH_DELETES else None
    parts = [native_read.live_rows_sql(hidden_table(database, FILES_PREFIX, table), deletes)]
    for number, projection in enumerate(plan.projected, start=1):
        parts.append(native_read.live_rows_sql(
            projected_table(database, table, number), deletes,
            columns=native_read.projection_select(projection, schema)))
    return " union all ".join(parts)
