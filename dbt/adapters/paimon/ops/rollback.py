"""Rollback: make an earlier snapshot (by id, tag or timestamp) the table's latest again.

As Java's ``FileStoreTable.rollbackTo`` / ``RollbackHelper`` (Paimon 1.0): the ``LATEST`` hint
first, then every later snapshot file newest first (a crash part-way leaves a valid, shorter
history that a second rollback finishes), the later long-lived changelog files, and the tags of
later snapshots; tags of the target and earlier snapshots are kept. Rolling back to a tag whose
snapshot already expired writes that snapshot back (``createSnapshotFileIfNeeded``). Then, as
Paimon 1.0 did and like expiry, the files only the removed snapshots and tags referenced are
deleted (computed from complete file sets, so nothing a kept snapshot or tag reads).

One difference, on purpose: a consumer (``paimon_changes``) whose position is past the target
is moved back to the snapshot after it. Java leaves it, and the consumer would then skip the
commits that reuse the removed ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import consumers, time_travel
from dbt.adapters.paimon.format.pause_points import pause_at
from dbt.adapters.paimon.ops.expire import References, branch_files


@dataclass(frozen=True)
class RollbackResult:
    previous_latest: Optional[int]
    snapshot_id: int
    removed_snapshots: List[int] = field(default_factory=list)
    removed_tags: List[str] = field(default_factory=list)
    deleted_files: int = 0
    moved_consumers: List[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        if not self.removed_snapshots and self.previous_latest == self.snapshot_id:
            return f"snapshot {self.snapshot_id} is already the latest: nothing rolled back"
        return (f"rolled back from snapshot {self.previous_latest} to {self.snapshot_id}: "
                f"removed {len(self.removed_snapshots)} snapshot(s)"
                + (f" {self.removed_snapshots[0]}" if len(self.removed_snapshots) == 1 else
                   f" {self.removed_snapshots[-1]}..{self.removed_snapshots[0]}"
                   if self.removed_snapshots else "")
                + (f", tag(s) {self.removed_tags}" if self.removed_tags else "")
                + f", deleted {self.deleted_files} file(s)"
                + (f"; consumer(s) {self.moved_consumers} now read from snapshot "
                   f"{self.snapshot_id + 1}" if self.moved_consumers else ""))


def rollback(location: TableRef, snapshot_id=None, tag=None, timestamp=None
             ) -> RollbackResult:
    """Roll ``location`` back to snapshot ``snapshot_id``, tag ``tag``, or the latest snapshot
    committed at or before ``timestamp`` (exactly one)."""
    table = location.open()
    given = [n for n, v in (("snapshot_id", snapshot_id), ("tag", tag),
                            ("timestamp", timestamp)) if v is not None]
    if len(given) != 1:
        raise ValueError(f"pass exactly one of snapshot_id, tag or timestamp "
                         f"(got {given or 'none'})")
    manager = table.snapshot_manager()
    latest = manager.get_latest_snapshot()
    if latest is None:
        raise ValueError(f"{table.identifier} has no snapshot: nothing to roll back")
    if tag is not None:
        target = time_travel.snapshot_by_tag(table, tag)
    elif timestamp is not None:
        target = time_travel.snapshot_at_time(table, time_travel.timestamp_millis(timestamp))
    else:
        number = time_travel.whole_number(snapshot_id, "snapshot_id")
        target = time_travel.snapshot_by_id(table, number)  # a tag keeps an expired one
        if target is None:
            raise ValueError(f"Rollback snapshot '{number}' of {table.identifier} doesn't "
                             f"exist (neither retained nor tagged)")
    if target.id > latest.id:
        raise ValueError(f"snapshot {target.id} is later than the latest snapshot {latest.id} "
                         f"of {table.identifier}")

    snapshots = {s.id: s for s in manager.list_snapshots()}
    tags = time_travel.tags(table)
    removed = sorted((sid for sid in snapshots if sid > target.id), reverse=True)
    removed_tags = sorted(name for name, t in tags.items() if t.id > target.id)
    references = References(table)
    keep: Set[str] = set(references.files(target))
    for sid, snapshot in snapshots.items():
        if sid <= target.id:
            keep |= references.files(snapshot)
    for name, kept_tag in tags.items():
        if name not in removed_tags:
            keep |= references.files(kept_tag)
    keep |= branch_files(table, references)
    doomed: Set[str] = set()
    for sid in removed:
        doomed |= references.files(snapshots[sid])
    for name in removed_tags:
        doomed |= references.files(tags[name])
    doomed -= keep

    file_io = table.file_io
    snapshot_dir = manager.snapshot_dir
    file_io.overwrite_file_utf8(f"{snapshot_dir}/LATEST", str(target.id))
    for index, sid in enumerate(removed):  # newest first
        file_io.delete_quietly(manager.get_snapshot_path(sid))
        if index == 0:
            pause_at("rollback-first-snapshot-removed")
    _remove_changelogs_after(table, target.id)
    tag_folder = time_travel.tag_manager(table)
    for name in removed_tags:
        file_io.delete_quietly(tag_folder.tag_path(name))
    if target.id not in snapshots:
        # a tag's snapshot that expired: it becomes the only (and earliest) snapshot file
        from pypaimon.common.json_util import JSON

        file_io.overwrite_file_utf8(manager.get_snapshot_path(target.id), JSON.to_json(target))
        file_io.overwrite_file_utf8(f"{snapshot_dir}/EARLIEST", str(target.id))
    pause_at("rollback-snapshots-removed")
    deleted = 0
    for path in sorted(doomed):
        if file_io.exists(path):
            file_io.delete_quietly(path)
            deleted += 1
    moved = []
    for consumer, position in consumers.list_consumers(table).items():
        if position > target.id + 1:
            consumers.write_consumer(table, consumer, target.id + 1)
            moved.append(consumer)
    return RollbackResult(latest.id, target.id, removed, removed_tags, deleted, sorted(moved))


def _remove_changelogs_after(table, snapshot_id: int) -> None:
    """Long-lived changelog files (``changelog/changelog-<id>``, written by Java writers with
    ``changelog.num-retained``) of the removed snapshots, and the folder's LATEST hint."""
    folder = f"{table.table_path.rstrip('/')}/changelog"
    try:
        statuses = table.file_io.list_status(folder)
    except (FileNotFoundError, OSError):
        return
    ids = []
    for status in statuses:
        name = status.base_name
        if name.startswith("changelog-") and name[len("changelog-"):].isdigit():
            ids.append(int(name[len("changelog-"):]))
    later = [i for i in ids if i > snapshot_id]
    for changelog_id in sorted(later, reverse=True):
        table.file_io.delete_quietly(f"{folder}/changelog-{changelog_id}")
    if later:
        remaining = [i for i in ids if i <= snapshot_id]
        table.file_io.overwrite_file_utf8(f"{folder}/LATEST",
                                          str(max(remaining) if remaining else -1))
