"""Compaction of data-evolution tables (``data-evolution.enabled``): what Paimon's
``DataEvolutionCompactCoordinator`` plans and its ``DataEvolutionNormalCompactTask`` writes
(Spark's ``CALL sys.compact`` on such a table).

A row of such a table lives in the files of its row-id range: the file that wrote the row and
the files an update by row id has written some of its columns into since
(format/data_evolution.py). A compaction rewrites the files of one or more adjacent row-id
ranges into ONE file holding every column except those stored in files of their own (BLOB,
unless kept in the data files; VECTOR with ``vector.file.format``), whose ``first_row_id`` is
the first range's. The rows keep their ``_ROW_ID``, and a read then finds each of those fields
in one file.

Planning, per (partition, bucket):
- the data files' row-id ranges are merged where they overlap or touch (a range ending where
  the next begins): a run of adjacent ranges;
- in a run, the files of one row-id range form a group, all covering that same range, as
  Paimon requires;
- the groups are packed in row-id order, each file weighing ``max(size,
  source.split.open-file-cost)``. A group heavier than ``target-file-size`` (256 mb) is a task
  of its own. Lighter groups are gathered until their weight passes the target;
- a task is kept when it holds at least ``compaction.min.file-num`` (5) files.

BLOB and VECTOR files stay as they are: their ranges lie within the new file's. ``full``
changes nothing here, as Paimon's coordinator has one plan.

The new file is at level 0, marked ``file_source`` COMPACT. Its sequence numbers run from the
smallest to the largest of the files it replaces, so a later update (numbered by its snapshot)
still wins. Not written: Java's per-column maximum sequence numbers (``_WRITE_COLS_SEQUENCES``;
pypaimon 2.1 writes them for no file either). Readers then take the file's maximum sequence
number, which picks the same file for every field, as the range has one file holding them.
Deleted rows stay in the new file (dropping them would renumber the rows after them). Their
deletion vectors move to it, as Java's ``DataEvolutionCompactDeletionVectorRewriter`` moves
them: a range's vector belongs to its anchor file (the oldest data file of the range) and counts
positions from the range's first row id, so each old anchor's positions are shifted by its
range's distance from the new file's first row id. The partition's index then holds the moved
vectors and those of the files left alone, in the same snapshot.

All tasks commit as one COMPACT snapshot. pypaimon's conflict check refuses the commit if
another writer changed the ranges meanwhile (for example, a column update of part of a new,
wider range): the table stays as it was.

Which BLOB columns count as stored in files of their own follows Paimon's task
(``fieldNamesInBlobFile``): every BLOB, ARRAY<BLOB> or MAP<X, BLOB> column, by its type, except
those an option keeps in the data files:
- ``blob-descriptor-field`` (or its older key ``blob.stored-descriptor-fields``) and
  ``blob-view-field`` keep a BLOB column in the data files, each value a serialized
  ``BlobDescriptor`` (a URI, an offset, a length) or ``BlobViewStruct`` (a table, a field id, a
  row id) that a read resolves to the payload. Such a column is a column of the new file like
  any other: read as the stored bytes (``blob-as-descriptor``, views not resolved) and written
  back as they are, so no payload is fetched and a read resolves them as before. (Paimon's task
  serializes each value again, which gives the same bytes for a descriptor or view of the
  current version.)
- ``video-frame-field`` (pypaimon 2.1) keeps a BLOB column's frames in ``.video`` files of
  their own, read as frame descriptors into them: those files stay as the ``.blob`` files do.

Refused before anything is written, naming the table, the option and the column: a column an
option keeps in the data files while some of its values still lie in ``.blob`` files
(``blob.stored-descriptor-fields``, unlike ``blob-descriptor-field``, may be set after rows
were written). pypaimon 2.1 cannot read such a table, and a rewrite would turn those values
into descriptors: there is no "as before" to keep.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Sequence

from dbt.adapters.paimon.config.blob_vector import (DESCRIPTOR_FIELD, IN_DATA_FILES_OPTIONS,
                                                    OLD_DESCRIPTOR_FIELD)
from dbt.adapters.paimon.format.data_evolution import (dedicated_columns, inline_blob_columns,
                                                       is_dedicated_file)
from dbt.adapters.paimon.format.splits import Split
from dbt.adapters.paimon.ops.append_compact import FILE_SOURCE_COMPACT, AppendCompactionConfig

# a target the writer never reaches: Paimon's task writes exactly one file
ONE_FILE_TARGET = "1024 tb"
# the read of a task: an inline BLOB column as the bytes its files hold (serialized descriptors
# and views), which the new file holds again; nothing fetched, no view resolved
STORED_BLOB_READ = {"blob-as-descriptor": "true", "blob-view.resolve.enabled": "false"}


@dataclass
class DataEvolutionCompactUnit:
    """One task: the data files of adjacent row-id ranges of one (partition, bucket),
    rewritten into one file."""

    split: Split        # narrowed to the task's files, in row-id order; no deletion files
    other_files: List = field(default_factory=list)   # none (compact.run_units sizes units)

    @property
    def output_level(self) -> int:
        return 0

    @property
    def first_row_id(self) -> int:
        return self.split.files[0].first_row_id

    @property
    def row_count(self) -> int:
        """The rows of the task's ranges: from the first row id to the end of the last range."""
        return max(_end(f) for f in self.split.files) - self.first_row_id


def _end(meta) -> int:
    """One past the last row id of the file's range."""
    return meta.first_row_id + meta.row_count


# --------------------------------------------------------------------------- planning

def plan_data_evolution_units(splits: Sequence[Split], config: AppendCompactionConfig
                              ) -> List[DataEvolutionCompactUnit]:
    units = []
    for split in splits:
        files = sorted((f for f in split.files if not is_dedicated_file(f)),
                       key=lambda f: (f.first_row_id, f.min_sequence_number))
        for run in _merge_ranges(files, touching=True):
            for task in _pack(_merge_ranges(run, touching=False), config):
                if len(task) >= config.min_file_num:
                    # no deletion files: every row is rewritten, deleted or not, and the
                    # vectors move to the new file afterwards (move_deletion_vectors)
                    units.append(DataEvolutionCompactUnit(dataclasses.replace(
                        split, files=task, levels=[0] * len(task), deletion_files={},
                        deletion_index_files=[])))
    return units


def _merge_ranges(files: Sequence, touching: bool) -> List[List]:
    """Files sorted by first row id, cut where a range starts after the ones before it end
    (``touching``: only where a gap lies between them)."""
    runs: List[List] = []
    end = None
    for meta in files:
        start = meta.first_row_id
        if end is None or start > end or (start == end and not touching):
            runs.append([])
            end = start
        runs[-1].append(meta)
        end = max(end, _end(meta))
    return runs


def _pack(groups: Sequence[List], config: AppendCompactionConfig) -> List[List]:
    """The groups of one run packed into tasks, in row-id order, by weight."""
    tasks: List[List] = []
    waiting: List = []
    weight = 0
    for group in groups:
        ranges = {(f.first_row_id, f.row_count) for f in group}
        if len(ranges) > 1:
            raise ValueError(f"data files {[f.file_name for f in group]} overlap without "
                             f"covering the same row-id range: Paimon cannot compact them")
        group_weight = sum(max(f.file_size, config.open_file_cost) for f in group)
        if group_weight > config.target_file_size:
            tasks += [group, waiting]
            waiting, weight = [], 0
            continue
        waiting = waiting + group
        weight += group_weight
        if weight > config.target_file_size:
            tasks.append(waiting)
            waiting, weight = [], 0
    tasks.append(waiting)
    return [t for t in tasks if t]


def refusal(table):
    """Why the table's compaction may not run (a message naming the table), or None. Only a
    table keeping a BLOB column inline can be refused, and only its file list tells (a .blob
    file of such a column), so only such a table's files are listed here."""
    inline = inline_blob_columns(table)
    if not inline:
        return None
    from dbt.adapters.paimon.format.splits import plan_splits

    in_blob_files = sorted({column for split in plan_splits(table) for f in split.files
                            if is_dedicated_file(f) for column in (f.write_cols or ())
                            if column in inline})
    if not in_blob_files:
        return None
    named = _inline_options(table, in_blob_files)
    return (f"compaction of {table.identifier.get_full_name()} is refused: column(s) "
            f"{', '.join(repr(c) for c in in_blob_files)} are stored in the data files "
            f"({', '.join(repr(o) for o in named)}), but some of their values still lie in "
            f".blob files, written before the option named them. pypaimon 2.1 cannot read "
            f"such a table, and compacting it would turn those values into descriptors. "
            f"Nothing was written. If no rows were written since the option was set, remove "
            f"the column(s) from it; otherwise rebuild the table from its source.")


def _inline_options(table, columns: Sequence[str]) -> List[str]:
    """The options that keep ``columns`` in the data files, as the table sets them (the older
    descriptor key counts only without the newer one, as in Paimon)."""
    options: Dict[str, str] = table.table_schema.options
    keys = [k for k in IN_DATA_FILES_OPTIONS
            if not (k == OLD_DESCRIPTOR_FIELD and DESCRIPTOR_FIELD in options)]
    return [k for k in keys
            if {c.strip() for c in str(options.get(k) or "").split(",")} & set(columns)]


# --------------------------------------------------------------------------- rewriting

def compact_data_evolution_unit(table, unit: DataEvolutionCompactUnit):
    """The unit's ranges rewritten into one file; the commit message replacing its files
    (written, not committed; on failure nothing it wrote is left)."""
    from pypaimon.common.options.core_options import CoreOptions
    from pypaimon.write.writer.append_only_data_writer import AppendOnlyDataWriter

    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.format.data_evolution import iter_data_evolution_split
    from dbt.adapters.paimon.format.errors import PaimonFormatError
    from dbt.adapters.paimon.format.file_stats import full_stats_options
    from dbt.adapters.paimon.format.kv_files import new_commit_message, write_through

    split = unit.split
    dedicated = set(dedicated_columns(table))
    columns = [c for c in table.field_names if c not in dedicated]
    options = full_stats_options(table)
    options.set(CoreOptions.TARGET_FILE_SIZE, ONE_FILE_TARGET)
    writer = AppendOnlyDataWriter(table, tuple(split.partition_values), split.bucket, 0,
                                  options=options, write_cols=columns if dedicated else None)
    # inline BLOB columns carried as their stored bytes, as Paimon's task carries them
    read_table = table.copy_without_time_travel(STORED_BLOB_READ) \
        if inline_blob_columns(table) else table
    rows = iter_data_evolution_split(read_table, split, columns)
    new_files = list(write_through(writer, (b for piece in rows for b in piece.to_batches())))
    try:
        if len(new_files) != 1 or new_files[0].row_count != unit.row_count:
            raise PaimonFormatError(
                f"compaction of {table.identifier.get_full_name()}: the row-id ranges from "
                f"{unit.first_row_id} hold {unit.row_count} rows, but "
                f"{sum(f.row_count for f in new_files)} were read into {len(new_files)} "
                f"file(s); nothing was committed")
        meta = dataclasses.replace(
            new_files[0], level=0, file_source=FILE_SOURCE_COMPACT,
            first_row_id=unit.first_row_id,
            min_sequence_number=min(f.min_sequence_number for f in split.files),
            max_sequence_number=max(f.max_sequence_number for f in split.files))
    except BaseException:
        abort(table, [new_commit_message(split.partition_values, split.bucket,
                                         new_files=new_files)])
        raise
    return new_commit_message(split.partition_values, split.bucket, new_files=[meta],
                              deleted_files=split.files)


def move_deletion_vectors(table, splits: Sequence[Split], messages: Sequence) -> None:
    """Each rewritten partition's deletion vectors moved to the new files, set as index changes
    on one of its messages (the vectors of the files left alone kept). On failure every file
    the messages wrote is deleted."""
    from dbt.adapters.paimon.format.commit import abort

    try:
        _move_deletion_vectors(table, splits, messages)
    except BaseException:
        abort(table, messages)
        raise


def _move_deletion_vectors(table, splits: Sequence[Split], messages: Sequence) -> None:
    import numpy as np
    from pypaimon.utils.data_evolution_utils import retrieve_anchor_file

    from dbt.adapters.paimon.format.data_evolution import row_id_groups
    from dbt.adapters.paimon.format.deletion_vectors import (read_deletion_vectors,
                                                            replace_bucket_index)

    for split in splits:
        mine = [m for m in messages if (tuple(m.partition), m.bucket) ==
                (tuple(split.partition_values), split.bucket)]
        gone = {f.file_name for m in mine for f in m.deleted_files}
        if not gone & set(split.deletion_files):
            continue
        vectors = read_deletion_vectors(table.file_io, split.deletion_files)
        kept = {name: v for name, v in vectors.items() if name not in gone}
        for message in mine:
            (new,) = message.new_files
            moved = [vectors[anchor.file_name] + (anchor.first_row_id - new.first_row_id)
                     for anchor in map(retrieve_anchor_file, row_id_groups(message.deleted_files))
                     if len(vectors.get(anchor.file_name, ()))]
            if moved:
                kept[new.file_name] = np.unique(np.concatenate(moved))
        mine[0].index_adds, mine[0].index_deletes = replace_bucket_index(table, split, kept)

