"""A Paimon table's numbers for `dbt docs generate`: dbt's catalog ``stats:<id>:*`` entries.

Metadata only (snapshot, manifests): no data file is opened.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Dict, List, Tuple

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.ops.table_info import table_summary


def catalog_stats(location: TableRef) -> Dict[str, Any]:
    info = table_summary(location)
    snapshots = info["snapshots"]
    latest = snapshots[-1] if snapshots else None
    options = info["options"]
    primary_keys = info["primary_keys"]
    entries: List[Tuple[str, str, Any, str]] = [
        ("rows", "Rows (stored records)", info["rows"],
         "Records in the latest snapshot's data files; a primary-key table's merged row count "
         "is lower while updates of a key sit in several files (until compaction)."),
        ("files", "Data files", info["files"], "Data files of the latest snapshot."),
        ("bytes", "Size (bytes)", info["bytes"], "Total size of those data files."),
        ("snapshot_id", "Latest snapshot", latest.id if latest else None,
         "The table's current Paimon snapshot."),
        ("snapshot_time", "Latest snapshot time (UTC)",
         dt.datetime.fromtimestamp(latest.time_millis / 1000, dt.timezone.utc)
         .strftime("%Y-%m-%d %H:%M:%S") if latest else None,
         "When the current snapshot was committed."),
        ("primary_key", "Primary key", ", ".join(primary_keys) or "(append table)",
         "The Paimon table's primary key."),
        ("merge_engine", "Merge engine",
         options.get("merge-engine", "deduplicate") if primary_keys else "(append table)",
         "How records of one key merge (Paimon option merge-engine)."),
        ("buckets", "Buckets", options.get("bucket", "-1"),
         "Paimon option bucket (-1: dynamic or unbucketed)."),
    ]
    stats: Dict[str, Any] = {}
    for key, label, value, description in entries:
        if value is None:
            continue
        stats[f"stats:paimon_{key}:label"] = label
        stats[f"stats:paimon_{key}:value"] = value
        stats[f"stats:paimon_{key}:description"] = description
        stats[f"stats:paimon_{key}:include"] = True
    return stats
