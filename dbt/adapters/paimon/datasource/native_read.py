"""Which snapshots of a Paimon table Spark can read with its own file readers, and the file list
that lets it.

Spark's Python data source API cannot prune columns, and every row it returns crosses from a
Python worker into the JVM. When no split of a snapshot needs a merge (an append table; a
primary-key table whose every bucket is one sorted run, as after a full compaction, or a
deletion-vector table's files above level 0), the snapshot's rows are exactly the value columns
of its data files; when its merges only choose among stored records (below), they are some of
those rows. Spark's Parquet and ORC readers then read them vectorised in the JVM, with
column pruning, filter pushdown and row-group skipping.

Spark reads an exact file list, not a folder, through the log of its own file sink: a folder
holding ``_spark_metadata/0`` (``FileStreamSinkLog`` format ``v1``, one JSON entry per file) is
read as exactly the files that log names (``MetadataLogFileIndex``), wherever they are. A
catalog table ``USING parquet LOCATION '<that folder>'`` is then the snapshot. The folders
are under the warehouse (``<warehouse>/.spark/paimon-reads/``), one per snapshot.

Rows to leave out: a deletion vector's rows, and the superseded records of a deduplicate or
first-row table's splits that need a merge. Such a table's merged row is its key's last (first)
record, a row of a stored file, so the merge is a choice of rows: made once per snapshot, when a
statement names the table (registry.refresh_stale), from the keys, sequence fields, sequence
numbers and row kinds alone (``runtime.merged_record_rows``), while Spark reads every column it
needs of the chosen rows itself. The rows left out are one bitmap per data file, a small
Parquet file beside the log, joined by broadcast on Spark's per-row ``_metadata.file_name`` and
tested at ``_metadata.row_index`` (the row's position in its file, which is what a deletion
vector holds). A file none of whose rows is kept is not read.

A merge of values (partial-update and aggregation tables: a merged row is made of several
records) is made once per snapshot, when a statement first reads the table's rows (a query, a
write from a query; not a DESCRIBE nor a view's definition): the merged read of the Python
source (the merge runtime) is written as Parquet files in a ``merged-`` folder beside the
snapshot's file list, which then names those files: by this process for a small snapshot
(merge_here.py), by Spark's tasks otherwise. Every later read of the
snapshot, in any process, is Spark's Parquet reader over them. Up to MAX_MERGED_RECORDS
records (the folder is a copy of the snapshot's rows); larger snapshots are merged at every
read.

A snapshot is read natively only when the result is certain to equal the merged read
(``source.read_merged_split``); otherwise the table keeps the Python data source:
- every split is raw-convertible (``source.is_raw_convertible``: for a deletion-vector
  primary-key table, its files above level 0), or the table's merge keeps records whole
  (deduplicate, with or without ``sequence.field``, and first-row; partial-update and
  aggregation splits are merged once, above);
- all files have one format Spark reads (Parquet or ORC; rows to leave out: Parquet only, the
  format whose row positions Spark exposes);
- every column's type is one Spark reads exactly as the Python path converts it (no
  nanosecond timestamps, no Paimon-only types; from ORC files no dates and no timestamps:
  ``_spark_orc_reads_exactly``);
- every file's schema gives each current column at its current type (or, in Parquet files, a
  type Spark's Parquet reader widens exactly: ``_widens_exactly``), or lacks it. Files that
  hold a column under another name (a renamed column, found by Paimon's field id; a name a
  dropped column had and a new one took again) are a ``Projection``: a file list of their own,
  read by the names they store and renamed in the entry's view.
A data-evolution table is read natively only while each row-id range is one file holding every
column (``format.data_evolution.needs_field_merge``): a column updated by row id, a BLOB or a
VECTOR file means rows assembled from several files, which the Python path reads.
A row-tracking table's rewritten files also store ``_ROW_ID`` and ``_SEQUENCE_NUMBER``: the entry
declares the table's columns only, so Spark reads just those.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import time
import uuid
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

NATIVE_FORMATS = ("parquet", "orc")
READS_DIRNAME = os.path.join(".spark", "paimon-reads")
SINK_LOG_DIR = "_spark_metadata"
DELETES_DIR = "deleted-rows-bitmaps"
PROJECTION_PREFIX = "projection-"
TRAVEL_PREFIX = "travel-snapshot-"
# Spark's FileStreamSinkLog: version line, then one JSON entry per file
SINK_LOG_VERSION = "v1"
# the most records of one split among which this process chooses (about 40 bytes each
# while choosing, two splits at a time); a larger split is merged by Spark's tasks instead
MAX_CHOICE_RECORDS = 20_000_000
# plan_native's reason when it was not to read keys for a choice of rows
CHOICE_DEFERRED = "a choice of rows, made when a statement reads the table"
# ... when it was not to merge values: the merge is made once, when a statement reads rows
MERGE_DEFERRED = "a merge of values, made once when a statement reads the table's rows"
# ... when it was to merge them: the caller runs the merge (registry.py) into merged_folder()
VALUES_TO_MERGE = "a merge of values to make into Parquet files"
# the most records of a snapshot whose merge of values is kept as Parquet files (a copy of the
# table's rows on the warehouse's disk, per snapshot); a larger one is merged at every read
MAX_MERGED_RECORDS = 20_000_000
MERGED_PREFIX = "merged-"
STAGING_PREFIX = ".staging-"
# a staging folder older than this is a killed process's: a merge of MAX_MERGED_RECORDS takes
# minutes, not hours
STALE_STAGING_SECONDS = 6 * 3600
# folders of older snapshots a table keeps besides its current one: a query that listed the
# previous one a moment ago still finds it
KEEP_PREVIOUS = 1


@dataclass(frozen=True)
class Projection:
    """Data files of older schemas that hold some current columns under other names (renamed
    columns; a name a dropped column had and a new column took again). ``columns``: per current
    column, its name in these files, None where they lack it (read as NULL)."""

    columns: Tuple[Optional[str], ...]
    files: Tuple[Tuple[str, int], ...]


@dataclass(frozen=True)
class NativeSnapshot:
    """A snapshot Spark reads with its own file readers: ``files`` are (absolute path, bytes),
    read by the current columns' names; ``projected``: the files read by other names;
    ``deleted``: data file name -> the row positions to leave out."""

    snapshot_id: int
    file_format: str
    files: Tuple[Tuple[str, int], ...]
    deleted: Dict[str, np.ndarray] = field(default_factory=dict, compare=False)
    projected: Tuple[Projection, ...] = ()


def plan_native(table, snapshot_id: Optional[int] = None, choose: bool = True,
                merge_values: bool = False
                ) -> Tuple[Optional[int], Optional[NativeSnapshot], str]:
    """(the snapshot's id, its native plan or None, why not when None): the latest snapshot,
    or ``snapshot_id``. Without ``choose``, a snapshot whose splits need a choice of rows
    (reading their keys) is not planned: the reason is then CHOICE_DEFERRED. A snapshot whose
    splits need a merge of values is never planned here: the reason is VALUES_TO_MERGE with
    ``merge_values`` (the caller merges it into Parquet files: ``merged_snapshot``),
    MERGE_DEFERRED without, or why it is merged at every read."""
    from dbt.adapters.paimon.datasource.source import arrow_schema_of, is_raw_convertible
    from dbt.adapters.paimon.format.splits import plan_splits

    options = dict(table.table_schema.options)
    unsupported = [f.name for f in arrow_schema_of(table) if not _spark_reads_exactly(f.type)]
    if unsupported:
        return snapshot_id or _latest(table), None, \
            f"column types Spark cannot read as Paimon: {unsupported}"
    splits = plan_splits(table, snapshot_id)
    if not splits:
        return snapshot_id or _latest(table), None, "no data"
    snapshot_id = splits[0].snapshot_id
    from dbt.adapters.paimon.format.data_evolution import is_data_evolution, needs_field_merge

    from dbt.adapters.paimon.format.errors import PaimonFormatError
    from dbt.adapters.paimon.format.postpone_merge import pending_rows, plan_merge_on_read

    try:
        merge = plan_merge_on_read(table, splits, snapshot_id)
    except PaimonFormatError as refused:  # the Python path's read reports it
        return snapshot_id, None, str(refused)
    if merge.merges:
        return snapshot_id, None, (
            f"postpone.merge-on-read: {pending_rows(merge)} rows in the "
            f"postpone bucket merged into the read")
    if is_data_evolution(table) and any(needs_field_merge(split.files) for split in splits):
        return snapshot_id, None, \
            "data evolution: rows assembled field by field from their row-id range's files"
    files, merges, vectors = [], [], []
    for split in splits:
        read = split.batch_read_files() if split.primary_key_table else split.files
        if split.primary_key_table:
            if not read:
                continue
            probe = _with_files(split, read)
            if not is_raw_convertible(probe):
                if not _merge_keeps_records(table):
                    return snapshot_id, None, _merge_of_values(splits, merge_values)
                if sum(f.row_count for f in read) > MAX_CHOICE_RECORDS:
                    return snapshot_id, None, "a split too large to choose rows in this process"
                merges.append(probe)
        files.extend(read)
        names = {f.file_name for f in read}
        located = {name: d for name, d in split.deletion_files.items() if name in names}
        if located:  # (vectors of level-0 files only: nothing this read leaves out)
            vectors.append(located)
    remote = [f.file_path for f in files if not _local(f.file_path)]
    if remote:  # (external data paths on another file system than the local warehouse's)
        return snapshot_id, None, f"data files outside the local file system: {remote[:1]}"
    formats = {_format_of(f.file_name) for f in files}
    if len(formats) > 1 or (formats and not formats <= set(NATIVE_FORMATS)):
        return snapshot_id, None, f"file formats {sorted(map(str, formats))}"
    file_format = formats.pop() if formats else _table_format(options)
    stored = {schema_id: _stored_columns(table, schema_id, widening=file_format == "parquet")
              for schema_id in {f.schema_id for f in files}}
    if any(columns is None or not any(columns) for columns in stored.values()):
        return snapshot_id, None, "a file's column types need a cast Spark's reader does not make"
    if file_format not in NATIVE_FORMATS:
        return snapshot_id, None, f"file format {file_format}"
    if file_format == "orc":
        unsupported = [f.name for f in arrow_schema_of(table)
                       if not _spark_orc_reads_exactly(f.type)]
        if unsupported:
            return snapshot_id, None, f"column types Spark's ORC reader changes: {unsupported}"
    if (vectors or merges) and file_format != "parquet":
        # Spark gives a row's position in its file (_metadata.row_index) for Parquet only
        return snapshot_id, None, "rows to leave out of ORC files"
    if not choose and any(_needs_choice(split) for split in merges):
        return snapshot_id, None, CHOICE_DEFERRED
    superseded = _superseded_positions(table, merges)
    if superseded is None:  # the merged read fails the same way, when (if ever) it is read
        return snapshot_id, None, "records the merge refuses"
    deleted = _vector_positions(table, vectors)
    for name, rows in superseded.items():
        # a merged split's records come without its vectors' rows: leave out both
        deleted[name] = np.union1d(deleted[name], rows) if name in deleted else rows
    # a file whose every row is left out is not read at all
    files = [f for f in files if len(deleted.get(f.file_name, ())) < f.row_count]
    kept = {f.file_name for f in files}
    as_is = {schema_id for schema_id, columns in stored.items()
             if _read_as_is(table, schema_id, columns)}
    projected: Dict[Tuple[Optional[str], ...], list] = {}
    for f in files:
        if f.schema_id not in as_is:
            projected.setdefault(stored[f.schema_id], []).append(_listed(f))
    return snapshot_id, NativeSnapshot(
        snapshot_id, file_format,
        tuple(_listed(f) for f in files if f.schema_id in as_is),
        {name: rows for name, rows in deleted.items() if name in kept},
        tuple(Projection(columns, tuple(listed))
              for columns, listed in sorted(projected.items(), key=repr))), ""


def _merge_of_values(splits, merge_values: bool) -> str:
    records = sum(f.row_count for split in splits
                  for f in (split.batch_read_files() if split.primary_key_table else split.files))
    if records > MAX_MERGED_RECORDS:
        return "a snapshot too large to keep merged: merged at every read"
    return VALUES_TO_MERGE if merge_values else MERGE_DEFERRED


def merged_folder(reads_root: str, database: str, table: str, stamp: str,
                  schema_id: int) -> str:
    """Where a snapshot's merged rows are kept: Parquet files of the merged read (the Python
    source's rows), beside the snapshot's file list, pruned with it."""
    return file_list_folder(reads_root, database, table, stamp, schema_id, MERGED_PREFIX)


def staging_folder(reads_root: str, database: str, table: str) -> str:
    """A folder of this process's to write a file list or a merge in, before put_in_place."""
    return os.path.join(reads_root, database, table, f"{STAGING_PREFIX}{uuid.uuid4().hex}")


def put_in_place(staging: str, folder: str) -> None:
    """Put a complete file list or merge in place (several processes may race: each writes
    its own staging folder and renames it into place; the first wins)."""
    try:
        os.rename(staging, folder)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)


def merged_snapshot(snapshot_id: int, folder: str) -> Optional[NativeSnapshot]:
    """The snapshot read from its merged rows' Parquet files (None if the folder holds none)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".parquet"))
    except FileNotFoundError:
        return None
    if not names:
        return None
    files = tuple((os.path.join(folder, n), os.path.getsize(os.path.join(folder, n)))
                  for n in names)
    return NativeSnapshot(snapshot_id, "parquet", files)


def _listed(meta) -> Tuple[str, int]:
    return _absolute(meta.file_path), int(meta.file_size)


def write_file_list(reads_root: str, database: str, table: str, plan: NativeSnapshot,
                    schema_id: int, stamp: str, prefix: str = "snapshot-") -> str:
    """The folder whose sink log names the plan's files, created once (several processes may
    race: each writes its own folder and renames it into place; the first wins). ``prefix``
    'snapshot-' for a catalog entry's folders (pruned as the entry moves on), TRAVEL_PREFIX
    for a time-travel read's (kept until the table is dropped)."""
    parent = os.path.join(reads_root, database, table)
    folder = file_list_folder(reads_root, database, table, stamp, schema_id, prefix)
    if _complete(folder, plan):
        return folder
    os.makedirs(parent, exist_ok=True)
    staging = staging_folder(reads_root, database, table)
    _write_sink_log(staging, plan.files)
    for number, projection in enumerate(plan.projected, start=1):
        _write_sink_log(projection_folder(staging, number), projection.files)
    if plan.deleted:
        os.makedirs(os.path.join(staging, DELETES_DIR))
        pq.write_table(deletion_bitmaps(plan.deleted),
                       os.path.join(staging, DELETES_DIR, "part-0.parquet"))
    if os.path.isdir(folder) and not _complete(folder, plan):
        shutil.rmtree(folder, ignore_errors=True)  # another layout's (no bitmaps): replaced
    put_in_place(staging, folder)
    return folder


def _write_sink_log(folder: str, files) -> None:
    os.makedirs(os.path.join(folder, SINK_LOG_DIR))
    lines = [SINK_LOG_VERSION] + [
        # a URI: Paimon's escaped partition folders (dt=10%3A00) keep their '%' as '%25'
        json.dumps({"path": pathlib.Path(path).as_uri(), "size": size, "isDir": False,
                    "modificationTime": 0, "blockReplication": 1, "blockSize": size or 1,
                    "action": "add"})
        for path, size in files]
    with open(os.path.join(folder, SINK_LOG_DIR, "0"), "w", encoding="utf-8") as out:
        out.write("\n".join(lines))


def projection_folder(folder: str, number: int) -> str:
    """The file list of a snapshot's ``number``-th Projection (from 1), inside its folder (the
    snapshot's own file list names its files, not the folder's contents)."""
    return os.path.join(folder, f"{PROJECTION_PREFIX}{number}")


def file_list_folder(reads_root: str, database: str, table: str, stamp: str,
                     schema_id: int, prefix: str = "snapshot-") -> str:
    """The folder of a snapshot's file list; ``stamp`` names the snapshot
    (``listing.snapshot_stamp``: its id and its file's mtime, as ids are reused after a
    rollback)."""
    return os.path.join(reads_root, database, table, f"{prefix}{stamp}-schema-{schema_id}")


def has_file_list(folder: str) -> bool:
    return os.path.isdir(os.path.join(folder, SINK_LOG_DIR))


def _complete(folder: str, plan: NativeSnapshot) -> bool:
    return has_file_list(folder) and (not plan.deleted or os.path.isdir(deletes_folder(folder))) \
        and all(has_file_list(projection_folder(folder, number))
                for number in range(1, len(plan.projected) + 1))


def deletion_bitmaps(deleted: Dict[str, np.ndarray]) -> pa.Table:
    """The deleted rows as one bitmap per data file, the table a native read joins on Spark's
    ``_metadata.file_name``: bit ``p % 64`` of word ``p // 64`` of ``words`` is set when row
    ``p`` is deleted. A bitmap costs one bit per row up to the last deleted one, so a join
    with it stays a small broadcast whatever the number of deleted rows (a join on (file name,
    row position) pairs would broadcast every deleted row: seconds for millions)."""
    names = list(deleted)
    words = []
    for name in names:
        positions = np.asarray(deleted[name], dtype=np.int64)
        bits = np.zeros((int(positions.max()) // 64 + 1) * 64 if len(positions) else 0, bool)
        bits[positions] = True
        words.append(np.packbits(bits, bitorder="little").view("<i8"))
    return pa.table({"file_name": pa.array(names, pa.string()),
                     "words": pa.array(words, pa.list_(pa.int64()))})


def live_rows_sql(rows: str, bitmaps: Optional[str], columns: str = "r.*") -> str:
    """The query of ``columns`` of ``rows`` (a table of data files, as ``r``) without the rows
    ``bitmaps`` (``deletion_bitmaps``; None: no rows to leave out) deletes."""
    if bitmaps is None:
        return f"select {columns} from {rows} r"
    return (f"select /*+ BROADCAST(d) */ {columns} from {rows} r left join {bitmaps} d "
            f"on r._metadata.file_name = d.file_name "
            f"where {live_row('r._metadata.row_index', 'd.words')}")


def live_row(row_index: str, words: str) -> str:
    """The condition that row ``row_index`` of a file is not deleted by its bitmap ``words``
    (NULL: the file has none). A word past a bitmap's end deletes nothing."""
    return (f"{words} is null or bit_get(coalesce(try_element_at({words}, "
            f"cast({row_index} div 64 as int) + 1), 0L), cast({row_index} % 64 as int)) = 0")


BITMAPS_DDL = "file_name string, words array<bigint>"


def deletes_folder(folder: str) -> str:
    return os.path.join(folder, DELETES_DIR)


def forget_file_lists(reads_root: str, database: str, table: str) -> None:
    """Delete every file list of a table that was dropped or renamed."""
    shutil.rmtree(os.path.join(reads_root, database, table), ignore_errors=True)


def prune_file_lists(reads_root: str, database: str, table: str, keep: Optional[str]) -> None:
    """Delete the table's entry file-list folders but ``keep`` and the newest previous ones
    (all when ``keep`` is None: the table is read through the Python path), and so the
    folders of merged rows: those of the snapshots kept."""
    parent = os.path.join(reads_root, database, table)
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        return
    for prefix in ("snapshot-", MERGED_PREFIX):
        ours = [n for n in names if n.startswith(prefix)]
        kept = {prefix + os.path.basename(keep)[len("snapshot-"):]} if keep else set()
        older = sorted((n for n in ours if n not in kept), key=_snapshot_of, reverse=True)
        for name in older[KEEP_PREVIOUS if keep else 0:]:
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    # a process killed while writing a file list or a merge leaves its staging folder
    now = time.time()
    for name in names:
        path = os.path.join(parent, name)
        try:
            stale = name.startswith(STAGING_PREFIX) and \
                now - os.path.getmtime(path) > STALE_STAGING_SECONDS
        except OSError:
            continue
        if stale:
            shutil.rmtree(path, ignore_errors=True)


def reads_root(warehouse_folder: str) -> str:
    return os.path.join(warehouse_folder, READS_DIRNAME)


# -- internals ---------------------------------------------------------------------------
def _latest(table) -> Optional[int]:
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    return current_snapshot_id(table)


def _snapshot_of(name: str) -> Tuple[int, int]:
    """(snapshot id, stamp) of a folder name ``snapshot-<id>.<mtime>-schema-<id>`` (or
    ``merged-...``)."""
    parts = name.split("-")
    numbers = parts[1].split(".") if len(parts) > 1 else []
    if not numbers or not all(n.isdigit() for n in numbers):
        return -1, -1
    return int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0


def _merge_keeps_records(table) -> bool:
    """Whether a merged read returns stored records unchanged (deduplicate: each key's last
    record; first-row: its first), so a merge can be a choice of rows."""
    from dbt.adapters.paimon.datasource.source import merge_spec_of
    from dbt.adapters.paimon.runtime import merged_row_is_a_record

    return merged_row_is_a_record(merge_spec_of(table))


def _vector_positions(table, vectors) -> Dict[str, np.ndarray]:
    """The rows the splits' deletion vectors delete, by data file name."""
    if not vectors:
        return {}
    from dbt.adapters.paimon.format.deletion_vectors import read_deletion_vectors

    deleted: Dict[str, np.ndarray] = {}
    for files in vectors:
        deleted.update((name, positions) for name, positions
                       in read_deletion_vectors(table.file_io, files).items() if len(positions))
    return deleted


def _superseded_positions(table, splits) -> Optional[Dict[str, np.ndarray]]:
    """The stored records a merged read of ``splits`` does not return, by data file name; None
    when the merge refuses the records (the merged read then reports it).

    Only the keys, sequence fields, sequence numbers and row kinds are read (the merge
    runtime's choice of each key's record, ``merged_record_rows``); Spark then reads the chosen rows of every
    column it needs itself. One thread per split: Arrow and polars release the GIL."""
    if not splits:
        return {}
    from concurrent.futures import ThreadPoolExecutor

    from dbt.adapters.paimon.runtime import PaimonDataError

    try:
        with ThreadPoolExecutor(max_workers=min(len(splits), os.cpu_count() or 1)) as pool:
            found = list(pool.map(lambda split: _split_superseded(table, split), splits))
    except PaimonDataError:  # e.g. a retraction in a first-row table without ignore-delete
        return None
    return {name: rows for part in found for name, rows in part.items()}


def _needs_choice(split) -> bool:
    """Whether a split to merge has records to leave out: not when it is one file (a file
    holds each key once, its commit merged it) without -U/-D records (an unknown count may
    hold some)."""
    return len(split.files) > 1 or any(f.delete_row_count != 0 for f in split.files)


def _split_superseded(table, split) -> Dict[str, np.ndarray]:
    if not _needs_choice(split):
        return {}
    from dbt.adapters.paimon.datasource.source import merge_spec_of
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.runtime import merged_record_rows

    records = read_split_records(table, split, list(table.primary_keys), with_positions=True)
    superseded = np.ones(records.num_rows, bool)
    superseded[merged_record_rows(merge_spec_of(table), records, sorted_by_key=False)
               .to_numpy()] = False
    files = records.column("_file").combine_chunks().dictionary_encode()
    codes = files.indices.to_numpy()
    positions = records.column("_position").to_numpy()
    out = {}
    for code, name in enumerate(files.dictionary.to_pylist()):
        rows = positions[superseded & (codes == code)]
        if len(rows):
            out[name] = rows
    return out


def _with_files(split, files):
    import dataclasses

    return dataclasses.replace(split, files=list(files))


def _format_of(file_name: str) -> str:
    return file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""


def _table_format(options: Dict[str, str]) -> str:
    return options.get("file.format", "parquet").lower()


def _local(path: str) -> bool:
    """Whether a data file's path is on this machine's file system (Spark's file list names
    local paths; an external data path may be on another file system)."""
    from urllib.parse import urlparse

    scheme = urlparse(str(path)).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def _absolute(path: str) -> str:
    if path.startswith("file:"):
        from urllib.parse import urlparse

        return urlparse(path).path
    return os.path.abspath(path)


def _stored_columns(table, schema_id: int, widening: bool
                    ) -> Optional[Tuple[Optional[str], ...]]:
    """Per current column, its name in the files written under ``schema_id`` (matched by
    Paimon's field id; None where they lack it), or None when a column's type changed in a way
    Spark's reader does not read exactly: another type, or (``widening``: Parquet files) one
    Spark's Parquet reader does not widen to exactly (``_widens_exactly``)."""
    from pypaimon.schema.data_types import PyarrowFieldParser

    def arrow_type(field):
        return PyarrowFieldParser.from_paimon_schema([field]).field(0).type

    current = table.table_schema
    if schema_id == current.id:
        return tuple(f.name for f in current.fields)
    old_by_id = {f.id: f for f in table.schema_manager.get_schema(schema_id).fields}
    names = []
    for column in current.fields:
        before = old_by_id.get(column.id)
        if before is not None and str(before.type) != str(column.type):
            stored, now = arrow_type(before), arrow_type(column)
            if stored != now and not (widening and _widens_exactly(stored, now)):
                return None
        names.append(before.name if before is not None else None)
    return tuple(names)


def _read_as_is(table, schema_id: int, stored: Tuple[Optional[str], ...]) -> bool:
    """Whether Spark's reader, matching columns by name, reads the files of ``schema_id`` as
    Paimon does: each current column under its own name, or absent with no other column of
    that name (a name a dropped column had and a new column took again)."""
    if schema_id == table.table_schema.id:
        return True
    old_names = {f.name for f in table.schema_manager.get_schema(schema_id).fields}
    return all(name == column.name or (name is None and column.name not in old_names)
               for name, column in zip(stored, table.table_schema.fields))


def _widens_exactly(stored: pa.DataType, now: pa.DataType) -> bool:
    """Type changes whose values Spark's Parquet reader widens (its vectorised and its row
    reader alike) to what the Python path's Arrow cast gives, for every value: a wider integer,
    FLOAT to DOUBLE, an integer of up to 32 bits to DOUBLE, a DECIMAL with no fewer integer
    digits and no fewer fraction digits. (BIGINT to DOUBLE is not: Arrow's cast refuses a value
    beyond 2^53 that Spark rounds.)"""
    t = pa.types
    if t.is_integer(stored) and t.is_integer(now):
        return t.is_signed_integer(stored) and t.is_signed_integer(now) \
            and now.bit_width >= stored.bit_width
    if t.is_float32(stored):
        return t.is_float64(now)
    if t.is_signed_integer(stored) and stored.bit_width <= 32:
        return t.is_float64(now)
    if t.is_decimal(stored) and t.is_decimal(now):
        return now.scale >= stored.scale and \
            now.precision - now.scale >= stored.precision - stored.scale
    return False


def _spark_orc_reads_exactly(arrow_type: pa.DataType) -> bool:
    """Types Spark's ORC reader returns as Paimon's value: no date and no timestamp. Spark
    reads ORC dates and timestamps in the hybrid Julian calendar (``RebaseDateTime``, for the
    ORC files of Spark 2.x), so a value before 1582-10-15 comes back days off (0001-01-01 as
    0001-01-03, 1500-01-01 as 1499-12-23) where Paimon's are proleptic Gregorian; and it reads
    an ORC ``timestamp`` as TIMESTAMP_NTZ only from files Spark wrote itself (a type attribute),
    failing the query with UNSUPPORTED_FEATURE.ORC_TYPE_CAST otherwise."""
    return _every_leaf(arrow_type, lambda leaf: not (pa.types.is_date(leaf)
                                                     or pa.types.is_timestamp(leaf)))


def _every_leaf(arrow_type: pa.DataType, accepts) -> bool:
    """Whether ``accepts`` holds for every non-nested type inside ``arrow_type`` (list
    elements, map keys and values, struct fields)."""
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _every_leaf(arrow_type.value_type, accepts)
    if pa.types.is_map(arrow_type):
        return _every_leaf(arrow_type.key_type, accepts) and \
            _every_leaf(arrow_type.item_type, accepts)
    if pa.types.is_struct(arrow_type):
        return all(_every_leaf(arrow_type.field(i).type, accepts)
                   for i in range(arrow_type.num_fields))
    return accepts(arrow_type)


def _spark_reads_exactly(arrow_type: pa.DataType) -> bool:
    """Types whose Parquet/ORC encoding Spark's readers turn into the value the Python path
    gives (a nanosecond timestamp has no Spark type; Paimon's TIME and VARIANT have none)."""
    return _every_leaf(arrow_type, _spark_reads_leaf)


def _spark_reads_leaf(arrow_type: pa.DataType) -> bool:
    if pa.types.is_timestamp(arrow_type):
        return arrow_type.unit in ("ms", "us")
    return (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)
            or pa.types.is_boolean(arrow_type) or pa.types.is_string(arrow_type)
            or pa.types.is_large_string(arrow_type) or pa.types.is_binary(arrow_type)
            or pa.types.is_large_binary(arrow_type) or pa.types.is_date32(arrow_type)
            or pa.types.is_decimal(arrow_type) or pa.types.is_fixed_size_binary(arrow_type))


def files_schema(schema: pa.Schema) -> pa.Schema:
    """The columns Spark reads a snapshot's stored files by: ``schema`` with every column
    nullable. The files hold superseded records, which the read leaves out, and rows written
    before a column became NOT NULL (Paimon's ALTER does not look at the rows), so a NULL there
    is legal. Declared NOT NULL, Spark converts each scanned row without checking for NULL:
    with whole-stage code generation off (a setting, or a query over more than
    spark.sql.codegen.maxFields columns) a superseded record's NULL then failed the read
    (NullPointerException) or was read as another value."""
    return pa.schema([field.with_nullable(True) for field in schema])


def projection_schema(projection: Projection, schema: pa.Schema) -> pa.Schema:
    """The columns a Projection's files are read by: each stored name, at its current type."""
    return pa.schema([schema.field(i).with_name(stored)
                      for i, stored in enumerate(projection.columns) if stored is not None])


def projection_select(projection: Projection, schema: pa.Schema) -> str:
    """The select list that gives a Projection's rows (``r``) the current columns: each stored
    name renamed, NULL for the columns its files lack."""
    from dbt.adapters.paimon.datasource.spark_types import quote_identifier, spark_schema

    parts = []
    for stored, column in zip(projection.columns, spark_schema(schema).fields):
        value = f"r.{quote_identifier(stored)}" if stored is not None \
            else f"cast(null as {column.dataType.simpleString()})"
        parts.append(f"{value} as {quote_identifier(column.name)}")
    return ", ".join(parts)
