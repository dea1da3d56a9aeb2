"""Change the bucket count of a fixed-bucket table (seeds 002/003, "Change the number of
buckets"): set ``bucket`` and rewrite the selected partitions (or the whole table) into the new
buckets as ONE overwrite commit. Bucketed append tables are rewritten as Paimon's INSERT
OVERWRITE ... SELECT does: rows rehashed by their bucket key, each new bucket's rows in the
order the old splits read them, numbered from 0 at level 0.

    driver: plan_splits (snapshot S) --one task per old split--> merged rows (what a reader
            sees), new bucket of each row --shuffle (partition, new bucket) as Arrow IPC-->
            one task per new bucket: sorted files at the top level --> ALTER bucket, then one
            OVERWRITE snapshot of the selected partitions | abort + option restored

A table whose files fit the in-process budget (write/path_choice.py) is rewritten in the dbt
process by the same two task functions, without Spark's stages.

The rewritten files hold merged rows (no retractions) at the top level, so the result is
already fully compacted and first-row readers (which skip level 0) see it. Partitions not
selected keep their old bucket count: Paimon allows that, but they must be rescaled before
anything writes to them again.
"""

from __future__ import annotations

import functools
import pickle
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.ops.compact import _partition_filter
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig

_IPC_ROWS = 65536
_POSITIONS = 1 << 40   # a split's pieces are numbered below the next split's


@dataclass(frozen=True)
class RescaleResult:
    snapshot_id: Optional[int]
    old_buckets: int
    new_buckets: int
    partitions: Optional[List[Dict[str, Any]]]   # rewritten partitions; None = whole table
    rows: int
    files_before: int
    files_after: int

    @property
    def message(self) -> str:
        scope = "the whole table" if self.partitions is None else \
            f"{len(self.partitions)} partition(s)"
        return (f"rescaled {scope} from {self.old_buckets} to {self.new_buckets} buckets: "
                f"{self.rows} rows, data files {self.files_before} -> {self.files_after}"
                + (f", snapshot {self.snapshot_id} (OVERWRITE)"
                   if self.snapshot_id is not None else " (no data: only the option changed)"))


def rescale_buckets(spark, location: TableRef, buckets: int,
                    partitions: Optional[Sequence[Dict[str, Any]]] = None) -> RescaleResult:
    from dbt.adapters.paimon.format.splits import current_snapshot_id, plan_splits

    table = location.open()
    old = _check(table, location, buckets)
    buckets = int(str(buckets).strip())
    base = current_snapshot_id(table)
    partition_filter = _partition_filter(table, partitions)
    splits = plan_splits(table, base, partition_filter) if base is not None else []
    keys = list(table.partition_keys)
    selected = None
    if partitions is not None:
        # the exact partitions to overwrite: those the filter matched
        selected = sorted({s.partition_values for s in splits}, key=repr)
        selected = [dict(zip(keys, p)) for p in selected]
    files_before = sum(len(s.files) for s in splits)
    if not splits:
        _set_bucket(location, buckets)
        return RescaleResult(None, old, buckets, selected, 0, 0, 0)

    messages = _rewrite(spark, location, splits, buckets)
    rows = sum(f.row_count for m in messages for f in m.new_files)
    _set_bucket(location, buckets)
    try:
        table = location.open()
        latest = current_snapshot_id(table)
        if latest != base:
            raise RuntimeError(
                f"Paimon table {location.name} was written (snapshot {latest}) while it was "
                f"being rescaled from snapshot {base}: nothing was changed; pause the writers "
                f"and run rescale_buckets again")
        for m in messages:
            m.total_buckets = buckets
        from dbt.adapters.paimon.format.commit import commit_overwrite

        snapshot_id = commit_overwrite(table, messages, selected)
    except BaseException:
        from dbt.adapters.paimon.format.commit import abort

        if current_snapshot_id(location.open()) == base:
            abort(location.open(), messages)
            _set_bucket(location, old)
        raise
    return RescaleResult(snapshot_id, old, buckets, selected, rows, files_before,
                         sum(len(m.new_files) for m in messages))


def _check(table, location: TableRef, buckets) -> int:
    try:
        new = int(str(buckets).strip())
    except (TypeError, ValueError):
        new = 0
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    old = int(options.get("bucket", "-1"))
    if old == -1 and not table.primary_keys:
        raise ValueError(
            f"rescale_buckets: Paimon table {location.name} is an append table without "
            f"buckets ('bucket' = '-1'): its files belong to no bucket and Paimon cannot change "
            f"'bucket' when it is -1. Rebuild the model with a fixed 'buckets' (and a "
            f"'bucket_key') and --full-refresh to bucket it.")
    if old == -1:
        raise ValueError(
            f"rescale_buckets: Paimon table {location.name} uses dynamic bucket mode "
            f"('bucket' = '-1'). Its keys are placed by a per-partition HASH index, not by "
            f"hash % bucket count, and new buckets are added automatically when existing ones "
            f"reach 'dynamic-bucket.target-row-num'; there is no bucket count to change. Tune "
            f"'dynamic-bucket.target-row-num' instead, or rebuild the model with a fixed "
            f"'buckets' and --full-refresh.")
    if old == -2:
        raise ValueError(f"rescale_buckets: Paimon table {location.name} uses postpone bucket "
                         f"mode ('bucket' = '-2'), which dbt-paimon does not support")
    if new <= 0 or isinstance(buckets, bool):
        raise ValueError(
            f"rescale_buckets of {location.name}: 'buckets' must be a positive integer, got "
            f"{buckets!r} (to switch to dynamic buckets, rebuild the model with buckets=-1 and "
            f"--full-refresh)")
    return old


def _set_bucket(location: TableRef, buckets: int) -> None:
    from pypaimon.schema.schema_change import SchemaChange

    from dbt.adapters.paimon.catalog import warehouse as wh

    catalog = wh.open_catalog(location.warehouse, location.catalog_options)
    catalog.alter_table(location.name, [SchemaChange.set_option("bucket", str(int(buckets)))])


def _rewrite(spark, location: TableRef, splits, buckets: int) -> List:
    """The splits' merged rows written into ``buckets`` new buckets: in this process when
    their files fit the in-process budget and Spark is local (write/path_choice.py), else in
    Spark tasks (route, shuffle by new (partition, bucket), write). The same two functions do
    the work either way."""
    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.write import task_errors
    from dbt.adapters.paimon.write.path_choice import IN_PROCESS, choose_path_for_size

    size = sum(f.file_size for s in splits for f in s.files)
    # each split with its ordinal: an append table's new buckets take the rows in read order
    payloads = [pickle.dumps((ordinal, s)) for ordinal, s in enumerate(splits)]
    if choose_path_for_size(spark, f"rescale of {location.name}", size).path == IN_PROCESS:
        batch = pa.RecordBatch.from_arrays([pa.array(payloads, pa.binary())], names=["split"])
        try:
            # one "task" for all rows: write_task groups them by new (partition, bucket)
            routed = list(route_task(location, buckets, [batch]))
        except task_errors.TaskFailure as failure:
            raise failure.original from None
        results = [pickle.loads(row) for out in write_task(location, buckets, routed)
                   for row in out.column(0).to_pylist()]
        messages = [m for r in results for m in r["messages"]]
        errors = [task_errors.decode(r["error"]) for r in results if r["error"] is not None]
    else:
        frame = spark.createDataFrame([(p,) for p in payloads], "split binary") \
            .repartition(len(payloads))
        routed = frame.mapInArrow(functools.partial(route_task, location, buckets),
                                  "target binary, bucket int, data binary, position bigint")
        parallelism = max(1, min(len(splits) * buckets, 4 * _parallelism(spark)))
        shuffled = routed.repartition(parallelism, "target", "bucket")
        _, messages, errors = task_errors.collect_results(
            shuffled.mapInArrow(functools.partial(write_task, location, buckets),
                                "payload binary"))
    if errors:
        if messages:
            abort(location.open(), messages)
        raise errors[0]
    return messages


def _parallelism(spark) -> int:
    from dbt.adapters.paimon.datasource.spark_env import default_parallelism

    return default_parallelism(spark)


def route_task(location: TableRef, buckets: int,
               batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One old split -> its rows (merged; an append table's in read order), cut by new
    bucket, as Arrow IPC payloads; ``position`` orders an append table's pieces."""
    from dbt.adapters.paimon.datasource.source import read_merged_split
    from dbt.adapters.paimon.format.bucket import bucket_key_columns, bucket_ids
    from dbt.adapters.paimon.format.kv_files import read_append_split
    from dbt.adapters.paimon.write import task_errors

    try:
        table = location.open()
        names = list(table.field_names)
        options = {str(k): str(v) for k, v in table.table_schema.options.items()}
        keys = bucket_key_columns(list(table.primary_keys), list(table.partition_keys),
                                  options, names)
        types = {f.name: str(f.type) for f in table.table_schema.fields}
        for batch in batches:
            for payload in batch.column(0).to_pylist():
                ordinal, split = pickle.loads(payload)
                if table.primary_keys:
                    # every level: a deletion-vector table's level-0 rows are data too
                    rows = read_merged_split(table, split, names, all_levels=True)
                else:
                    rows = read_append_split(table, split, names)
                if rows.num_rows == 0:
                    continue
                new = bucket_ids(rows.select(keys), buckets, [types[k] for k in keys])
                target = pickle.dumps(split.partition_values)
                for bucket in np.unique(new):
                    part = rows.filter(pa.array(new == bucket))
                    for start in range(0, part.num_rows, _IPC_ROWS):
                        data = _ipc(part.slice(start, _IPC_ROWS))
                        yield pa.RecordBatch.from_arrays(
                            [pa.array([target], pa.binary()),
                             pa.array([int(bucket)], pa.int32()),
                             pa.array([data], pa.binary()),
                             pa.array([ordinal * _POSITIONS + start], pa.int64())],
                            names=["target", "bucket", "data", "position"])
    except Exception as exc:  # noqa: BLE001 - nothing written yet: carried to the driver
        raise task_errors.TaskFailure(exc) from None


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def write_task(location: TableRef, buckets: int,
               batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One or more new (partition, bucket)s -> files; never raises. A primary-key table's
    rows sorted at the top level; an append table's in read order at level 0, numbered from 0
    as the writer of Paimon's INSERT OVERWRITE numbers a bucket it starts afresh."""
    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.format.kv_files import new_commit_message, write_kv_file
    from dbt.adapters.paimon.write import task_errors

    messages: list = []
    error = None
    table = None
    try:
        table = location.open()
        level = CompactionConfig.from_options(
            {str(k): str(v) for k, v in table.table_schema.options.items()}).max_level
        groups: Dict[tuple, List[tuple]] = {}
        for batch in batches:
            columns = [batch.column(i).to_pylist() for i in range(4)]
            for target, bucket, data, position in zip(*columns):
                groups.setdefault((target, bucket), []).append((position, data))
        trimmed = list(table.trimmed_primary_keys)
        for (target, bucket), pieces in groups.items():
            partition = pickle.loads(target)
            pieces = [_from_ipc(data) for _, data in sorted(pieces, key=lambda p: p[0])]
            if not table.primary_keys:
                message = new_commit_message(partition, bucket,
                                             new_files=_write_append_bucket(
                                                 table, partition, bucket, pieces))
                message.total_buckets = buckets
                messages.append(message)
                continue
            rows = pa.concat_tables(pieces).sort_by([(k, "ascending") for k in trimmed])
            rows = rows.append_column("_row_kind", pa.array(["+I"] * rows.num_rows))
            rows = rows.append_column("_seq", pa.array(np.arange(rows.num_rows,
                                                                 dtype=np.int64)))
            files = write_kv_file(table, partition, bucket, rows, level=level)
            message = new_commit_message(partition, bucket, new_files=files)
            message.total_buckets = buckets
            messages.append(message)
    except BaseException as exc:  # noqa: BLE001 - reported to the driver
        error = task_errors.encode(exc)
        if table is not None and messages:
            try:
                abort(table, messages)
            except Exception:  # noqa: BLE001 - the driver aborts again
                pass
    payload = pickle.dumps({"messages": [] if error else messages, "error": error})
    yield pa.RecordBatch.from_arrays([pa.array([payload], pa.binary())], names=["payload"])


def _write_append_bucket(table, partition, bucket: int, pieces: List[pa.Table]) -> List:
    """An append table's new bucket: the rows in order, sequence numbers 0, 1, ... across
    its files (Java's AppendOnlyWriter)."""
    import dataclasses

    from pypaimon.write.writer.append_only_data_writer import AppendOnlyDataWriter

    from dbt.adapters.paimon.format.file_stats import full_stats_options
    from dbt.adapters.paimon.format.kv_files import write_through

    writer = AppendOnlyDataWriter(table, tuple(partition), bucket, 0,
                                  options=full_stats_options(table))
    files = write_through(writer, (batch for piece in pieces for batch in piece.to_batches()))
    numbered, start = [], 0
    for meta in files:
        numbered.append(dataclasses.replace(meta, min_sequence_number=start,
                                            max_sequence_number=start + meta.row_count - 1))
        start += meta.row_count
    return numbered
