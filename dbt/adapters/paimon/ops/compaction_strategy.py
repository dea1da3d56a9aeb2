"""Which files of a bucket to compact, and to which level: Paimon's compaction strategies.

A bucket's files form sorted runs (format/sorted_runs.py). Mirrors Java
``UniversalCompaction`` (size amplification, size ratio, run count), ``ForceUpLevel0Compaction``
(tables whose readers need level 0 empty: first-row, lookup changelog) and
``CompactStrategy.pickFullCompaction``; only metadata is read here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import List, Mapping, Optional, Sequence

from pypaimon.manifest.schema.data_file_meta import DataFileMeta

from dbt.adapters.paimon.format.sorted_runs import SortedRun, sorted_runs
from dbt.adapters.paimon.format.splits import Split

DEFAULT_TRIGGER = 5             # num-sorted-run.compaction-trigger
DEFAULT_SIZE_RATIO = 1          # compaction.size-ratio (percent)
DEFAULT_MAX_SIZE_AMP = 200      # compaction.max-size-amplification-percent
DEFAULT_DELETE_RATIO = 0.2      # compaction.delete-ratio-threshold


@dataclass(frozen=True)
class CompactionConfig:
    num_levels: int
    trigger: int
    size_ratio: int
    max_size_amp: int
    force_up_level0: bool   # readers skip level 0 (first-row) or lookup changelog
    # a deletion-vector table's file whose vector deletes more than this share of its rows
    # is rewritten without them (ops/compact.py)
    delete_ratio_threshold: float = DEFAULT_DELETE_RATIO

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> "CompactionConfig":
        def integer(key: str, default: int, minimum: int) -> int:
            raw = options.get(key)
            try:
                value = int(str(raw).strip()) if raw is not None else default
            except ValueError:
                raise ValueError(f"table option '{key}' must be an integer, got {raw!r}") \
                    from None
            if value < minimum:
                raise ValueError(f"table option '{key}' must be >= {minimum}, got {value}")
            return value

        raw_ratio = options.get("compaction.delete-ratio-threshold")
        try:
            ratio = float(str(raw_ratio).strip()) if raw_ratio is not None \
                else DEFAULT_DELETE_RATIO
        except ValueError:
            raise ValueError(f"table option 'compaction.delete-ratio-threshold' must be a "
                             f"number, got {raw_ratio!r}") from None
        if not ratio >= 0:
            raise ValueError(f"table option 'compaction.delete-ratio-threshold' must be >= 0, "
                             f"got {raw_ratio!r}")
        trigger = integer("num-sorted-run.compaction-trigger", DEFAULT_TRIGGER, 1)
        num_levels = integer("num-levels", trigger + 1, 2)
        engine = options.get("merge-engine", "deduplicate")
        force = (engine == "first-row" or options.get("changelog-producer") == "lookup"
                 or str(options.get("force-lookup", "false")).lower() == "true"
                 # readers of deletion-vector tables skip level 0 too (lookup compaction)
                 or str(options.get("deletion-vectors.enabled", "false")).lower() == "true")
        return cls(num_levels=num_levels, trigger=trigger,
                   size_ratio=integer("compaction.size-ratio", DEFAULT_SIZE_RATIO, 0),
                   max_size_amp=integer("compaction.max-size-amplification-percent",
                                        DEFAULT_MAX_SIZE_AMP, 0),
                   force_up_level0=force, delete_ratio_threshold=ratio)


@dataclass
class CompactUnit:
    """Files of one (partition, bucket) to merge into new files at ``output_level``."""

    split: Split             # the bucket's split, narrowed to the files to compact
    output_level: int
    drop_delete: bool        # no older data below: retractions can be dropped (Java dropDelete)
    full: bool
    # the bucket's files left out of the unit (deletion-vector tables look keys up in them)
    other_files: List[DataFileMeta] = field(default_factory=list)


def _unit(split: Split, runs: Sequence[SortedRun], output_level: int, full: bool) -> CompactUnit:
    chosen = {id(f) for run in runs for f in run.files}
    files = [f for f in split.files if id(f) in chosen]
    others = [f for f in split.files if id(f) not in chosen]
    highest = max((f.level for f in split.files), default=0)
    # with deletion vectors the older versions of every output key are marked deleted, so
    # retractions are dropped at any level (Java MergeTreeCompactManager: dvMaintainer != null)
    drop = output_level != 0 and (output_level >= highest or split.deletion_vectors)
    narrowed = replace(split, files=files, levels=[f.level for f in files])
    return CompactUnit(narrowed, output_level, drop, full, others)


def pick_full(split: Split, config: CompactionConfig) -> Optional[CompactUnit]:
    """Everything to the top level; nothing when the bucket is already one top-level run
    without retractions (Java skips it too)."""
    if not split.files:
        return None
    if all(f.level == config.max_level for f in split.files) and \
            not any((f.delete_row_count or 0) > 0 for f in split.files) and \
            not split.deletion_files:  # deleted rows still to purge
        return None
    return _unit(split, sorted_runs(split.files), config.max_level, True)


def pick_minor(split: Split, config: CompactionConfig) -> Optional[CompactUnit]:
    runs = sorted_runs(split.files)
    if not runs:
        return None
    picked = _universal(runs, config)
    if picked is None and config.force_up_level0:
        level0 = sum(1 for r in runs if r.level == 0)
        if level0:
            picked = _size_ratio(runs, config, level0, force=True)
    if picked is None:
        return None
    count, output_level = picked
    return _unit(split, runs[:count], output_level, output_level == config.max_level
                 and count == len(runs))


def _universal(runs: List[SortedRun], config: CompactionConfig):
    if len(runs) < config.trigger:
        return None
    # size amplification: everything but the oldest run vs the oldest run
    candidate = sum(r.size for r in runs[:-1])
    if candidate * 100 > config.max_size_amp * runs[-1].size:
        return len(runs), config.max_level
    picked = _size_ratio(runs, config, 1, force=False)
    if picked is not None:
        return picked
    if len(runs) > config.trigger:
        return _size_ratio(runs, config, len(runs) - config.trigger + 1, force=True)
    return None


def _size_ratio(runs: List[SortedRun], config: CompactionConfig, count: int, force: bool):
    size = sum(r.size for r in runs[:count])
    while count < len(runs):
        following = runs[count]
        if size * (100.0 + config.size_ratio) / 100.0 < following.size:
            break
        size += following.size
        count += 1
    if not force and count <= 1:
        return None
    return _output(runs, config, count)


def _output(runs: List[SortedRun], config: CompactionConfig, count: int):
    if count == len(runs):
        return count, config.max_level
    level = max(0, runs[count].level - 1)
    if level == 0:  # never write level 0: take runs up to the next non-zero level
        while count < len(runs):
            following = runs[count]
            count += 1
            if following.level != 0:
                level = following.level
                break
    if count == len(runs):
        level = config.max_level
    return count, level
