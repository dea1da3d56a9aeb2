"""Bucket counts of a postpone-bucket table's (``bucket`` = -2) partitions, for batch writes
into fixed buckets (write/), the postpone compaction (ops/postpone.py, whose docstring
describes both) and merge-on-read (postpone_merge.py), which routes a partition's pending
records to the buckets the compaction would."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Dict, List, Optional

from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.runtime import PaimonConfigError

if TYPE_CHECKING:
    from pypaimon.manifest.schema.data_file_meta import DataFileMeta

BATCH_WRITE_FIXED_BUCKET = "postpone.batch-write-fixed-bucket"
DEFAULT_BUCKET_NUM = "postpone.default-bucket-num"
TARGET_ROW_NUM = "postpone.target-row-num-per-bucket"
TARGET_SIZE = "postpone.target-size-per-bucket"


def known_bucket_counts(table, snapshot_id: Optional[int]) -> Dict[tuple, int]:
    """The bucket count of each partition that has real buckets at the snapshot (Paimon's
    ``getKnownNumBuckets``: the manifests' ``total_buckets``)."""
    if snapshot_id is None:
        return {}
    counts: Dict[tuple, int] = {}
    for split in plan_splits(table, snapshot_id):
        if split.bucket < 0 or not split.total_buckets or split.total_buckets <= 0:
            continue
        old = counts.setdefault(tuple(split.partition_values), int(split.total_buckets))
        if old != split.total_buckets:
            raise PaimonConfigError(
                f"Paimon table {table.identifier.get_full_name()}: partition "
                f"{split.partition} has files of {old} and of {split.total_buckets} buckets")
    return counts


def compaction_bucket_counts(table, known: Dict[tuple, int],
                             pending: Dict[tuple, List["DataFileMeta"]]) -> Dict[tuple, int]:
    """Each pending partition's bucket count (Paimon's ``PostponeBucketNumResolver``)."""
    default = table.options.postpone_default_bucket_num()
    counts = {}
    for partition, files in pending.items():
        if partition in known:
            counts[partition] = known[partition]
        elif default is not None:
            counts[partition] = int(default)
        else:
            rows = table.options.postpone_target_row_num_per_bucket()
            if rows is not None:
                if int(rows) <= 0:
                    raise PaimonConfigError(f"table option '{TARGET_ROW_NUM}' must be > 0")
                counts[partition] = _bucket_num(sum(f.row_count for f in files), int(rows))
            else:
                size = table.options.postpone_target_size_per_bucket()
                if size <= 0:
                    raise PaimonConfigError(f"table option '{TARGET_SIZE}' must be > 0")
                counts[partition] = _bucket_num(sum(f.file_size for f in files), size)
    return counts


def _bucket_num(value: int, target: int) -> int:
    """Paimon's ``computeBucketNum``: ceil(value / target), at least 1."""
    return 1 if value <= 0 else max(1, math.ceil(value / target))


def write_bucket_settings(table, model_name: str) -> int:
    """A batch run's bucket count for partitions new to the table; refuses, naming the
    option and the fix, the settings under which Paimon's batch write does something dbt-paimon
    does not."""
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    name = table.identifier.get_full_name()
    if str(options.get(BATCH_WRITE_FIXED_BUCKET, "true")).strip().lower() != "true":
        raise PaimonConfigError(
            f"Model '{model_name}': Paimon table {name} (bucket = -2) sets "
            f"'{BATCH_WRITE_FIXED_BUCKET}' = 'false', under which a batch write puts its rows "
            f"into the postpone bucket like a streaming writer; dbt-paimon writes a run straight "
            f"into fixed buckets only. Remove the option (table_options) or set it to 'true'.")
    if table.options.deletion_vectors_enabled():
        raise PaimonConfigError(
            f"Model '{model_name}': Paimon table {name} (bucket = -2) sets "
            f"'deletion-vectors.enabled': batch reads of it skip level 0, where a run's rows "
            f"land, and dbt-paimon leaves a postpone table's level-0 files to its postpone "
            f"compaction. Write the table without deletion vectors, or write it with Paimon "
            f"(Spark, Flink) and read it with dbt-paimon.")
    default = table.options.postpone_default_bucket_num()
    if default is not None:
        return int(default)
    if options.get(TARGET_ROW_NUM) is not None:
        raise PaimonConfigError(
            f"Model '{model_name}': Paimon table {name} (bucket = -2) sets '{TARGET_ROW_NUM}' "
            f"without '{DEFAULT_BUCKET_NUM}': Paimon then sizes each new partition's buckets "
            f"from the run's row count, which dbt-paimon does not. Set '{DEFAULT_BUCKET_NUM}' "
            f"(table_options) to the bucket count new partitions should get.")
    return 1
