"""The Spark tasks of a Python data-source read: which files (and which row groups) each reads.

``format.splits`` plans one split per (partition, bucket). A task per split would leave cores
idle on a table of few buckets and make a task of every tiny bucket. As Paimon's split
generators (Java ``AppendOnlySplitGenerator``, ``MergeTreeSplitGenerator``) and Spark's own
file reads do, a split becomes tasks of about one *split size* each:
- files read as stored (an append table's; a primary-key split's that is raw-convertible, its
  files holding the merged rows) are packed, in the split's order, into tasks of at most the
  split size, each file counted at least ``source.split.open-file-cost``;
- a primary-key split to merge is cut into *sections*: groups of files whose key ranges
  overlap (pypaimon's ``IntervalPartition``, Java's), so no key is in two sections and each is
  merged alone; adjacent sections are packed the same way. A section of one level's files is
  raw-convertible on its own and is read as stored;
- a Parquet file larger than the split size is read as ranges of its row groups
  (``format.row_groups``), a task each: Spark splits its own Parquet reads the same way;
- a data-evolution table whose rows are assembled from several files
  (``format.data_evolution``) is cut into its row-id ranges (a range's files together), packed
  the same way.

The split size is Spark's rule (``FilePartition.maxSplitBytes``) on Paimon's options:
``min(source.split.target-size, max(source.split.open-file-cost, bytes / parallelism))``, the
bytes being those of every file the read opens: a read of few bytes is still spread over the
session's task slots.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, List, Mapping, Optional, Sequence

from pypaimon.manifest.schema.data_file_meta import DataFileMeta

from dbt.adapters.paimon.datasource.source import is_raw_convertible
from dbt.adapters.paimon.format.data_evolution import (is_data_evolution, needs_field_merge,
                                                       row_id_groups)
from dbt.adapters.paimon.format.row_groups import RowGroups, row_group_ranges, splittable
from dbt.adapters.paimon.format.splits import Split

TARGET_SIZE = "source.split.target-size"
OPEN_FILE_COST = "source.split.open-file-cost"
DEFAULTS = {TARGET_SIZE: "128 mb", OPEN_FILE_COST: "4 mb"}


@dataclass(frozen=True)
class ReadTask:
    """One Spark task's part of a read: ``split`` narrowed to the files it reads, and with
    ``row_groups`` only those row groups of its single file."""

    split: Split
    row_groups: Optional[RowGroups] = None


@dataclass(frozen=True)
class SplitSize:
    target: int      # source.split.target-size, in bytes
    open_cost: int   # source.split.open-file-cost

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> "SplitSize":
        return cls(_memory_size(options, TARGET_SIZE), _memory_size(options, OPEN_FILE_COST))

    def weight(self, meta: DataFileMeta) -> int:
        return max(meta.file_size, self.open_cost)

    def for_read(self, files: Sequence[DataFileMeta], parallelism: int) -> int:
        per_slot = sum(self.weight(f) for f in files) // max(1, parallelism)
        return min(self.target, max(self.open_cost, per_slot))


def read_tasks(table, splits: Sequence[Split], parallelism: int) -> List[ReadTask]:
    """The tasks reading ``splits`` (in their order; the rows of a split's tasks, read in turn,
    are the split's rows in the order one task would read them) with ``parallelism`` task
    slots."""
    sizes = SplitSize.from_options(table.table_schema.options)
    per_split = [(split, _read_files(split)) for split in splits]
    limit = sizes.for_read([f for _, files in per_split for f in files], parallelism)
    evolution = is_data_evolution(table)
    tasks: List[ReadTask] = []
    for split, files in per_split:
        if not files:
            continue
        narrowed = dataclasses.replace(split, files=files, levels=[f.level for f in files])
        merge = split.primary_key_table and not is_raw_convertible(narrowed)
        if evolution and needs_field_merge(files):
            # a data-evolution table's row-id ranges, each read whole by one task
            units = row_id_groups(files)
            for unit in _pack(units, lambda u: sum(sizes.weight(f) for f in u), limit):
                tasks.append(ReadTask(dataclasses.replace(split, files=unit,
                                                          levels=[f.level for f in unit])))
            continue
        if merge:
            units = [_section_files(section) for section in _sections(files)]
        else:
            # one sorted run's files in key order, as the merged read gives them; with
            # deletion vectors (or no key) the stored order
            if split.primary_key_table and not split.deletion_vectors:
                files = sorted(files, key=lambda f: tuple(f.min_key.values))
            units = [[f] for f in files]
        order = {id(f): i for i, f in enumerate(files)}
        for unit in _pack(units, lambda u: sum(sizes.weight(f) for f in u), limit):
            if merge:  # the split's file order (by sequence number), which its read keeps
                unit = sorted(unit, key=lambda f: order[id(f)])
            part = dataclasses.replace(split, files=unit, levels=[f.level for f in unit])
            tasks.extend(_row_group_tasks(table, part, limit))
    return tasks


def _read_files(split: Split) -> List[DataFileMeta]:
    return split.batch_read_files() if split.deletion_vectors else list(split.files)


def _sections(files: Sequence[DataFileMeta]) -> list:
    from pypaimon.read.interval_partition import IntervalPartition

    return IntervalPartition(list(files)).partition()


def _section_files(section) -> List[DataFileMeta]:
    return [f for run in section for f in run.files]


def _pack(units: List[List[DataFileMeta]], weight: Callable[[List[DataFileMeta]], int],
          limit: int) -> List[List[DataFileMeta]]:
    """Consecutive units in bins of at most ``limit`` (a unit heavier than that alone)."""
    bins: List[List[DataFileMeta]] = []
    current: List[DataFileMeta] = []
    current_weight = 0
    for unit in units:
        w = weight(unit)
        if current and current_weight + w > limit:
            bins.append(current)
            current, current_weight = [], 0
        current = current + unit
        current_weight += w
    if current:
        bins.append(current)
    return bins


def _row_group_tasks(table, part: Split, limit: int) -> List[ReadTask]:
    """``part`` as one task, or, when it is one Parquet file read as stored that is larger
    than ``limit``, a task per range of its row groups."""
    if len(part.files) != 1:
        return [ReadTask(part)]
    meta, = part.files
    as_stored = not part.primary_key_table or is_raw_convertible(part)
    if not as_stored or not splittable(meta) or meta.file_size <= limit:
        return [ReadTask(part)]
    ranges = row_group_ranges(table, meta, limit)
    if len(ranges) < 2:
        return [ReadTask(part)]
    return [ReadTask(part, r) for r in ranges]


def _memory_size(options: Mapping[str, str], key: str) -> int:
    from pypaimon.common.memory_size import MemorySize

    raw = options.get(key, DEFAULTS[key])
    try:
        value = MemorySize.parse(str(raw)).get_bytes()
    except Exception:  # noqa: BLE001 - any parse failure is the option's error
        value = 0
    if value <= 0:
        raise ValueError(f"table option '{key}' must be a positive memory size such as "
                         f"'{DEFAULTS[key]}', got {raw!r}")
    return value
