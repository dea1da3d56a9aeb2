"""The merge kernel: ``merge_arrow`` (merge / merge-on-read / compaction) and ``premerge_arrow``
(the write buffer of one commit), over Arrow tables, vectorized with polars.

Order of records inside a key (Paimon's SortBufferWriteBuffer / SortMergeReader):
``sequence.field`` values (NULL smallest, ``sequence.field.sort-order``), then the commit,
then ``_seq``. (``sequence.auto-padding``, which once put retractions first on equal sequence
values, was removed from Paimon in 0.8 -- commit 1502e83bfc "Redefine user defined sequence
fields" -- and is ignored like every option Paimon does not know.)
"""
from __future__ import annotations

from typing import List, Tuple, Union

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .engines import engine_for, first_row
from .engines.base import ADD, DELETE, ROW_KIND, SEQ, UPDATE_BEFORE
from .errors import PaimonDataError
from .spec import MergeSpec
from .vectors import castable_lists, unsliced_vectors

COMMIT = "_commit"
_COMMIT = "__commit"
_ROW = "__row"
ROW_KINDS = ("+I", "-U", "+U", "-D")
ADD_KINDS = ("+I", "+U")


# ---- public API ----------------------------------------------------------------------------------
def merge_arrow(
    spec: MergeSpec, records: pa.Table, with_changelog: bool = False
) -> Union[pa.Table, Tuple[pa.Table, pa.Table]]:
    """Merge ``records`` as Paimon would and return the rows a reader sees (sorted by primary key).

    ``records``: the schema's columns plus ``_row_kind`` (+I/-U/+U/-D), ``_seq`` (int64, larger is
    later) and optionally ``_commit`` (int64). Records of one commit are merged with each other
    first (the write buffer); the commits' stored results are then merged in one pass, ordered by
    sequence fields, commit and ``_seq`` (the reader). With ``with_changelog=True`` also returns
    the changelog lookup / full-compaction would produce for every commit, in commit order.
    """
    if not with_changelog and _last_record_wins(spec):
        return _merge_last_records(spec, _as_table(records))
    frame = _prepare(spec, records, keep_commits=True)
    pk = list(spec.primary_keys)
    if with_changelog:
        from .changelog import changelog_frames

        stored = _merge(spec, frame, pk + [_COMMIT])
        final, changes = changelog_frames(spec, stored, _merge)
        return _visible(spec, final), changes
    if frame[_COMMIT].n_unique() > 1:
        stored = _merge(spec, frame, pk + [_COMMIT])
        final = _merge(spec, stored, pk)
    else:
        final = _merge(spec, frame, pk)
    return _visible(spec, final)


def premerge_arrow(spec: MergeSpec, records: pa.Table) -> pa.Table:
    """Merge ONE commit's records as Paimon's write buffer does: what the data file stores.

    Returns one row per key, sorted by primary key: the schema's columns, ``_row_kind`` (the
    stored kind, retractions kept) and ``_seq`` (the sequence number Paimon keeps: the first
    record's for first-row, the last record's for the other engines; a key's only record is
    stored as-is). ``_commit`` is ignored.
    """
    frame = _prepare(spec, records, keep_commits=False)
    merged = _merge(spec, frame, list(spec.primary_keys)).sort(list(spec.primary_keys))
    schema = spec.arrow_schema.append(pa.field(ROW_KIND, pa.string(), nullable=False)).append(
        pa.field(SEQ, pa.int64(), nullable=False)
    )
    return to_arrow(merged, schema)


# ---- internals -----------------------------------------------------------------------------------
def order_by(spec: MergeSpec) -> Tuple[List[pl.Expr], List[bool]]:
    keys = [pl.col(f) for f in spec.sequence_fields]
    descending = [spec.sequence_descending] * len(keys)
    keys += [pl.col(_COMMIT), pl.col(SEQ)]
    descending += [False, False]
    return keys, descending


def _merge(spec: MergeSpec, frame: pl.DataFrame, group: List[str]) -> pl.DataFrame:
    """Sort into merge order, then one engine call: one row per group."""
    keys, descending = order_by(spec)
    if _in_arrival_order(spec, frame):
        ordered = frame  # the usual case: records arrive in _seq order
    else:
        ordered = frame.sort(keys, descending=descending, nulls_last=False, maintain_order=True)
    merged = engine_for(spec)(spec, ordered, group)
    if _COMMIT not in merged.columns:
        merged = merged.with_columns(pl.col(_COMMIT) if _COMMIT in group else pl.lit(0, pl.Int64).alias(_COMMIT))
    return merged.with_columns(pl.col(ROW_KIND).is_in(ADD_KINDS).alias(ADD))


def _last_record_wins(spec: MergeSpec) -> bool:
    """deduplicate ordered by commit and ``_seq`` only: a key's merged row is its last record."""
    return spec.engine == "deduplicate" and not spec.sequence_fields


def merged_row_is_a_record(spec: MergeSpec) -> bool:
    """deduplicate and first-row: a key's merged row is one of its records, unchanged (its last
    in merge order: ``sequence.field`` values, then commit and ``_seq``; first-row: its first)."""
    return spec.engine in ("deduplicate", "first-row")


def merged_record_rows(spec: MergeSpec, records: pa.Table, sorted_by_key: bool = True
                       ) -> pa.Array:
    """For a ``merged_row_is_a_record`` table: the row numbers of the ``records`` a merged read
    returns (in key order with ``sorted_by_key``). Reads only the primary key, the
    ``sequence.field`` columns, ``_row_kind``, ``_seq`` and ``_commit``, so a caller may hand the
    records without their values: a native read keeps exactly these rows of the stored files
    (native_read.py). Merging each commit first and then the commits, as ``merge_arrow`` does,
    keeps the same record: the last of the lasts (the first of the firsts)."""
    if not merged_row_is_a_record(spec):
        raise ValueError(f"a {spec.engine} table's merged row is not one of its records")
    pk = list(spec.primary_keys)
    names = pk + [f for f in spec.sequence_fields if f not in pk]
    frame = _checked(spec, _frame(records, _key_columns(spec, records, names), names,
                                  keep_commits=True).with_row_index(_ROW))
    if not _in_arrival_order(spec, frame):
        keys, descending = order_by(spec)
        frame = frame.sort(keys, descending=descending, nulls_last=False, maintain_order=True)
    key = pl.col(pk[0]) if len(pk) == 1 else pl.struct(pk)
    if spec.engine == "first-row":
        first_row.check_retractions(frame, pk)
        chosen = frame.filter(key.is_first_distinct() & pl.col(ADD))
    else:
        chosen = frame.filter(key.is_last_distinct() & pl.col(ADD))
    return (chosen.sort(pk) if sorted_by_key else chosen)[_ROW].to_arrow()


def _merge_last_records(spec: MergeSpec, records: pa.Table) -> pa.Table:
    """``merge_arrow`` for ``_last_record_wins`` tables without taking the value columns through
    polars: pick each key's last record from the keys, kinds and sequence numbers alone, then
    gather the surviving rows from Arrow once. Merging a commit first and then the commits, as
    ``merge_arrow`` does, keeps the same record (the last of the last)."""
    columns = _schema_columns(spec, records)
    rows = merged_record_rows(spec, records)
    # the columns are at the schema's types already (_schema_columns): gather, no cast
    survivors = pa.Table.from_arrays(columns, names=list(spec.names)).take(rows)
    return pa.Table.from_arrays(survivors.columns, schema=spec.arrow_schema).combine_chunks()


def _in_arrival_order(spec: MergeSpec, frame: pl.DataFrame) -> bool:
    if spec.sequence_fields or frame.height < 2:
        return not spec.sequence_fields
    step_commit, step_seq = pl.col(_COMMIT).diff(), pl.col(SEQ).diff()
    return bool(
        frame.select(((step_commit > 0) | ((step_commit == 0) & (step_seq >= 0))).fill_null(True).all()).item()
    )


def _visible(spec: MergeSpec, merged: pl.DataFrame) -> pa.Table:
    live = merged.filter(pl.col(ADD)).sort(list(spec.primary_keys))
    return to_arrow(live, spec.arrow_schema)


def _prepare(spec: MergeSpec, records, keep_commits: bool) -> pl.DataFrame:
    records = _as_table(records)
    columns = _schema_columns(spec, records)
    return _checked(spec, _frame(records, columns, list(spec.names), keep_commits))


def _as_table(records) -> pa.Table:
    if isinstance(records, pl.DataFrame):
        records = records.to_arrow()
    if isinstance(records, pa.RecordBatch):
        records = pa.Table.from_batches([records])
    if not isinstance(records, pa.Table):
        raise TypeError(f"records must be a pyarrow.Table, got {type(records).__name__}")
    return records


def _schema_columns(spec: MergeSpec, records: pa.Table) -> List[pa.ChunkedArray]:
    """The schema's columns of ``records``, at the schema's Arrow types."""
    missing = [c for c in list(spec.names) + [ROW_KIND, SEQ] if c not in records.column_names]
    if missing:
        raise PaimonDataError(f"records lack column(s) {missing}; expected the schema's columns, _row_kind and _seq.")
    return [_schema_column(records, name, sql_type) for name, sql_type in spec.columns]


def _schema_column(records: pa.Table, name: str, sql_type) -> pa.ChunkedArray:
    if name not in records.column_names:
        raise PaimonDataError(f"records lack column '{name}'")
    column = records.column(name)
    if column.type != sql_type.arrow:
        try:
            column = castable_lists(column).cast(sql_type.arrow)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise PaimonDataError(f"Column '{name}' cannot be read as {sql_type.text}: {exc}") from None
    return column


def _key_columns(spec: MergeSpec, records: pa.Table, names: List[str]) -> List[pa.ChunkedArray]:
    """The columns ``names`` of ``records``, at the schema's Arrow types."""
    by_name = dict(spec.columns)
    return [_schema_column(records, name, by_name[name]) for name in names]


def _frame(records: pa.Table, columns: List[pa.ChunkedArray], names: List[str],
           keep_commits: bool) -> pl.DataFrame:
    """``columns`` (named ``names``) with the records' row kind, ``_seq`` and commit, as polars."""
    columns = columns + [records.column(ROW_KIND).cast(pa.string()),
                         records.column(SEQ).cast(pa.int64())]
    names = names + [ROW_KIND, SEQ]
    if keep_commits and COMMIT in records.column_names:
        columns.append(records.column(COMMIT).cast(pa.int64()))
    else:
        columns.append(pa.repeat(pa.scalar(0, pa.int64()), records.num_rows))
    names.append(_COMMIT)
    columns = [unsliced_vectors(column) for column in columns]
    frame = pl.from_arrow(pa.Table.from_arrays(columns, names=names))
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - from_arrow of a table is a frame
        frame = frame.to_frame()
    return frame


def _checked(spec: MergeSpec, frame: pl.DataFrame) -> pl.DataFrame:
    """Refuse bad row kinds, NULL sequence numbers or keys; drop what the table ignores."""
    # one parallel pass for every data check
    checks = frame.select(
        (~pl.col(ROW_KIND).is_in(ROW_KINDS) | pl.col(ROW_KIND).is_null()).any().alias("bad_kind"),
        (pl.col(SEQ).null_count() + pl.col(_COMMIT).null_count()).alias("null_seq"),
        pl.any_horizontal([pl.col(k).is_null() for k in spec.primary_keys]).any().alias("null_key"),
    ).row(0, named=True)
    if checks["bad_kind"]:
        bad = frame.filter(~pl.col(ROW_KIND).is_in(ROW_KINDS) | pl.col(ROW_KIND).is_null())
        raise PaimonDataError(f"_row_kind must be one of {ROW_KINDS}; got {bad[ROW_KIND].unique().to_list()[:5]}.")
    if checks["null_seq"]:
        raise PaimonDataError("_seq and _commit must not be NULL.")
    if checks["null_key"]:
        raise PaimonDataError(
            f"Primary key {list(spec.primary_keys)} contains NULL; Paimon primary keys are NOT NULL."
        )
    # Paimon's RowKindFilter drops these before they reach the write buffer (TableWriteImpl).
    if spec.ignore_delete:
        frame = frame.filter(pl.col(ROW_KIND).is_in(ADD_KINDS))
    elif spec.ignore_update_before:
        frame = frame.filter(pl.col(ROW_KIND) != UPDATE_BEFORE)
    return frame.with_columns(pl.col(ROW_KIND).is_in(ADD_KINDS).alias(ADD))


def to_arrow(frame: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """polars -> Arrow with exactly ``schema``'s types (string, list, map, decimal, ...)."""
    arrays = []
    for field in schema:
        series = frame[field.name]
        arrays.append(_cast(series.to_arrow(compat_level=pl.CompatLevel.oldest()), field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _cast(array: pa.Array, target: pa.DataType) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if len(array) == 0:
        # polars exports the empty child of an all-empty nested column with an offset past
        # its (empty) buffer; Arrow's IPC writer then slices past that buffer and shifts every
        # later column of the batch (Spark reads garbage): a new empty array instead
        return pa.array([], type=target)
    if array.type == target:
        return array
    if pa.types.is_map(target) and not pa.types.is_map(array.type):
        lists = array.cast(pa.list_(array.type.value_type)) if pa.types.is_large_list(array.type) else array
        offsets, entries = _zero_based(lists)
        keys = _cast(entries.field(0), target.key_type)
        items = _cast(entries.field(1), target.item_type)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=lists.is_null())
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        children = [_cast(array.field(i), target.field(i).type) for i in range(target.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())
    if (pa.types.is_list(target) or pa.types.is_large_list(target)) and (
        pa.types.is_list(array.type) or pa.types.is_large_list(array.type)
    ):
        lists = array.cast(pa.list_(array.type.value_type)) if pa.types.is_large_list(array.type) else array
        offsets, values = _zero_based(lists)
        return pa.ListArray.from_arrays(offsets, _cast(values, target.value_type), type=target,
                                        mask=lists.is_null())
    return array.cast(target)


def _zero_based(lists: pa.Array) -> Tuple[pa.Array, pa.Array]:
    """A list array's offsets, starting at 0, and the values they index.

    polars exports a sliced list column with its offsets buffer sliced (array offset 0, first
    offset above 0). An array built from such offsets is valid, but pyarrow's IPC writer (19.x)
    rebases offsets only for an array with an offset: it writes the values cut to the range in
    use beside the offsets as they are, and the reader (Spark, through the data source) reads
    past the values. A merge of a key's single record hands its lists on unchanged, as slices."""
    offsets = lists.offsets  # (never empty: _cast returns an empty array before this)
    start = offsets[0].as_py()
    if start == 0:
        return offsets, lists.values
    end = offsets[-1].as_py()
    return pc.subtract(offsets, pa.scalar(start, offsets.type)), lists.values.slice(start, end - start)
