"""Compaction of append tables: which files Paimon picks, and how it rewrites them.

Unaware-bucket tables (``bucket`` = -1) are planned as Java's ``AppendCompactCoordinator`` does
in one batch run (what Spark's ``CALL sys.compact`` and Flink's compact action run, full or
not):
- a file is a candidate when it is smaller than ``compaction.small-file-ratio`` (0.7) x
  ``target-file-size`` (256 mb for append tables), or, with deletion vectors, when its vector
  deletes more than ``compaction.delete-ratio-threshold`` (0.2) of its rows; at most
  ``compaction.file-num-limit`` candidates are taken;
- per partition the candidates, smallest first, fill bins of ``file size + source.split.open-
  file-cost`` each: a bin of two or more files reaching twice the target size is one task; the
  last bin is a task when it holds ``compaction.min.file-num`` (5) files. With deletion vectors
  the files sharing an index file stay together and their last bin is always a task (its
  vectors must go), the files without vectors are packed as above.
Bucketed tables (``bucket`` = N: fixed buckets, optional ``bucket-key``) are planned per bucket
as Java's ``BucketedAppendCompactManager``, files in sequence-number order:
- full: leading files of at least the compaction file size (and no deletion vector) are kept;
  the rest is rewritten when it holds more small files than large ones and at least 3 files
  (with deletion vectors: always); ``compaction.force-rewrite-all-files`` rewrites every file;
- minor: the first window of ``compaction.min.file-num`` consecutive files whose sizes stay
  under twice the target size.
Each task's files are rewritten in that order into new level-0 files (``BaseAppendFileStoreWrite
.compactRewrite``): rows keep their order and leave out what their deletion vectors delete; the
new files number their rows from the first input file's smallest sequence number and are
marked ``file_source`` COMPACT. On a row-tracking table every row keeps its ``_ROW_ID`` and
``_SEQUENCE_NUMBER``, stored in the new file (as Paimon Spark's compact procedure writes with
the row-tracking write type), so the new files get no ``first_row_id``. The vectors of the
rewritten files leave the (partition, bucket)'s deletion-vector index in the same COMPACT
snapshot.

Where Java's order is a hash set's (files of equal size; files of one index file) the order
here is the files' sequence-number order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Sequence

from dbt.adapters.paimon.format.splits import Split

FILE_SOURCE_COMPACT = 1      # Java FileSource.COMPACT (APPEND is 0)
FULL_COMPACT_MIN_FILE = 3    # BucketedAppendCompactManager.FULL_COMPACT_MIN_FILE


@dataclass(frozen=True)
class AppendCompactionConfig:
    target_file_size: int
    compaction_file_size: int
    min_file_num: int
    file_num_limit: int
    delete_ratio_threshold: float
    open_file_cost: int
    force_rewrite_all_files: bool

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> "AppendCompactionConfig":
        from pypaimon.common.memory_size import MemorySize

        def size(key: str, default: str) -> int:
            raw = options.get(key, default)
            try:
                return MemorySize.parse(str(raw)).get_bytes()
            except Exception:  # noqa: BLE001 - any parse failure is the option's error
                raise ValueError(f"table option '{key}' must be a memory size such as "
                                 f"'128 mb', got {raw!r}") from None

        def number(key: str, default, kind, minimum):
            raw = options.get(key)
            try:
                value = kind(str(raw).strip()) if raw is not None else default
            except ValueError:
                raise ValueError(f"table option '{key}' must be {kind.__name__}, got "
                                 f"{raw!r}") from None
            if value < minimum:
                raise ValueError(f"table option '{key}' must be >= {minimum}, got {value}")
            return value

        target = size("target-file-size", "256 mb")
        ratio = number("compaction.small-file-ratio", 0.7, float, 0.0)
        return cls(target_file_size=target,
                   compaction_file_size=int(target * ratio),
                   min_file_num=number("compaction.min.file-num", 5, int, 1),
                   file_num_limit=number("compaction.file-num-limit", 100_000, int, 1),
                   delete_ratio_threshold=number("compaction.delete-ratio-threshold", 0.2,
                                                 float, 0.0),
                   open_file_cost=size("source.split.open-file-cost", "4 mb"),
                   force_rewrite_all_files=str(options.get(
                       "compaction.force-rewrite-all-files", "false")).lower() == "true")


@dataclass
class AppendCompactUnit:
    """One (partition, bucket)'s compaction: each group is rewritten into its own new files
    (a Java compaction task); the vectors of all of them leave the index once."""

    split: Split                       # narrowed to the files of the groups
    groups: List[List]                 # DataFileMeta lists, each in rewrite order
    full: bool
    other_files: List = field(default_factory=list)   # none (compact.run_units sizes units)

    @property
    def output_level(self) -> int:
        return 0


def _unit(split: Split, groups: List[List], full: bool) -> AppendCompactUnit:
    files = [f for g in groups for f in g]
    return AppendCompactUnit(dataclasses.replace(split, files=files, levels=[0] * len(files)),
                             groups, full)


# --------------------------------------------------------------------------- planning

def plan_append_units(splits: Sequence[Split], config: AppendCompactionConfig, bucketed: bool,
                      full: bool) -> List[AppendCompactUnit]:
    if bucketed:
        units = [_bucketed_unit(s, config, full) for s in splits]
        return [u for u in units if u is not None]
    return _unaware_units(splits, config, full)


def _unaware_units(splits: Sequence[Split], config: AppendCompactionConfig, full: bool
                   ) -> List[AppendCompactUnit]:
    budget = config.file_num_limit
    units = []
    for split in splits:
        if budget <= 0:
            break
        candidates = [f for f in split.files if _should_compact(split, f, config)][:budget]
        budget -= len(candidates)
        if split.deletion_vectors:
            groups = _pack_with_vectors(split, candidates, config)
            if groups:  # one unit: the partition's index is rewritten once
                units.append(_unit(split, groups, full))
        else:
            # a task of one file (compaction.min.file-num = 1) rewrites nothing useful, and
            # Java's AppendCompactTask refuses it ("need more than one file input")
            units += [_unit(split, [g], full) for g in _pack(candidates, config) if len(g) > 1]
    return units


def _should_compact(split: Split, meta, config: AppendCompactionConfig) -> bool:
    if meta.file_size < config.compaction_file_size:
        return True
    deletion = split.deletion_files.get(meta.file_name)
    if deletion is None:
        return False
    return deletion.cardinality is None or \
        deletion.cardinality > meta.row_count * config.delete_ratio_threshold


class _FileBin:
    def __init__(self, config: AppendCompactionConfig):
        self.config = config
        self.files: List = []
        self.size = 0

    def add(self, meta) -> None:
        self.files.append(meta)
        self.size += meta.file_size + self.config.open_file_cost

    def enough_content(self) -> bool:
        return len(self.files) > 1 and self.size >= self.config.target_file_size * 2

    def enough_files(self) -> bool:
        return len(self.files) >= self.config.min_file_num

    def drain(self) -> List:
        files, self.files, self.size = self.files, [], 0
        return files


def _by_size(files: Sequence) -> List:
    return sorted(files, key=lambda f: (f.file_size, f.min_sequence_number))


def _pack(files: Sequence, config: AppendCompactionConfig) -> List[List]:
    groups, current = [], _FileBin(config)
    for meta in _by_size(files):
        current.add(meta)
        if current.enough_content():
            groups.append(current.drain())
    if current.enough_files():
        groups.append(current.drain())
    return groups


def _pack_with_vectors(split: Split, files: Sequence, config: AppendCompactionConfig
                       ) -> List[List]:
    by_index = {}
    rest = []
    for meta in files:
        deletion = split.deletion_files.get(meta.file_name)
        if deletion is None:
            rest.append(meta)
        else:
            by_index.setdefault(deletion.path, []).append(meta)
    ordered = sorted(by_index.values(), key=lambda g: sum(f.file_size for f in g))
    groups, current = [], _FileBin(config)
    for group in ordered:
        for meta in group:
            current.add(meta)
        if current.enough_content():
            groups.append(current.drain())
    if current.files:  # files with deletion vectors are always compacted
        groups.append(current.drain())
    if len(rest) > 1:
        groups += _pack(rest, config)
    return groups


def _bucketed_unit(split: Split, config: AppendCompactionConfig, full: bool
                   ) -> Optional[AppendCompactUnit]:
    files = sorted(split.files, key=lambda f: f.min_sequence_number)
    picked = _bucketed_full(split, files, config) if full else _bucketed_minor(files, config)
    return _unit(split, [picked], full) if picked else None


def _bucketed_full(split: Split, files: List, config: AppendCompactionConfig) -> List:
    force = config.force_rewrite_all_files
    vectors = split.deletion_vectors
    if not force and (not files or (not vectors and len(files) < FULL_COMPACT_MIN_FILE)):
        return []
    if not force:
        while files and files[0].file_size >= config.compaction_file_size and \
                files[0].file_name not in split.deletion_files:
            files = files[1:]
    if vectors or force:
        return files
    small = sum(1 for f in files if f.file_size < config.compaction_file_size)
    if small > len(files) - small and len(files) >= FULL_COMPACT_MIN_FILE:
        return files
    return []


def _bucketed_minor(files: List, config: AppendCompactionConfig) -> List:
    window: List = []
    total = 0
    for meta in files:
        window.append(meta)
        total += meta.file_size
        if len(window) >= config.min_file_num:
            return window
        if total >= config.target_file_size * 2:
            total -= window.pop(0).file_size
    return []


# --------------------------------------------------------------------------- rewriting

def compact_append_unit(table, unit: AppendCompactUnit):
    """Rewrite the unit's groups; the commit message replacing its files (written, not
    committed; on failure nothing it wrote is left)."""
    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.format.kv_files import new_commit_message

    split = unit.split
    new_files: List = []
    try:
        for group in unit.groups:
            new_files += _rewrite_group(table, split, group)
        message = new_commit_message(split.partition_values, split.bucket,
                                     new_files=new_files, deleted_files=split.files)
        gone = {f.file_name for f in split.files}
        if gone & set(split.deletion_files):
            from dbt.adapters.paimon.format.deletion_vectors import (read_deletion_vectors,
                                                                    replace_bucket_index)
            kept = {n: d for n, d in split.deletion_files.items() if n not in gone}
            vectors = read_deletion_vectors(table.file_io, kept) if kept else {}
            message.index_adds, message.index_deletes = replace_bucket_index(table, split,
                                                                             vectors)
    except BaseException:
        abort(table, [new_commit_message(split.partition_values, split.bucket,
                                         new_files=new_files)])
        raise
    return message


def _rewrite_group(table, split: Split, group: List) -> List:
    from dbt.adapters.paimon.format.row_tracking import is_row_tracking

    part = dataclasses.replace(split, files=list(group), levels=[f.level for f in group])
    if is_row_tracking(table):
        written = _write_tracked(table, part)
    else:
        written = _write_plain(table, part)
    # Java numbers the rewritten rows from the first input file's smallest sequence number
    # (LongCounter(toCompact.get(0).minSequenceNumber())); row-tracking files keep the range
    # of the _SEQUENCE_NUMBER values they store
    start = group[0].min_sequence_number
    out = []
    for meta in written:
        changes = {"level": 0, "file_source": FILE_SOURCE_COMPACT}
        if not is_row_tracking(table):
            changes.update(min_sequence_number=start,
                           max_sequence_number=start + meta.row_count - 1)
        out.append(dataclasses.replace(meta, **changes))
        start += meta.row_count
    return out


def _write_plain(table, split: Split) -> List:
    from pypaimon.write.writer.append_only_data_writer import AppendOnlyDataWriter

    from dbt.adapters.paimon.format.file_stats import full_stats_options
    from dbt.adapters.paimon.format.kv_files import read_append_split, write_through

    rows = read_append_split(table, split)
    writer = AppendOnlyDataWriter(table, tuple(split.partition_values), split.bucket, 0,
                                  options=full_stats_options(table))
    return write_through(writer, rows.to_batches())


def _write_tracked(table, split: Split) -> List:
    from dbt.adapters.paimon.format.kv_files import write_through
    from dbt.adapters.paimon.format.row_tracking import (TRACKING_COLUMNS, TrackedRowsWriter,
                                                         read_tracked_split)

    rows = read_tracked_split(table, split, list(table.field_names) + list(TRACKING_COLUMNS))
    if not rows.num_rows:
        return []
    messages = write_through(TrackedRowsWriter(table), [rows])
    return [meta for m in messages for meta in m.new_files]

