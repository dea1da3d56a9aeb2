"""The warehouse's databases, tables and each table's latest schema id: what keeping Spark's
catalog in line with the warehouse (datasource/registry.py) reads on every dbt command.

A local warehouse (a folder path or a file:// URI) is read from its folder layout, exactly as
pypaimon's filesystem catalog reads it (catalog/filesystem_catalog.py: list_databases,
list_tables; schema/schema_manager.py: latest): databases are ``<name>.db`` folders, tables
their sub-folders not starting with '.', a table's schemas ``<table>/schema/schema-<id>``.
Importing pypaimon's catalog costs ~0.3 s (it imports polars and pyarrow.dataset), a good part
of a `dbt show` over Spark Connect, which otherwise never needs pypaimon. Any other URI
(s3://, oss://, hdfs://...) goes through pypaimon's catalog and its FileIO.

With a JDBC or Hive catalog (``catalog_options`` with ``metastore: jdbc`` or ``hive``) the
catalog's database or metastore says which databases and tables exist, local warehouse or not:
a table folder it does not list is not a table. Snapshots are still read from the table's folder (``latest_snapshot_id``).
"""

from __future__ import annotations

import os
import time
from typing import Dict, List, Optional, Tuple
from urllib.parse import urlparse

from dbt.adapters.paimon.catalog.config import FILESYSTEM, METASTORE_KEY

DB_SUFFIX = ".db"
SCHEMA_PREFIX = "schema-"


def _listed_by_catalog(catalog_options: Optional[Dict[str, str]]) -> bool:
    """Whether the catalog, not the folder layout, lists the tables (JDBC, Hive)."""
    return (catalog_options or {}).get(METASTORE_KEY, FILESYSTEM) != FILESYSTEM


def local_folder(warehouse: str) -> Optional[str]:
    """The folder of a local warehouse; None for a remote URI."""
    parsed = urlparse(str(warehouse))
    if parsed.scheme == "file":
        return parsed.path
    if parsed.scheme == "":
        return str(warehouse)
    return None


def check_path_name(kind: str, name: str) -> str:
    """A database or table name must stay one folder inside the warehouse: pypaimon would take
    '' or '..' or 'a/b' as a path ('<warehouse>/../x' escapes it), a '.' cannot be told apart
    from ``database.table``, and Paimon reads '$' as a system table or branch suffix
    (``t$snapshots``; a table named '$snapshots' would be created in the database folder)."""
    if not isinstance(name, str) or name in ("", ".", "..") or \
            any(c in name for c in "./\\$\0"):
        raise ValueError(f"Paimon {kind} name {name!r} is not allowed: it must be non-empty "
                         f"and contain no '.', '/', '\\', '$' or NUL (it names a folder of the "
                         f"warehouse)")
    return name


def _sub_folders(path: str) -> List[str]:
    try:
        with os.scandir(path) as entries:
            return [e.name for e in entries if e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []


def list_databases(warehouse: str, catalog_options: Optional[Dict[str, str]] = None
                   ) -> List[str]:
    """Database names, sorted; [] for a warehouse folder that does not exist yet."""
    folder = local_folder(warehouse)
    if folder is None or _listed_by_catalog(catalog_options):
        from dbt.adapters.paimon.catalog import warehouse as wh

        return wh.list_databases(warehouse, catalog_options)
    return sorted(name[:-len(DB_SUFFIX)] for name in _sub_folders(folder)
                  if name.endswith(DB_SUFFIX) and len(name) > len(DB_SUFFIX))


def list_tables(warehouse: str, database: str,
                catalog_options: Optional[Dict[str, str]] = None) -> List[str]:
    """Table names of ``database``, sorted; [] when the database does not exist."""
    folder = local_folder(warehouse)
    if folder is None or _listed_by_catalog(catalog_options):
        from dbt.adapters.paimon.catalog import warehouse as wh

        return wh.list_tables(warehouse, database, catalog_options)
    return sorted(name for name in _sub_folders(os.path.join(folder, database + DB_SUFFIX))
                  if not name.startswith("."))


def latest_schema_id(warehouse: str, database: str, table: str,
                     catalog_options: Optional[Dict[str, str]] = None) -> Optional[int]:
    """The id of the table's latest schema; None when the table has none (does not exist)."""
    folder = local_folder(warehouse)
    if folder is None or _listed_by_catalog(catalog_options):
        from dbt.adapters.paimon.catalog import warehouse as wh
        from dbt.adapters.paimon.format.errors import TableNotFoundError

        try:
            return wh.open_table(warehouse, database, table, catalog_options).table_schema.id
        except TableNotFoundError:
            return None
    schema_folder = os.path.join(table_folder(folder, database, table), "schema")
    try:
        with os.scandir(schema_folder) as entries:
            names = [e.name for e in entries]
    except (FileNotFoundError, NotADirectoryError):
        return None
    ids = [int(name[len(SCHEMA_PREFIX):]) for name in names
           if name.startswith(SCHEMA_PREFIX) and name[len(SCHEMA_PREFIX):].isdigit()]
    return max(ids) if ids else None


SNAPSHOT_PREFIX = "snapshot-"
BRANCH_SEPARATOR = "$branch_"


def table_folder(warehouse_folder: str, database: str, table: str) -> str:
    """The folder of a local table's snapshots and schemas: ``<db>.db/<table>``, or for
    pypaimon's name of a branch, ``<table>$branch_<name>``, ``<table>/branch/branch-<name>``."""
    base, separator, branch = table.partition(BRANCH_SEPARATOR)
    check_path_name("database", database)
    check_path_name("table", base)
    folder = os.path.join(warehouse_folder, database + DB_SUFFIX, base)
    if separator:
        folder = os.path.join(folder, "branch", f"branch-{check_path_name('branch', branch)}")
    return folder


def branch_table_name(table: str, branch: str) -> str:
    """The name pypaimon's catalog opens a branch of ``table`` by."""
    return f"{table}{BRANCH_SEPARATOR}{branch}"


def branches(table) -> List[str]:
    """An opened table's branch names (main not included)."""
    return sorted(table.branch_manager().branches())


def has_branch(warehouse: str, database: str, table: str, branch: str) -> bool:
    """Whether a local table has branch ``branch``."""
    folder = local_folder(warehouse)
    if folder is None:
        raise ValueError("has_branch reads local warehouses only")
    return os.path.isdir(table_folder(folder, database, branch_table_name(table, branch)))


def snapshot_folder(warehouse: str, database: str, table: str, reader: str) -> str:
    """``<table folder>/snapshot`` of a local table; ``reader`` names the caller in the error
    a remote warehouse gets."""
    folder = local_folder(warehouse)
    if folder is None:
        raise ValueError(f"{reader} reads local warehouses only")
    return os.path.join(table_folder(folder, database, table), "snapshot")


def latest_snapshot_id(warehouse: str, database: str, table: str) -> Optional[int]:
    """The id of a local table's latest snapshot, read as Paimon's SnapshotManager does: the
    ``LATEST`` hint, then any later ``snapshot-<id>`` (the hint is written after the commit);
    the folder's listing when there is no hint. None when the table has no snapshot; not for
    remote warehouses (the caller opens the table instead)."""
    return _latest_id_in(snapshot_folder(warehouse, database, table, "latest_snapshot_id"))


def _latest_id_in(snapshot_folder: str) -> Optional[int]:
    latest: Optional[int] = None
    try:
        with open(os.path.join(snapshot_folder, "LATEST"), encoding="ascii") as hint:
            text = hint.read().strip()
        latest = int(text) if text.isdigit() else None
    except (FileNotFoundError, NotADirectoryError):
        pass
    if latest is None or not os.path.exists(os.path.join(snapshot_folder,
                                                          f"{SNAPSHOT_PREFIX}{latest}")):
        try:
            names = os.listdir(snapshot_folder)
        except (FileNotFoundError, NotADirectoryError):
            return None
        ids = [int(n[len(SNAPSHOT_PREFIX):]) for n in names
               if n.startswith(SNAPSHOT_PREFIX) and n[len(SNAPSHOT_PREFIX):].isdigit()]
        return max(ids) if ids else None
    while os.path.exists(os.path.join(snapshot_folder, f"{SNAPSHOT_PREFIX}{latest + 1}")):
        latest += 1
    return latest


def snapshot_stamp(warehouse: str, database: str, table: str,
                   snapshot_id: Optional[int]) -> str:
    """``<id>.<mtime in ns>`` of a local table's snapshot file: what names that snapshot in
    Spark's catalog entries and file lists. An id alone is not enough: a rollback deletes
    later snapshots, and the next commits reuse their ids for other files. ``<id>.0`` when
    the snapshot lives only in a tag; '' for no snapshot."""
    if snapshot_id is None:
        return ""
    return _stamp_in(snapshot_folder(warehouse, database, table, "snapshot_stamp"), snapshot_id)


def _stamp_in(snapshot_folder: str, snapshot_id: int) -> str:
    path = os.path.join(snapshot_folder, f"{SNAPSHOT_PREFIX}{snapshot_id}")
    try:
        return f"{snapshot_id}.{os.stat(path).st_mtime_ns}"
    except (FileNotFoundError, NotADirectoryError):
        return f"{snapshot_id}.0"


# A folder's modification time changes with every entry made, renamed or removed in it: every
# commit (its snapshot file, new in the folder, whoever the writer), a rollback and an expiry of
# snapshots. So while a table's snapshot folder keeps its time, its latest stamp is the one read
# before: one stat instead of the hint's read and three probes, for every table the registry
# checks before every statement (datasource/registry.py: refresh_stale), which in a build of
# hundreds of tables is most of what it does. A time is trusted only once it is older than
# STAMP_SETTLED_NS: file times come from a coarse clock (a tick of a few milliseconds on
# Linux), and two changes within one tick leave one time, as git's index does not trust a file
# changed in the second it was read.
STAMP_SETTLED_NS = 2_000_000_000
_stamps: Dict[str, Tuple[int, str]] = {}


def latest_snapshot_stamp(warehouse: str, database: str, table: str) -> str:
    """The stamp (``snapshot_stamp``) of a local table's latest snapshot, '' without one."""
    folder = snapshot_folder(warehouse, database, table, "latest_snapshot_stamp")
    try:
        changed = os.stat(folder).st_mtime_ns
    except (FileNotFoundError, NotADirectoryError):
        changed = None
    known = _stamps.get(folder)
    if known is not None and known[0] == changed:
        return known[1]
    latest = _latest_id_in(folder)
    stamp = "" if latest is None else _stamp_in(folder, latest)
    if changed is not None and time.time_ns() - changed > STAMP_SETTLED_NS:
        _stamps[folder] = (changed, stamp)
    else:
        _stamps.pop(folder, None)
    return stamp
