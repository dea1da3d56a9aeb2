"""Row tracking (``row-tracking.enabled``) on unbucketed append tables, in Paimon's own format.

Every row has two hidden columns, never NULL when read:
- ``_ROW_ID``: assigned lazily at commit. A freshly appended file stores no ids: the committer
  gives it ``first_row_id`` (the snapshot's ``nextRowId``) and row ``i`` of the file has id
  ``first_row_id + i`` (pypaimon's commit does this exactly as Java's
  ``RowTrackingCommitUtils``). A row moved into another file (update, merge, delete of its
  neighbours) keeps its id: the new file stores ``_ROW_ID`` physically, lists it in
  ``write_cols``, and gets no ``first_row_id``.
- ``_SEQUENCE_NUMBER``: the snapshot id of the commit that last changed the row. A rewritten file
  stores it physically, NULL for the rows this commit changes; a NULL reads as the file's
  ``max_sequence_number``. The file's min/max follow Java's ``RowDataFileSequenceNumberTracker``:
  min over the non-NULL values (0 if none), max 0 if any value is NULL; the committer turns
  those 0s into the new snapshot id (``assignSnapshotId``).

pypaimon 2.1.0 reads the first kind right but returns NULL ids for the second, so reads go
through ``read_tracked_split`` here (Java's ``ColumnarRowIterator.assignRowTracking`` rule).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.manifest.schema.data_file_meta import DataFileMeta
from pypaimon.write.commit_message import CommitMessage
from pypaimon.write.writer.append_only_data_writer import AppendOnlyDataWriter

from dbt.adapters.paimon.format.errors import PaimonFormatError
from dbt.adapters.paimon.format.deletion_vectors import live_mask
from dbt.adapters.paimon.format.kv_files import (_deleted_positions, _read_file, read_append_split,
                                                 table_arrow_schema)
from dbt.adapters.paimon.format.splits import Split

ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
TRACKING_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)
# Which data file a row was read from: only the row operations ask for it (files to rewrite).
SOURCE_FILE = "_paimon_source_file"
TRACKING_FIELDS = (pa.field(ROW_ID, pa.int64(), nullable=False),
                   pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False))


def is_row_tracking(table) -> bool:
    return bool(table.options.row_tracking_enabled())


def require_row_tracking(table, what: str) -> None:
    if table.primary_keys or not is_row_tracking(table):
        raise ValueError(
            f"{what} needs a row-tracking append table, but {table.identifier} has no "
            f"'row-tracking.enabled' = 'true' (set config row_tracking=true on its "
            f"paimon_append model and rebuild it with --full-refresh)")


def tracked_schema(table, with_source_file: bool = False) -> pa.Schema:
    """The table's columns, then ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (and the source file)."""
    schema = table_arrow_schema(table)
    for f in TRACKING_FIELDS:
        schema = schema.append(f)
    if with_source_file:
        schema = schema.append(pa.field(SOURCE_FILE, pa.string(), nullable=False))
    return schema


def _one_file_split(split: Split, meta: DataFileMeta) -> Split:
    return dataclasses.replace(split, files=[meta], levels=[meta.level])


def _stores_row_ids(meta: DataFileMeta) -> bool:
    return bool(meta.write_cols) and ROW_ID in meta.write_cols


def file_tracking_columns(table, meta: DataFileMeta) -> Tuple[pa.Array, pa.Array]:
    """(_ROW_ID, _SEQUENCE_NUMBER) of every row of one data file, in file order."""
    n = meta.row_count
    stored = _read_file(table, meta, list(TRACKING_COLUMNS)) if _stores_row_ids(meta) else None
    positions = None
    if meta.first_row_id is not None:
        positions = pa.array(np.arange(meta.first_row_id, meta.first_row_id + n, dtype=np.int64))
    if stored is not None and ROW_ID in stored.column_names:
        row_ids = stored.column(ROW_ID).combine_chunks().cast(pa.int64())
        if row_ids.null_count:
            if positions is None:
                raise PaimonFormatError(
                    f"data file {meta.file_name} of {table.identifier} has NULL _ROW_IDs and "
                    f"no first_row_id: its row ids cannot be derived")
            row_ids = pc.if_else(pc.is_null(row_ids), positions, row_ids)
    elif positions is not None:
        row_ids = positions
    else:
        raise PaimonFormatError(
            f"data file {meta.file_name} of {table.identifier} has neither _ROW_ID values nor a "
            f"first_row_id (written before row tracking was enabled?)")
    if stored is not None and SEQUENCE_NUMBER in stored.column_names:
        sequence = stored.column(SEQUENCE_NUMBER).combine_chunks().cast(pa.int64())
        sequence = pc.fill_null(sequence, pa.scalar(meta.max_sequence_number, pa.int64()))
    else:
        sequence = pa.array(np.full(n, meta.max_sequence_number, dtype=np.int64))
    return row_ids, sequence


def read_tracked_split(table, split: Split, columns: Sequence[str],
                       assemble_rows: bool = False) -> pa.Table:
    """A split's rows with their tracking columns: ``columns`` may name table columns,
    ``_ROW_ID``, ``_SEQUENCE_NUMBER`` and ``SOURCE_FILE``. Files in the split's order, rows in
    file order.

    A data-evolution table whose rows are stored across several files is read only with
    ``assemble_rows`` (the ``paimon_row_tracking`` source; its splits hold whole row-id
    ranges), and never with ``SOURCE_FILE``: such a row lives in no one file. (The row
    operations change such a table by row id, ops/data_evolution_row_ops.py; its compaction
    rewrites whole row-id ranges, ops/data_evolution_compact.py.)"""
    from dbt.adapters.paimon.format.data_evolution import assembles_rows

    schema = tracked_schema(table, with_source_file=True)
    out_schema = pa.schema([schema.field(c) for c in columns])
    if assembles_rows(table, split.files):
        if not assemble_rows or SOURCE_FILE in columns:
            raise PaimonFormatError(
                f"Paimon table {table.identifier.get_full_name()} is a data-evolution table "
                f"whose rows are stored across several files (a column updated by row id, a "
                f"BLOB or a VECTOR column): dbt-paimon reads its rows, with _ROW_ID and "
                f"_SEQUENCE_NUMBER too, but a row of it lives in no one file, so it is "
                f"never rewritten file by file: its rows are changed by row id (update_rows, "
                f"delete_rows, merge_rows, a data_evolution_update model).")
        return _read_assembled(table, split, out_schema)
    data_columns = [c for c in columns if c not in TRACKING_COLUMNS and c != SOURCE_FILE]
    pieces = []
    deleted = _deleted_positions(table, split, split.files)
    for meta in split.files:
        if meta.row_count == 0:
            continue
        data = read_append_split(table, _one_file_split(split, meta), data_columns or None)
        # a deletion vector (Paimon's DELETE on a deletion-vector table) drops rows: their
        # tracking columns go with them
        live = live_mask(meta.row_count, deleted.get(meta.file_name))
        expected = meta.row_count if live is None else int(live.sum())
        if data.num_rows != expected:
            raise PaimonFormatError(
                f"data file {meta.file_name} of {table.identifier} read {data.num_rows} rows, "
                f"its metadata and deletion vector say {expected}")
        row_ids, sequence = file_tracking_columns(table, meta)
        if live is not None:
            row_ids, sequence = row_ids.filter(pa.array(live)), sequence.filter(pa.array(live))
        extra = {ROW_ID: row_ids, SEQUENCE_NUMBER: sequence,
                 SOURCE_FILE: pa.array([meta.file_name] * data.num_rows, pa.string())}
        arrays = [extra[c] if c in extra else data.column(c) for c in columns]
        pieces.append(pa.Table.from_arrays(arrays, schema=out_schema))
    if not pieces:
        return out_schema.empty_table()
    return pa.concat_tables(pieces)


def _read_assembled(table, split: Split, out_schema: pa.Schema) -> pa.Table:
    """A data-evolution split's rows, each field (``_ROW_ID`` and ``_SEQUENCE_NUMBER`` too)
    from the newest file of its row-id range that holds it: pypaimon 2.1's
    ``DataEvolutionSplitRead``, as Paimon's reader assembles them (a range's ids from its
    ``first_row_id``, its sequence number that of the newest file)."""
    from dbt.adapters.paimon.format.data_evolution import iter_data_evolution_split

    pieces = [piece for piece in iter_data_evolution_split(table, split, out_schema.names)
              if piece.num_rows]
    if not pieces:
        return out_schema.empty_table()
    data = pa.concat_tables(pieces)
    for column in TRACKING_COLUMNS:
        if column in data.column_names and data.column(column).null_count:
            raise PaimonFormatError(
                f"a row-id range of {table.identifier.get_full_name()} read NULL {column} "
                f"values, which Paimon's reader never returns; its files cannot be read with "
                f"their tracking columns")
    return data.cast(out_schema)


# ---------------------------------------------------------------------------- writing

def sequence_range(sequence: pa.ChunkedArray | pa.Array) -> Tuple[int, int]:
    """A rewritten file's (min, max) sequence numbers as Java's tracker records them."""
    valid = pc.drop_null(sequence)
    low = pc.min(valid).as_py() if len(valid) else None
    high = pc.max(valid).as_py() if len(valid) else None
    return (0 if low is None else low), (0 if sequence.null_count or high is None else high)


class TrackedRowsWriter:
    """Writes rows that carry ``_ROW_ID`` (and ``_SEQUENCE_NUMBER``, NULL for changed rows)
    into new files of an unbucketed row-tracking table, one writer per partition."""

    def __init__(self, table):
        from dbt.adapters.paimon.format.data_evolution import rewrite_refusal

        # never reached through the operations, which change such tables by row id
        refusal = rewrite_refusal(table, "rewriting rows")
        if refusal:
            raise PaimonFormatError(refusal)
        self.table = table
        self.columns = list(table.field_names) + list(TRACKING_COLUMNS)
        # as written: NULL _SEQUENCE_NUMBER marks a row this commit changes
        self.schema = table_arrow_schema(table).append(pa.field(ROW_ID, pa.int64())) \
            .append(pa.field(SEQUENCE_NUMBER, pa.int64()))
        self.partition_keys = list(table.partition_keys)
        self.writers: Dict[Tuple[Any, ...], AppendOnlyDataWriter] = {}

    def write(self, rows: pa.Table) -> None:
        if rows.num_rows == 0:
            return
        if rows.column(ROW_ID).null_count:
            raise ValueError("TrackedRowsWriter got rows without _ROW_ID: write new rows "
                             "through the table's ordinary writer")
        rows = rows.select(self.columns).cast(self.schema)
        for partition, part in self._by_partition(rows):
            writer = self.writers.get(partition)
            if writer is None:
                writer = AppendOnlyDataWriter(self.table, partition, 0, 0,
                                              options=self.table.options,
                                              write_cols=self.columns)
                self.writers[partition] = writer
            for batch in part.to_batches():
                writer.write(batch)

    def _by_partition(self, rows: pa.Table):
        if not self.partition_keys:
            yield (), rows
            return
        keys = rows.select(self.partition_keys).group_by(self.partition_keys).aggregate([])
        for values in keys.to_pylist():
            mask = None
            for k in self.partition_keys:
                test = pc.is_null(rows.column(k)) if values[k] is None else \
                    pc.equal(rows.column(k), pa.scalar(values[k], rows.schema.field(k).type))
                mask = test if mask is None else pc.and_(mask, test)
            yield tuple(values[k] for k in self.partition_keys), rows.filter(mask)

    def prepare_commit(self) -> List[CommitMessage]:
        messages = []
        for partition, writer in self.writers.items():
            files = [self._with_sequence_range(meta) for meta in writer.prepare_commit()]
            if files:
                messages.append(CommitMessage(partition=partition, bucket=0, new_files=files))
        return messages

    def _with_sequence_range(self, meta: DataFileMeta) -> DataFileMeta:
        # The writer rolls files by size: each file's range comes from its own rows.
        low, high = sequence_range(_read_file(self.table, meta, [SEQUENCE_NUMBER])
                                   .column(SEQUENCE_NUMBER))
        return dataclasses.replace(meta, min_sequence_number=low, max_sequence_number=high,
                                   first_row_id=None)

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()


def deletion_messages(table, snapshot_id: Optional[int], names: Sequence[str]
                      ) -> List[CommitMessage]:
    """Commit messages deleting the named files (the files a row operation rewrites). On a
    deletion-vector table the vectors of those files leave the index with them (the rewritten
    files no longer hold the deleted rows): each touched bucket's index is rewritten with the
    vectors of its other live files, so no entry names a file that is gone and none is lost.
    The new index files are written here; ``abort_index`` deletes them if the commit fails."""
    from dbt.adapters.paimon.format.deletion_vectors import (read_deletion_vectors,
                                                            replace_bucket_index)
    from dbt.adapters.paimon.format.splits import plan_splits

    wanted = set(names)
    messages = []
    for split in plan_splits(table, snapshot_id):
        files = [f for f in split.files if f.file_name in wanted]
        if not files:
            continue
        wanted -= {f.file_name for f in files}
        message = CommitMessage(partition=split.partition_values, bucket=split.bucket,
                                new_files=[], deleted_files=files)
        gone = {f.file_name for f in files}
        if gone & set(split.deletion_files):
            kept = {n: d for n, d in split.deletion_files.items() if n not in gone}
            vectors = read_deletion_vectors(table.file_io, kept) if kept else {}
            message.index_adds, message.index_deletes = replace_bucket_index(table, split,
                                                                             vectors)
        messages.append(message)
    if wanted:
        raise PaimonFormatError(
            f"data files {sorted(wanted)} are not live in snapshot {snapshot_id} of "
            f"{table.identifier}")
    return messages


def abort_index(table, messages: Sequence[CommitMessage]) -> None:
    """After a failed commit: delete the deletion-vector index files ``messages`` add, unless
    the latest snapshot lists them (the commit became visible after all)."""
    from dbt.adapters.paimon.format.deletion_vectors import delete_index_files, index_entries

    added = [e.index_file for m in messages for e in m.index_adds
             if e.index_file.index_type == "DELETION_VECTORS"]
    if not added:
        return
    try:
        live = {e.index_file.file_name for e in index_entries(
            table, table.snapshot_manager().get_latest_snapshot())}
    except Exception:  # noqa: BLE001 - cannot tell: keep them (remove_orphan_files does)
        return
    delete_index_files(table, [meta for meta in added if meta.file_name not in live])


def commit_rewrite(table, written: Sequence[CommitMessage], rewrite_files: Sequence[str],
                   base_snapshot: Optional[int]) -> Optional[int]:
    """ONE snapshot for a row operation: ``rewrite_files`` (live at ``base_snapshot``, the
    snapshot the operation read) are deleted, the written files added (rows without ids get
    them partition by partition, in each partition in the order written). With deletions it is an
    OVERWRITE snapshot, as Java Paimon's commit of an UPDATE/MERGE/DELETE; pypaimon's conflict
    detection refuses it if another commit removed those files since. None: nothing to do."""
    from dbt.adapters.paimon.format.commit import _file_store_commit, _run
    from pypaimon.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER

    # New files get their row ids in message order (RowTrackingCommitUtils): partitions in a
    # fixed order, each partition's files as written, so the ids of inserted rows do not depend
    # on how Spark cut the rows into tasks (the in-process and distributed executors agree)
    messages = sorted((m for m in written if not m.is_empty()),
                      key=lambda m: tuple((v is None, str(v)) for v in m.partition))
    if rewrite_files:
        messages += deletion_messages(table, base_snapshot, rewrite_files)
    if not messages:
        return None
    fsc = _file_store_commit(table)
    kind = "OVERWRITE" if rewrite_files else "APPEND"
    try:
        return _run(table, kind, lambda: fsc.commit(messages, BATCH_COMMIT_IDENTIFIER))
    except BaseException:
        abort_index(table, messages)
        raise
