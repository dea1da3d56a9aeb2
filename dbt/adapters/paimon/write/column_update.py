"""Updates of some columns of a data-evolution table (``row-tracking.enabled`` +
``data-evolution.enabled``), keyed by ``_ROW_ID`` or by a unique key column: the data-evolution
counterpart of ``partial_update``.

A run's rows name existing rows (by ``_ROW_ID``, or by a key column whose value is unique in
the table) and carry new values for the columns the model owns. The other columns are not read
and not rewritten: for each touched row-id range one new file holding only the owned columns
(``write_cols``) with the range's ``first_row_id``, every row of the range present (untouched
rows carrying their current values), all committed as ONE snapshot whose row-id check
(``check_from_snapshot``) fails the commit if another writer updated one of the same columns of
the same ranges meanwhile (Paimon's check is per column).
This is Paimon 2.x's ``MERGE INTO ... WHEN MATCHED THEN UPDATE SET`` on such tables; a read
then takes each field from the newest file of its range (``format/data_evolution.py``).

The column files are written by pypaimon 2.1's own update writer
(``BatchTableUpdate.new_update_by_row_id`` -> ``TableUpdateByRowId.update_columns``): it is the
Paimon project's implementation of exactly this write (grouping by ``first_row_id``, merging
with the range's current values, the file metadata and the messages' row-id check), so a second
implementation would only add a way to disagree with Paimon. They are committed by
pypaimon's ``FileStoreCommit`` through ``format/commit.py`` as every commit of ours (the
snapshot published safely between processes, under the catalog's lock, recording the dbt
invocation). What is ours: the checks before anything is written, and matching the model's
rows to row ids (a vectorized Arrow join against the table's key and ``_ROW_ID``). The match
and the writer use one snapshot (pypaimon's row-id index of the scan the keys were read from),
so the commit's row-id check covers everything committed since the rows were matched. This
module is the in-process executor; column_update_job.py runs the same checks, writer and
commit with the rows in Spark tasks.

Rows whose key matches no row of the table are an error by default: the model owns some
columns of rows other writers create, and a row holding only those columns (its other columns
NULL) is not what most writers of such a table mean. Paimon's MERGE INTO with only a WHEN
MATCHED clause would drop them silently; refusing them says which keys did not match. With
``when_not_matched='insert'`` they become new rows instead, as MERGE INTO's ``WHEN NOT MATCHED
THEN INSERT (key, columns...) VALUES (...)`` makes them: the key, the owned columns and the
partition columns from the model, every other column NULL, appended as new files in the same
commit as the column files (the commit gives them their row ids, after the table's last).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)

from dbt.adapters.paimon.datasource.spark_arrow import null_variants_filled
from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError
from dbt.adapters.paimon.runtime.vectors import castable_lists

ROW_ID = "_ROW_ID"
SAMPLES = 5
# config `when_not_matched`: what a run does with rows whose key matches no row of the table
WHEN_NOT_MATCHED = ("error", "insert")


# the probe's row numbers in the key join (_left_join)
_PROBE_ROW = "__probe_row"


@dataclass(frozen=True)
class ColumnUpdateResult:
    rows: int            # rows of the table updated
    ranges: int          # column files written (one per touched row-id range)
    snapshot_id: Optional[int]
    inserted: int = 0    # new rows (when_not_matched='insert')


def owned_columns(key: str, query_columns: Sequence[str],
                  columns: Optional[Sequence[str]]) -> List[str]:
    """The columns a run writes: ``columns`` if given, else every query column but the key."""
    if columns is None:
        return [c for c in query_columns if c != key]
    return list(dict.fromkeys(columns))


def check_update(table, model: str, key: str, columns: Sequence[str],
                 query_columns: Sequence[str], insert: bool = False) -> None:
    """Every reason the update cannot be written, as one PaimonConfigError naming the model,
    the config and the fix; nothing is read or written. ``insert``: with
    ``when_not_matched='insert'``."""
    from dbt.adapters.paimon.format.deletion_vectors import has_64bit_vectors

    name = table.identifier.get_full_name()
    options = table.options
    problems = []
    if table.primary_keys:
        problems.append(f"{name} has a primary key: column updates by row id exist only on "
                        f"append tables; use materialized='partial_update' on it instead.")
    if not (options.row_tracking_enabled() and options.data_evolution_enabled()):
        problems.append(f"{name} is not a data-evolution table (it needs table options "
                        f"'row-tracking.enabled' = 'true' and 'data-evolution.enabled' = "
                        f"'true', set when the table is created)")
    if has_64bit_vectors(table):
        problems.append(f"{name} has 64-bit deletion vectors ('deletion-vectors.bitmap64'), "
                        f"which pypaimon 2.1's read of its keys and its update writer cannot "
                        f"decode; column updates are refused on it (its reads are not)")
    fields = list(table.field_names)
    if key != ROW_ID and key not in fields:
        problems.append(f"config `update_key` {key!r} is not a column of {name} (columns: "
                        f"{fields}); use '_ROW_ID' or one of its columns")
    if key not in query_columns:
        problems.append(f"config `update_key` {key!r} is not returned by the model's query "
                        f"(columns: {list(query_columns)})")
    if not columns:
        problems.append("the model writes no column besides its key: set config "
                        "`update_columns` or select the columns it owns")
    missing = [c for c in columns if c not in fields]
    if missing:
        problems.append(f"config `update_columns` names {missing}, which are not columns of "
                        f"{name} (columns: {fields}); add them to the table first "
                        f"(ALTER TABLE ... ADD COLUMN) or remove them")
    unreturned = [c for c in columns if c not in query_columns]
    if unreturned:
        problems.append(f"config `update_columns` names {unreturned}, which the model's query "
                        f"does not return (columns: {list(query_columns)})")
    if key in columns:
        problems.append(f"the key {key!r} cannot also be an updated column: it says which "
                        f"rows are updated")
    partition = [c for c in columns if c in table.partition_keys]
    if partition:
        problems.append(f"{partition} are partition columns of {name}: Paimon cannot update "
                        f"them by row id (a row's partition is where its files are)")
    if ROW_ID in columns:
        problems.append("_ROW_ID cannot be updated")
    special = columns_not_written(table, columns)
    if special:
        problems.append(f"{special} are BLOB columns of {name} kept as descriptors, views or "
                        f"video frames ('blob-descriptor-field', 'blob-view-field', "
                        f"'video-frame-field'), whose stored values are not the bytes a model "
                        f"gives; writing them from a model is not built, so leave them out of "
                        f"`update_columns`")
    if insert:
        problems += _insert_problems(table, name, key, query_columns)
    if problems:
        raise PaimonConfigError(f"Model '{model}' (materialized='data_evolution_update' on "
                                f"{name}): " + "; ".join(problems) + ". Nothing was written.")


def _insert_problems(table, name: str, key: str, query_columns: Sequence[str]) -> List[str]:
    """Why rows matching no row cannot become new rows of ``table``."""
    problems = []
    if key == ROW_ID:
        problems.append("config `when_not_matched='insert'` needs a key column as `update_key`: "
                        "a new row's _ROW_ID is given by the commit, so a model's _ROW_ID "
                        "that matches no row names no row to insert")
    unreturned = [c for c in table.partition_keys if c not in query_columns]
    if unreturned:
        problems.append(f"config `when_not_matched='insert'` needs the partition columns "
                        f"{unreturned} of {name} from the model's query: they place each new "
                        f"row (matched rows keep theirs)")
    special = columns_not_written(table, list(table.field_names))
    if special:
        problems.append(f"config `when_not_matched='insert'` on a table with BLOB columns kept "
                        f"as descriptors, views or video frames ({special}) is not built")
    return problems


def columns_not_written(table, columns: Sequence[str]) -> List[str]:
    """Which of ``columns`` a column update does not write: BLOB columns kept inline as
    descriptors or views (``blob-descriptor-field``, ``blob-view-field``) and video frames
    (``video-frame-field``), whose stored values are not the bytes a model gives. BLOB columns
    in ``.blob`` files and VECTOR columns in vector files are written by pypaimon's update
    writer, into files of their own anchored at the range's first row id, as Paimon's are."""
    from dbt.adapters.paimon.format.data_evolution import inline_blob_columns

    apart = inline_blob_columns(table) | set(table.options.video_frame_fields() or ())
    return [f.name for f in table.table_schema.fields if f.name in apart and f.name in columns]


def _table_keys(table, key: str):
    """The table's live rows' ``key`` and ``_ROW_ID`` at its latest snapshot, read by pypaimon's
    data-evolution read (each field from the newest file that wrote it, deletion vectors
    applied), and pypaimon's row-id index of the same snapshot: the update writer merges with
    exactly the files the rows were matched in, and the commit's row-id check starts there."""
    splits, files = snapshot_splits(table)
    return read_keys(table, key, splits), files


def snapshot_splits(table):
    """The splits of the table's latest snapshot as pypaimon's update writer plans them, and
    its row-id index of them (``RowIdFileIndex``): what a run matches its rows in and writes
    against."""
    from pypaimon.write.row_id_file_index import RowIdFileIndex

    plan = table.new_read_builder().new_scan().plan_for_write()
    splits = plan.splits()
    snapshot_id = plan.snapshot_id if plan.snapshot_id is not None else -1
    return splits, RowIdFileIndex.from_splits(snapshot_id, splits)


def read_keys(table, key: str, splits) -> pa.Table:
    """``key`` and ``_ROW_ID`` of the live rows of ``splits`` (of snapshot_splits)."""
    from pypaimon.read.table_read import TableRead
    from pypaimon.table.special_fields import SpecialFields

    names = [ROW_ID] if key == ROW_ID else [key, ROW_ID]
    if not splits:
        empty = [pa.array([], pa.int64())] if key == ROW_ID else \
            [pa.array([], _arrow_schema(table).field(key).type), pa.array([], pa.int64())]
        return pa.table(empty, names=names)
    read_type = ([] if key == ROW_ID else [table.field_dict[key]]) + [SpecialFields.ROW_ID]
    data = TableRead(table=table, predicate=None, read_type=read_type).to_arrow(splits)
    return data.select(names)


def _duplicates(data: pa.Table, key: str) -> list:
    counts = data.group_by([key]).aggregate([([], "count_all")])
    return counts.filter(pc.greater(counts["count_all"], 1))[key].to_pylist()


def matched_rows(table, model: str, rows: pa.Table, key: str, columns: Sequence[str],
                 insert: bool = False):
    """The run's rows as ``_ROW_ID`` plus ``columns``, the row-id index of the snapshot they
    were matched at, and (``insert``) the rows whose key matches no row, as given: each row
    matched to the one table row its key names. PaimonDataError (nothing written) when the
    run's keys repeat, a NULL key, a key the table holds more than once, or (unless
    ``insert``) a key matching no row."""
    name = table.identifier.get_full_name()
    where = update_where(model, columns, name, key)
    if pc.any(pc.is_null(rows[key])).as_py():
        raise null_key_error(where, key)
    repeated = _duplicates(rows.select([key]), key)
    if repeated:
        raise repeated_error(where, repeated)
    stored, files = _table_keys(table, key)
    if key != ROW_ID:
        # rows with a NULL key are never matched, however many there are
        ambiguous = _duplicates(stored.select([key]).filter(pc.is_valid(stored[key])), key)
        if ambiguous:
            raise ambiguous_error(where, name, ambiguous)
    probe = rows.select([key] + list(columns))
    unmatched_rows = rows.slice(0, 0)
    if key == ROW_ID:
        probe = probe.set_column(0, ROW_ID, _cast(probe[ROW_ID], pa.int64(), model, ROW_ID))
        found = pc.is_in(probe[ROW_ID], value_set=stored[ROW_ID])
        unmatched = probe.filter(pc.invert(found))[ROW_ID].to_pylist()
        joined = probe
    else:
        probe = probe.set_column(0, key, _cast(probe[key], stored.schema.field(key).type,
                                               model, key))
        joined = _left_join(probe, key, stored)
        unmatched = joined.filter(pc.is_null(joined[ROW_ID]))[key].to_pylist()
        if insert:
            keys = _cast(rows[key], stored.schema.field(key).type, model, key)
            unmatched_rows = rows.filter(pc.invert(pc.is_in(keys, value_set=stored[key])))
            joined = joined.filter(pc.is_valid(joined[ROW_ID]))
            unmatched = []
    if unmatched:
        raise unmatched_error(where, name, len(unmatched), unmatched)
    return joined.select([ROW_ID] + list(columns)).sort_by(ROW_ID), files, unmatched_rows


# the errors of a run's rows, one text for both executors (column_update_job.py)

def update_where(model: str, columns: Sequence[str], name: str, key: str) -> str:
    return f"Model '{model}' (update of {list(columns)} in {name} by {key!r})"


def null_key_error(where: str, key: str) -> PaimonDataError:
    return PaimonDataError(f"{where}: the model's rows hold NULL in the key {key!r}; a NULL "
                           f"names no row. Filter them in the model's query. Nothing was "
                           f"written.")


def repeated_error(where: str, keys: Sequence) -> PaimonDataError:
    return PaimonDataError(f"{where}: the model returns several rows for key(s) "
                           f"{list(keys)[:SAMPLES]}; each row of the table takes one value. "
                           f"Deduplicate in the model's query. Nothing was written.")


def ambiguous_error(where: str, name: str, keys: Sequence) -> PaimonDataError:
    return PaimonDataError(
        f"{where}: {name} holds several rows with key(s) {list(keys)[:SAMPLES]}, so the key "
        f"names no single row; set config `update_key='_ROW_ID'` (select the table's _ROW_ID "
        f"in the model) or a column unique in the table. Nothing was written.")


def unmatched_error(where: str, name: str, count: int, keys: Sequence) -> PaimonDataError:
    return PaimonDataError(
        f"{where}: {count} of the model's rows match no row of {name} (keys "
        f"{list(keys)[:SAMPLES]}); a column update only changes existing rows, whose other "
        f"columns other writers own. Filter them in the model's query (e.g. an inner join "
        f"with the table), or set config `when_not_matched='insert'` to add them as new "
        f"rows. Nothing was written.")


def _left_join(probe: pa.Table, key: str, stored: pa.Table) -> pa.Table:
    """``probe`` with the ``_ROW_ID`` of ``stored``'s row of the same ``key`` (NULL where none):
    the join made on the key and the probe's row numbers only, then the rows taken, since
    Arrow's hash join carries no list, map or struct column (a VECTOR or ARRAY column the
    model writes)."""
    numbered = pa.table({key: probe[key], _PROBE_ROW: pa.array(range(probe.num_rows),
                                                               pa.int64())})
    matches = numbered.join(stored.select([key, ROW_ID]), keys=key, join_type="left outer")
    return probe.take(matches[_PROBE_ROW]).append_column(ROW_ID, matches[ROW_ID])


def new_rows(table, model: str, rows: pa.Table) -> pa.Table:
    """``rows`` (the key, owned and partition columns of rows matching no row) as whole rows of
    ``table``: every other column NULL, as MERGE INTO's ``INSERT (columns) VALUES`` leaves
    the columns it does not name. PaimonDataError when a NOT NULL column would be NULL."""
    target = _arrow_schema(table)
    missing = [f.name for f in target if not f.nullable and (
        f.name not in rows.column_names or rows[f.name].null_count)]
    if missing:
        raise not_null_error(table, model, rows.num_rows, missing)
    columns = [_cast(rows[f.name], f.type, model, f.name) if f.name in rows.column_names
               else pa.nulls(rows.num_rows, f.type) for f in target]
    return pa.Table.from_arrays(columns, schema=target)


def unwritten_not_null(table, columns: Sequence[str]) -> List[str]:
    """The NOT NULL columns of ``table`` a new row holding only ``columns`` leaves NULL."""
    return [f.name for f in _arrow_schema(table) if not f.nullable and f.name not in columns]


def not_null_error(table, model: str, count: int, missing: Sequence[str]) -> PaimonDataError:
    return PaimonDataError(
        f"Model '{model}' (when_not_matched='insert' into {table.identifier.get_full_name()}): "
        f"{count} rows match no row, and a new row would hold NULL in the NOT NULL column(s) "
        f"{list(missing)}, which the model does not write (it writes its key, "
        f"`update_columns` and the partition columns). Own them in `update_columns` with "
        f"non-NULL values, or filter the new keys out. Nothing was written.")


def update_columns(table, model: str, rows: pa.Table, key: str, columns: Sequence[str],
                   when_not_matched: str = "error",
                   appended: Optional[pa.Table] = None) -> ColumnUpdateResult:
    """Write ``columns`` of ``rows`` into the rows of ``table`` their ``key`` names: one column
    file per touched row-id range (pypaimon's update writer), ONE commit. With
    ``when_not_matched='insert'`` the rows matching none are appended as new rows in the same
    commit (``rows`` then also carries the table's partition columns). ``appended``: more new
    rows for that commit (a MERGE's inserts), their columns the table's or fewer."""
    from dbt.adapters.paimon.datasource.source import write_append_files
    from dbt.adapters.paimon.format.commit import abort

    insert = when_not_matched == "insert"
    if columns or appended is None:
        check_update(table, model, key, columns, rows.column_names, insert)
        data, files, unmatched = matched_rows(table, model, rows, key, columns, insert)
    else:   # only new rows
        data, files, unmatched = rows.slice(0, 0), None, rows.slice(0, 0)
    pieces = [new_rows(table, model, r) for r in (unmatched, appended)
              if r is not None and r.num_rows]
    added = pa.concat_tables(pieces) if pieces else None
    if not data.num_rows and added is None:
        return ColumnUpdateResult(0, 0, None)
    messages = []
    try:
        if data.num_rows:
            messages += write_matched(table, files, model, data, columns)
        updates = len(messages)
        if added is not None:
            # plain append files (no first_row_id): the commit numbers their rows after the
            # table's last row id, as Paimon's MERGE INTO inserts on these tables
            messages += write_append_files(table, [added])
    except BaseException:
        if messages:
            abort(table, messages)
        raise
    snapshot = commit_update(table, messages)
    return ColumnUpdateResult(data.num_rows, sum(len(m.new_files) for m in messages[:updates]),
                              snapshot, 0 if added is None else added.num_rows)


def write_matched(table, files, model: str, data: pa.Table, columns: Sequence[str]) -> list:
    """The column files of ``data`` (``_ROW_ID`` plus ``columns``, each row id once): one per
    row-id range it touches, by pypaimon's update writer against ``files`` (the row-id index of
    the snapshot the rows were matched at); their commit messages, not committed."""
    stored = {f.name: f.type for f in _arrow_schema(table)}
    data = pa.table([_cast(data[ROW_ID], pa.int64(), model, ROW_ID)]
                    + [_cast(data[c], stored[c], model, c) for c in columns],
                    names=[ROW_ID] + list(columns))
    updater = table.new_batch_write_builder().new_update().new_update_by_row_id(files)
    return list(updater.update_columns(data, list(columns)))


def commit_update(table, messages: Sequence) -> Optional[int]:
    """ONE APPEND commit of a run's column files and new rows (None: nothing to commit). On
    failure its files are deleted unless the commit landed."""
    from dbt.adapters.paimon.format.commit import abort_unless_committed, commit_append

    try:
        # committed by pypaimon's FileStoreCommit as every commit of ours is (format/commit.py):
        # the column files' check_from_snapshot makes it fail if another writer updated the
        # same row-id ranges since the update read them; the snapshot records the invocation
        return commit_append(table, messages, check_sequences=False)
    except BaseException:
        abort_unless_committed(table, messages)
        raise


def _arrow_schema(table) -> pa.Schema:
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


def _cast(column, to: pa.DataType, model: str, name: str):
    # Spark tasks' batches hold NULL variants as Arrow's Parquet writer refuses them
    column = null_variants_filled(column, to)
    if column.type == to:
        return column
    if pa.types.is_fixed_size_list(to):  # a VECTOR column, from Spark's lists
        column = castable_lists(column)
    try:
        return pc.cast(column, to, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise PaimonDataError(f"Model '{model}': column {name!r} of type {column.type} does not "
                              f"fit the table's {to} without loss ({exc}); cast it in the "
                              f"model's query. Nothing was written.") from exc
