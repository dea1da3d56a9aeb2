"""Reads of data-evolution tables (``data-evolution.enabled``, with ``row-tracking.enabled``).

In such a table a row is identified by its ``_ROW_ID`` and its columns may live in several
files: a write of new rows stores every column (``write_cols`` unset) and gets a
``first_row_id``; an update of some columns by row id (Paimon 2.x's ``MERGE INTO`` / pypaimon's
``update_by_arrow_with_row_id``) writes a file holding only those columns (``write_cols``) for
the same row-id range; a BLOB column (``blob-field``) lives in ``.blob`` files and a VECTOR
column (``vector-field`` with ``vector.file.format``) may live in ``.vector`` files beside
them. A read takes each field from the newest file (largest max sequence number) of the row-id
range that wrote it: Paimon's ``DataEvolutionSplitRead``.

The files of one row-id range are a *group* (``row_id_groups``, pypaimon's own grouping); a
group is read whole by one task, and groups are the units a read is cut into tasks by. A group
is read through pypaimon 2.1's own ``DataEvolutionSplitRead`` (``TableRead`` picks it for these
tables): it is Paimon's reader of these files, batch by batch in Arrow, and it reads the
``.blob`` and ``.vector`` formats, which no reader of ours does; writing a second
implementation of the field merge would only add a way to disagree with Paimon.

Deletion vectors are applied here, not by pypaimon: a group's vector belongs to its anchor
file (the oldest normal file) and counts positions from the group's first row id, which is the
position in the group's rows as read; ``deletion_vectors.read_deletion_vectors`` decodes the
32-bit and the 64-bit bitmaps (pypaimon only the 32-bit one).

A data-evolution table whose every group is one file holding every column (no update by row
id, no BLOB or VECTOR files) is stored like an append table: ``needs_field_merge`` is False and
Spark's own readers read it (``datasource/native_read.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, List, Optional, Sequence, Set

import numpy as np
import pyarrow as pa
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.manifest.schema.data_file_meta import DataFileMeta

from dbt.adapters.paimon.format.deletion_vectors import live_mask, read_deletion_vectors
from dbt.adapters.paimon.format.errors import PaimonFormatError
from dbt.adapters.paimon.format.splits import Split

BATCH_ROWS = 65536


def is_data_evolution(table) -> bool:
    """Whether the table stores rows across files by row id (``data-evolution.enabled``)."""
    return bool(table.options.data_evolution_enabled())


def inline_blob_columns(table) -> Set[str]:
    """The BLOB columns kept in the data files (``blob-descriptor-field`` or its older key,
    ``blob-view-field``), as pypaimon reads the options."""
    return set(table.options.blob_descriptor_fields()) | set(table.options.blob_view_fields())


def dedicated_columns(table) -> List[str]:
    """The columns stored in files of their own, by their type as Paimon picks them: BLOB
    columns (ARRAY<BLOB> and MAP<X, BLOB> too) other than the inline ones, in ``.blob`` or
    ``.video`` files; VECTOR columns when the table has ``vector.file.format``."""
    from pypaimon.schema.data_types import VectorType, is_blob_file_field

    inline = inline_blob_columns(table)
    vector_files = bool(table.options.with_vector_format())
    return [f.name for f in table.table_schema.fields
            if (is_blob_file_field(f) and f.name not in inline)
            or (vector_files and isinstance(f.type, VectorType))]


def is_dedicated_file(meta: DataFileMeta) -> bool:
    """A BLOB or VECTOR file: a column stored in files of its own, beside the data files."""
    return DataFileMeta.is_blob_file(meta.file_name) or \
        DataFileMeta.is_vector_file(meta.file_name)


def is_column_file(meta: DataFileMeta) -> bool:
    """A file holding some columns of rows stored elsewhere: a BLOB or VECTOR file, or one an
    update by row id wrote (``write_cols`` names its columns)."""
    return bool(meta.write_cols) or is_dedicated_file(meta)


def rewrite_refusal(table, what: str) -> Optional[str]:
    """Why ``what`` may not rewrite rows of ``table`` into files of their own, or None. Such
    files store ``_ROW_ID`` and have no ``first_row_id``, as on a row-tracking table, but every
    file of a data-evolution table is matched to its rows by its ``first_row_id`` (its column
    files, BLOB and VECTOR files, and Paimon's readers rely on it): after such a rewrite neither
    Paimon nor pypaimon nor dbt-paimon could read the table. The row operations change such a
    table by row id instead (ops/data_evolution_row_ops.py), and its compaction rewrites whole
    row-id ranges (ops/data_evolution_compact.py)."""
    if not is_data_evolution(table):
        return None
    return (f"{what} of {table.identifier.get_full_name()} is refused: it is a data-evolution "
            f"table ('data-evolution.enabled'), whose files are matched to their rows by "
            f"row-id range, so its rows are never rewritten into files of their own. Nothing "
            f"was written. Change its rows by row id (update_rows, delete_rows, merge_rows, "
            f"a data_evolution_update model) and compact it with `compact`.")


def row_id_groups(files: Sequence[DataFileMeta]) -> List[List[DataFileMeta]]:
    """The files grouped by overlapping row-id ranges (each group: a range's original file and
    the files that wrote some of its columns since), in row-id order: pypaimon's own grouping
    (``DataEvolutionSplitGenerator``)."""
    from pypaimon.read.scanner.data_evolution_split_generator import \
        DataEvolutionSplitGenerator

    missing = [f.file_name for f in files if f.first_row_id is None]
    if missing:
        raise PaimonFormatError(
            f"data files {missing[:3]} of a data-evolution table have no first_row_id: they "
            f"were written before row tracking was enabled, and Paimon cannot say which rows "
            f"their columns belong to")
    return [list(group) for group in DataEvolutionSplitGenerator._split_by_row_id(list(files))]


def needs_field_merge(files: Sequence[DataFileMeta]) -> bool:
    """Whether a read must assemble rows from several files (a column file, or a row-id range
    with more than one file); False when every file holds whole rows of its own range."""
    if any(is_column_file(f) for f in files):
        return True
    return any(len(group) > 1 for group in row_id_groups(files))


def assembles_rows(table, files: Sequence[DataFileMeta]) -> bool:
    """Whether a read of ``files`` of ``table`` must assemble its rows field by field
    (``iter_data_evolution_split``): a data-evolution table whose files need a field merge."""
    return is_data_evolution(table) and needs_field_merge(files)


def iter_data_evolution_split(table, split: Split, columns: Sequence[str],
                              batch_rows: int = BATCH_ROWS) -> Iterator[pa.Table]:
    """The rows of a data-evolution split (its files: whole row-id groups), group by group in
    row-id order, a batch at a time: ``columns`` of the table, each from the newest file of
    its row-id range that wrote it, without the rows the groups' deletion vectors delete."""
    from pypaimon.utils.data_evolution_utils import retrieve_anchor_file

    groups = row_id_groups(split.files)
    anchors = [retrieve_anchor_file(group) for group in groups]
    located = {a.file_name: split.deletion_files[a.file_name] for a in anchors
               if a.file_name in split.deletion_files}
    deleted = read_deletion_vectors(table.file_io, located) if located else {}
    read = table.new_read_builder().with_projection(list(columns)).new_read()
    for group, anchor in zip(groups, anchors):
        mask = live_mask(anchor.row_count, deleted.get(anchor.file_name))
        yield from _group_batches(table, read, split, group, anchor, mask, columns, batch_rows)


def _group_batches(table, read, split: Split, group: List[DataFileMeta],
                   anchor: DataFileMeta, mask: Optional[np.ndarray], columns: Sequence[str],
                   batch_rows: int) -> Iterator[pa.Table]:
    from dbt.adapters.paimon.format.kv_files import _data_split

    one = dataclasses.replace(split, files=group, deletion_files={})
    reader = read.to_arrow_batch_reader([_data_split(table, one, group)])
    offset = 0
    try:
        for batch in reader:
            if mask is not None:
                rows = batch.num_rows
                if offset + rows > len(mask):
                    raise PaimonFormatError(
                        f"the row-id range of data file {anchor.file_name} of "
                        f"{table.identifier.get_full_name()} read more rows than its "
                        f"{anchor.row_count}: its deletion vector cannot be applied")
                batch = batch.filter(pa.array(mask[offset:offset + rows]))
                offset += rows
            if batch.num_rows:
                data = pa.Table.from_batches([batch]).select(list(columns))
                for piece in data.to_batches(max_chunksize=batch_rows):
                    yield pa.Table.from_batches([piece], schema=data.schema)
    finally:
        close = getattr(reader, "close", None)
        if close is not None:
            close()
