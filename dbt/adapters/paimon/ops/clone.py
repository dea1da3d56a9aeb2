"""`dbt clone` of a Paimon table: a new table, in another schema (or table name), holding the
source's latest snapshot. It shares the source's files where both tables are in local
filesystem warehouses, and is a copy of the source's rows everywhere else (``clone_method``).

**Shared (hard links).** A Paimon table's data files, manifests, index files and schemas are
immutable once written, and every reader (Paimon Java 1.0 included) finds them by name inside
the table's own folder. A clone whose folder holds hard links of the source's files is therefore
a real, independent Paimon table at no storage cost: later writes to the source add new files,
and its compactions and snapshot expiry delete the source's *links*, never the clone's (a
file's data stays while any link does). Paimon 1.1's external paths or a branch would share
files too, but a branch is part of the source table (it goes with it, and it is not a table of
another schema), and Paimon 1.0 readers do not follow external paths.

The shared clone holds one snapshot, the source's latest, under the same id (Paimon's snapshot
ids need not start at 1: EARLIEST and LATEST say where they are); the source's tags, branches,
consumers and older snapshots are not cloned. Files no snapshot of the clone references (the
source's older ones) are linked too, and `remove_orphan_files` removes them from the clone.
Where a link is impossible (the target on another file system), files are copied, and the
result says so.

**Copied.** Files cannot be shared when a catalog registers the source or the target (JDBC,
Hive, REST: the catalog creates the table, may choose its folder, and publishes its snapshots
under its own lock) or when a warehouse is not a local folder (no hard links on an object store
or across hosts). The clone is then a new table created through the target's catalog with the
source's latest schema (columns with their Paimon types and comments, primary keys, partition
keys, table options but ``path``, comment) holding the merged rows of the source's latest
snapshot, read as Arrow and written in this process as ONE commit by the in-process write path
(write/in_process.py for primary-key tables, the append writer of the paimon data source
otherwise). Its files are its own: nothing the source does later reaches it. The rows are held
in memory while they are written. The copy has one snapshot, numbered by the new table (1);
the source's snapshot ids, tags and branches are not carried over.

An existing target is replaced only once the copy is committed: the copy is built as a table
beside it (``<table>__dbt_clone_<id>``, listed by the catalog while it is built), then the
target is dropped and the copy renamed in its place. A reader sees the old table until then,
no table for the moment between the drop and the rename, then the copy.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog.config import FILESYSTEM, METASTORE_KEY
from dbt.adapters.paimon.datasource.source import TableRef

# the folders of a table that belong to its history rather than its latest snapshot
NOT_CLONED = ("snapshot", "tag", "branch", "consumer", "changelog")
SNAPSHOT_PREFIX = "snapshot-"
# how a clone is made (clone_method)
SHARE, COPY = "share", "copy"
CATALOG_NAMES = {"jdbc": "JDBC", "hive": "Hive", "rest": "REST"}
# table options of the source that name the source itself, not kept by a copy
NOT_COPIED_OPTIONS = ("path",)


@dataclass(frozen=True)
class CloneResult:
    message: str
    snapshot_id: Optional[int]
    linked: int      # files shared with the source (hard links)
    copied: int      # files copied (no link possible)
    rows: Optional[int] = None         # a copy (COPY): the rows written
    copy_reason: Optional[str] = None  # ... and why the files could not be shared

    @property
    def rows_affected(self) -> int:
        """A copy's rows; a shared clone's files."""
        return self.rows if self.rows is not None else self.linked + self.copied


def clone_method(source: TableRef, target: TableRef) -> Tuple[str, str]:
    """(SHARE or COPY, why): the files are shared when both tables are in local filesystem
    warehouses that no catalog registers; otherwise the clone is a copy of the rows."""
    reasons = []
    for role, location in (("source", source), ("target", target)):
        kind = (location.catalog_options or {}).get(METASTORE_KEY, FILESYSTEM)
        if kind != FILESYSTEM:
            reasons.append(f"the {role} {location.name} is registered by a "
                           f"{CATALOG_NAMES.get(kind, kind)} catalog")
        elif listing.local_folder(location.warehouse) is None:
            reasons.append(f"the {role} {location.name} is in {location.warehouse}, not a "
                           f"local folder")
    if reasons:
        return COPY, "; ".join(reasons)
    return SHARE, "both tables are in local filesystem warehouses"


def clone_table(source: TableRef, target: TableRef, spark=None) -> CloneResult:
    """Make (or replace) ``target`` as a clone of ``source``'s latest snapshot: sharing its
    files, or a copy of its rows (clone_method). ``spark``: the session a copy into a dynamic
    bucket table sizes its bucket assigners by (write/spark_job.py make_plan)."""
    method, reason = clone_method(source, target)
    if method == COPY:
        return copy_table(source, target, reason, spark)
    return _share(source, target)


def _share(source: TableRef, target: TableRef) -> CloneResult:
    """The clone as hard links of the source's files (see the module docstring)."""
    source_folder = listing.table_folder(listing.local_folder(source.warehouse),
                                         source.database, source.table)
    target_folder = listing.table_folder(listing.local_folder(target.warehouse),
                                         target.database, target.table)
    if listing.latest_schema_id(source.warehouse, source.database, source.table) is None:
        raise ValueError(f"{source.name} is not a Paimon table of {source.warehouse}")
    snapshot_id = listing.latest_snapshot_id(source.warehouse, source.database, source.table)
    os.makedirs(os.path.dirname(target_folder), exist_ok=True)
    # built beside the target, then put in its place: a reader sees the old table or the clone
    # (a dot folder: no table of the database while it is built)
    staging = _beside(target_folder, "clone")
    linked = copied = 0
    try:
        for folder, dirs, files in os.walk(source_folder):
            relative = os.path.relpath(folder, source_folder)
            if relative == ".":
                dirs[:] = [d for d in dirs if d not in NOT_CLONED]
            os.makedirs(os.path.join(staging, relative), exist_ok=True)
            for name in files:
                if name.startswith("."):  # a writer's temporary file
                    continue
                was_linked = _link_or_copy(os.path.join(folder, name),
                                           os.path.join(staging, relative, name))
                linked += was_linked
                copied += not was_linked
        snapshots = os.path.join(staging, "snapshot")
        os.makedirs(snapshots, exist_ok=True)
        if snapshot_id is not None:
            shutil.copyfile(os.path.join(source_folder, "snapshot",
                                         f"{SNAPSHOT_PREFIX}{snapshot_id}"),
                            os.path.join(snapshots, f"{SNAPSHOT_PREFIX}{snapshot_id}"))
            for hint in ("EARLIEST", "LATEST"):
                with open(os.path.join(snapshots, hint), "w", encoding="ascii") as out:
                    out.write(str(snapshot_id))
        _replace(staging, target_folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    how = (f"{linked} files shared with it (hard links)" if not copied else
           f"{copied} files copied ({linked} shared): the target is on another file system")
    at = f"snapshot {snapshot_id}" if snapshot_id is not None else "no snapshot yet"
    return CloneResult(f"CLONE of {source.name} at {at}, {how}", snapshot_id, linked, copied)


def _link_or_copy(source: str, target: str) -> bool:
    """A hard link of ``source`` at ``target``, or a copy where no link can be made; whether
    it is a link."""
    try:
        os.link(source, target)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
    shutil.copy2(source, target)
    return False


def _beside(folder: str, what: str) -> str:
    """A hidden folder next to ``folder`` (listings skip dot folders)."""
    parent, name = os.path.split(folder)
    return os.path.join(parent, f".{name}.{what}-{uuid.uuid4().hex[:8]}")


def _replace(staging: str, target_folder: str) -> None:
    """Put the staged clone at ``target_folder``, replacing what is there."""
    if not os.path.exists(target_folder):
        os.rename(staging, target_folder)
        return
    retired = _beside(target_folder, "replaced")
    os.rename(target_folder, retired)
    os.rename(staging, target_folder)
    shutil.rmtree(retired, ignore_errors=True)


# -- copy ----------------------------------------------------------------------------------
def copy_table(source: TableRef, target: TableRef, reason: str,
               spark=None) -> CloneResult:
    """``target`` made, or replaced, as a new table through its catalog holding the merged rows
    of ``source``'s latest snapshot, written as one commit; ``reason``: why the files are not
    shared (said in the result)."""
    from dbt.adapters.paimon.catalog import warehouse as wh
    from dbt.adapters.paimon.format.errors import TableNotFoundError
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    try:
        table = source.open()
    except TableNotFoundError:
        raise ValueError(f"{source.name} is not a Paimon table of {source.warehouse}") from None
    snapshot_id = current_snapshot_id(table)
    rows = snapshot_rows(table, snapshot_id)
    replaces = wh.table_exists(target.warehouse, target.database, target.table,
                               target.catalog_options)
    staged = target if not replaces else TableRef(
        target.warehouse, target.database, f"{target.table}__dbt_clone_{uuid.uuid4().hex[:8]}",
        target.catalog_options)
    created = _create_like(table, staged)
    try:
        committed = _write_rows(staged, created, rows, f"clone of {source.name}", spark)
    except BaseException:  # no table of a failed copy stays (the old target is untouched)
        wh.drop_table(staged.warehouse, staged.database, staged.table,
                      catalog_options=staged.catalog_options)
        raise
    if replaces:
        wh.drop_table(target.warehouse, target.database, target.table,
                      catalog_options=target.catalog_options)
        try:
            wh.rename_table(target.warehouse, target.database, staged.table, target.table,
                            catalog_options=target.catalog_options)
        except BaseException as exc:
            raise RuntimeError(
                f"the copy of {source.name} is committed as {staged.name}, but renaming it to "
                f"{target.name} (dropped) failed: {exc}. Run dbt clone --full-refresh again, "
                f"then drop {staged.name} (`dbt run-operation paimon_drop_table`).") from exc
    at = f"snapshot {snapshot_id}" if snapshot_id is not None else "no snapshot yet"
    into = f"one commit (snapshot {committed})" if committed is not None else "no commit"
    message = (f"CLONE of {source.name} at {at} as a COPY: {rows.num_rows} rows written in "
               f"{into}; files are not shared: {reason}")
    return CloneResult(message, committed, 0, 0, rows.num_rows, reason)


def snapshot_rows(table, snapshot_id: Optional[int]) -> pa.Table:
    """The rows of the table's snapshot ``snapshot_id`` as a reader sees them (primary-key
    tables merged, deletion vectors applied, data-evolution rows assembled), in Arrow at the
    table's own types (not Spark's: nanosecond timestamps and TIME stay exact); the same
    reader as the paimon data source's (datasource/source.py iter_split_rows)."""
    from dbt.adapters.paimon.datasource.source import arrow_schema_of, iter_split_rows
    from dbt.adapters.paimon.datasource.spark_types import conform
    from dbt.adapters.paimon.format.bucketed_append import order_splits
    from dbt.adapters.paimon.format.postpone_merge import (plan_merge_on_read,
                                                           read_postpone_merge)
    from dbt.adapters.paimon.format.splits import plan_splits

    target = arrow_schema_of(table)
    if snapshot_id is None:
        return target.empty_table()
    # postpone.merge-on-read: partitions with pending postpone rows merged with them
    merge = plan_merge_on_read(table, plan_splits(table, snapshot_id), snapshot_id)
    splits = merge.splits
    if not table.primary_keys:
        splits = order_splits(table, splits)
    pieces = [conform(piece, target) for split in splits
              for piece in iter_split_rows(table, split, target.names) if piece.num_rows]
    pieces += [conform(rows, target) for rows in
               (read_postpone_merge(table, m, target.names) for m in merge.merges)
               if rows.num_rows]
    return pa.concat_tables(pieces) if pieces else target.empty_table()


def _create_like(source_table, location: TableRef):
    """A new table at ``location``, through its catalog, with the source's latest schema: the
    same fields (Paimon types, ids, comments), keys, options (but ``path``) and comment."""
    from pypaimon import Schema
    from pypaimon.catalog.catalog_exception import TableAlreadyExistException

    from dbt.adapters.paimon.catalog import warehouse as wh
    from dbt.adapters.paimon.format.errors import TableAlreadyExistsError

    schema = source_table.table_schema
    spec = Schema(fields=list(schema.fields), partition_keys=list(schema.partition_keys),
                  primary_keys=list(schema.primary_keys),
                  options={str(k): str(v) for k, v in schema.options.items()
                           if k not in NOT_COPIED_OPTIONS},
                  comment=schema.comment)
    listing.check_path_name("database", location.database)
    listing.check_path_name("table", location.table)
    catalog = wh.open_catalog(location.warehouse, location.catalog_options)
    catalog.create_database(location.database, ignore_if_exists=True)
    try:
        catalog.create_table(location.name, spec, False)
    except TableAlreadyExistException as exc:
        raise TableAlreadyExistsError(f"Paimon table {location.name} already exists in "
                                      f"warehouse {location.warehouse}") from exc
    return location.open()


def _write_rows(location: TableRef, table, rows: pa.Table, name: str,
                spark=None) -> Optional[int]:
    """``rows`` into the new, empty ``table`` as ONE commit; its snapshot id (None: no rows).
    Primary-key tables: the in-process executor's stages (buckets, merge, level-0 files) and
    its commit; append tables: the paimon data source's append writer."""
    from dbt.adapters.paimon.format.commit import abort_unless_committed
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    if table.primary_keys:
        from dbt.adapters.paimon.write.in_process import write_in_process
        from dbt.adapters.paimon.write.plan import SEQ
        from dbt.adapters.paimon.write.spark_job import _commit, make_plan

        plan = make_plan(spark, table, location, name, None, as_empty=True)
        # every key once (merged rows): the order numbers only keep the rows apart
        data = plan.to_spark_names(rows).append_column(
            SEQ, pa.array(np.arange(rows.num_rows, dtype=np.int64)))
        messages, records = write_in_process(plan, table, data)
        return _commit(table, plan, messages, records).snapshot_id
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files

    if rows.num_rows == 0:
        return None
    written = write_append_files(table, [rows])
    try:
        commit_append_files(table, written)
    except BaseException:
        abort_unless_committed(table, written)
        raise
    return current_snapshot_id(location.open())
