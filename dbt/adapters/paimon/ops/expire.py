"""Snapshot expiry and orphan-file removal (pypaimon has neither).

Expiry follows Java ``ExpireSnapshotsImpl``: of the snapshots [earliest, latest], the newest
``retain_min`` are always kept, at most ``retain_max`` are kept, and in between a snapshot is
expired only while it is older than the time threshold (the first young one stops the
expiry); snapshots a consumer has not read yet are kept (consumers idle for longer than
``consumer.expiration-time`` are deleted first, see format/consumers.py). Then every file
that only expired snapshots reference is deleted: data and changelog files, manifests, manifest lists, index
and statistics files. A file any retained snapshot or tag references is never deleted
(computed from their complete live file sets, not from deltas).

Order: snapshot files first (oldest first, EARLIEST hint updated), files after; a crash in
between leaves only unreferenced files, which ``remove_orphan_files`` collects.

``remove_orphan_files`` deletes files in the table folder that no snapshot or tag
references and that are older than a safety margin (a writer's uncommitted files are young).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import consumers, time_travel

DEFAULT_RETAIN_MIN = 10
DEFAULT_RETAIN_MAX = 2 ** 31 - 1
DEFAULT_TIME_RETAINED = "1 h"
DEFAULT_EXPIRE_LIMIT = 50
DEFAULT_ORPHAN_MARGIN = "1d"
# table folders that hold no data referenced from snapshots: never touched
_METADATA_FOLDERS = {"snapshot", "schema", "tag", "consumer", "branch", "service", "changelog"}

_UNITS_MS = {
    "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
    "w": 7 * 86_400_000, "week": 7 * 86_400_000, "weeks": 7 * 86_400_000,
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_duration_ms(value, what: str = "duration") -> int:
    """'7d', '12h', '1 h', '30 min', '500 ms' (Paimon's duration syntax) -> milliseconds;
    a bare number is milliseconds, as in Paimon."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    match = _DURATION.match(str(value or ""))
    unit = match.group(2).lower() if match else None
    if not match or (unit and unit not in _UNITS_MS):
        raise ValueError(f"{what} {value!r} is not a duration: use a number with a unit, e.g. "
                         f"'7d', '12h', '30 min', '500 ms' (units: d, h, min, s, ms, w)")
    return int(float(match.group(1)) * _UNITS_MS[unit or "ms"])


@dataclass(frozen=True)
class ExpireResult:
    expired_snapshots: List[int]
    retained: Tuple[Optional[int], Optional[int]]   # (earliest, latest) after expiry
    deleted_files: int
    kept_by_tags: List[str] = field(default_factory=list)

    @property
    def message(self) -> str:
        if not self.expired_snapshots:
            return (f"no snapshot to expire (retained snapshots {self.retained[0]}.."
                    f"{self.retained[1]})")
        first, last = self.expired_snapshots[0], self.expired_snapshots[-1]
        return (f"expired {len(self.expired_snapshots)} snapshot(s) {first}..{last}, deleted "
                f"{self.deleted_files} file(s); retained snapshots {self.retained[0]}.."
                f"{self.retained[1]}" + (f" and tags {self.kept_by_tags}"
                                         if self.kept_by_tags else ""))


@dataclass(frozen=True)
class OrphanResult:
    deleted: List[str]          # paths relative to the table folder
    dry_run: bool

    @property
    def message(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        return f"{verb} {len(self.deleted)} orphan file(s)" + (
            ": " + ", ".join(self.deleted[:10]) + (" ..." if len(self.deleted) > 10 else "")
            if self.deleted else "")


# --------------------------------------------------------------------------- what a snapshot references

class References:
    """Files referenced by snapshots, with manifests read once (cached by name)."""

    def __init__(self, table):
        from pypaimon.manifest.index_manifest_file import IndexManifestFile
        from pypaimon.manifest.manifest_file_manager import ManifestFileManager
        from pypaimon.manifest.manifest_list_manager import ManifestListManager

        self.table = table
        self.root = table.table_path.rstrip("/")
        self._lists = ManifestListManager(table)
        self._manifests = ManifestFileManager(table)
        self._index = IndexManifestFile(table)
        self._list_cache: Dict[str, list] = {}
        self._manifest_cache: Dict[str, list] = {}

    def _manifest_list(self, name: Optional[str]) -> list:
        if not name:
            return []
        if name not in self._list_cache:
            self._list_cache[name] = self._lists.read(name)
        return self._list_cache[name]

    def _entries(self, name: str) -> list:
        if name not in self._manifest_cache:
            self._manifest_cache[name] = self._manifests.read(name, drop_stats=True)
        return self._manifest_cache[name]

    def _data_path(self, entry) -> str:
        from pypaimon.utils.file_store_path_factory import canonical_data_file_path

        meta = entry.file
        if meta.external_path:
            return meta.external_path
        return canonical_data_file_path(self.table, tuple(entry.partition.values), entry.bucket,
                                        meta.file_name)

    def files(self, snapshot, all_entries: bool = False) -> Set[str]:
        """Paths of every file ``snapshot`` needs: its live data files (all data files its
        manifests mention when ``all_entries``), changelog files, manifests, manifest lists,
        index manifest and index files, statistics."""
        paths: Set[str] = set()
        manifest_dir = f"{self.root}/manifest"
        lists = [snapshot.base_manifest_list, snapshot.delta_manifest_list,
                 snapshot.changelog_manifest_list]
        for name in lists:
            if name:
                paths.add(f"{manifest_dir}/{name}")
        live: Dict[Tuple[str, int], str] = {}
        for name in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            for meta in self._manifest_list(name):
                paths.add(f"{manifest_dir}/{meta.file_name}")
                for entry in self._entries(meta.file_name):
                    key = (entry.file.file_name, entry.file.level)
                    if entry.kind == 0 or all_entries:
                        live[key] = self._data_path(entry)
                        for extra in entry.file.extra_files or []:
                            live[(extra, entry.file.level)] = self._data_path(entry).rsplit(
                                "/", 1)[0] + "/" + extra
                    else:
                        live.pop(key, None)
        paths.update(live.values())
        for meta in self._manifest_list(snapshot.changelog_manifest_list):
            paths.add(f"{manifest_dir}/{meta.file_name}")
            for entry in self._entries(meta.file_name):
                paths.add(self._data_path(entry))
        if snapshot.index_manifest:
            paths.add(f"{manifest_dir}/{snapshot.index_manifest}")
            for entry in self._index.read(snapshot.index_manifest):
                index_file = entry.index_file
                paths.add(index_file.external_path or
                          f"{self.root}/index/{index_file.file_name}")
        if snapshot.statistics:
            paths.add(f"{self.root}/statistics/{snapshot.statistics}")
        return paths


def branch_files(table, references: "References", all_entries: bool = False) -> Set[str]:
    """Every file the snapshots and tags of the table's OTHER lines need (its branches, and
    main when ``table`` is a branch): they share the data and manifest folders
    (ops/branches.py), so nothing one line stops needing may go while another reads it (Java's
    OrphanFilesClean reads all branches too)."""
    from pypaimon.snapshot.snapshot_manager import SnapshotManager

    own = table.current_branch() or "main"
    try:
        names = ["main"] + list(table.branch_manager().branches())
    except Exception:  # noqa: BLE001 - no branch folder
        names = ["main"]
    paths: Set[str] = set()
    for name in names:
        if name == own:
            continue
        for snapshot in SnapshotManager(table.file_io, table.table_path,
                                        branch=name).list_snapshots():
            paths |= references.files(snapshot, all_entries=all_entries)
        for tag in time_travel.tags(table, name).values():
            paths |= references.files(tag, all_entries=all_entries)
    return paths


# --------------------------------------------------------------------------- expiry

def expire_snapshots(location: TableRef, retain_last: Optional[int] = None,
                     older_than=None, retain_max: Optional[int] = None,
                     max_deletes: Optional[int] = None, now_ms: Optional[int] = None
                     ) -> ExpireResult:
    """Expire snapshots of ``location``.

    ``retain_last``: keep at least this many newest snapshots (default the table's
    ``snapshot.num-retained.min``, 10); ``older_than``: only snapshots older than this
    duration ('7d', '12h') expire (default the table's ``snapshot.time-retained``, 1 h);
    ``retain_max``: keep at most this many (default ``snapshot.num-retained.max``);
    ``max_deletes``: expire at most this many snapshots in this call (default unlimited).
    """
    table = location.open()
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    retain_min = _positive(retain_last, "retain_last") if retain_last is not None else \
        _positive(options.get("snapshot.num-retained.min", DEFAULT_RETAIN_MIN),
                  "snapshot.num-retained.min")
    retain_max = _positive(retain_max, "retain_max") if retain_max is not None else \
        _positive(options.get("snapshot.num-retained.max", DEFAULT_RETAIN_MAX),
                  "snapshot.num-retained.max")
    if retain_max < retain_min:
        if retain_last is not None:
            retain_max = max(retain_max, retain_min)  # an explicit retain_last wins
        else:
            raise ValueError(f"snapshot.num-retained.min ({retain_min}) must not be larger "
                             f"than snapshot.num-retained.max ({retain_max})")
    age_ms = parse_duration_ms(older_than, "older_than") if older_than is not None else \
        parse_duration_ms(options.get("snapshot.time-retained", DEFAULT_TIME_RETAINED),
                          "snapshot.time-retained")
    now_ms = int(time.time() * 1000) if now_ms is None else int(now_ms)
    threshold = now_ms - age_ms

    manager = table.snapshot_manager()
    snapshots = {s.id: s for s in manager.list_snapshots()}
    if not snapshots:
        return ExpireResult([], (None, None), 0)
    earliest, latest = min(snapshots), max(snapshots)
    lowest_kept = max(latest - retain_max + 1, earliest)
    end = latest - retain_min + 1
    if options.get("consumer.expiration-time"):
        # Java's TableCommitImpl expires idle consumers before it expires snapshots
        consumers.expire_consumers(table, parse_duration_ms(
            options["consumer.expiration-time"], "consumer.expiration-time"), now_ms)
    consumer = consumers.min_next_snapshot(table)
    if consumer is not None:
        end = min(end, consumer)
    if max_deletes is not None:
        end = min(end, earliest + _positive(max_deletes, "max_deletes"))
    for sid in range(lowest_kept, max(end, lowest_kept)):
        if sid in snapshots and threshold <= snapshots[sid].time_millis:
            end = sid
            break
    end = max(earliest, min(end, latest))  # the latest snapshot is never expired
    expired = [sid for sid in range(earliest, end) if sid in snapshots]
    if not expired:
        return ExpireResult([], (earliest, latest), 0)

    references = References(table)
    tags = time_travel.tags(table)
    keep: Set[str] = set()
    for sid in range(end, latest + 1):
        if sid in snapshots:
            keep |= references.files(snapshots[sid])
    for tag in tags.values():
        keep |= references.files(tag)
    keep |= branch_files(table, references)
    candidates: Set[str] = set()
    for sid in expired:
        candidates |= references.files(snapshots[sid])
    doomed = sorted(candidates - keep)

    for sid in expired:  # oldest first: a crash leaves a consistent, shorter history
        table.file_io.delete_quietly(manager.get_snapshot_path(sid))
        table.file_io.overwrite_file_utf8(f"{manager.snapshot_dir}/EARLIEST", str(sid + 1))
    deleted = 0
    for path in doomed:
        if table.file_io.exists(path):
            table.file_io.delete_quietly(path)
            deleted += 1
    return ExpireResult(expired, (end, latest), deleted,
                        sorted(tags) if tags else [])


def _positive(value, what: str) -> int:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a positive integer, got {value!r}") from None
    if number < 1:
        raise ValueError(f"{what} must be at least 1 (the latest snapshot is always kept), "
                         f"got {number}")
    return number


# --------------------------------------------------------------------------- orphans

def remove_orphan_files(location: TableRef, older_than=DEFAULT_ORPHAN_MARGIN,
                        dry_run: bool = False, now_ms: Optional[int] = None) -> OrphanResult:
    """Delete files of the table folder that no snapshot or tag references and that are older
    than ``older_than`` (default 1 day: files of a write in progress are younger)."""
    table = location.open()
    margin = parse_duration_ms(older_than, "older_than")
    now_ms = int(time.time() * 1000) if now_ms is None else int(now_ms)
    references = References(table)
    keep: Set[str] = set()
    for snapshot in table.snapshot_manager().list_snapshots():
        keep |= references.files(snapshot, all_entries=True)
    for tag in time_travel.tags(table).values():
        keep |= references.files(tag, all_entries=True)
    keep |= branch_files(table, references, all_entries=True)
    keep_names = {local_path(p) for p in keep}
    root = references.root
    deleted = []
    for status in _walk(table.file_io, root, top=True):
        path = local_path(status.path)
        if path in keep_names or status.base_name in _PROTECTED_FILES:
            continue
        if now_ms - _mtime_ms(status) < margin:
            continue
        relative = path[len(local_path(root)) + 1:] if path.startswith(local_path(root) + "/") \
            else path
        deleted.append(relative)
        if not dry_run:
            table.file_io.delete_quietly(status.path)
    return OrphanResult(sorted(deleted), dry_run)


_PROTECTED_FILES = {"EARLIEST", "LATEST"}


def local_path(path: str) -> str:
    """A local file URI (file://..., file:...) as a path, without a trailing '/'."""
    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif path.startswith("file:"):
        path = path[len("file:"):]
    return path.rstrip("/")


def _walk(file_io, folder: str, top: bool = False) -> Iterable:
    """Every file under ``folder``; of the metadata folders (snapshots, schemas, tags, ...)
    only the hidden temporary files an atomic write leaves when its process dies between
    writing ``.<name>.<uuid>.tmp`` and renaming it (nothing references them)."""
    import pyarrow.fs as pafs

    for status in file_io.list_status(folder):
        if status.type == pafs.FileType.Directory:
            inner = _walk(file_io, f"{folder.rstrip('/')}/{status.base_name}")
            if top and status.base_name in _METADATA_FOLDERS:
                inner = (s for s in inner if s.base_name.startswith(".") and
                         s.base_name.endswith(".tmp"))
            yield from inner
        elif status.type == pafs.FileType.File:
            yield status


def _mtime_ms(status) -> int:
    mtime = getattr(status, "mtime", None)
    if mtime is None:
        return 0
    if hasattr(mtime, "timestamp"):
        return int(mtime.timestamp() * 1000)
    return int(float(mtime) * 1000)
