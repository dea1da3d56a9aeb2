"""Queue tables: append tables with fixed buckets (``bucket`` = N, optional ``bucket-key``).

- Rows go to ``abs(hash(bucket key) % N)`` with our vectorized hash (``bucket.bucket_ids``,
  bit-identical to Java); pypaimon's own writer hashes row by row in Python. Without
  ``bucket-key`` every column is the bucket key (seed 002).
- Each bucket's records are read in write order: files by sequence number, rows by position.
  Java's ``AppendOnlyWriter`` numbers every row of a bucket (a file covers
  ``[min, max]``, the next file starts above); pypaimon 2.1.0 stamps every file of a commit
  with the same number. ``number_files`` restores Java's numbering at commit time, on the
  driver, in the order Spark's tasks wrote the files (the query's order).
- Across partitions, ``scan.plan-sort-partition`` = true reads partitions in partition-value
  order; otherwise (Paimon's default) in the order they were written.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterator, List, Sequence, Tuple

import numpy as np
import pyarrow as pa
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.write.commit_message import CommitMessage

from dbt.adapters.paimon.format.bucket import bucket_ids, bucket_key_columns
from dbt.adapters.paimon.format.splits import Split, plan_splits


def is_queue_table(table) -> bool:
    return not table.primary_keys and int(table.options.bucket()) > 0


def queue_bucket_key(table) -> List[str]:
    return bucket_key_columns([], list(table.partition_keys),
                              {str(k): str(v) for k, v in table.table_schema.options.items()},
                              list(table.field_names))


def bucket_groups(table, rows: pa.Table) -> Iterator[Tuple[int, pa.Table]]:
    """The rows of each (partition, bucket), rows keeping their order; one group per pair."""
    if rows.num_rows == 0:
        return
    keys = queue_bucket_key(table)
    types = {f.name: str(f.type) for f in table.table_schema.fields}
    buckets = bucket_ids(rows.select(keys), int(table.options.bucket()),
                         [types[k] for k in keys])
    group_columns = list(table.partition_keys) + ["_bucket"]
    indexed = rows.select(list(table.partition_keys)).append_column(
        "_bucket", pa.array(buckets)).append_column(
        "_row", pa.array(np.arange(rows.num_rows, dtype=np.int64)))
    groups = indexed.group_by(group_columns, use_threads=False).aggregate([("_row", "list")])
    for bucket, row_list in zip(groups.column("_bucket").to_pylist(),
                                groups.column("_row_list").to_pylist()):
        positions = np.sort(np.asarray(row_list, dtype=np.int64))
        yield int(bucket), rows.take(pa.array(positions))


def number_files(table, messages: Sequence[CommitMessage]) -> List[CommitMessage]:
    """Give the new files of each bucket consecutive sequence ranges above the bucket's
    current maximum, in message order (Java's per-row sequence numbers of an append bucket)."""
    touched = {(tuple(m.partition), m.bucket) for m in messages if m.new_files}
    if not touched:
        return list(messages)
    keys = list(table.partition_keys)
    partitions = [dict(zip(keys, p)) for p in {p for p, _ in touched}] if keys else None
    next_number: Dict[Tuple[Tuple[Any, ...], int], int] = {
        (s.partition_values, s.bucket): s.max_sequence_number + 1
        for s in plan_splits(table, partition_filter=partitions)}
    numbered = []
    for message in messages:
        key = (tuple(message.partition), message.bucket)
        files = []
        for meta in message.new_files:
            start = next_number.get(key, 0)
            files.append(dataclasses.replace(meta, min_sequence_number=start,
                                             max_sequence_number=start + meta.row_count - 1))
            next_number[key] = start + meta.row_count
        numbered.append(dataclasses.replace(message, new_files=files))
    return numbered


def order_splits(table, splits: Sequence[Split]) -> List[Split]:
    """Splits in Paimon's partition order: by partition values with
    ``scan.plan-sort-partition``, else by when each partition was first written."""
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    if options.get("scan.plan-sort-partition", "false").lower() == "true":
        return sorted(splits, key=lambda s: (tuple((v is None, v) for v in s.partition_values),
                                             s.bucket))

    def first_written(split: Split):
        return min(((f.creation_time.get_millisecond() if f.creation_time else 0),
                    f.min_sequence_number) for f in split.files) if split.files else (0, 0)

    written = {s.partition_values: first_written(s) for s in splits}
    for s in splits:
        written[s.partition_values] = min(written[s.partition_values], first_written(s))
    return sorted(splits, key=lambda s: (written[s.partition_values], s.bucket))
