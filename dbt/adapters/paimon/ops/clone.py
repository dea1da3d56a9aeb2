"""`dbt clone` of a Paimon table: a new table, in another schema (or table name) of the same
warehouse, holding the source's latest snapshot and sharing its files.

Why hard links: a Paimon table's data files, manifests, index files and schemas are immutable
once written, and every reader (Paimon Java 1.0 included) finds them by name inside the
table's own folder. A clone whose folder holds hard links of the source's files is therefore a
real, independent Paimon table at no storage cost: later writes to the source add new files,
and its compactions and snapshot expiry delete the source's *links*, never the clone's (a
file's data stays while any link does). Paimon 1.1's external paths or a branch would share
files too, but a branch is part of the source table (it goes with it, and it is not a table of
another schema), and Paimon 1.0 readers do not follow external paths.

The clone holds one snapshot, the source's latest, under the same id (Paimon's snapshot ids
need not start at 1: EARLIEST and LATEST say where they are); the source's tags, branches,
consumers and older snapshots are not cloned. Files no snapshot of the clone references (the
source's older ones) are linked too, and `remove_orphan_files` removes them from the clone.
Where a link is impossible (the target on another file system), files are copied, and the
result says so. Local filesystem warehouses only: a catalog that registers tables (JDBC,
Hive) or a remote warehouse is refused with what to do.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from dataclasses import dataclass
from typing import Optional

from dbt.adapters.paimon.datasource.source import TableLocation
from dbt.adapters.paimon.format import listing

# the folders of a table that belong to its history rather than its latest snapshot
NOT_CLONED = ("snapshot", "tag", "branch", "consumer", "changelog")
SNAPSHOT_PREFIX = "snapshot-"


@dataclass(frozen=True)
class CloneResult:
    message: str
    snapshot_id: Optional[int]
    linked: int      # files shared with the source (hard links)
    copied: int      # files copied (no link possible)


def clone_table(source: TableLocation, target: TableLocation) -> CloneResult:
    """Make (or replace) ``target`` as a clone of ``source``'s latest snapshot."""
    for location in (source, target):
        if listing._listed_by_catalog(location.catalog_options) or \
                listing.local_folder(location.warehouse) is None:
            raise NotImplementedError(
                f"dbt clone of a Paimon table shares its files within a local filesystem "
                f"warehouse; {location.name} is in {location.warehouse} with catalog options "
                f"{sorted(location.catalog_options)}: build the model in the other target "
                f"instead (dbt run --target ...), or clone within a filesystem warehouse.")
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
