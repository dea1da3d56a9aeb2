"""What the Spark tasks run (``mapInArrow`` functions; every argument but the batches is the
pickled ``WritePlan``).

1. Before any shuffle, where ``_seq`` was numbered. Fixed buckets: ``bucket_udf``, an Arrow UDF
   over the bucket-key columns only (the other columns stay in the JVM until the writing task,
   which validates them). Dynamic buckets: ``route_task`` validates and casts the rows and adds
   the key hash and assigner.
2. ``assign_task`` (dynamic mode, one task per (partition, assigner)): the bucket of every key.
3. ``write_task`` (one task per (partition, bucket)): pre-merge each bucket's rows with the merge
   runtime and write sorted level-0 files (and the bucket's HASH index); returns one row with the
   pickled commit messages. It never raises: an error comes back in the row, after the task
   deleted its own files, so the driver still sees every other task's files and can delete them.

Stages 1 and 2 write nothing, so they may raise (``TaskFailure`` keeps the exception for the
driver). A bad row found in stage 3 fails its task before that task writes a file.
"""
from __future__ import annotations

import functools
import pickle
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.paimon.format.bucket import bucket_ids, hash_codes
from dbt.adapters.paimon.format.pause_points import pause_at
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import dynamic_index, task_errors
from dbt.adapters.paimon.write.plan import (ASSIGNER, BUCKET, DYNAMIC, FIXED, KEY_HASH,
                                            KNOWN_BUCKET, NEW_KEY, OLD_BUCKET, OLD_PREFIX,
                                            ROW_KIND, SEQ, WritePlan)
from dbt.adapters.paimon.write.validation import (Problems, cast_column, conform_and_check,
                                                  sample_rows, SAMPLE_SIZE)

_OUT_BATCH = 65536


def _spark_schema(plan: WritePlan, schema: pa.Schema) -> pa.Schema:
    """The Arrow schema Spark expects back for ``schema``: Spark-side names, Spark's types
    (e.g. microsecond timestamps)."""
    from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, spark_schema

    return arrow_schema_for_spark(spark_schema(plan.to_spark_names(schema)))


def _from_spark(plan: WritePlan, batch) -> pa.Table:
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    return plan.from_spark_names(table)


def _emit(plan: WritePlan, table: pa.Table, spark_schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    table = plan.to_spark_names(table)
    arrays = [table.column(f.name).cast(f.type) for f in spark_schema]
    out = pa.Table.from_arrays(arrays, schema=spark_schema)
    yield from out.to_batches(max_chunksize=_OUT_BATCH)


def _carry_errors(task):
    """Stages before the writing one: any exception reaches the driver intact."""
    @functools.wraps(task)
    def run(plan: WritePlan, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        try:
            yield from task(plan, batches)
        except task_errors.TaskFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - carried to the driver intact
            raise task_errors.TaskFailure(exc) from None
    return run


# --------------------------------------------------------------------------- 1. route

def _not_null(plan: WritePlan) -> Tuple[str, ...]:
    return tuple(f.name for f in plan.arrow_schema if not f.nullable or
                 f.name in plan.primary_keys)


def _validated(plan: WritePlan, batches) -> Iterator[pa.Table]:
    """The rows cast exactly to the table's types; bad rows raise once the task has seen all
    of its rows (the error counts every kind of problem)."""
    problems = Problems(plan)
    not_null = _not_null(plan)
    for batch in batches:
        if batch.num_rows == 0:
            continue
        rows = conform_and_check(plan, _from_spark(plan, batch), problems, not_null)
        if not problems:
            yield rows
    if problems:
        raise task_errors.TaskFailure(problems.error())


@_carry_errors
def validate_task(plan: WritePlan, batches) -> Iterator[pa.RecordBatch]:
    """Validation only (cross-partition mode routes after locating the keys)."""
    out_schema = _spark_schema(plan, plan.validated_schema())
    for rows in _validated(plan, batches):
        yield from _emit(plan, rows, out_schema)


def bucket_udf(plan: WritePlan):
    """Fixed buckets: an Arrow UDF giving each row's bucket from its bucket-key columns (cast
    to the table's types exactly as the writing task's validation casts them, so a row lands in
    the bucket of the key it is stored with). A batch holding a NULL key or a key that does not
    cast goes to bucket 0 whole: the writing task's validation then fails the run with the
    offending rows, before it writes any file."""
    from pyspark.sql.functions import arrow_udf
    from pyspark.sql.types import IntegerType

    def bucket(*keys: pa.Array) -> pa.Array:  # arrow_udf reads the type hints
        return fixed_buckets(plan, *keys)

    return arrow_udf(bucket, IntegerType())


def fixed_buckets(plan: WritePlan, *keys: pa.Array) -> pa.Array:
    """The fixed bucket of each row from its bucket-key columns (in ``plan.bucket_keys`` order);
    all 0 when a key is NULL or does not cast (validation reports those rows)."""
    columns = plan.bucket_input_columns
    types = [plan.arrow_schema.field(k).type for k in columns]
    try:
        arrays = [cast_column(a, t) for a, t in zip(keys, types)]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        arrays = None
    width = len(plan.bucket_keys)
    if arrays is None or any(a.null_count for a in arrays[:width]):
        return pa.array(np.zeros(len(keys[0]), np.int32))
    rows = pa.Table.from_arrays(arrays[:width], names=list(plan.bucket_keys))
    if not plan.postpone:
        return pa.array(bucket_ids(rows, plan.num_buckets), pa.int32())
    counts = postpone_bucket_counts(plan, pa.Table.from_arrays(
        arrays[width:], names=list(plan.partition_keys)), len(keys[0]))
    hashes = hash_codes(rows).astype(np.int64)
    return pa.array(np.abs(np.fmod(hashes, counts)).astype(np.int32), pa.int32())


def postpone_bucket_counts(plan: WritePlan, partitions: pa.Table,
                           num_rows: Optional[int] = None) -> np.ndarray:
    """A postpone-bucket table: each row's bucket count, its partition's (``partitions``: the
    rows' partition columns, none for an unpartitioned table: then ``num_rows`` rows),
    vectorized as a join on the partition values."""
    import polars as pl

    n = partitions.num_rows if num_rows is None else num_rows
    known = dict(plan.postpone_buckets)
    if not plan.partition_keys or not known:
        return np.full(n, plan.partition_buckets(()), np.int64)
    keys = list(plan.partition_keys)
    right = pa.table({k: pa.array([p[i] for p in known], partitions.schema.field(k).type)
                      for i, k in enumerate(keys)}).append_column(
        "__count", pa.array(list(known.values()), pa.int64()))
    left = pl.from_arrow(partitions).with_row_index("__row")
    joined = left.join(pl.from_arrow(right), on=keys, how="left", nulls_equal=True) \
        .sort("__row")
    return joined.get_column("__count").fill_null(plan.postpone_new_partition_buckets) \
        .to_numpy().astype(np.int64)


@_carry_errors
def route_task(plan: WritePlan, batches) -> Iterator[pa.RecordBatch]:
    """Dynamic buckets: the validated rows with their key hash and assigner."""
    out_schema = _spark_schema(plan, plan.routed_schema())
    for rows in _validated(plan, batches):
        yield from _emit(plan, _with_route(plan, rows), out_schema)


def _with_route(plan: WritePlan, rows: pa.Table) -> pa.Table:
    """Dynamic mode: ``_key_hash`` and ``_assigner``."""
    key_hashes = hash_codes(rows.select(list(plan.bucket_keys)))
    # an unpartitioned table hashes the empty row, as Java and pypaimon do
    partition_hashes = hash_codes(rows.select(list(plan.partition_keys)))
    assigners = dynamic_index.assigner_ids(partition_hashes, key_hashes, plan.num_channels,
                                           plan.num_assigners)
    rows = rows.append_column(KEY_HASH, pa.array(key_hashes, pa.int32()))
    return rows.append_column(ASSIGNER, pa.array(assigners, pa.int32()))


@_carry_errors
def locate_task(plan: WritePlan, batches) -> Iterator[pa.RecordBatch]:
    """Cross-partition update (seed 002/003), one task per group of keys: the run's rows and
    the table's existing keys (rows with ``_old_bucket`` set) of the same keys meet here.

    Each key gets a home partition and its rows are routed there. deduplicate: the partition
    of the key's last row (its current one when that row is a retraction), plus a -D in the
    bucket the key leaves; partial-update, aggregation: the partition the key already lives
    in, else that of its first row; first-row: the same (its rows merge after the existing
    record, so first-row keeps that and discards them).
    """
    import polars as pl

    data = _collect(plan, batches)
    if data is None:
        return
    out_schema = _spark_schema(plan, plan.routed_schema())
    pk = list(plan.primary_keys)
    moving = [k for k in plan.partition_keys if k not in pk]
    existing_mask = pc.is_valid(data.column(OLD_BUCKET))
    rows = _conform(plan, data.filter(pc.invert(existing_mask)),
                    {ROW_KIND: pa.string(), SEQ: pa.int64()})
    if rows.num_rows == 0:
        return
    old = data.filter(existing_mask)
    old_cols = [OLD_PREFIX + m for m in moving]
    keys = pl.from_arrow(rows.select(pk + moving + [ROW_KIND, SEQ])).with_row_index("_row")
    per_key = keys.sort(SEQ).group_by(pk, maintain_order=True).agg(
        *[pl.col(m).first().alias("_first_" + m) for m in moving],
        *[pl.col(m).last().alias("_last_" + m) for m in moving],
        pl.col(ROW_KIND).last().alias("_last_kind"), pl.col("_row").last().alias("_last_row"))
    old_keys = pl.from_arrow(_conform_keys(plan, old.select(pk + old_cols + [OLD_BUCKET])))
    per_key = per_key.join(old_keys, on=pk, how="left", nulls_equal=False)
    exists = pl.col(OLD_BUCKET).is_not_null()
    if plan.engine == "deduplicate":
        stay = exists & pl.col("_last_kind").is_in(["-U", "-D"])
        homes = [pl.when(stay).then(pl.col(OLD_PREFIX + m)).otherwise(pl.col("_last_" + m))
                 .alias("_home_" + m) for m in moving]
    else:
        homes = [pl.when(exists).then(pl.col(OLD_PREFIX + m)).otherwise(pl.col("_first_" + m))
                 .alias("_home_" + m) for m in moving]
    per_key = per_key.with_columns(homes)
    same = exists
    for m in moving:
        same = same & pl.col(OLD_PREFIX + m).eq_missing(pl.col("_home_" + m))
    # a key staying in its partition keeps its bucket there, as read from the data (tables
    # Paimon writes in this mode keep no HASH index)
    per_key = per_key.with_columns(pl.when(same).then(pl.col(OLD_BUCKET)).otherwise(None)
                                   .alias("_known"))
    # the home of every row, in row order
    home_of_row = keys.select(pk + ["_row"]).join(per_key, on=pk, how="left").sort("_row")
    routed = rows
    for m in moving:
        index = rows.schema.get_field_index(m)
        routed = routed.set_column(index, rows.schema.field(index),
                                   home_of_row["_home_" + m].to_arrow().cast(
                                       rows.schema.field(index).type))
    routed = routed.append_column(KNOWN_BUCKET, home_of_row["_known"].to_arrow()
                                  .cast(pa.int32()))
    pieces = [routed]
    if plan.engine == "deduplicate":
        leaving = per_key.filter(exists & ~same)
        if leaving.height:
            moves = rows.take(pa.array(leaving["_last_row"].to_numpy()))
            for m in moving:
                index = moves.schema.get_field_index(m)
                moves = moves.set_column(index, moves.schema.field(index),
                                         leaving[OLD_PREFIX + m].to_arrow().cast(
                                             moves.schema.field(index).type))
            moves = moves.set_column(moves.schema.get_field_index(ROW_KIND), ROW_KIND,
                                     pa.array(["-D"] * moves.num_rows, pa.string()))
            moves = moves.append_column(KNOWN_BUCKET, leaving[OLD_BUCKET].to_arrow()
                                        .cast(pa.int32()))
            pieces.append(moves.cast(routed.schema))
    for piece in pieces:
        yield from _emit(plan, _with_route(plan, piece.combine_chunks()), out_schema)


def _conform_keys(plan: WritePlan, old: pa.Table) -> pa.Table:
    arrays = []
    for name in old.column_names:
        base = name[len(OLD_PREFIX):] if name.startswith(OLD_PREFIX) and name != OLD_BUCKET \
            else name
        if base in plan.arrow_schema.names:
            arrays.append(cast_column(old.column(name), plan.arrow_schema.field(base).type))
        else:
            arrays.append(old.column(name).cast(pa.int32()))
    return pa.Table.from_arrays(arrays, names=old.column_names)


@_carry_errors
def existing_keys_task(plan: WritePlan, batches) -> Iterator[pa.RecordBatch]:
    """Cross-partition mode: the live keys of the splits named in ``batches`` (pickled Splits)
    and the partition and bucket each lives in (the merged view: deleted keys are gone)."""
    from dbt.adapters.paimon.datasource.source import read_merged_split

    table = plan.open_table()
    out_schema = _spark_schema(plan, plan.existing_keys_schema())
    columns = list(dict.fromkeys(list(plan.primary_keys) + list(plan.partition_keys)))
    for batch in batches:
        for payload in batch.column(0).to_pylist():
            split = pickle.loads(payload)
            keys = read_merged_split(table, split, columns)
            if keys.num_rows == 0:
                continue
            arrays = [keys.column(k) for k in plan.primary_keys]
            arrays += [keys.column(k) for k in plan.partition_keys]
            arrays.append(pa.array(np.full(keys.num_rows, split.bucket, np.int32)))
            names = list(plan.primary_keys) + [OLD_PREFIX + k for k in plan.partition_keys]
            yield from _emit(plan, pa.Table.from_arrays(arrays, names=names + [OLD_BUCKET]),
                             out_schema)


# --------------------------------------------------------------------------- grouping

def _conform(plan: WritePlan, data: pa.Table, extra: Dict[str, pa.DataType]) -> pa.Table:
    """Back from Spark's Arrow types to the table's (e.g. TIMESTAMP(3) as milliseconds)."""
    arrays = [cast_column(data.column(f.name), f.type) for f in plan.arrow_schema]
    fields = list(plan.arrow_schema)
    for name, dtype in extra.items():
        arrays.append(data.column(name).cast(dtype))
        fields.append(pa.field(name, dtype))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _collect(plan: WritePlan, batches: Iterable[pa.RecordBatch]) -> pa.Table:
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return None
    return _from_spark(plan, pa.Table.from_batches(batches).combine_chunks())


def split_groups(data: pa.Table, columns: List[str]) -> Iterator[Tuple[tuple, pa.Table]]:
    """Rows grouped by ``columns`` (each group in ``_seq`` order): (group values, rows)."""
    order = pc.sort_indices(data, sort_keys=[(c, "ascending") for c in columns] +
                            [(SEQ, "ascending")], null_placement="at_start")
    data = data.take(order)
    n = data.num_rows
    if not columns:
        yield (), data
        return
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for name in columns:
        column = data.column(name).combine_chunks()
        a, b = column.slice(0, n - 1), column.slice(1)
        differ = pc.fill_null(pc.not_equal(a, b), True)
        # both NULL = same group
        same_null = pc.and_(pc.is_null(a), pc.is_null(b))
        differ = pc.and_(differ, pc.invert(same_null))
        change |= np.asarray(differ.to_numpy(zero_copy_only=False), dtype=bool)
    starts = np.concatenate([[0], np.flatnonzero(change) + 1, [n]])
    key_table = data.select(columns)
    for start, stop in zip(starts[:-1], starts[1:]):
        values = tuple(key_table.column(c)[int(start)].as_py() for c in columns)
        yield values, data.slice(int(start), int(stop - start))


# --------------------------------------------------------------------------- 2. assign (dynamic)

@_carry_errors
def assign_task(plan: WritePlan, batches) -> Iterator[pa.RecordBatch]:
    data = _collect(plan, batches)
    if data is None:
        return
    extra = {ROW_KIND: pa.string(), SEQ: pa.int64(), KEY_HASH: pa.int32(), ASSIGNER: pa.int32()}
    if plan.cross_partition:
        extra[KNOWN_BUCKET] = pa.int32()
    data = _conform(plan, data, extra)
    out_schema = _spark_schema(plan, plan.assigned_schema())
    for out in assign_buckets(plan, plan.open_table(), data):
        yield from _emit(plan, out, out_schema)


def assign_buckets(plan: WritePlan, table, data: pa.Table) -> Iterator[pa.Table]:
    """Dynamic mode: routed rows (``_key_hash``, ``_assigner``) with their ``_bucket`` and
    ``_new_key``, per partition. Each assigner only creates buckets ``b % assigners == id``, so
    assigners of one partition may share this call without changing any assignment."""
    snapshot = plan.base_snapshot(table)
    partition_columns = list(plan.partition_keys)
    for partition, rows in split_groups(data, partition_columns):
        index = dynamic_index.PartitionIndex.load(table, snapshot, partition)
        hashes = rows.column(KEY_HASH).to_numpy()
        buckets = index.lookup(hashes)
        if plan.cross_partition:  # keys the table holds in this partition: their bucket
            moved = rows.column(KNOWN_BUCKET)
            move_mask = np.asarray(pc.is_valid(moved).to_numpy(zero_copy_only=False))
            buckets[move_mask] = pc.fill_null(moved, -1).to_numpy()[move_mask]
        new = buckets < 0
        if new.any():
            assigners = rows.column(ASSIGNER).to_numpy()
            for assigner in np.unique(assigners[new]):
                mask = new & (assigners == assigner)
                # distinct new hashes in arrival order (rows are in _seq order)
                unique, first = np.unique(hashes[mask], return_index=True)
                unique = unique[np.argsort(first, kind="stable")]
                chosen = index.assign_new(
                    unique, int(assigner), plan.num_assigners, plan.target_row_num,
                    plan.max_buckets, f"Paimon table {plan.table_name} partition {partition}")
                sorter = np.argsort(unique)
                pos = np.searchsorted(unique[sorter], hashes[mask])
                buckets[mask] = chosen[sorter][pos]
        out = rows.drop_columns([c for c in (ASSIGNER, KNOWN_BUCKET) if c in rows.column_names])
        out = out.append_column(BUCKET, pa.array(buckets, pa.int32()))
        yield out.append_column(NEW_KEY, pa.array(new, pa.bool_()))


# --------------------------------------------------------------------------- 3. write

def write_task(plan: WritePlan, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    messages: list = []
    records = 0
    error = None
    table = None
    try:
        table = plan.open_table()
        records = _write(plan, table, batches, messages)
    except BaseException as exc:  # noqa: BLE001 - reported to the driver, never raised here
        error = task_errors.encode(exc)
        if table is not None and messages:
            try:
                from dbt.adapters.paimon.format.commit import abort

                abort(table, messages)
            except Exception:  # noqa: BLE001 - the driver aborts these messages again
                pass
    payload = pickle.dumps({"messages": [] if error else messages, "records": records,
                            "error": error})
    yield pa.RecordBatch.from_arrays([pa.array([payload], pa.binary())], names=["payload"])


def _existing_splits(plan: WritePlan, table, partitions: List[tuple]) -> Dict[tuple, object]:
    """The split of each (partition, bucket) at the base snapshot (its files and largest
    sequence number)."""
    from dbt.adapters.paimon.format.splits import plan_splits

    if plan.base_snapshot_id is None:
        return {}
    keys = list(plan.partition_keys)
    partition_filter = [dict(zip(keys, p)) for p in partitions] if keys else None
    existing = plan_splits(table, plan.base_snapshot_id, partition_filter)
    if plan.mode != DYNAMIC and not plan.postpone:
        _check_bucket_counts(plan, existing)
    return {(s.partition_values, s.bucket): s for s in existing}


def _check_bucket_counts(plan: WritePlan, existing) -> None:
    """Refuse to write a partition whose files use another bucket count than the table's (a
    partial rescale_buckets left it at the old count): hashing its rows with the new count
    would put keys in buckets where their older versions are not. Paimon's writers refuse too."""
    from dbt.adapters.paimon.runtime import PaimonConfigError

    stale = sorted({(tuple(s.partition.items()), s.total_buckets) for s in existing
                    if s.total_buckets not in (None, plan.num_buckets)})
    if stale:
        partitions = [dict(items) for items, _ in stale]
        raise PaimonConfigError(
            f"Model '{plan.model_name}': {plan.table_name} has {plan.num_buckets} buckets, but "
            f"partition(s) {partitions} still use {sorted({n for _, n in stale})} (an earlier "
            "rescale_buckets covered other partitions). Rescale them first: dbt run-operation "
            f"rescale_buckets --args '{{model: {plan.model_name}, buckets: {plan.num_buckets}, "
            f"partitions: {partitions}}}'.")


def _write(plan: WritePlan, table, batches, messages: list) -> int:
    data = _collect(plan, batches)
    if data is None:
        return 0
    if plan.mode == FIXED:
        data = _checked_here(plan, data)
    else:
        data = conform_assigned(plan, data)
    groups = list(split_groups(data, plan.group_columns))
    existing = existing_splits(plan, table, groups)
    write_groups(plan, table, groups, existing, messages)
    return data.num_rows


def conform_assigned(plan: WritePlan, data: pa.Table) -> pa.Table:
    """Dynamic mode: assigned rows at the table's types (as ``assign_buckets`` makes them)."""
    return _conform(plan, data, {ROW_KIND: pa.string(), SEQ: pa.int64(), BUCKET: pa.int32(),
                                 KEY_HASH: pa.int32(), NEW_KEY: pa.bool_()})


def existing_splits(plan: WritePlan, table, groups) -> Dict[tuple, object]:
    """The base snapshot's split of every (partition, bucket) group (``split_groups`` output)."""
    return _existing_splits(plan, table, sorted({g[:-1] for g, _ in groups}, key=repr))


def write_groups(plan: WritePlan, table, groups, existing: Dict[tuple, object],
                 messages: list) -> None:
    """Pre-merge and write each (partition, bucket) group's rows as sorted level-0 files; one
    commit message per group is appended to ``messages`` as soon as its files exist (so a
    failure later still finds them to delete)."""
    from dbt.adapters.paimon.format.kv_files import new_commit_message, write_kv_file

    spec = plan.merge_spec()
    producer = plan.options_dict.get("changelog-producer", "none")
    if producer == "lookup" and plan.options_dict.get("deletion-vectors.enabled") == "true":
        # deletion-vector tables: the lookup compaction of the run's level-0 files produces
        # the changelog in its COMPACT snapshot, as Java's (ops/compact.py)
        producer = "none"
    snapshot = plan.base_snapshot(table) if plan.mode == DYNAMIC else None
    for values, rows in groups:
        partition, bucket = tuple(values[:-1]), int(values[-1])
        merged = _premerge(plan, spec, rows)
        # stored sequence numbers: above everything in the bucket, each record numbered by its
        # arrival in the run as Java's write buffer numbers every record (a merged row keeps
        # its surviving record's number), so the 'input' changelog's numbers (all records)
        # stay below the next run's
        arrival = np.sort(rows.column(SEQ).to_numpy())
        ranks = np.searchsorted(arrival, merged.column(SEQ).to_numpy()).astype(np.int64)
        merged = merged.set_column(merged.schema.get_field_index(SEQ), SEQ,
                                   pa.array(ranks, pa.int64()))
        split = existing.get((partition, bucket))
        base = (split.max_sequence_number if split is not None else -1) + 1
        metas = write_kv_file(table, partition, bucket, merged, level=0, sequence_base=base)
        message = new_commit_message(partition, bucket, new_files=metas)
        if plan.postpone:  # the partition's bucket count, stored in its manifest entries
            message.total_buckets = plan.partition_buckets(partition)
        messages.append(message)
        pause_at("task-file-written")  # test-only (crash tests); inert unless configured
        if producer == "lookup":  # sequence numbers as Java's: the before / after record's
            stored = merged.set_column(merged.schema.get_field_index(SEQ), SEQ,
                                       pc.add(merged.column(SEQ), base))
            message.changelog_files.extend(write_kv_file(
                table, partition, bucket, _lookup_changelog(spec, table, split, rows, stored),
                level=0, changelog=True, check_order=False))
        elif producer == "input":  # every record as it arrived, not merged
            log = rows.select(plan.names + [ROW_KIND, SEQ])
            log = log.set_column(log.schema.get_field_index(SEQ), SEQ,
                                 pa.array(np.arange(log.num_rows, dtype=np.int64)))
            message.changelog_files.extend(write_kv_file(
                table, partition, bucket, log, level=0, sequence_base=base, changelog=True,
                check_order=False))
        # ('full-compaction' changelogs come from full compactions, ops/compact.py)
        if plan.mode == DYNAMIC:
            new_mask = rows.column(NEW_KEY).to_numpy(zero_copy_only=False)
            if new_mask.any():
                new_hashes = rows.column(KEY_HASH).to_numpy()[new_mask]
                old = dynamic_index.bucket_hashes(table, snapshot, partition, bucket)
                message.index_adds.append(dynamic_index.write_hash_index(
                    table, partition, bucket, np.concatenate([old, new_hashes])))


def _checked_here(plan: WritePlan, data: pa.Table) -> pa.Table:
    """Fixed buckets (routed by ``bucket_udf``, unvalidated): the rows cast exactly to the
    table's types, or the run's data error for this task's bad rows."""
    problems = Problems(plan)
    rows = conform_and_check(plan, data, problems, _not_null(plan))
    if problems:
        raise problems.error()
    return rows.append_column(BUCKET, data.column(BUCKET).cast(pa.int32()))


def _lookup_changelog(spec, table, split, rows: pa.Table, written: pa.Table) -> pa.Table:
    """changelog-producer 'lookup': each written key's state before vs after this commit
    (lookup_changelog.py), against the bucket's files at the base snapshot."""
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.write.lookup_changelog import lookup_changelog

    stored = None
    if split is not None and split.files:
        stored = read_split_records(table, split).drop_columns(["_level"])
    return lookup_changelog(spec, stored, rows, written)


def _premerge(plan: WritePlan, spec, rows: pa.Table) -> pa.Table:
    """The runtime's write buffer for one bucket; a retraction the engine rejects is an error
    even for a key's only record (Paimon would store it and fail on every later read)."""
    from dbt.adapters.paimon.runtime import merge_arrow, premerge_arrow

    records = rows.select(plan.names + [ROW_KIND, SEQ])
    try:
        merged = premerge_arrow(spec, records)
        kinds = records.column(ROW_KIND)
        for kind in ("-U", "-D"):
            found = np.flatnonzero(pc.equal(kinds, kind).to_numpy(zero_copy_only=False))
            if not len(found):
                continue
            # the same row as +I then as the retraction: does the engine accept it?
            row = records.slice(int(found[0]), 1)
            probe = pa.concat_tables([row, row])
            probe = probe.set_column(probe.schema.get_field_index(ROW_KIND), ROW_KIND,
                                     pa.array(["+I", kind], pa.string()))
            probe = probe.set_column(probe.schema.get_field_index(SEQ), SEQ,
                                     pa.array([0, 1], pa.int64()))
            merge_arrow(spec, probe)
        return merged
    except PaimonDataError as exc:
        retract = pc.is_in(records.column(ROW_KIND), value_set=pa.array(["-U", "-D"]))
        rows_idx = np.flatnonzero(retract.to_numpy(zero_copy_only=False))
        if len(rows_idx):
            what = (f"column '{plan.row_kind_label}': {len(rows_idx)} retraction row(s) "
                    f"(-U/-D) in one bucket")
        else:
            what = f"{records.num_rows} row(s) in one bucket"
            rows_idx = np.arange(min(records.num_rows, SAMPLE_SIZE))
        samples = sample_rows(plan, records, rows_idx[:SAMPLE_SIZE])
        raise PaimonDataError(
            f"Model '{plan.model_name}' cannot be merged into Paimon table {plan.table_name} "
            f"({what}); nothing was written: {exc}\n  sample rows: {samples}") from None
