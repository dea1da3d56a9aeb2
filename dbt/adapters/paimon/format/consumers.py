"""Paimon consumers: ``<table>/consumer/consumer-<id>`` files holding ``{"nextSnapshot": N}``.

As Java's ConsumerManager / Consumer: a consumer's position is the next snapshot it has to
read; snapshot expiry keeps every snapshot from the smallest position on
(``min_next_snapshot``); ``consumer.expiration-time`` deletes consumers whose file was not
written for that long (``expire_consumers``, run before snapshot expiry as TableCommitImpl
does); ``consumer.ignore-progress`` makes a reader ignore its stored position.
"""
from __future__ import annotations

import datetime
import json
import re
from typing import Dict, Optional

CONSUMER_PREFIX = "consumer-"
_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _folder(table) -> str:
    return f"{table.table_path.rstrip('/')}/consumer"


def _path(table, consumer_id: str) -> str:
    if not _ID.match(consumer_id or ""):
        raise ValueError(f"consumer id {consumer_id!r} is not supported: use letters, digits, "
                         f"'_', '-' and '.'")
    return f"{_folder(table)}/{CONSUMER_PREFIX}{consumer_id}"


def read_consumer(table, consumer_id: str) -> Optional[int]:
    """The consumer's next snapshot, None when it does not exist."""
    path = _path(table, consumer_id)
    if not table.file_io.exists(path):
        return None
    return int(json.loads(table.file_io.read_file_utf8(path))["nextSnapshot"])


def write_consumer(table, consumer_id: str, next_snapshot: int) -> None:
    """Store the consumer's position (Java: ConsumerManager.resetConsumer, an overwrite)."""
    table.file_io.overwrite_file_utf8(_path(table, consumer_id),
                                      json.dumps({"nextSnapshot": int(next_snapshot)}))


def list_consumers(table) -> Dict[str, int]:
    """consumer id -> next snapshot, for every readable consumer file."""
    found = {}
    for status in _statuses(table):
        try:
            found[status.base_name[len(CONSUMER_PREFIX):]] = int(json.loads(
                table.file_io.read_file_utf8(f"{_folder(table)}/{status.base_name}")
            )["nextSnapshot"])
        except (ValueError, KeyError, OSError):
            continue  # a file being written: Java retries, expiry simply ignores it
    return found


def min_next_snapshot(table) -> Optional[int]:
    """Smallest position of any consumer (snapshots from it on must not expire)."""
    positions = list_consumers(table).values()
    return min(positions) if positions else None


def expire_consumers(table, older_than_ms: int, now_ms: int) -> list:
    """Delete consumers whose file is older than ``older_than_ms``; their ids."""
    expired = []
    for status in _statuses(table):
        if _mtime_ms(status) < now_ms - older_than_ms:
            table.file_io.delete_quietly(f"{_folder(table)}/{status.base_name}")
            expired.append(status.base_name[len(CONSUMER_PREFIX):])
    return expired


def _statuses(table) -> list:
    try:
        statuses = table.file_io.list_status(_folder(table))
    except (FileNotFoundError, OSError):
        return []
    return [s for s in statuses if s.base_name.startswith(CONSUMER_PREFIX)]


def _mtime_ms(status) -> int:
    mtime = getattr(status, "mtime", None)
    if isinstance(mtime, datetime.datetime):
        return int(mtime.timestamp() * 1000)
    return int(float(mtime or 0) * 1000)
