"""Postpone-bucket tables (``bucket`` = -2): batch writes into fixed buckets, and the
compaction that moves the postpone bucket's rows into real buckets.

A streaming writer (Flink) puts a postpone table's rows into bucket -2 (``bucket-postpone``
folders), unsorted, in arrival order, a file series per writer (file names
``data-u-<commit user>-s-<write id>-w-...``); batch reads do not see them. Paimon's postpone
compaction (``SparkPostponeCompactProcedure``, Flink's postpone compact job) makes them
visible, as one COMPACT snapshot:

- each partition gets its bucket count (``PostponeUtils.createPostponeBucketNumResolver``): the
  count its real buckets already have; for a partition without real buckets
  ``postpone.default-bucket-num`` when set, else ``ceil(postpone rows /
  postpone.target-row-num-per-bucket)`` when that is set, else ``ceil(postpone file bytes /
  postpone.target-size-per-bucket)`` (1 gb);
- the postpone files are read without merging, writer by writer, each writer's files in
  creation-time order (``PostponeUtils.groupPostponeFiles``); each record goes to its fixed
  bucket (Paimon's bucket hash of the bucket key, the partition's count) and is written by
  that bucket's normal writer: the bucket's records of the compaction merged as a write
  buffer merges them, numbered above the bucket's largest sequence number, as level-0 files;
- the postpone files leave the table in the same snapshot.

Paimon gives records of different writers no relative order; here writers are taken in the
order of their first file's creation time (a later streaming job's rows after an earlier
one's), so a key written by two writers ends with the later writer's record.

Paimon then runs the bucket's size-tiered compaction on every bucket the move wrote and every
real bucket holding level-0 files (a batch write's), in the same commit; ops/compact.py runs
that compaction right after the move, as a second COMPACT snapshot when it picks anything.
The rows a read returns are the same.

Batch writes (a dbt model's run) go straight into fixed buckets, as Spark's batch write of a
postpone table does (``postpone.batch-write-fixed-bucket``, true by default): a partition
that has real buckets keeps its count; a partition new to the table gets
``postpone.default-bucket-num`` buckets when set, else 1 (Paimon estimates the count of such a
partition from the run's staged bytes over ``postpone.target-size-per-bucket``, 1 gb: one bucket
for any run below that).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Tuple

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from dbt.adapters.paimon.format.postpone_buckets import (compaction_bucket_counts,
                                                          known_bucket_counts)
# the postpone files and their replay order, shared with reads (postpone.merge-on-read)
from dbt.adapters.paimon.format.postpone_merge import pending_files, writer_order
from dbt.adapters.paimon.format.splits import POSTPONE_BUCKET, Split, plan_splits


# --------------------------------------------------------------------------- compaction

@dataclass
class PostponeMoveUnit:
    """One partition's postpone files, whose rows move into its real buckets: a task of the
    compaction (ops/compact.py runs it in a thread or a Spark task, as a compaction unit)."""

    split: Split              # the partition's postpone files, in replay order (writer_order)
    plan: Any                 # the write plan, every partition's bucket count in it
    other_files: List = field(default_factory=list)   # none (compact.run_units sizes units)


def move_postpone_rows(spark, location, table) -> Tuple[list, set]:
    """The commit messages that move every postpone file's rows into real buckets (new level-0
    files, the postpone files deleted), and the (partition, bucket) pairs written: a partition
    per unit (a key lives in one partition, so a unit holds one partition's pending rows),
    in threads of this process or in Spark tasks as compaction units are. Files written are
    deleted again when anything fails."""
    from dbt.adapters.paimon.format.kv_files import new_commit_message
    from dbt.adapters.paimon.ops.compact import run_units
    from dbt.adapters.paimon.write.spark_job import make_plan

    snapshot = table.snapshot_manager().get_latest_snapshot()
    if snapshot is None:
        return [], set()
    pending = pending_files(table, snapshot)
    if not pending:
        return [], set()
    known = known_bucket_counts(table, snapshot.id)
    counts = compaction_bucket_counts(table, known, pending)
    plan = make_plan(None, table, location, f"compaction of {location.name}", None,
                     postpone_counts={**known, **counts})
    keys = list(table.partition_keys)
    units = [PostponeMoveUnit(Split(partition=dict(zip(keys, partition)),
                                    partition_values=partition, bucket=POSTPONE_BUCKET,
                                    files=writer_order(files), snapshot_id=snapshot.id), plan)
             for partition, files in pending.items()]
    messages = run_units(spark, location, units)
    written = {(tuple(m.partition), m.bucket) for m in messages}
    for partition, files in pending.items():
        messages.append(new_commit_message(partition, POSTPONE_BUCKET, deleted_files=files))
    return messages, written


def move_partition(table, unit: PostponeMoveUnit) -> list:
    """The unit's rows written into their fixed buckets: the messages adding the new level-0
    files (none for a partition whose postpone files hold no row)."""
    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.write.plan import BUCKET, ROW_KIND, SEQ
    from dbt.adapters.paimon.write.tasks import existing_splits, fixed_buckets, split_groups, \
        write_groups

    plan = unit.plan
    data = read_split_records(table, unit.split, columns=plan.names).drop_columns(["_level"])
    if not data.num_rows:
        return []
    # arrival order: writer by writer, file by file, row by row
    data = data.set_column(data.schema.get_field_index("_seq"), SEQ,
                           pa.array(np.arange(data.num_rows, dtype=np.int64)))
    data = data.rename_columns([ROW_KIND if n == "_row_kind" else n
                                for n in data.column_names])
    data = data.append_column(BUCKET, fixed_buckets(
        plan, *[data.column(k) for k in plan.bucket_input_columns]))
    groups = list(split_groups(data, plan.group_columns))
    del data
    messages: list = []
    try:
        write_groups(plan, table, groups, existing_splits(plan, table, groups), messages)
    except BaseException:
        if messages:
            abort(table, messages)
        raise
    return messages


def level0_buckets(table) -> set:
    """The real buckets holding level-0 files (a batch write's): Paimon's postpone compaction
    compacts them too (``PostponeUtils.getLevel0Buckets``)."""
    return {(tuple(s.partition_values), s.bucket) for s in plan_splits(table)
            if s.bucket >= 0 and any(f.level == 0 for f in s.files)}
