"""What a Paimon table holds on disk, in forms two tables can be compared by: tests that write
the same runs two ways (in-process and in Spark tasks) expect the same files."""
from __future__ import annotations

import os

import numpy as np

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


def mark_deleted(location, column, values):
    """What Paimon Spark's DELETE on a deletion-vector append table commits: the positions of
    the matching rows join their files' deletion vectors (each touched bucket's index file
    rewritten whole); no data file changes."""
    from dbt.adapters.paimon.format.commit import commit_compact
    from dbt.adapters.paimon.format.deletion_vectors import (read_deletion_vectors,
                                                            replace_bucket_index)
    from dbt.adapters.paimon.format.kv_files import _read_file, new_commit_message

    table = location.open()
    messages = []
    for split in splits_mod.plan_splits(table):
        vectors = read_deletion_vectors(table.file_io, split.deletion_files)
        touched = False
        for meta in split.files:
            found = np.flatnonzero(np.isin(
                _read_file(table, meta, [column]).column(column).to_numpy(), values))
            if found.size:
                vectors[meta.file_name] = np.union1d(vectors.get(meta.file_name, []), found)
                touched = True
        if touched:
            message = new_commit_message(split.partition_values, split.bucket)
            message.index_adds, message.index_deletes = replace_bucket_index(table, split,
                                                                             vectors)
            messages.append(message)
    assert commit_compact(table, messages) is not None
