"""Which snapshot a time-travel read or a tag operation means, chosen as Paimon Java chooses it.

- by id: the snapshot file, or a tag of that snapshot once the snapshot expired (Java's
  ``AbstractFileStoreTable.findSnapshot``);
- by tag: the snapshot stored in the tag file (``StaticFromTagStartingScanner``);
- by timestamp: the latest snapshot committed at or before it
  (``SnapshotManager.earlierOrEqualTimeMills``, snapshots only, not tags);
- by watermark: the earliest snapshot whose watermark is at or after it
  (``SnapshotManager.laterOrEqualWatermark``; a snapshot without a watermark, null or
  Long.MIN_VALUE, takes the place of the nearest earlier one that has one);
- a version string (Spark's ``VERSION AS OF``, Java's ``TimeTravelUtil.adaptScanVersion``): a tag
  name when such a tag exists, ``watermark-<n>``, else a snapshot id when all digits.
"""

from __future__ import annotations

import datetime as dt
from typing import Dict, List, Optional, Tuple

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)

MISSING_WATERMARK = -(2 ** 63)
WATERMARK_PREFIX = "watermark-"


def tag_manager(table):
    """The tags of the table's branch (main, or the branch a ``t$branch_b`` table reads)."""
    return table.tag_manager()


def tags(table, branch: Optional[str] = None) -> Dict[str, object]:
    """Tag name -> pypaimon ``Tag`` (a Snapshot with the tag's create time and retention), of
    the table's branch, or of ``branch`` when given ('main' included)."""
    if branch is None:
        manager = tag_manager(table)
    else:
        from pypaimon.tag.tag_manager import TagManager

        manager = TagManager(table.file_io, table.table_path, branch)
    try:
        names = manager.list_tags()
    except (FileNotFoundError, OSError):
        return {}
    found = {}
    for name in sorted(names):
        if name.startswith(".") or name.endswith(".tmp"):
            continue  # an atomic write's temporary file
        tag = manager.get(name)
        if tag is not None:
            found[name] = tag
    return found


def snapshot_by_id(table, snapshot_id: int):
    """The snapshot ``snapshot_id``, from its file or, once expired, from a tag of it."""
    snapshot = table.snapshot_manager().get_snapshot_by_id(int(snapshot_id))
    if snapshot is not None:
        return snapshot
    for tag in tags(table).values():
        if tag.id == int(snapshot_id):
            return tag.trim_to_snapshot()
    return None


def snapshot_by_tag(table, tag_name: str):
    name = str(tag_name or "")
    if not name.strip():
        raise ValueError("Tag name shouldn't be blank.")
    tag = tag_manager(table).get(name)
    if tag is None:
        known = sorted(tags(table))
        raise ValueError(f"Paimon table {table.identifier} has no tag '{name}' "
                         f"(tags: {known or 'none'})")
    return tag.trim_to_snapshot()


def snapshot_at_time(table, timestamp_ms: int):
    """The latest snapshot committed at or before ``timestamp_ms``."""
    snapshots = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    found = None
    for snapshot in snapshots:
        if snapshot.time_millis <= timestamp_ms:
            found = snapshot
        else:
            break
    if found is None:
        earliest = snapshots[0].time_millis if snapshots else None
        raise ValueError(
            f"There is currently no snapshot of {table.identifier} earlier than or equal to "
            f"timestamp [{timestamp_ms}] ({_utc(timestamp_ms)}); the earliest snapshot's "
            f"timestamp is [{earliest}]" + (f" ({_utc(earliest)})" if earliest else ""))
    return found


def snapshot_at_watermark(table, watermark: int):
    """The earliest snapshot whose watermark is at or after ``watermark``."""
    snapshots = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    effective = None
    for snapshot in snapshots:
        if not _missing(snapshot.watermark):
            effective = snapshot.watermark
        if effective is not None and effective >= watermark:
            # the first snapshot carrying (or inheriting) a watermark that late; Java returns
            # the snapshot that carries it
            return _carrier(snapshots, snapshot)
    raise ValueError(f"There is currently no snapshot of {table.identifier} later than or "
                     f"equal to watermark[{watermark}]")


def travel(table, snapshot_id=None, tag=None, timestamp=None, watermark=None, version=None):
    """The snapshot one of the time-travel arguments names (exactly one)."""
    given = {k: v for k, v in (("snapshot_id", snapshot_id), ("tag", tag),
                               ("timestamp", timestamp), ("watermark", watermark),
                               ("version", version)) if v is not None}
    if len(given) != 1:
        raise ValueError("pass exactly one of snapshot_id, tag, timestamp, watermark or "
                         f"version (got {sorted(given) or 'none'})")
    if version is not None:
        text = str(version)
        if tag_manager(table).tag_exists(text):
            return snapshot_by_tag(table, text)
        if text.startswith(WATERMARK_PREFIX) and text[len(WATERMARK_PREFIX):].lstrip(
                "-").isdigit():
            return snapshot_at_watermark(table, int(text[len(WATERMARK_PREFIX):]))
        if text.isdigit():
            snapshot_id = int(text)
        else:
            raise ValueError(f"Cannot find a time travel version for {text} in "
                             f"{table.identifier}: no tag of that name, not a snapshot id")
    if snapshot_id is not None:
        number = whole_number(snapshot_id, "snapshot_id")
        snapshot = snapshot_by_id(table, number)
        if snapshot is None:
            retained = sorted(s.id for s in table.snapshot_manager().list_snapshots())
            tagged = sorted({t.id for t in tags(table).values()})
            raise ValueError(
                f"{table.identifier} has no snapshot {number} (retained snapshots: "
                f"{_ids(retained)}" + (f"; tagged snapshots: {_ids(tagged)}" if tagged else "")
                + "); expired snapshots cannot be read")
        return snapshot
    if tag is not None:
        return snapshot_by_tag(table, tag)
    if timestamp is not None:
        return snapshot_at_time(table, timestamp_millis(timestamp))
    return snapshot_at_watermark(table, whole_number(watermark, "watermark"))


def incremental_between_timestamps(table, start_ms: int, end_ms: int) -> Tuple[int, int]:
    """The snapshot ids (start exclusive, end inclusive) whose commits Paimon's
    ``incremental-between-timestamp`` = 'start,end' reads; equal ids when it reads nothing.

    As master's AbstractDataTableScan.createIncrementalStartingScanner with
    IncrementalDeltaStartingScanner.betweenTimestamps (Java 1.0's
    IncrementalTimeStampStartingScanner selects the same ids, with no check of the order):
    nothing when the table has no snapshot, when start equals end, when start is after the
    latest snapshot's time or end before the earliest's; otherwise the start is the latest
    retained snapshot committed at or before ``start_ms`` (the one before the earliest when
    the earliest is later: its commit is read too), the end the latest committed at or before
    ``end_ms``. Only retained snapshots count (SnapshotManager.earlierOrEqualTimeMills)."""
    if end_ms < start_ms:
        raise ValueError(f"Ending timestamp {end_ms} should be >= starting timestamp "
                         f"{start_ms}.")
    snapshots = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    if not snapshots:
        return 0, 0
    earliest, latest = snapshots[0], snapshots[-1]
    if start_ms == end_ms or start_ms > latest.time_millis or end_ms < earliest.time_millis:
        return latest.id, latest.id

    def at_or_before(ms: int):
        found = None
        for snapshot in snapshots:
            if snapshot.time_millis > ms:
                break
            found = snapshot
        return found

    start = at_or_before(start_ms)
    start_id = earliest.id - 1 if start is None else start.id
    return start_id, at_or_before(end_ms).id


def timestamp_millis(value) -> int:
    """Epoch milliseconds from a number (milliseconds, as Paimon's scan.timestamp-millis), a
    datetime, or text 'YYYY-MM-DD[ HH:MM[:SS[.fff]]]' (in the local time zone, as Paimon's
    scan.timestamp)."""
    if isinstance(value, bool):
        raise ValueError(f"timestamp must be epoch milliseconds or 'YYYY-MM-DD HH:MM:SS', "
                         f"got {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, dt.datetime):
        return int(value.timestamp() * 1000)
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"timestamp {value!r} is neither epoch milliseconds nor "
                         f"'YYYY-MM-DD HH:MM:SS[.fff]'") from None
    return int(parsed.timestamp() * 1000)


def whole_number(value, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a whole number, got {value!r}")
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number, got {value!r}") from None


def _missing(watermark) -> bool:
    return watermark is None or watermark == MISSING_WATERMARK


def _carrier(snapshots: List, snapshot):
    """The nearest snapshot at or before ``snapshot`` that carries a watermark."""
    for candidate in reversed([s for s in snapshots if s.id <= snapshot.id]):
        if not _missing(candidate.watermark):
            return candidate
    return snapshot


def _ids(ids: List[int]) -> str:
    if len(ids) > 6:
        return f"{ids[:3]}...{ids[-3:]}"
    return str(ids)


def _utc(ms: Optional[int]) -> str:
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
