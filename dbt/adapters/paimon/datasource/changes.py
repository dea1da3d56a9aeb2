"""Reading the changes of a Paimon table between two snapshots, as rows with ``_row_kind``.

Paimon Java's incremental read (``incremental-between`` = 'start,end', start exclusive) and its
streaming follow-up scans decide what a snapshot contributes:

- ``changelog`` mode (the table has a ``changelog-producer``; ChangelogFollowUpScanner /
  IncrementalDeltaStartingScanner CHANGELOG): the files of each snapshot's changelog manifest;
  snapshots without one contribute nothing (e.g. a COMPACT without full-compaction changelog),
  OVERWRITE snapshots are skipped;
- ``delta`` mode (``changelog-producer`` = none; DeltaFollowUpScanner / DELTA): the data files
  APPEND snapshots added; COMPACT and OVERWRITE snapshots are skipped.

Streaming splits are read without merging (MergeFileSplitRead.createNoMergeReader): every
record of every file, with its row kind, files in snapshot order. A start snapshot of ``None``
means "everything so far": the merged rows of the end snapshot, all as +I (Paimon's default
``latest-full`` startup of a new streaming consumer).

``diff`` mode (``incremental-between`` of two tags of an append table; the adapter asks for
it, no user mode names it): the files of the end snapshot that the start snapshot does not
have, every row +I. Java 1.0's IncrementalTagStartingScanner (master's
IncrementalDiffStartingScanner.betweenTags) plans ``readIncrementalDiff``: per (partition,
bucket) the end snapshot's files as ``dataFiles``, the start's as ``beforeFiles``, the files
both have removed from both (SnapshotReaderImpl.toChangesPlan, master's toIncrementalPlan:
``before.removeIf(data::remove)``); an append table's RawFileSplitRead.createReader then logs
"Ignore split before files" and reads ``dataFiles`` alone, with the end snapshot's deletion
vectors. So rows deleted in between are not returned, and a compaction in between returns the
compacted files' rows again, as in Java. Both snapshots may have expired if tags keep them.

Data source options (``spark.read.format("paimon")`` or a temporary view): ``changes_to`` (end
snapshot, inclusive; this option makes the read a change read), ``changes_from`` (start,
exclusive; absent = the full end snapshot as +I), ``changes_mode`` (auto | delta | changelog,
or diff).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader

ROW_KIND = "_row_kind"
AUTO, DELTA, CHANGELOG, DIFF = "auto", "delta", "changelog", "diff"
CHANGE_OPTIONS = ("changes_to", "changes_from", "changes_mode")


@dataclass(frozen=True)
class ChangeRange:
    """Snapshots (start, end] of one change read; start None = the full end snapshot."""

    start: Optional[int]
    end: int
    mode: str  # DELTA, CHANGELOG (resolved) or DIFF

    @property
    def full(self) -> bool:
        return self.start is None


def scan_mode(table, requested: str = AUTO) -> str:
    """'auto' resolves as Paimon's: changelog files when the table has a changelog producer."""
    requested = (requested or AUTO).lower()
    if requested not in (AUTO, DELTA, CHANGELOG):
        raise ValueError(f"changes_mode must be one of 'auto', 'delta', 'changelog'; got "
                         f"{requested!r}")
    if requested != AUTO:
        return requested
    producer = str(table.table_schema.options.get("changelog-producer", "none")).lower()
    return DELTA if producer == "none" else CHANGELOG


def change_range(table, options: Dict[str, str]) -> ChangeRange:
    """The range a data source's options ask for, checked against the retained snapshots."""
    from dbt.adapters.paimon.format.splits import list_snapshots

    end = int(options["changes_to"])
    start = options.get("changes_from")
    start = int(start) if start not in (None, "") else None
    if str(options.get("changes_mode", "")).lower() == DIFF:
        return diff_range(table, start, end)
    retained = [s.id for s in list_snapshots(table)]
    name = table.identifier
    if not retained:
        if end == 0 and not start:  # before the first commit: nothing to read
            return ChangeRange(0, 0, scan_mode(table, options.get("changes_mode", AUTO)))
        raise ValueError(f"Paimon table {name} has no snapshot: there are no changes to read")
    if end not in retained:
        raise ValueError(f"changes_to = {end}: Paimon table {name} has no snapshot {end} "
                         f"(retained {retained[0]}..{retained[-1]})")
    if start is not None:
        if start > end:
            raise ValueError(f"changes_from = {start} is after changes_to = {end}")
        if start < retained[0] - 1:
            raise ValueError(
                f"the changes of Paimon table {name} after snapshot {start} are gone: snapshots "
                f"before {retained[0]} have expired (retained {retained[0]}..{retained[-1]}). "
                f"Read from a retained snapshot, or read everything again (a full refresh of "
                f"the consuming model).")
    return ChangeRange(start, end, scan_mode(table, options.get("changes_mode", AUTO)))


def diff_range(table, start: Optional[int], end: int) -> ChangeRange:
    """The ``diff`` read of an append table from snapshot ``start`` to ``end``, which tags may
    keep after they expired."""
    from dbt.adapters.paimon.format.time_travel import snapshot_by_id

    if table.primary_keys:
        raise ValueError(f"{table.identifier} is a primary-key table: the difference of two of "
                         f"its versions is read by key")
    if start is None or end <= start:
        raise ValueError(f"a diff read needs a start snapshot before the end snapshot {end}, "
                         f"got {start}")
    for snapshot_id in (start, end):
        if snapshot_by_id(table, snapshot_id) is None:
            raise ValueError(f"Paimon table {table.identifier} has no snapshot {snapshot_id} "
                             f"(neither retained nor tagged)")
    return ChangeRange(start, end, DIFF)


# --------------------------------------------------------------------------- planning

def plan_diff_splits(table, changes: ChangeRange) -> List:
    """Per (partition, bucket), the files of snapshot ``end`` that snapshot ``start`` does not
    have (Java's readIncrementalDiff for an append table: module doc), with the end snapshot's
    deletion vectors."""
    from dbt.adapters.paimon.format.splits import plan_splits

    before = {(split.partition_values, split.bucket): {f.file_name for f in split.files}
              for split in plan_splits(table, changes.start)}
    splits = []
    for split in plan_splits(table, changes.end):
        common = before.get((split.partition_values, split.bucket), set())
        files = [f for f in split.files if f.file_name not in common]
        if files:
            splits.append(dataclasses.replace(
                split, files=files, levels=[f.level for f in files],
                deletion_files={name: file for name, file in split.deletion_files.items()
                                if name not in common}))
    return splits


def plan_change_splits(table, changes: ChangeRange) -> List:
    """One Split per (partition, bucket) holding the range's change files in snapshot order
    (for a full read: the end snapshot's live files, merged when read)."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager
    from pypaimon.utils.file_store_path_factory import canonical_data_file_path

    from dbt.adapters.paimon.format.splits import Split, plan_splits

    if changes.full:
        return plan_splits(table, changes.end)
    if changes.mode == DIFF:
        return plan_diff_splits(table, changes)
    lists, manifests = ManifestListManager(table), ManifestFileManager(table)
    manager = table.snapshot_manager()
    keys = list(table.partition_keys)
    groups: Dict[Tuple[tuple, int], list] = {}
    for snapshot_id in range(changes.start + 1, changes.end + 1):
        snapshot = manager.get_snapshot_by_id(snapshot_id)
        if snapshot is None:
            raise ValueError(f"snapshot {snapshot_id} of Paimon table {table.identifier} has "
                             f"expired: its changes cannot be read")
        metas = _change_manifests(lists, snapshot, changes.mode)
        for meta in metas:
            for entry in manifests.read(meta.file_name, drop_stats=True):
                if entry.kind != 0:  # only ADD entries carry changes
                    continue
                values = tuple(entry.partition.values)
                file = entry.file
                if not file.external_path:
                    file.file_path = canonical_data_file_path(table, values, entry.bucket,
                                                              file.file_name)
                groups.setdefault((values, entry.bucket), []).append(file)
    return [Split(partition=dict(zip(keys, values)), partition_values=values, bucket=bucket,
                  files=files, snapshot_id=changes.end, primary_key_table=bool(table.primary_keys),
                  levels=[f.level for f in files])
            for (values, bucket), files in sorted(groups.items(), key=lambda kv: repr(kv[0]))]


def _change_manifests(lists, snapshot, mode: str) -> list:
    if mode == DELTA:
        return lists.read_delta(snapshot) if snapshot.commit_kind == "APPEND" else []
    if snapshot.commit_kind == "OVERWRITE":
        return []
    return lists.read_changelog(snapshot)


# --------------------------------------------------------------------------- reading

def read_change_split(table, split, changes: ChangeRange,
                      columns: Optional[Sequence[str]] = None) -> pa.Table:
    """The rows of one change split: ``columns`` (default all) plus ``_row_kind``."""
    from dbt.adapters.paimon.datasource.source import iter_split_rows, read_merged_split
    from dbt.adapters.paimon.format.data_evolution import assembles_rows
    from dbt.adapters.paimon.format.kv_files import read_append_split, read_split_records

    names = list(columns) if columns is not None else list(table.field_names)
    if not table.primary_keys and assembles_rows(table, split.files):
        if not changes.full:
            _refuse_updates_of_older_rows(table, split, changes)
        rows = _concat(table, names, iter_split_rows(table, split, names))
    elif changes.full:
        rows = read_merged_split(table, split, names) if table.primary_keys else \
            read_append_split(table, split, names)
    elif table.primary_keys:
        records = read_split_records(table, split, names)
        return records.select(names + [ROW_KIND])
    else:
        rows = read_append_split(table, split, names)
    return rows.append_column(ROW_KIND, pa.array(["+I"] * rows.num_rows, pa.string()))


def _refuse_updates_of_older_rows(table, split, changes: ChangeRange) -> None:
    """A data-evolution split of a change range: a row-id range's rows are new when the range
    added the file that wrote them (BLOB files and column updates of those rows are read with
    them, as their final values). A column file alone updates rows written before the range:
    it is no row of its own, so the read is refused rather than returning rows that hold only
    the updated columns."""
    from dbt.adapters.paimon.format.data_evolution import is_column_file, row_id_groups
    from dbt.adapters.paimon.format.errors import PaimonFormatError

    updates = [f for group in row_id_groups(split.files)
               if all(is_column_file(f) for f in group) for f in group]
    if updates:
        snapshots = sorted({f.max_sequence_number for f in updates})
        columns = sorted({c for f in updates for c in (f.write_cols or [])})
        raise PaimonFormatError(
            f"the changes of Paimon table {table.identifier.get_full_name()} after "
            f"snapshot {changes.start} up to {changes.end} include updates of columns "
            f"{columns} of rows written before them, by row id (snapshot(s) "
            f"{snapshots[:5]}; a data-evolution table's column update). A change read of "
            f"such a table lists the rows the range appended; an update of some columns "
            f"of older rows is no row of its own, so it is refused rather than read as "
            f"rows holding only those columns. Read the table as of snapshot "
            f"{changes.end} instead, or start the change read after the update.")


def _concat(table, names: Sequence[str], pieces) -> pa.Table:
    """Pieces of ``names`` of ``table`` as one Arrow table (empty: the columns' schema)."""
    pieces = list(pieces)
    if pieces:
        return pa.concat_tables(pieces)
    from dbt.adapters.paimon.datasource.source import arrow_schema_of

    schema = arrow_schema_of(table)
    return pa.schema([schema.field(n) for n in names]).empty_table()


def read_changes(table, changes: ChangeRange, columns: Optional[Sequence[str]] = None
                 ) -> pa.Table:
    """All changes of the range in one Arrow table (driver-side; tests, small tables)."""
    names = list(columns) if columns is not None else list(table.field_names)
    pieces = [read_change_split(table, s, changes, names)
              for s in plan_change_splits(table, changes)]
    if not pieces:
        return _concat(table, names, []).append_column(ROW_KIND, pa.array([], pa.string()))
    return pa.concat_tables(pieces)


# --------------------------------------------------------------------------- Spark reader

def change_schema(arrow_schema: pa.Schema) -> pa.Schema:
    """The table's columns plus ``_row_kind``."""
    if ROW_KIND in arrow_schema.names:
        raise ValueError(f"the table has a column named {ROW_KIND}, which a change read adds")
    return arrow_schema.append(pa.field(ROW_KIND, pa.string(), nullable=False))


class PaimonChangesReader(DataSourceReader):
    """Reads the changes of ``location`` in ``changes`` (one Spark partition per bucket)."""

    def __init__(self, location, schema, changes: ChangeRange):
        self.location = location
        self.schema = schema
        self.changes = changes

    def partitions(self):
        from dbt.adapters.paimon.datasource.source import SplitPartition

        splits = plan_change_splits(self.location.open(), self.changes)
        return [SplitPartition(s) for s in splits] or [SplitPartition(None)]

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, conform

        if partition.split is None:
            return
        target = arrow_schema_for_spark(self.schema)
        columns = [n for n in target.names if n != ROW_KIND]
        data = read_change_split(self.location.open(), partition.split, self.changes, columns)
        if data.num_rows:
            yield from conform(data, target).to_batches(max_chunksize=65536)


def changes_reader(location, schema, options: Dict[str, str]) -> PaimonChangesReader:
    """The data source reader for a change read (see module doc for the options)."""
    return PaimonChangesReader(location, schema, change_range(location.open(), options))
