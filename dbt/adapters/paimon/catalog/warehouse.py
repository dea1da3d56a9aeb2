"""The warehouse: pypaimon's catalog over it, with errors that name what is missing.

A warehouse is a folder path or any URI pypaimon's FileIO accepts (file://, s3://, oss://,
hdfs://...). Databases are ``<warehouse>/<db>.db`` folders, tables their sub-folders. Which of
them exist is the catalog's to say: the filesystem catalog (the default) reads the folders,
the JDBC catalog (``catalog_options`` with ``metastore: jdbc``, catalog/jdbc_catalog.py) its
database's ``paimon_tables``, the Hive catalog (``metastore: hive``, catalog/hive_catalog.py)
a Hive Metastore's entries, the REST catalog (``metastore: rest``, catalog/rest_catalog.py) its
server; a folder the catalog does not list is not a table.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import pyarrow as pa
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon import CatalogFactory, Schema
from pypaimon.catalog.catalog_exception import (DatabaseNotExistException,
                                                TableAlreadyExistException,
                                                TableNotExistException)
from pypaimon.schema.data_types import DataField, DataTypeParser

from dbt.adapters.paimon.catalog import catalogs
from dbt.adapters.paimon.catalog.listing import BRANCH_SEPARATOR, check_path_name
from dbt.adapters.paimon.format.errors import (PaimonFormatError, TableAlreadyExistsError,
                                               TableNotFoundError)

# a schema is either an Arrow schema or [(column name, Paimon SQL type such as "DECIMAL(10, 2)")]
TableSchemaSpec = Union[pa.Schema, Sequence[Tuple[str, str]]]


CatalogOptions = Optional[Dict[str, str]]


def open_catalog(warehouse: str, catalog_options: CatalogOptions = None):
    """pypaimon's catalog over ``warehouse``: the filesystem catalog, or the JDBC, Hive or REST
    catalog when ``catalog_options`` say ``metastore: jdbc``, ``hive`` or ``rest`` (a REST
    catalog's own ``warehouse`` option is its name on the server; ``warehouse`` here is where
    its tables' files are).

    ``catalog_options`` are the profile's catalog/FileIO options (``fs.s3.accessKeyId``,
    ``fs.oss.endpoint``, ..., and the JDBC catalog's ``uri``, ``jdbc.*``): every function of
    this module takes them, because a remote warehouse is unreachable without them (each
    catalog builds its own file system client)."""
    if not warehouse:
        raise ValueError("warehouse must be a folder path or a URI, got an empty value")
    options = dict(catalog_options or {})
    if catalogs.is_rest(options):
        return catalogs.open_rest_catalog(str(warehouse), options)
    options["warehouse"] = str(warehouse)
    if catalogs.is_jdbc(options):
        return catalogs.open_jdbc_catalog(options)
    if catalogs.is_hive(options):
        return catalogs.open_hive_catalog(options)
    return CatalogFactory.create(options)


def _catalog_lists_tables(catalog_options: CatalogOptions) -> bool:
    """A JDBC, Hive or REST catalog: its entries, not the folders, say which tables exist."""
    return catalogs.is_jdbc(catalog_options) or catalogs.is_hive(catalog_options) or \
        catalogs.is_rest(catalog_options)


def _table_reference(database: str, table: str) -> str:
    """``database.table``, or ``database.table$branch_<name>`` for a branch of a table (what
    pypaimon's catalog opens a branch by); the parts checked like ``_identifier``'s."""
    base, separator, branch = table.partition(BRANCH_SEPARATOR)
    if separator:
        check_path_name("branch", branch)
        return f"{_identifier(database, base)}{separator}{branch}"
    return _identifier(database, table)


def catalog_identifier(database: str, table: str):
    from pypaimon.common.identifier import Identifier

    return Identifier.from_string(_identifier(database, table))


def _identifier(database: str, table: str) -> str:
    check_path_name("database", database)
    check_path_name("table", table)
    return f"{database}.{table}"


def open_table(warehouse: str, database: str, table: str, catalog_options: CatalogOptions = None):
    """The pypaimon ``FileStoreTable`` at its latest schema; TableNotFoundError if absent."""
    catalog = open_catalog(warehouse, catalog_options)
    try:
        return java_compatible(catalog.get_table(_table_reference(database, table)))
    except (TableNotExistException, DatabaseNotExistException) as exc:
        raise TableNotFoundError(
            f"Paimon table {database}.{table} does not exist in warehouse {warehouse}") from exc


def java_compatible(table):
    """Make the table's parquet files readable by Paimon's Java readers.

    pyarrow writes DECIMAL(p <= 18) as fixed-length byte arrays, which Paimon 1.0 Java cannot read;
    Paimon itself writes them as INT32 (p <= 9) / INT64 (p <= 18). pypaimon passes extra keyword
    arguments of write_parquet on to pyarrow, so the table's FileIO gets that setting here, once,
    for every writer of this table object (key-value files, append files, compaction).
    """
    file_io = table.file_io
    if not getattr(file_io, "_dbt_paimon_java_decimals", False):
        write_parquet = file_io.write_parquet

        def write_parquet_as_java(path, data, *args, **kwargs):
            kwargs.setdefault("store_decimal_as_integer", True)
            kwargs.setdefault("use_dictionary", dictionary_columns(data.schema))
            return write_parquet(path, data, *args, **kwargs)

        file_io.write_parquet = write_parquet_as_java
        file_io._dbt_paimon_java_decimals = True
    return table


def dictionary_columns(schema: pa.Schema) -> List[str]:
    """The top-level string and binary columns: the only ones parquet writes dictionary-encoded.

    Java's parquet writer (parquet-mr) drops a column's dictionary after its first page when the
    dictionary does not pay off (keys, sequence numbers, measures); pyarrow has no such check
    and keeps it up to 1 MB per column chunk, which made our files ~3x larger and 2x slower to
    write (measured on key-value files of 125k rows: 0.18 s / 1.9 MB vs 0.08 s / 0.6 MB, reads
    equally fast)."""
    return [f.name for f in schema
            if pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or
            pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]


def table_exists(warehouse: str, database: str, table: str,
                 catalog_options: CatalogOptions = None) -> bool:
    try:
        open_table(warehouse, database, table, catalog_options)
    except TableNotFoundError:
        return False
    return True


def list_databases(warehouse: str, catalog_options: CatalogOptions = None) -> List[str]:
    """Database names, sorted; [] for a warehouse folder that does not exist yet."""
    catalog = open_catalog(warehouse, catalog_options)
    if not _catalog_lists_tables(catalog_options) and \
            not catalog.file_io.exists(catalog.warehouse):
        return []
    return sorted(catalog.list_databases())


def list_tables(warehouse: str, database: str, catalog_options: CatalogOptions = None) -> List[str]:
    """Table names of ``database``, sorted; [] when the database does not exist."""
    try:
        return open_catalog(warehouse, catalog_options).list_tables(database)
    except DatabaseNotExistException:
        return []


def create_database(warehouse: str, database: str, catalog_options: CatalogOptions = None) -> None:
    """Create ``database`` unless it exists."""
    open_catalog(warehouse, catalog_options).create_database(
        check_path_name("database", database), ignore_if_exists=True)


def drop_database(warehouse: str, database: str, catalog_options: CatalogOptions = None) -> None:
    """Drop ``database`` with every table in it; nothing happens when it does not exist."""
    open_catalog(warehouse, catalog_options).drop_database(
        check_path_name("database", database), ignore_if_not_exists=True, cascade=True)


def paimon_schema(schema: TableSchemaSpec, primary_keys: Sequence[str] = (),
                  partition_keys: Sequence[str] = (), options: Optional[Dict[str, str]] = None,
                  comment: Optional[str] = None) -> Schema:
    """A pypaimon ``Schema`` from an Arrow schema or a list of (name, Paimon type)."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    if isinstance(schema, pa.Schema):
        names = schema.names
        result = Schema.from_pyarrow_schema(schema, partition_keys=list(partition_keys),
                                            primary_keys=list(primary_keys), options=options,
                                            comment=comment)
    else:
        fields = []
        for field_id, (name, type_name) in enumerate(schema):
            if "<" in type_name:
                raise ValueError(
                    f"column {name!r}: nested type {type_name!r} is only accepted through an "
                    f"Arrow schema (pass a pyarrow.Schema instead of a type list)")
            fields.append(DataField(field_id, name, DataTypeParser.parse_data_type(type_name)))
        names = [f.name for f in fields]
        result = Schema(fields=fields, partition_keys=list(partition_keys),
                        primary_keys=list(primary_keys), options=options, comment=comment)
    for role, keys in (("primary key", primary_keys), ("partition key", partition_keys)):
        missing = [k for k in keys if k not in names]
        if missing:
            raise ValueError(f"{role} columns {missing} are not in the schema {names}")
    return result


def create_table(warehouse: str, database: str, table: str, schema: TableSchemaSpec,
                 primary_keys: Sequence[str] = (), partition_keys: Sequence[str] = (),
                 options: Optional[Dict[str, str]] = None, comment: Optional[str] = None,
                 exist_ok: bool = False, catalog_options: CatalogOptions = None):
    """Create the table (and its database if needed); returns the opened table.

    ``options`` are Paimon table options with string values, e.g. ``{"bucket": "4",
    "merge-engine": "partial-update"}``. TableAlreadyExistsError unless ``exist_ok``.
    """
    identifier = _identifier(database, table)  # checks both names before any folder is made
    catalog = open_catalog(warehouse, catalog_options)
    catalog.create_database(database, ignore_if_exists=True)
    spec = paimon_schema(schema, primary_keys, partition_keys, options, comment)
    try:
        catalog.create_table(identifier, spec, ignore_if_exists=exist_ok)
    except TableAlreadyExistException as exc:
        raise TableAlreadyExistsError(
            f"Paimon table {database}.{table} already exists in warehouse {warehouse}") from exc
    except RuntimeError as exc:
        # SchemaManager.create_table, in pypaimon as in Java: the folder holds a schema
        if _catalog_lists_tables(catalog_options) and "Schema in filesystem exists" in str(exc):
            kind = "JDBC" if catalogs.is_jdbc(catalog_options) else \
                "REST" if catalogs.is_rest(catalog_options) else "Hive"
            raise PaimonFormatError(
                f"cannot create Paimon table {database}.{table}: its folder "
                f"{catalog.get_table_path(catalog_identifier(database, table))} holds a table "
                f"that the {kind} catalog does not list (left by another catalog, or by a drop "
                f"that removed only the catalog's entry). Remove that folder, or register the "
                f"table in the catalog, then run again.") from exc
        raise
    return java_compatible(catalog.get_table(_identifier(database, table)))


def drop_table(warehouse: str, database: str, table: str, missing_ok: bool = True,
               catalog_options: CatalogOptions = None) -> None:
    """Delete the table folder (all snapshots and data files)."""
    try:
        open_catalog(warehouse, catalog_options).drop_table(_identifier(database, table),
                                                            ignore_if_not_exists=missing_ok)
    except (TableNotExistException, DatabaseNotExistException) as exc:
        raise TableNotFoundError(
            f"cannot drop Paimon table {database}.{table}: it does not exist in "
            f"warehouse {warehouse}") from exc


def rename_table(warehouse: str, database: str, table: str, new_table: str,
                 new_database: Optional[str] = None, catalog_options: CatalogOptions = None) -> None:
    """Rename (move) the table folder; the target must not exist."""
    new_database = new_database or database
    catalog = open_catalog(warehouse, catalog_options)
    try:
        catalog.rename_table(_identifier(database, table), _identifier(new_database, new_table))
    except TableAlreadyExistException as exc:
        raise TableAlreadyExistsError(
            f"cannot rename Paimon table {database}.{table} to {new_database}.{new_table}: "
            f"the target already exists") from exc
    except (TableNotExistException, DatabaseNotExistException) as exc:
        raise TableNotFoundError(
            f"cannot rename Paimon table {database}.{table} to {new_database}.{new_table}: "
            f"{exc}") from exc


def comment_changes(table, table_comment: Optional[str], column_comments: Dict[str, str]
                    ) -> list:
    """The schema changes giving ``table`` this comment and these field descriptions: only
    those that differ from the stored ones (no new schema per run), and only of its fields."""
    from pypaimon.schema.schema_change import SchemaChange

    stored = {f.name: f.description for f in table.table_schema.fields}
    changes = []
    if table_comment is not None and table_comment != table.table_schema.comment:
        changes.append(SchemaChange.update_comment(table_comment))
    for name, comment in column_comments.items():
        if name in stored and stored[name] != comment:
            changes.append(SchemaChange.update_column_comment(name, comment))
    return changes


def retract_schema_changes(table, keep_schema_id: int) -> List[int]:
    """Undo ALTERs made for a run whose commit then failed: delete the schema files newer than
    ``keep_schema_id`` so the table is exactly as before the run. A newer schema that a
    snapshot already uses (another writer committed with it meanwhile) is kept: it is part of
    the table's history. Returns the schema ids removed."""
    manager = table.schema_manager
    latest = table.snapshot_manager().get_latest_snapshot()
    in_use = latest.schema_id if latest is not None else -1
    newer = sorted((i for i in manager._list_versioned_files() if i > keep_schema_id),
                   reverse=True)
    removed = []
    for schema_id in newer:
        if schema_id <= in_use:
            break
        table.file_io.delete_quietly(manager._to_schema_path(schema_id))
        manager.schema_cache.pop(schema_id, None)
        removed.append(schema_id)
    return removed
