"""The distributed write of a ``data_evolution_update`` run: the model's rows matched to row ids
and written as column files in Spark tasks, ONE commit on the driver (write/column_update.py
is the write itself, and the in-process executor).

    table splits (one snapshot) --keys_task--> key, _ROW_ID, first_row_id of its range
    model rows + those keys --union, group by key--> counts: NULL keys, repeated keys,
        keys the table holds twice, unmatched rows (errors before anything is written)
    model rows LEFT JOIN keys --shuffle by first_row_id--> update_task --collect-->
        commit messages --> commit_update (one APPEND snapshot) | abort (every file deleted)

The keys are read from the splits of the snapshot whose row-id index (pypaimon's
``RowIdFileIndex``) every writing task gets, so the match and the writer use one snapshot and
the commit's row-id check (``check_from_snapshot``) covers everything committed since. Each
row-id range gets one new file, so all rows of a range go to one task: the shuffle is by the
range's ``first_row_id``. Rows matching no row (``when_not_matched='insert'``) are spread over
tasks by their key's hash and written there as new files, which the commit numbers after the
table's last row id. A row operation (ops/data_evolution_row_ops.py) passes the snapshot it read
its rows at, and a MERGE's inserts as whole new rows: a second writing stage
(``append_task``) appends them so that the commit gives them the row ids the in-process write
does. A task never raises once it may have written a file: its error comes back in its result
row (write/task_errors.py), the driver deletes every task's files and raises it. The driver
holds only counts, sample keys and commit messages.
"""
from __future__ import annotations

import functools
import pickle
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.paimon.write import task_errors
from dbt.adapters.paimon.write.column_update import (
    ROW_ID, SAMPLES, ColumnUpdateResult, ambiguous_error, commit_update, new_rows,
    not_null_error, null_key_error, read_keys, repeated_error, snapshot_splits,
    unmatched_error, unwritten_not_null, update_where, write_matched)

# internal columns of the job (names no Paimon table of ours uses)
FIRST_ROW_ID = "__paimon_first_row_id"
_KEY = "__paimon_key"
_IN_MODEL = "__paimon_in_model"
_IN_TABLE = "__paimon_in_table"
# the order new rows of ``appended`` get their row ids in (a MERGE's source order)
APPEND_ORDER = "__paimon_append_order"
_FIRST_IN_PARTITION = "__paimon_first_in_partition"


@dataclass(frozen=True)
class UpdateJob:
    """What every writing task gets (pickled): the table, the run's columns and the row-id
    index of the snapshot the rows were matched at."""
    location: object            # datasource.source.TableRef
    model: str
    key: str
    columns: Tuple[str, ...]    # the owned columns
    placed: Tuple[str, ...]     # partition columns new rows take from the model
    insert: bool
    files: object               # pypaimon RowIdFileIndex


@dataclass(frozen=True)
class Checked:
    """The counts of the check stage (per key over the model's rows and the table's)."""
    null_rows: int      # model rows with a NULL key
    repeated: int       # keys the model returns more than once
    ambiguous: int      # keys the table holds more than once
    unmatched: int      # model rows whose key matches no row
    rows: int = 0       # model rows


# --------------------------------------------------------------------------- pure pieces

def range_starts(row_ids, starts: Sequence[int]) -> pa.Array:
    """The ``first_row_id`` of the range holding each of ``row_ids`` (int64, no NULL), from
    ``starts``, the snapshot's sorted first row ids (``RowIdFileIndex.first_row_ids``): the
    last start at or before the row id, as pypaimon's update writer groups them."""
    ids = np.asarray(row_ids, dtype=np.int64)
    ordered = np.asarray(starts, dtype=np.int64)
    position = np.searchsorted(ordered, ids, side="right") - 1
    if len(ids) and position.min() < 0:
        raise ValueError(f"row ids {ids[position < 0][:SAMPLES].tolist()} lie before the "
                         f"table's first row-id range")
    return pa.array(ordered[position], pa.int64())


def task_rows(batches: Iterable[pa.RecordBatch]) -> Optional[pa.Table]:
    """A task's batches as one table (None when it got none)."""
    batches = list(batches)
    return pa.Table.from_batches(batches) if batches else None


def split_matched(data: pa.Table, job: UpdateJob) -> Tuple[pa.Table, pa.Table]:
    """A writing task's rows as (``_ROW_ID`` plus the owned columns of the rows that matched,
    the key, owned and partition columns of those that did not)."""
    # the range start, not _ROW_ID: keyed by _ROW_ID, the model's own _ROW_ID is there
    found = pc.is_valid(data[FIRST_ROW_ID])
    matched = data.filter(found).select([ROW_ID] + list(job.columns))
    unmatched = data.filter(pc.invert(found)).select(
        list(dict.fromkeys([job.key] + list(job.columns) + list(job.placed))))
    return matched, unmatched


def payload(messages: list, rows: int, files: int, inserted: int,
            error: Optional[bytes]) -> pa.RecordBatch:
    """A writing task's one result row (collected by task_errors.collect_results): no message
    when it failed (it deleted its files)."""
    body = pickle.dumps({"messages": [] if error else messages, "rows": rows, "files": files,
                         "inserted": inserted, "error": error})
    return pa.RecordBatch.from_arrays([pa.array([body], pa.binary())], names=["payload"])


def summed(payloads: Sequence[dict]) -> Tuple[int, int, int]:
    """(rows updated, column files, rows inserted) over the tasks' payloads."""
    return (sum(p["rows"] for p in payloads), sum(p["files"] for p in payloads),
            sum(p["inserted"] for p in payloads))


def first_error(errors: Sequence[BaseException]) -> BaseException:
    """The error a failed run raises: a data error (a row the model should not return) before
    any other task failure."""
    from dbt.adapters.paimon.runtime import PaimonDataError

    data_errors = [e for e in errors if isinstance(e, PaimonDataError)]
    return (data_errors or list(errors))[0]


# --------------------------------------------------------------------------- tasks

def keys_task(location, key: str, starts: Sequence[int],
              batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Each input row a pickled split: its live rows' key, ``_ROW_ID`` and range start. Writes
    nothing, so it may raise (``TaskFailure`` carries the error to the driver)."""
    try:
        table = location.open()
        for batch in batches:
            for split in batch.column(0).to_pylist():
                keys = read_keys(table, key, [pickle.loads(split)])
                out = keys.append_column(FIRST_ROW_ID, range_starts(keys[ROW_ID], starts))
                yield from out.to_batches()
    except task_errors.TaskFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - carried to the driver intact
        raise task_errors.TaskFailure(exc) from None


def update_task(job: UpdateJob, batches: Iterable[pa.RecordBatch]
                ) -> Iterator[pa.RecordBatch]:
    """The column files of the row-id ranges this task owns and the new rows it got; one
    result row (``payload``). Never raises: see the module docstring."""
    from dbt.adapters.paimon.datasource.source import write_append_files
    from dbt.adapters.paimon.format.commit import abort

    messages: list = []
    rows = files = inserted = 0
    error = None
    table = None
    try:
        data = task_rows(batches)
        if data is not None and data.num_rows:
            table = job.location.open()
            matched, unmatched = split_matched(data, job)
            del data
            where = update_where(job.model, job.columns, table.identifier.get_full_name(),
                                 job.key)
            # the check stage saw every row; a query that returns other rows when computed
            # again (non-deterministic) is caught here, before its rows are written
            if unmatched.num_rows and not job.insert:
                raise unmatched_error(where, table.identifier.get_full_name(),
                                      unmatched.num_rows, unmatched[job.key].to_pylist())
            repeated = _repeated(matched, ROW_ID) or _repeated(unmatched, job.key)
            if repeated:
                raise repeated_error(where, repeated)
            if matched.num_rows:
                messages += write_matched(table, job.files, job.model, matched, job.columns)
                rows, files = matched.num_rows, sum(len(m.new_files) for m in messages)
            if unmatched.num_rows:
                messages += write_append_files(table, [new_rows(table, job.model, unmatched)])
                inserted = unmatched.num_rows
    except BaseException as exc:  # noqa: BLE001 - reported to the driver, never raised here
        error = task_errors.encode(exc)
        if table is not None and messages:
            try:
                abort(table, messages)
            except Exception:  # noqa: BLE001 - the driver aborts what it is told of
                pass
    yield payload(messages, rows, files, inserted, error)


def append_task(job: UpdateJob, batches: Iterable[pa.RecordBatch]
                ) -> Iterator[pa.RecordBatch]:
    """Whole new rows (the table's columns, a MERGE's inserts) appended as new files; one result
    row (``payload``). Never raises, as update_task."""
    from dbt.adapters.paimon.datasource.source import write_append_files

    messages: list = []
    inserted = 0
    error = None
    try:
        data = task_rows(batches)
        if data is not None and data.num_rows:
            table = job.location.open()
            # write_append_files deletes its own files when it fails
            messages = write_append_files(table, [new_rows(table, job.model, data)])
            inserted = data.num_rows
    except BaseException as exc:  # noqa: BLE001 - reported to the driver, never raised here
        error = task_errors.encode(exc)
    yield payload(messages, 0, 0, inserted, error)


def _repeated(data: pa.Table, column: str) -> list:
    if not data.num_rows:
        return []
    counts = data.select([column]).group_by([column]).aggregate([([], "count_all")])
    return counts.filter(pc.greater(counts["count_all"], 1))[column].to_pylist()


# --------------------------------------------------------------------------- driver

def update_in_spark(spark, table, location, model: str, rows, key: str,
                    columns: Sequence[str], placed: Sequence[str], insert: bool,
                    planned=None, appended=None) -> ColumnUpdateResult:
    """Write ``columns`` of ``rows`` (a DataFrame of the key, ``columns`` and ``placed``) into
    the rows of ``table`` (at ``location``) their ``key`` names, in Spark tasks, as ONE commit;
    the same checks and errors as column_update.update_columns, nothing written on failure.
    ``rows`` None: no existing row is updated. ``planned``: snapshot_splits' (splits, row-id
    index) when the caller computed ``rows`` from that snapshot, else the latest is planned
    here. ``appended``: whole new rows (the table's columns and ``APPEND_ORDER``) for the same
    commit, written by append_task."""
    splits, files = planned if planned is not None else snapshot_splits(table)
    job = UpdateJob(location, model, key, tuple(columns), tuple(placed), insert, files)
    payloads: list = []
    messages: list = []
    errors: list = []
    try:
        if rows is not None:
            payloads, messages, errors = _update_stage(spark, table, location, job, rows,
                                                       splits)
            # in range order, as the in-process writer gives them: the commit numbers new rows
            # partition by partition, in the order partitions first appear in its messages
            messages = sorted(messages, key=_range_start)
        if appended is not None and not errors:
            found = task_errors.collect_results(
                _in_append_order(appended, table.partition_keys).mapInArrow(
                    functools.partial(append_task, job), "payload binary"))
            payloads, messages, errors = (payloads + found[0], messages + found[1],
                                          errors + found[2])
    except BaseException:
        # a stage Spark failed: the tasks that completed before it wrote their files
        _abort(table, messages)
        raise
    if errors:
        _abort(table, messages)
        raise first_error(errors)
    updated, column_files, inserted = summed(payloads)
    if not messages:
        return ColumnUpdateResult(0, 0, None)
    snapshot = commit_update(table, messages)
    return ColumnUpdateResult(updated, column_files, snapshot, inserted)


def _range_start(message) -> int:
    """A message's row-id range; new rows' files (no first_row_id yet) after every range, as the
    in-process write commits them."""
    starts = [f.first_row_id for f in message.new_files if f.first_row_id is not None]
    return min(starts) if starts else sys.maxsize


def _abort(table, messages: list) -> None:
    if messages:
        from dbt.adapters.paimon.format.commit import abort

        abort(table, messages)


def _update_stage(spark, table, location, job: UpdateJob, rows, splits):
    """The key stage, the checks and the writing stage of ``rows``: task_errors.collect_results'
    (payloads, messages, errors); nothing run after the checks when ``rows`` is empty."""
    from pyspark import StorageLevel

    from dbt.adapters.paimon.datasource.spark_env import default_parallelism

    key, files = job.key, job.files
    key_type = _key_type(table, key)
    stored = _stored_keys(spark, location, key, key_type, splits, files.first_row_ids)
    # read by the check and by the join: the key column is read from the files once
    stored = stored.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        model_rows = rows.withColumn(key, _col(key).cast(key_type))
        checked = check_rows(job, table, model_rows, stored)
        if not checked.rows:
            return [], [], []
        if job.insert and checked.unmatched:
            missing = unwritten_not_null(table, [key] + list(job.columns) + list(job.placed))
            if missing:
                raise not_null_error(table, job.model, checked.unmatched, missing)
        parallelism = default_parallelism(spark)
        tasks = max(1, min(len(files.first_row_ids) + (parallelism if job.insert else 0),
                           2 * parallelism))
        routed = _routed(model_rows, stored, key, tasks)
        return task_errors.collect_results(
            routed.mapInArrow(functools.partial(update_task, job), "payload binary"))
    finally:
        stored.unpersist()


def _in_append_order(appended, partition_keys: Sequence[str]):
    """``appended`` sorted (range-partitioned, so the tasks' results come back in that order) as
    the in-process write numbers new rows: its writer keeps one file per partition, in the
    order each partition first appears, its rows in ``APPEND_ORDER``, and the commit numbers
    the files partition by partition in message order. ``APPEND_ORDER`` dropped."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = F.col(APPEND_ORDER)
    if partition_keys:
        first = F.min(order).over(Window.partitionBy(*[_col(c) for c in partition_keys]))
        appended = appended.withColumn(_FIRST_IN_PARTITION, first)
        return appended.orderBy(_FIRST_IN_PARTITION, APPEND_ORDER).drop(
            _FIRST_IN_PARTITION, APPEND_ORDER)
    return appended.orderBy(APPEND_ORDER).drop(APPEND_ORDER)


def check_rows(job: UpdateJob, table, model_rows, stored) -> Checked:
    """The in-process path's checks of the rows, as one Spark aggregation per key over the
    model's keys and the table's; PaimonDataError (sample keys from a second, small job) for
    the first that fails: a NULL key, a repeated key, a key the table holds twice, a key
    matching no row (unless ``insert``)."""
    from pyspark.sql import functions as F

    name = table.identifier.get_full_name()
    where = update_where(job.model, job.columns, name, job.key)
    per_key = model_rows.select(_col(job.key).alias(_KEY), F.lit(1).alias(_IN_MODEL),
                                F.lit(0).alias(_IN_TABLE)).unionByName(
        stored.select(_col(job.key).alias(_KEY), F.lit(0).alias(_IN_MODEL),
                      F.lit(1).alias(_IN_TABLE))).groupBy(_KEY).agg(
        F.sum(_IN_MODEL).alias(_IN_MODEL), F.sum(_IN_TABLE).alias(_IN_TABLE))
    key, in_model, in_table = F.col(_KEY), F.col(_IN_MODEL), F.col(_IN_TABLE)
    conditions = {
        "null_rows": key.isNull() & (in_model > 0),
        "repeated": key.isNotNull() & (in_model > 1),
        # a _ROW_ID is unique; NULL keys of the table are never matched
        "ambiguous": key.isNotNull() & (in_table > 1) & F.lit(job.key != ROW_ID),
        "unmatched": key.isNotNull() & (in_model > 0) & (in_table == 0),
    }
    counted = per_key.agg(
        F.coalesce(F.sum(F.when(conditions["null_rows"], in_model)), F.lit(0)),
        F.count(F.when(conditions["repeated"], 1)),
        F.count(F.when(conditions["ambiguous"], 1)),
        F.coalesce(F.sum(F.when(conditions["unmatched"], in_model)), F.lit(0)),
        F.coalesce(F.sum(in_model), F.lit(0))).first()
    checked = Checked(*(int(v) for v in counted))

    def samples(what: str) -> list:
        found = per_key.where(conditions[what]).select(_KEY).orderBy(_KEY).limit(SAMPLES)
        return [r[0] for r in found.collect()]

    if checked.null_rows:
        raise null_key_error(where, job.key)
    if checked.repeated:
        raise repeated_error(where, samples("repeated"))
    if checked.ambiguous:
        raise ambiguous_error(where, name, samples("ambiguous"))
    if checked.unmatched and not job.insert:
        raise unmatched_error(where, name, checked.unmatched, samples("unmatched"))
    return checked


def _stored_keys(spark, location, key: str, key_type, splits, starts):
    """The table's live keys, row ids and range starts at the splits' snapshot, read in tasks
    (one split a row)."""
    from pyspark.sql.types import LongType, StructField, StructType

    from dbt.adapters.paimon.datasource.spark_env import default_parallelism

    fields = [StructField(ROW_ID, LongType()), StructField(FIRST_ROW_ID, LongType())]
    if key != ROW_ID:
        fields.insert(0, StructField(key, key_type))
    schema = StructType(fields)
    if not splits:
        return spark.createDataFrame([], schema)
    payloads = [(pickle.dumps(s),) for s in splits]
    return spark.createDataFrame(payloads, "split binary").repartition(
        min(len(payloads), default_parallelism(spark) * 2)).mapInArrow(
        functools.partial(keys_task, location, key, list(starts)), schema)


def _routed(model_rows, stored, key: str, tasks: int):
    """The model's rows with the row id and range start their key matches (NULL for none),
    in ``tasks`` partitions: a range's rows in one, rows matching none spread by key."""
    from pyspark.sql import functions as F

    joined = model_rows.join(stored, on=[key], how="left")
    route = F.coalesce(F.col(FIRST_ROW_ID),
                       F.lit(-1) - F.pmod(F.xxhash64(_col(key)), F.lit(max(1, tasks))))
    return joined.repartition(tasks, route)


def _key_type(table, key: str):
    """The Spark type of the table's ``key`` (bigint for _ROW_ID)."""
    from pyspark.sql.types import LongType

    from dbt.adapters.paimon.datasource.spark_types import spark_schema
    from dbt.adapters.paimon.write.column_update import _arrow_schema

    if key == ROW_ID:
        return LongType()
    return spark_schema(pa.schema([_arrow_schema(table).field(key)]))[key].dataType


def _col(name: str):
    from pyspark.sql import functions as F

    from dbt.adapters.paimon.datasource.spark_types import quote_identifier

    return F.col(quote_identifier(name))
