"""What a Paimon table holds on disk, in forms two tables can be compared by: tests that write
the same runs two ways (in-process and in Spark tasks) expect the same files."""
from __future__ import annotations

import os

from dbt.adapters.paimon.format import splits as splits_mod


def live_file_metadata(location):
    """(partition, bucket) -> each live file's metadata but its name and creation time (file
    size, rows, min/max key, key and value stats, sequence numbers, level, delete count)."""
    table = location.open()
    skip = ("file_name", "file_path", "creation_time", "extra_files", "external_path")
    return {(tuple(split.partition_values), split.bucket):
            [{k: plain(v) for k, v in vars(meta).items() if k not in skip}
             for meta in split.files]
            for split in splits_mod.plan_splits(table)}


def plain(value):
    """Stats rows and other pypaimon objects as plain values (they compare by identity)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "data") and isinstance(value.data, bytes):  # BinaryRow
        return value.data
    if hasattr(value, "values") and hasattr(value, "fields"):  # GenericRow
        return ("row", plain(value.values))
    if hasattr(value, "min_values"):  # SimpleStats
        return [plain(value.min_values), plain(value.max_values), plain(value.null_counts)]
    return value


def bucket_file_bytes(location):
    """Bucket folder -> the bytes of every file in it (live or not), sorted."""
    root = os.path.join(location.warehouse, f"{location.database}.db", location.table)
    found = {}
    for folder, _, names in os.walk(root):
        if "bucket-" not in folder:
            continue
        for name in names:
            with open(os.path.join(folder, name), "rb") as handle:
                found.setdefault(os.path.relpath(folder, root), []).append(handle.read())
    return {k: sorted(v) for k, v in found.items()}
