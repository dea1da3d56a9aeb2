"""Data files of a bucket: raw key-value records in, sorted key-value files out.

A primary-key data file holds ``_KEY_<k>`` for each primary-key column that is not a
partition column, ``_SEQUENCE_NUMBER`` (int64), ``_VALUE_KIND`` (int8: 0 +I, 1 -U, 2 +U,
3 -D), then every table column (partition columns included), sorted by key, one row per
key. Files of one bucket form an LSM tree: ``level`` 0 files may overlap in keys, the files
of each higher level do not.

Sequence numbers: every record of a bucket carries a number larger than all numbers already
in the bucket; a new write starts at ``next_sequence_number`` (the bucket's largest
``max_sequence_number`` + 1, or 0 when empty) -- as Java's ``MergeTreeWriter`` and
pypaimon's ``FileStoreWrite._load_seq_number_stats`` do. ``write_kv_file`` stores
``_seq + sequence_base``: new data passes ``sequence_base=next_sequence_number(...)`` with
``_seq`` counting from 0 in arrival order; compaction passes no base and keeps the numbers
``read_split_records`` returned. Two writers of one bucket in one commit would both start at
the same number: ``commit_append`` rejects messages whose files do not start above the
bucket's current maximum.

pypaimon's ``KeyValueDataWriter._write_data_to_file`` (private API, wrapped here only) writes
the file and its metadata; we bypass its per-row Python fold and fix ``delete_row_count``
(pypaimon always records 0, which makes readers treat a higher-level file holding -D rows as
"raw convertible", i.e. read without merging) and ``level``.
"""

from __future__ import annotations

import dataclasses
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.common.options.core_options import CoreOptions
from pypaimon.manifest.schema.data_file_meta import DataFileMeta
from pypaimon.read.split import DataSplit
from pypaimon.schema.data_types import PyarrowFieldParser
from pypaimon.table.row.generic_row import GenericRow
from pypaimon.write.commit_message import CommitMessage
from pypaimon.write.writer.key_value_data_writer import KeyValueDataWriter

from dbt.adapters.paimon.format import variant_shredding
from dbt.adapters.paimon.format.deletion_vectors import live_mask, read_deletion_vectors
from dbt.adapters.paimon.format.errors import PaimonFormatError, missing_data_file
from dbt.adapters.paimon.format.file_stats import full_stats_options
from dbt.adapters.paimon.format.row_groups import (RowGroups, matching_row_groups,
                                                  row_group_filter, splittable)
from dbt.adapters.paimon.format.sorted_runs import sorted_runs
from dbt.adapters.paimon.format.splits import Split, bucket_split
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW

SEQUENCE_COLUMN = "_SEQUENCE_NUMBER"
VALUE_KIND_COLUMN = "_VALUE_KIND"
KEY_PREFIX = "_KEY_"
ROW_KINDS = ("+I", "-U", "+U", "-D")  # index = Paimon's RowKind byte
_ROW_KIND_ARRAY = pa.array(ROW_KINDS, pa.string())
_DELETE_KINDS = (1, 3)


# ---------------------------------------------------------------------------- reading

def table_arrow_schema(table) -> pa.Schema:
    """The Arrow schema of the table's columns (latest schema)."""
    return PyarrowFieldParser.from_paimon_schema(table.fields)


def _deleted_positions(table, split: Split, files: Sequence[DataFileMeta]
                       ) -> Dict[str, np.ndarray]:
    """The split's deletion vectors of ``files`` (data file name -> deleted positions)."""
    wanted = {f.file_name for f in files}
    located = {n: d for n, d in split.deletion_files.items() if n in wanted}
    return read_deletion_vectors(table.file_io, located) if located else {}


def _without_deleted(table, meta: DataFileMeta, data: pa.Table,
                     deleted: Dict[str, np.ndarray]) -> pa.Table:
    positions = deleted.get(meta.file_name)
    if positions is None:
        return data
    if data.num_rows != meta.row_count:
        raise PaimonFormatError(
            f"data file {meta.file_name} of {table.identifier} has {data.num_rows} rows, its "
            f"metadata {meta.row_count}: its deletion vector positions cannot be applied")
    mask = live_mask(data.num_rows, positions)
    return data if mask is None else data.filter(pa.array(mask))


def _read_file(table, meta: DataFileMeta, columns: Sequence[str]) -> pa.Table:
    path = meta.physical_path()
    name = meta.file_name.lower()
    try:
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq
            with table.file_io.new_input_stream(path) as stream:
                parquet = pq.ParquetFile(stream)
                present = [c for c in columns if c in parquet.schema_arrow.names]
                return assembled_variants(parquet.read(columns=present))
        if name.endswith(".orc"):
            import pyarrow.orc as orc
            with table.file_io.new_input_stream(path) as stream:
                orc_file = orc.ORCFile(stream)
                present = [c for c in columns if c in orc_file.schema.names]
                return orc_file.read(columns=present)
        if name.endswith(".avro"):
            return _read_avro(table, path, columns)
    except FileNotFoundError as exc:
        raise missing_data_file(table, path) from exc
    raise NotImplementedError(
        f"reading raw key-value file {meta.file_name} of {table.identifier}: only parquet, orc "
        f"and avro files are supported, set 'file.format' to one of them")


def _read_avro(table, path: str, columns: Sequence[str]) -> pa.Table:
    """An Avro key-value file's ``columns`` (those it has), each typed as pyarrow infers it from
    the decoded values (``_as_records`` casts them to the table's types). Paimon's writers store
    a postpone bucket's files as Avro; pyarrow has no Avro reader, so the records are decoded by
    fastavro, which pypaimon's own Avro reader uses too, a record at a time."""
    import fastavro

    with table.file_io.new_input_stream(path) as stream:
        reader = fastavro.reader(stream)
        stored = [f["name"] for f in reader.writer_schema["fields"]]
        present = [c for c in columns if c in stored]
        values: Dict[str, list] = {c: [] for c in present}
        for record in reader:
            for c in present:
                values[c].append(record[c])
    return pa.table({c: pa.array(values[c]) for c in present}) if present else pa.table({})


def assembled_variants(data: pa.Table) -> pa.Table:
    """``data`` (columns as a Parquet file stores them) with each shredded VARIANT column
    (``variant.shreddingSchema``: Parquet's ``metadata``, ``value`` and ``typed_value``) turned
    back into Paimon's ``struct<value, metadata>``. pypaimon's own assembler does it (the
    encoding is Paimon's, and its reader reads these files so); it walks the rows in Python,
    which only the Python path pays: Spark's Parquet reader reads a shredded variant itself."""
    from pypaimon.data.variant_shredding import (assemble_shredded_column,
                                                 build_variant_schema, is_shredded_variant)

    for index, column in enumerate(data.columns):
        if pa.types.is_struct(column.type) and is_shredded_variant(column.type):
            schema = build_variant_schema(column.type)
            chunks = [assemble_shredded_column(chunk, schema) for chunk in column.chunks]
            data = data.set_column(index, data.field(index).name,
                                   pa.chunked_array(chunks, chunks[0].type) if chunks else
                                   pa.chunked_array([], VARIANT_ARROW))
    return data



def _record_columns(table, columns: Optional[Sequence[str]]) -> List[str]:
    names = list(table.field_names)
    if columns is None:
        return names
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise ValueError(f"columns {unknown} are not in Paimon table {table.identifier} "
                         f"(columns: {names})")
    wanted = set(columns) | set(table.primary_keys) | set(table.options.sequence_field() or [])
    return [n for n in names if n in wanted]


def _stored_names(table, schema_id: int, names: Sequence[str]) -> Dict[str, Optional[str]]:
    """Column name in a file written under ``schema_id`` for each current column (Paimon
    matches columns by field id, so renamed columns keep reading); None if added later."""
    if schema_id == table.table_schema.id:
        return {n: n for n in names}
    old_by_id = {f.id: f.name for f in table.schema_manager.get_schema(schema_id).fields}
    current = {f.name: f.id for f in table.fields}
    return {n: old_by_id.get(current[n]) for n in names}


def read_split_records(table, split: Split, columns: Optional[Sequence[str]] = None,
                       with_positions: bool = False) -> pa.Table:
    """The raw, unmerged key-value records of a primary-key split, all files and levels.

    Columns: the table columns (``columns`` if given, plus the primary key and any
    ``sequence.field`` columns, in schema order), ``_seq`` (int64 sequence number),
    ``_row_kind`` (+I/-U/+U/-D) and ``_level`` (int32). Rows come file by file in the
    split's order (ascending min sequence number), each file sorted by key. Rows a file's
    deletion vector (``split.deletion_files``) deletes are left out: in a deletion-vector
    table they are superseded versions that a merge must not see again.
    ``with_positions`` adds ``_file`` (data file name) and ``_position`` (int64 row number in
    that file): what a deletion vector records.
    """
    if not table.primary_keys:
        raise ValueError(f"{table.identifier} is an append table: use read_append_split")
    names = _record_columns(table, columns)
    out_schema = _records_schema(table, names, with_positions)
    deleted = _deleted_positions(table, split, split.files)
    pieces = []
    for meta in split.files:
        stored = _stored_names(table, meta.schema_id, names)
        raw = _read_file(table, meta, [SEQUENCE_COLUMN, VALUE_KIND_COLUMN]
                         + [stored[n] for n in names if stored[n] is not None])
        if with_positions:
            raw = raw.append_column("_position", pa.array(np.arange(raw.num_rows,
                                                                    dtype=np.int64)))
        raw = _without_deleted(table, meta, raw, deleted)
        if raw.num_rows:
            pieces.append(_as_records(table, split, meta, raw, names, stored, out_schema))
    if not pieces:
        return out_schema.empty_table()
    return pa.concat_tables(pieces).combine_chunks()


def _records_schema(table, names: Sequence[str], with_positions: bool = False) -> pa.Schema:
    schema = table_arrow_schema(table)
    return pa.schema([schema.field(n) for n in names]
                     + [pa.field("_seq", pa.int64(), nullable=False),
                        pa.field("_row_kind", pa.string(), nullable=False),
                        pa.field("_level", pa.int32(), nullable=False)]
                     + ([pa.field("_file", pa.string(), nullable=False),
                         pa.field("_position", pa.int64(), nullable=False)]
                        if with_positions else []))


def _as_records(table, split: Split, meta: DataFileMeta, raw: pa.Table, names: Sequence[str],
                stored: Mapping[str, Optional[str]], out_schema: pa.Schema) -> pa.Table:
    """Rows of the key-value file ``meta`` as ``read_split_records`` returns them: each table
    column found by its stored name (``_stored_names``), the split's partition value, or NULL
    (added later); then ``_seq``, ``_row_kind``, ``_level`` (and ``_file``, ``_position`` when
    ``out_schema`` has them and ``raw`` holds ``_position``)."""
    n = raw.num_rows
    arrays = []
    for name in names:
        field = out_schema.field(name)
        if stored[name] is not None and stored[name] in raw.column_names:
            column = raw.column(stored[name])
            arrays.append(column if column.type == field.type else column.cast(field.type))
        elif name in split.partition:  # partition value not stored in the file
            arrays.append(pa.array([split.partition[name]] * n, field.type))
        else:  # column added after this file was written
            arrays.append(pa.nulls(n, field.type))
    kinds = raw.column(VALUE_KIND_COLUMN).combine_chunks()
    if pc.max(kinds).as_py() > 3 or pc.min(kinds).as_py() < 0:
        raise PaimonFormatError(f"data file {meta.file_name} of {table.identifier} has an "
                                f"unknown _VALUE_KIND (expected 0..3)")
    arrays.append(raw.column(SEQUENCE_COLUMN).cast(pa.int64()))
    arrays.append(pc.take(_ROW_KIND_ARRAY, kinds.cast(pa.int32())))
    arrays.append(pa.array(np.full(n, meta.level, dtype=np.int32)))
    if "_position" in out_schema.names:
        arrays.append(pa.array([meta.file_name], pa.string()).take(
            pa.array(np.zeros(n, dtype=np.int32))))
        arrays.append(raw.column("_position"))
    return pa.Table.from_arrays(arrays, schema=out_schema)


def iter_split_records(table, split: Split, columns: Optional[Sequence[str]] = None,
                       batch_rows: int = 65536) -> Iterator[pa.Table]:
    """``read_split_records``' records of a split in pieces whose memory is bounded by a batch
    per sorted run, not by the split: each piece holds every record of its keys, and the pieces
    come in ascending key ranges, so merging each piece on its own (the merge is per key) gives
    the split's merged rows in key order.

    Each sorted run (a level-0 file; the files of one higher level, in key order) is read a
    batch at a time; a piece is every buffered record whose key is at most the smallest of the
    runs' last buffered keys: no run can hold a record of those keys further on. Within a piece,
    runs come by sequence number (a merge finds them in arrival order, as in a whole read).
    Only for Parquet/ORC files and primary keys whose order Arrow compares as Paimon does
    (``streams_by_key``); callers read other splits whole."""
    names = _record_columns(table, columns)
    out_schema = _records_schema(table, names)
    keys = list(table.primary_keys)
    deleted = _deleted_positions(table, split, split.files)
    # oldest first: a piece then holds its records in arrival order, as a whole read does,
    # and the merge need not sort them
    runs = [_run_records(table, split, run.files, names, out_schema, deleted, batch_rows)
            for run in sorted(sorted_runs(split.files), key=lambda r: r.min_sequence_number)]
    buffers: List[Optional[pa.Table]] = [out_schema.empty_table() for _ in runs]
    while True:
        for i, run in enumerate(runs):  # refill the runs whose records were all taken
            while buffers[i] is not None and buffers[i].num_rows == 0:
                buffers[i] = next(run, None)
        open_runs = [b for b in buffers if b is not None]
        if not open_runs:
            return
        # every record of a key up to this bound is buffered: each run is read in key order.
        # (Arrow orders the runs' last keys: no conversion to Python values)
        lasts = pa.concat_tables([b.select(keys).slice(b.num_rows - 1) for b in open_runs])
        first = lasts.sort_by([(k, "ascending") for k in keys]).slice(0, 1)
        bound = [first.column(k)[0] for k in keys]
        pieces = []
        for i, buffered in enumerate(buffers):
            if buffered is None:
                continue
            # a run is sorted: its records up to the bound are a prefix (sliced, not copied)
            upto = _keys_at_most(buffered, keys, bound)
            count = pc.sum(upto).as_py() or 0
            if count and not pc.all(upto.slice(0, count)).as_py():
                raise PaimonFormatError(
                    f"a data file of {table.identifier} (partition {split.partition}, bucket "
                    f"{split.bucket}) is not sorted by the primary key {keys}")
            pieces.append(buffered.slice(0, count))
            buffers[i] = buffered.slice(count)
        yield pa.concat_tables(pieces)


def streams_by_key(table, split: Split) -> bool:
    """Whether ``iter_split_records`` can read the split: Parquet/ORC files, and primary-key
    types that Arrow orders as Paimon's key comparator does (not floating point: NaN, -0.0)."""
    schema = table_arrow_schema(table)
    ordered = (pa.types.is_integer, pa.types.is_string, pa.types.is_large_string,
               pa.types.is_binary, pa.types.is_large_binary, pa.types.is_date,
               pa.types.is_timestamp, pa.types.is_decimal, pa.types.is_boolean)
    return all(read_by_pyarrow(f) for f in split.files) and all(
        any(test(schema.field(k).type) for test in ordered) for k in table.primary_keys)


def _keys_at_most(rows: pa.Table, keys: Sequence[str], bound: Sequence[pa.Scalar]
                  ) -> pa.ChunkedArray:
    """Boolean mask of the rows whose key is lexicographically at most ``bound``."""
    below = None
    equal = None
    for key, scalar in zip(keys, bound):
        column = rows.column(key)
        less, same = pc.less(column, scalar), pc.equal(column, scalar)
        below = less if below is None else pc.or_(below, pc.and_(equal, less))
        equal = same if equal is None else pc.and_(equal, same)
    return pc.or_(below, equal)


def _run_records(table, split: Split, run: Sequence[DataFileMeta], names: Sequence[str],
                 out_schema: pa.Schema, deleted: Dict[str, np.ndarray], batch_rows: int
                 ) -> Iterator[pa.Table]:
    """One sorted run's records, file by file, a batch at a time, without deleted rows."""
    for meta in run:
        stored = _stored_names(table, meta.schema_id, names)
        wanted = [SEQUENCE_COLUMN, VALUE_KIND_COLUMN] + \
            [stored[n] for n in names if stored[n] is not None]
        for raw in _live_batches(table, meta, wanted, deleted.get(meta.file_name), batch_rows):
            yield _as_records(table, split, meta, raw, names, stored, out_schema)


def rows_with_keys(rows: pa.Table, keys: pa.Table, primary_keys: Sequence[str]) -> pa.Table:
    """The rows of ``rows`` whose primary key is among ``keys``, in their order: a left semi
    join on the key columns alone, the rows then taken by position (Arrow's hash join refuses
    list, struct and map columns beside the keys: "not supported in join non-key field")."""
    pk = list(primary_keys)
    positions = pa.array(np.arange(rows.num_rows, dtype=np.int64))
    hits = rows.select(pk).append_column("__row", positions).join(
        keys.select(pk), keys=pk, join_type="left semi").column("__row")
    return rows.take(np.sort(hits.to_numpy()))


def _data_split(table, split: Split, files: Optional[Sequence[DataFileMeta]] = None
                ) -> DataSplit:
    partition = GenericRow(list(split.partition_values), table.partition_keys_fields)
    return DataSplit(files=list(split.files if files is None else files), partition=partition,
                     bucket=split.bucket,
                     raw_convertible=True, snapshot_id=split.snapshot_id,
                     total_buckets=split.total_buckets)


def read_append_split(table, split: Split, columns: Optional[Sequence[str]] = None) -> pa.Table:
    """The rows of an append-table split, in write order (files by sequence number), without
    the rows the files' deletion vectors delete."""
    if table.primary_keys:
        raise ValueError(f"{table.identifier} is a primary-key table: its rows must be merged; "
                         f"read them raw with read_split_records")
    names = _record_columns(table, columns)
    empty = table_arrow_schema(table).empty_table().select(names)
    builder = table.new_read_builder()
    if columns is not None:
        builder = builder.with_projection(names)
    if not split.files:
        return empty
    read = builder.new_read()
    deleted = _deleted_positions(table, split, split.files)
    if not deleted:
        result = read.to_arrow([_data_split(table, split)])
        return result.select(names) if result is not None else empty
    # positions count rows of one file: read the files with a deletion vector one by one
    pieces, plain = [], []
    for meta in split.files + [None]:
        if meta is not None and meta.file_name not in deleted:
            plain.append(meta)
            continue
        if plain:
            pieces.append(read.to_arrow([_data_split(table, split, plain)]))
            plain = []
        if meta is not None:
            rows = read.to_arrow([_data_split(table, split, [meta])])
            pieces.append(_without_deleted(table, meta, rows if rows is not None else empty,
                                           deleted))
    pieces = [p.select(names) for p in pieces if p is not None and p.num_rows]
    return pa.concat_tables(pieces) if pieces else empty


def iter_append_file(table, split: Split, meta: DataFileMeta, columns: Sequence[str],
                     batch_rows: int = 65536, row_groups: Optional[RowGroups] = None,
                     conditions: Sequence[tuple] = ()) -> Iterator[pa.Table]:
    """The rows of one data file of an append-table split (or of a primary-key file whose rows
    are merged rows: no retraction, every key once), in file order and batches of at most
    ``batch_rows`` (a Parquet file is read row group by row group: memory is bounded by a
    batch, not the file), without the rows its deletion vector deletes. Columns are the
    table's ``columns`` as the current schema types them, found in an older file by field id
    (a renamed column), NULL where the file predates the column. Parquet and ORC files are
    read here with pyarrow; others through pypaimon's reader. ``row_groups``: only those of a
    Parquet file (``row_groups.row_group_ranges``; one task's part of a large file).
    ``conditions`` (file_stats.Condition, the read's filters): a Parquet file's row groups whose
    statistics say no row can match are not read; the caller still filters the rows."""
    if row_groups is not None and not splittable(meta):
        raise ValueError(f"data file {meta.file_name} is not Parquet: it is read whole")
    if not read_by_pyarrow(meta):
        one = dataclasses.replace(split, files=[meta])
        yield read_append_split(table, one, columns)
        return
    schema = table_arrow_schema(table)
    stored = _stored_names(table, meta.schema_id, columns)
    wanted = [stored[c] for c in columns if stored[c] is not None]
    positions = _deleted_positions(table, split, [meta]).get(meta.file_name)
    skip = None
    if conditions:
        filtered = _stored_names(table, meta.schema_id, [c for _, c, _ in conditions
                                                         if c in schema.names])
        skip = row_group_filter(table, conditions, filtered)
    for raw in _live_batches(table, meta, wanted, positions, batch_rows, row_groups, skip):
        arrays = []
        for column in columns:
            target = schema.field(column).type
            if stored[column] is not None and stored[column] in raw.column_names:
                values = raw.column(stored[column])
                arrays.append(values if values.type == target else values.cast(target))
            elif column in split.partition:  # partition value not stored in the file
                arrays.append(pa.array([split.partition[column]] * raw.num_rows, target))
            else:  # column added after this file was written
                arrays.append(pa.nulls(raw.num_rows, target))
        yield pa.Table.from_arrays(arrays, schema=pa.schema([schema.field(c) for c in columns]))


def _live_batches(table, meta: DataFileMeta, columns: Sequence[str],
                  deleted: Optional[np.ndarray], batch_rows: int,
                  row_groups: Optional[RowGroups] = None, skip=None) -> Iterator[pa.Table]:
    """The file's ``columns`` (in ``row_groups`` only, if given; without the Parquet row groups
    ``skip``, a row_groups.row_group_filter, excludes) a batch at a time, without the
    ``deleted`` positions (its deletion vector, counted from the file's first row); empty
    batches left out."""
    mask = live_mask(meta.row_count, deleted)
    for offset, raw in _file_batches(table, meta, columns, batch_rows, row_groups, skip,
                                     check_rows=mask is not None):
        if mask is not None:
            raw = raw.filter(pa.array(mask[offset:offset + raw.num_rows]))
        if raw.num_rows:
            yield raw


def read_by_pyarrow(meta: DataFileMeta) -> bool:
    """Whether ``iter_append_file`` reads the file with pyarrow, a batch at a time (Parquet,
    ORC) rather than whole through pypaimon's reader."""
    return meta.file_name.lower().endswith((".parquet", ".orc"))


def _file_batches(table, meta: DataFileMeta, columns: Sequence[str], batch_rows: int,
                  row_groups: Optional[RowGroups] = None, skip=None, check_rows: bool = False
                  ) -> Iterator[Tuple[int, pa.Table]]:
    """(position of its first row in the file, batch) pairs. ``check_rows``: the file must hold
    the rows its metadata counts (a deletion vector's positions are counted in them)."""
    path = meta.physical_path()
    try:
        with table.file_io.new_input_stream(path) as stream:
            if meta.file_name.lower().endswith(".parquet"):
                import pyarrow.parquet as pq

                parquet = pq.ParquetFile(stream)
                footer = parquet.metadata
                _check_rows(table, meta, footer.num_rows, check_rows)
                present = [c for c in columns if c in parquet.schema_arrow.names]
                groups = range(footer.num_row_groups) if row_groups is None else \
                    range(row_groups.start, row_groups.stop)
                keep = matching_row_groups(stream, skip) if skip is not None else None
                first_rows = np.concatenate([[0], np.cumsum(
                    [footer.row_group(g).num_rows for g in range(footer.num_row_groups)])])
                for group in groups:
                    if keep is not None and group not in keep:
                        continue
                    offset = int(first_rows[group])
                    for batch in parquet.iter_batches(batch_size=batch_rows, columns=present,
                                                      row_groups=[group]):
                        yield offset, assembled_variants(pa.Table.from_batches([batch]))
                        offset += batch.num_rows
            else:
                import pyarrow.orc as orc

                orc_file = orc.ORCFile(stream)
                _check_rows(table, meta, orc_file.nrows, check_rows)
                present = [c for c in columns if c in orc_file.schema.names]
                offset = 0
                for stripe in range(orc_file.nstripes):
                    batch = orc_file.read_stripe(stripe, columns=present)
                    yield offset, pa.Table.from_batches([batch])
                    offset += batch.num_rows
    except FileNotFoundError as exc:
        raise missing_data_file(table, path) from exc


def _check_rows(table, meta: DataFileMeta, rows: int, check: bool) -> None:
    if check and rows != meta.row_count:
        raise PaimonFormatError(
            f"data file {meta.file_name} of {table.identifier.get_full_name()} has {rows} rows, "
            f"its metadata {meta.row_count}: its deletion vector positions cannot be applied")


# ---------------------------------------------------------------------------- writing

def next_sequence_number(table, partition: Union[Mapping[str, Any], Split],
                         bucket: Optional[int] = None,
                         snapshot_id: Optional[int] = None) -> int:
    """The first sequence number a new write to (partition, bucket) must use."""
    split = partition if isinstance(partition, Split) else \
        bucket_split(table, partition, bucket, snapshot_id)
    return split.max_sequence_number + 1


def _partition_tuple(table, partition) -> Tuple[Any, ...]:
    keys = list(table.partition_keys)
    if isinstance(partition, Mapping):
        if set(partition) != set(keys):
            raise ValueError(f"partition {dict(partition)} must name exactly the partition keys "
                             f"{keys} of {table.identifier}")
        return tuple(partition[k] for k in keys)
    values = tuple(partition or ())
    if len(values) != len(keys):
        raise ValueError(f"partition {values} must have one value per partition key {keys}")
    return values


def _value_kinds(row_kind: pa.ChunkedArray) -> pa.Array:
    kinds = pc.index_in(row_kind, value_set=_ROW_KIND_ARRAY)
    if kinds.null_count:
        bad = pc.filter(row_kind, pc.is_null(kinds)).unique().to_pylist()[:5]
        raise ValueError(f"_row_kind must be one of {list(ROW_KINDS)}, found {bad}")
    return kinds.cast(pa.int8())


def _check_sorted_unique(table, keys: pa.Table):
    n = keys.num_rows
    if n < 2:
        return
    order = pc.sort_indices(keys, sort_keys=[(c, "ascending") for c in keys.column_names],
                            null_placement="at_start")
    if not np.array_equal(order.to_numpy(), np.arange(n)):
        raise ValueError(f"records for {table.identifier} must be sorted by the primary key "
                         f"{list(table.trimmed_primary_keys)} (the merge runtime sorts them)")
    same = None
    for name in keys.column_names:
        column = keys.column(name)
        equal = pc.fill_null(pc.equal(column.slice(1), column.slice(0, n - 1)), False)
        same = equal if same is None else pc.and_(same, equal)
    if pc.any(same).as_py():
        first = int(np.flatnonzero(same.to_numpy(zero_copy_only=False))[0])
        raise ValueError(f"records for {table.identifier} must hold one row per primary key; "
                         f"key {keys.slice(first, 1).to_pylist()[0]} appears more than once")


def kv_layout(table, records: pa.Table, sequence_base: Optional[int] = None) -> pa.Table:
    """``records`` (table columns + ``_seq`` + ``_row_kind``) in the key-value file layout."""
    for required in ("_seq", "_row_kind"):
        if required not in records.column_names:
            raise ValueError(f"records must have a {required!r} column")
    schema = table_arrow_schema(table)
    missing = [n for n in schema.names if n not in records.column_names]
    if missing:
        raise ValueError(f"records lack columns {missing} of {table.identifier}")
    sequence = records.column("_seq").cast(pa.int64())
    if sequence.null_count:
        raise ValueError("_seq must not be null")
    if sequence_base is not None:
        sequence = pc.add(sequence, pa.scalar(int(sequence_base), pa.int64()))
    values = []
    for f in schema:
        column = records.column(f.name)
        values.append(column if column.type == f.type else column.cast(f.type))
    key_names = list(table.trimmed_primary_keys)
    arrays, fields = [], []
    for k in key_names:
        arrays.append(values[schema.get_field_index(k)])
        fields.append(pa.field(KEY_PREFIX + k, schema.field(k).type, nullable=False))
    arrays += [sequence, _value_kinds(records.column("_row_kind"))]
    fields += [pa.field(SEQUENCE_COLUMN, pa.int64(), nullable=False),
               pa.field(VALUE_KIND_COLUMN, pa.int8(), nullable=False)]
    arrays += values
    fields += list(schema)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write_kv_file(table, partition: Union[Mapping[str, Any], Sequence[Any]], bucket: int,
                  records: pa.Table, level: int = 0, sequence_base: Optional[int] = None,
                  changelog: bool = False, check_order: bool = True) -> List[DataFileMeta]:
    """Write merged, key-sorted ``records`` of one bucket as key-value files; their metas.

    ``records``: every table column plus ``_seq`` (int64) and ``_row_kind``; one row per
    primary key, sorted by it (checked unless ``check_order=False``). Files roll at the
    table's ``target-file-size``; each meta has the real ``delete_row_count`` (-U and -D
    rows), key and value stats, min/max key and sequence number, and ``level``.
    ``changelog=True`` writes changelog files (``changelog-`` prefix) for
    ``new_commit_message(changelog_files=...)``. Files are not visible until committed; hand
    the metas to ``abort`` if the commit does not happen.
    """
    if not table.primary_keys:
        raise ValueError(f"{table.identifier} is an append table: key-value files are only "
                         f"for primary-key tables")
    if records.num_rows == 0:
        return []
    values = _partition_tuple(table, partition)
    # one chunk: pypaimon takes min/max key from the first record batch only
    data = kv_layout(table, records, sequence_base).combine_chunks()
    if check_order:
        _check_sorted_unique(table, data.select([KEY_PREFIX + k
                                                 for k in table.trimmed_primary_keys]))
    options = full_stats_options(table)  # readers skip files by value (file_stats.py)
    if changelog:
        options.set(CoreOptions.DATA_FILE_PREFIX, "changelog-")
    writer = KeyValueDataWriter(table, values, bucket, max_seq_number=-1, options=options)
    target = writer.target_file_size
    metas: List[DataFileMeta] = []
    try:
        remaining = data
        while remaining.num_rows > 0:
            rows = remaining.num_rows
            if remaining.nbytes > target:
                rows = max(writer._find_optimal_split_point(remaining, target), 1)
            chunk = remaining.slice(0, rows)
            before = len(writer.committed_files)
            writer._write_data_to_file(chunk)
            meta = writer.committed_files[before]
            kinds = chunk.column(VALUE_KIND_COLUMN).to_numpy()
            deletes = int(np.isin(kinds, _DELETE_KINDS).sum())
            metas.append(dataclasses.replace(meta, level=int(level), delete_row_count=deletes))
            remaining = remaining.slice(rows)
    except Exception as exc:
        writer.abort()
        shredding = variant_shredding.refused(table, exc)
        if shredding is not None:
            raise shredding from exc
        raise
    return metas


def write_through(writer, pieces: Iterable) -> list:
    """Every piece (what the writer's ``write`` takes: a RecordBatch, a Table) through a
    pypaimon-style writer (``write``, ``prepare_commit``, ``abort``, ``close``), then what its
    ``prepare_commit`` returns. On any failure the writer is aborted,
    deleting the files it wrote: nothing of a failed write is left for a commit to name."""
    try:
        for piece in pieces:
            writer.write(piece)
        return writer.prepare_commit()
    except BaseException:
        writer.abort()
        raise
    finally:
        writer.close()


def new_commit_message(partition: Union[Mapping[str, Any], Sequence[Any]], bucket: int,
                       new_files: Sequence[DataFileMeta] = (),
                       deleted_files: Sequence[DataFileMeta] = (),
                       changelog_files: Sequence[DataFileMeta] = (),
                       partition_keys: Optional[Sequence[str]] = None) -> CommitMessage:
    """A pypaimon CommitMessage (picklable) for one (partition, bucket).

    ``partition`` is a tuple in partition-key order, or a dict together with
    ``partition_keys`` (a one-key dict needs no ``partition_keys``).
    """
    if isinstance(partition, Mapping):
        if partition_keys is None:
            if len(partition) > 1:
                raise ValueError("a partition dict with several keys needs partition_keys "
                                 "to put the values in partition-key order")
            values = tuple(partition.values())
        else:
            values = tuple(partition[k] for k in partition_keys)
    else:
        values = tuple(partition or ())
    return CommitMessage(partition=values, bucket=int(bucket), new_files=list(new_files),
                         deleted_files=list(deleted_files),
                         changelog_files=list(changelog_files))
