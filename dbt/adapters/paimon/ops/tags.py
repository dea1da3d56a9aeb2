"""Tags: named snapshots that outlive snapshot expiry (Paimon's ``TagManager`` rules).

A tag is a file ``<table>/tag/tag-<name>`` holding the snapshot's JSON (plus its create time and
retention when ``time_retained`` is given), written with pypaimon's ``TagManager``, the format
Paimon Java reads. Expiry and orphan removal never delete a file a tag references
(ops/expire.py). Deleting the last tag of a snapshot that already expired deletes the files
only it kept (Java's ``TagManager.deleteTag``).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import List, Optional, Set

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.ops.expire import (References, branch_files, local_path,
                                            parse_duration_ms)


@dataclass(frozen=True)
class TagResult:
    message: str
    tags: List[str]
    snapshot_id: Optional[int] = None
    deleted_files: int = 0


def create_tag(location: TableRef, tag: str, snapshot_id=None, timestamp=None,
               time_retained=None, ignore_if_exists: bool = False) -> TagResult:
    """Tag the latest snapshot, snapshot ``snapshot_id`` (an expired one that another tag keeps
    too), or the earliest snapshot committed at or after ``timestamp`` (Java's
    ``create_tag_from_timestamp``: retained snapshots and tagged ones)."""
    table = location.open()
    name = _name(tag)
    if snapshot_id is not None and timestamp is not None:
        raise ValueError("pass snapshot_id or timestamp, not both")
    manager = time_travel.tag_manager(table)
    if manager.tag_exists(name):
        if ignore_if_exists:
            return TagResult(f"tag '{name}' already exists", [name])
        raise ValueError(f"Tag '{name}' already exists (replace_tag moves it, delete_tag "
                         f"deletes it)")
    snapshot = _snapshot(table, snapshot_id, timestamp)
    if time_retained is None:  # Paimon: tag.default-time-retained applies to every new tag
        time_retained = table.table_schema.options.get("tag.default-time-retained")
    retained = retention(time_retained)
    manager.create_tag(snapshot, name, time_retained=retained)
    return TagResult(f"created tag '{name}' of snapshot {snapshot.id}"
                     + (f", retained {retained}" if retained else ""), [name], snapshot.id)


def replace_tag(location: TableRef, tag: str, snapshot_id=None,
                time_retained=None) -> TagResult:
    """Point an existing tag at the latest snapshot or ``snapshot_id``."""
    table = location.open()
    name = _name(tag)
    manager = time_travel.tag_manager(table)
    if not manager.tag_exists(name):
        raise ValueError(f"Tag '{name}' doesn't exist (create_tag creates it)")
    snapshot = _snapshot(table, snapshot_id, None)
    retained = retention(time_retained)
    manager.replace_tag(snapshot, name, time_retained=retained)
    return TagResult(f"tag '{name}' now tags snapshot {snapshot.id}", [name], snapshot.id)


def rename_tag(location: TableRef, tag: str, new_name: str) -> TagResult:
    table = location.open()
    old, new = _name(tag), _name(new_name, "new tag name")
    manager = time_travel.tag_manager(table)
    if not manager.tag_exists(old):
        raise ValueError(f"Tag '{old}' doesn't exist")
    if manager.tag_exists(new):
        raise ValueError(f"Tag '{new}' already exists")
    manager.rename_tag(old, new)
    return TagResult(f"renamed tag '{old}' to '{new}'", [new])


def delete_tag(location: TableRef, tag) -> TagResult:
    """Delete one tag or several (a list, or names separated by commas, as Paimon's
    ``delete_tag`` procedure); a missing tag is skipped, as in Java."""
    table = location.open()
    names = [_name(n) for n in (tag if isinstance(tag, (list, tuple)) else str(tag).split(","))]
    deleted, files = [], 0
    for name in names:
        found, removed = _delete(table, name)
        if found:
            deleted.append(name)
            files += removed
    missing = [n for n in names if n not in deleted]
    message = (f"deleted tag(s) {deleted}" if deleted else "no tag deleted") + \
        (f", {files} file(s) only they kept" if files else "") + \
        (f"; no such tag(s): {missing}" if missing else "")
    return TagResult(message, deleted, deleted_files=files)


def expire_tags(location: TableRef, older_than=None,
                now: Optional[dt.datetime] = None) -> TagResult:
    """Delete tags whose retention (``time_retained`` at creation) has passed, and with
    ``older_than`` (a timestamp, or a duration such as '7d' meaning now minus it) every tag
    created before it: a tag without a create time counts as created when its file was last
    written (Java's ``TagTimeExpire``)."""
    table = location.open()
    now = now or dt.datetime.now()
    cutoff = _older_than(older_than, now)
    manager = time_travel.tag_manager(table)
    expired, files = [], 0
    for name, tag in time_travel.tags(table).items():
        created, retained = tag.tag_create_time, tag.tag_time_retained
        if created is None or retained is None:
            if cutoff is None:
                continue
            if created is None:
                created = dt.datetime.fromtimestamp(os.stat(local_path(manager.tag_path(name)))
                                                    .st_mtime)
        reached = retained is not None and now > created + retained
        older = cutoff is not None and cutoff > created
        if reached or older:
            found, removed = _delete(table, name)
            if found:
                expired.append(name)
                files += removed
    message = (f"expired tag(s) {expired}" if expired else "no tag to expire") + \
        (f", deleted {files} file(s) only they kept" if files else "")
    return TagResult(message, expired, deleted_files=files)


# -- internals ---------------------------------------------------------------------------
def _delete(table, name: str):
    """Delete tag ``name``; when its snapshot already expired and no other tag keeps it, also
    the files nothing else references. (found, files deleted)."""
    manager = time_travel.tag_manager(table)
    tag = manager.get(name)
    if tag is None:
        return False, 0
    snapshots = {s.id: s for s in table.snapshot_manager().list_snapshots()}
    others = {n: t for n, t in time_travel.tags(table).items() if n != name}
    manager.delete_tag(name)
    if tag.id in snapshots or any(t.id == tag.id for t in others.values()):
        return True, 0
    references = References(table)
    keep: Set[str] = set()
    for snapshot in snapshots.values():
        keep |= references.files(snapshot)
    for other in others.values():
        keep |= references.files(other)
    keep |= branch_files(table, references)
    deleted = 0
    for path in sorted(references.files(tag) - keep):
        if table.file_io.exists(path):
            table.file_io.delete_quietly(path)
            deleted += 1
    return True, deleted


def _snapshot(table, snapshot_id, timestamp):
    if timestamp is not None:
        return _later_or_equal(table, time_travel.timestamp_millis(timestamp))
    if snapshot_id is None:
        latest = table.snapshot_manager().get_latest_snapshot()
        if latest is None:
            raise ValueError(f"{table.identifier} has no snapshot to tag yet (run its model "
                             f"first)")
        return latest
    return time_travel.travel(table, snapshot_id=snapshot_id)


def _later_or_equal(table, timestamp_ms: int):
    """The earliest retained or tagged snapshot committed at or after ``timestamp_ms``
    (Java's CreateTagFromTimestampProcedure)."""
    candidates = [s for s in table.snapshot_manager().list_snapshots()
                  if s.time_millis >= timestamp_ms]
    candidates += [t.trim_to_snapshot() for t in time_travel.tags(table).values()
                   if t.time_millis >= timestamp_ms]
    if not candidates:
        raise ValueError(f"Could not find any snapshot of {table.identifier} whose commit "
                         f"time is later than or equal to {timestamp_ms}")
    return min(candidates, key=lambda s: (s.time_millis, s.id))


def _name(value, what: str = "tag name") -> str:
    name = "" if value is None else str(value).strip()
    if not name:
        raise ValueError(f"{what} shouldn't be blank")
    if "/" in name or name.startswith(".") or any(c.isspace() for c in name):
        raise ValueError(f"{what} {name!r} must not contain '/' or spaces nor start with '.': "
                         f"it names the file tag/tag-<name>")
    return name


def retention(value, what: str = "time_retained") -> Optional[str]:
    """A tag's retention in Paimon's duration syntax ('7d', '12h', '1.5 h') as the
    milliseconds pypaimon parses; None for none."""
    if value is None:
        return None
    return f"{parse_duration_ms(value, what)} ms"


def _older_than(value, now: dt.datetime) -> Optional[dt.datetime]:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value
    text = str(value).strip()
    if text[:1].isdigit() and not text.isdigit() and "-" not in text and ":" not in text:
        return now - dt.timedelta(milliseconds=parse_duration_ms(text, "older_than"))
    return dt.datetime.fromtimestamp(time_travel.timestamp_millis(text) / 1000)

