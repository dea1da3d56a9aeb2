"""A bucket's data files as the sorted runs of Paimon's LSM tree (Java ``Levels``,
``LevelSortedRun``): every level-0 file is a run of its own, every non-empty higher level one
run. Only metadata is read here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Sequence

from pypaimon.manifest.schema.data_file_meta import DataFileMeta


@dataclass(frozen=True)
class SortedRun:
    """Files that hold each key at most once, in key order."""

    level: int
    files: List[DataFileMeta]

    @property
    def size(self) -> int:
        return sum(f.file_size for f in self.files)

    @property
    def min_sequence_number(self) -> int:
        return min(f.min_sequence_number for f in self.files)


def sorted_runs(files: Sequence[DataFileMeta]) -> List[SortedRun]:
    """Level-0 runs newest first, then the higher levels from low to high (Java's order); a
    level's files by their smallest key, so reading them in turn reads the run in key order."""
    level0 = sorted((f for f in files if f.level == 0),
                    key=lambda f: f.max_sequence_number, reverse=True)
    runs = [SortedRun(0, [f]) for f in level0]
    for level in sorted({f.level for f in files if f.level > 0}):
        runs.append(SortedRun(level, sorted((f for f in files if f.level == level),
                                            key=lambda f: tuple(f.min_key.values))))
    return runs
