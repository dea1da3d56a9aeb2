"""Compaction: merge a bucket's files with the merge runtime into files at a higher level
(primary-key tables; append tables are planned and rewritten by ops/append_compact.py,
data-evolution tables by ops/data_evolution_compact.py, and run through the same executors and
commit).

    driver: plan_splits --strategy--> CompactUnits --one thread or Spark task each--> read all
            files of the unit, premerge (retractions kept, sequence numbers kept), drop
            retractions when nothing older lies below, write sorted files at the output level
            --> messages (old files deleted, new files added) --> one COMPACT snapshot | abort

Small compactions (the files read within the in-process budget of write/path_choice.py, Spark
local) run in threads of the dbt process; others one Spark task per unit.

The merged record of a key keeps the sequence number Paimon keeps (the last record's, first-row
the first's), so later writes (which start above the bucket's largest number) still win. A
full compaction writes only additions at the top level: Java drops retractions at the max
level, and readers that skip level 0 (first-row tables) then see every key.

Deletion-vector tables (``deletion-vectors.enabled``) are compacted as Paimon's lookup
compaction does (``LookupMergeTreeCompactRewriter`` with a deletion-vector maintainer): every
level-0 file is always picked (``ForceUpLevel0Compaction``); the unit's records are read
without their deleted rows, each key's live version in the bucket's other files is looked up
and merged in (it is older), and its row position is added to that file's deletion vector;
retractions are dropped. A file left out of the unit whose vector then deletes more than
``compaction.delete-ratio-threshold`` (0.2) of its rows is rewritten at its level without them:
a read scans every row of a file and tests it against the vector, so a table's superseded rows
cost every read until they are gone (Java applies the option to append tables only; a key has
one live row above level 0, so moving a file's live rows to a new file at the same level
changes no read). The bucket's deletion vectors (minus those of the rewritten files, plus the
new positions) go to one new index file replacing the bucket's old ones, in the same COMPACT
snapshot. With changelog-producer 'lookup' that snapshot also holds the changelog of
the keys the unit's level-0 files hold (``LookupChangelogMergeFunctionWrapper``): before = the
key's newest record above level 0 (in the unit or looked up), after = the merged result.
"""

from __future__ import annotations

import functools
import pickle
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.pause_points import pause_at
from dbt.adapters.paimon.ops.append_compact import (AppendCompactionConfig, AppendCompactUnit,
                                                    compact_append_unit, plan_append_units)
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig, CompactUnit, pick_full, pick_minor
from dbt.adapters.paimon.ops.data_evolution_compact import (DataEvolutionCompactUnit,
                                                            compact_data_evolution_unit,
                                                            move_deletion_vectors,
                                                            plan_data_evolution_units)
from dbt.adapters.paimon.ops.data_evolution_compact import refusal as data_evolution_refusal
from dbt.adapters.paimon.runtime.changelog import full_compaction_changelog

# snapshot property marking a full compaction (full-compaction.delta-commits counts from it)
FULL_COMPACTION_PROPERTY = "dbt-paimon.compaction"


@dataclass(frozen=True)
class CompactResult:
    snapshot_id: Optional[int]       # the COMPACT snapshot; None when nothing needed compacting
    full: bool
    buckets: int                     # (partition, bucket) pairs rewritten
    files_before: int                # live data files of the selected partitions, before
    files_after: int                 # ... and after
    files_deleted: int
    files_added: int
    levels: Dict[int, int] = field(default_factory=dict)  # output level -> buckets
    # postpone-bucket tables: rows moved out of the postpone bucket, and that snapshot
    postpone_rows: int = 0
    postpone_snapshot_id: Optional[int] = None
    # data-evolution tables: ``buckets`` counts runs of row-id ranges, each rewritten into a file
    row_id_ranges: bool = False

    @property
    def message(self) -> str:
        moved = ""
        if self.postpone_snapshot_id is not None:
            moved = (f"{self.postpone_rows} postpone-bucket rows moved into real buckets "
                     f"(snapshot {self.postpone_snapshot_id}, COMPACT)")
            if self.snapshot_id == self.postpone_snapshot_id:
                return moved
            moved += "; "
        return moved + self._compaction_message()

    def _compaction_message(self) -> str:
        if self.snapshot_id is None:
            if self.row_id_ranges:
                return (f"nothing to compact ({self.files_before} data files; no run of "
                        f"adjacent row-id ranges holds 'compaction.min.file-num' files)")
            return (f"nothing to compact ({self.files_before} data files; every selected "
                    f"bucket is already compacted{'' if self.full else ' enough'})")
        kind = "full" if self.full else "minor"
        rewritten = f"{self.buckets} bucket(s) rewritten"
        if self.row_id_ranges:
            kind = "data-evolution"
            rewritten = f"{self.buckets} run(s) of row-id ranges rewritten into one file each"
        return (f"{kind} compaction: snapshot {self.snapshot_id} (COMPACT), {rewritten}, "
                f"data files {self.files_before} -> {self.files_after}")


def compact_table(spark, location: TableRef, partitions=None, full: bool = False,
                  buckets: Optional[set] = None) -> CompactResult:
    """Compact the selected partitions (list of {partition column: value}; None = all). A
    primary-key table: ``full`` merges every bucket into its top level, otherwise Paimon's
    size-tiered strategy picks what to merge (``num-sorted-run.compaction-trigger``,
    ``compaction.size-ratio``, ``compaction.max-size-amplification-percent``). An append
    table: its small files are rewritten into fewer ones as Paimon picks them
    (ops/append_compact.py); a data-evolution table's adjacent row-id ranges into one file
    each (ops/data_evolution_compact.py). ``buckets``: only these (partition values, bucket)
    pairs."""
    from dbt.adapters.paimon.format.data_evolution import is_data_evolution
    from dbt.adapters.paimon.format.splits import is_postpone_table, plan_splits

    table = location.open()
    moved = None
    if is_postpone_table(table):
        moved = _move_postpone_rows(spark, location, table, partitions)
        if not full:
            buckets = moved.buckets if buckets is None else buckets & moved.buckets
        table = location.open()
    splits = plan_splits(table, partition_filter=_partition_filter(table, partitions))
    if buckets is not None:
        splits = [s for s in splits if (tuple(s.partition_values), s.bucket) in buckets]
    files_before = sum(len(s.files) for s in splits)
    by_row_id_range = is_data_evolution(table)
    if by_row_id_range:
        refused = data_evolution_refusal(table)
        if refused:
            raise ValueError(refused)
        units = plan_data_evolution_units(
            splits, AppendCompactionConfig.from_options(_options(table)))
    elif table.primary_keys:
        config = CompactionConfig.from_options(_options(table))
        pick = pick_full if full else pick_minor
        units = [u for u in (pick(s, config) for s in splits) if u is not None]
    else:
        units = plan_append_units(splits, AppendCompactionConfig.from_options(_options(table)),
                                  bucketed=int(_options(table).get("bucket", "-1")) > 0,
                                  full=full)
    if not units:
        if moved is not None and moved.snapshot_id is not None:
            return moved.result
        return CompactResult(None, full, 0, files_before, files_before, 0, 0,
                             row_id_ranges=by_row_id_range)
    messages = run_units(spark, location, units)
    if by_row_id_range:
        move_deletion_vectors(table, splits, messages)
    properties = {FULL_COMPACTION_PROPERTY: "full"} if full else None
    snapshot_id = commit_units(table, messages, properties)
    deleted = sum(len(m.deleted_files) for m in messages)
    added = sum(len(m.new_files) for m in messages)
    levels: Dict[int, int] = {}
    for unit in units:
        levels[unit.output_level] = levels.get(unit.output_level, 0) + 1
    result = CompactResult(snapshot_id, full, len(units), files_before,
                           files_before - deleted + added, deleted, added, levels,
                           row_id_ranges=by_row_id_range)
    if moved is not None and moved.snapshot_id is not None:
        result = replace(result, postpone_rows=moved.result.postpone_rows,
                         postpone_snapshot_id=moved.snapshot_id)
    return result


@dataclass(frozen=True)
class _Moved:
    snapshot_id: Optional[int]
    buckets: set
    result: CompactResult


def _move_postpone_rows(spark, location: TableRef, table, partitions) -> _Moved:
    """A postpone-bucket table: its postpone files' rows moved into real buckets as one
    COMPACT snapshot (ops/postpone.py); the buckets the compaction after it considers are
    those and the real buckets holding level-0 files, as Paimon's postpone compaction."""
    from dbt.adapters.paimon.ops.postpone import level0_buckets, move_postpone_rows

    if partitions is not None:
        raise ValueError(
            f"Paimon table {location.name} is a postpone-bucket table (bucket = -2): its "
            f"compaction moves every partition's postpone rows at once, as Paimon's does "
            f"(Paimon's postpone compaction takes no partitions); leave out 'partitions'")
    messages, written = move_postpone_rows(spark, location, table)
    snapshot_id = None
    rows = sum(f.row_count for m in messages for f in m.deleted_files)
    if messages:
        snapshot_id = commit_units(table, messages)
    table = location.open()
    buckets = set(written) | level0_buckets(table)
    files = sum(len(m.deleted_files) for m in messages)
    added = sum(len(m.new_files) for m in messages)
    result = CompactResult(snapshot_id, False, len(written), files, added, files, added,
                           postpone_rows=rows, postpone_snapshot_id=snapshot_id)
    return _Moved(snapshot_id, buckets, result)


def _options(table) -> Dict[str, str]:
    return {str(k): str(v) for k, v in table.table_schema.options.items()}


def _partition_filter(table, partitions):
    if partitions is None:
        return None
    if isinstance(partitions, dict):
        partitions = [partitions]
    partitions = list(partitions)
    if not table.partition_keys:
        raise ValueError(f"Paimon table {table.identifier} is not partitioned: leave out "
                         f"'partitions' (got {partitions})")
    if not partitions:
        raise ValueError("'partitions' is an empty list: it selects nothing; leave it out to "
                         "select every partition")
    return [{str(k): v for k, v in p.items()} for p in partitions]


# --------------------------------------------------------------------------- Spark tasks

def run_units(spark, location: TableRef, units: Sequence[CompactUnit]) -> List:
    """Every unit compacted, in this process (threads) when the files they read fit the
    in-process budget and Spark is local (write/path_choice.py), else each unit in its own
    Spark task; the commit messages of all of them (every file already deleted again when any
    unit failed: then the first error is raised)."""
    from dbt.adapters.paimon.format.commit import abort
    from dbt.adapters.paimon.write.path_choice import IN_PROCESS, choose_path_for_size

    size = sum(f.file_size for u in units for f in list(u.split.files) + list(u.other_files))
    choice = choose_path_for_size(spark, f"compaction of {location.name}", size)
    if choice.path == IN_PROCESS:
        results = _run_in_threads(location, units)
    else:
        results = _run_in_spark_tasks(spark, location, units)
    messages = [m for r in results for m in r["messages"]]
    errors = [r["error"] for r in results if r["error"] is not None]
    if errors or len(results) != len(units):
        if messages:
            abort(location.open(), messages)
        if errors:
            raise errors[0]
        raise RuntimeError(f"compaction of {location.name}: {len(units)} tasks planned, "
                           f"{len(results)} reported back")
    return messages


def _run_in_threads(location: TableRef, units: Sequence[CompactUnit]) -> List[dict]:
    """Units in threads of this process: the merge kernel, Arrow and parquet release the GIL
    for most of their work. A table object per unit: pypaimon keeps state on it."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    def run(unit: CompactUnit) -> dict:
        try:
            return {"messages": unit_messages(location.open(), unit), "error": None}
        except BaseException as exc:  # noqa: BLE001 - every unit's files must be known first
            return {"messages": [], "error": exc}

    workers = max(1, min(os.cpu_count() or 1, len(units), 8))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="paimon-compact") as pool:
        return list(pool.map(run, units))


def _run_in_spark_tasks(spark, location: TableRef, units: Sequence[CompactUnit]
                        ) -> List[dict]:
    from dbt.adapters.paimon.write import task_errors

    payloads = [(pickle.dumps(u),) for u in units]
    frame = spark.createDataFrame(payloads, "unit binary").repartition(len(payloads))
    rows = frame.mapInArrow(functools.partial(compact_task, location),
                            "payload binary").collect()
    results = [pickle.loads(bytes(r.payload)) for r in rows]
    return [{"messages": r["messages"],
             "error": None if r["error"] is None else task_errors.decode(r["error"])}
            for r in results]


def compact_task(location: TableRef,
                 batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Never raises: the error travels back in the row so the driver can delete every task's
    files (see write/task_errors.py)."""
    from dbt.adapters.paimon.write import task_errors

    for batch in batches:
        for payload in batch.column(0).to_pylist():
            unit = pickle.loads(payload)
            messages: list = []
            error = None
            table = None
            try:
                table = location.open()
                messages += unit_messages(table, unit)
            except BaseException as exc:  # noqa: BLE001 - reported to the driver
                error = task_errors.encode(exc)
            result = pickle.dumps({"messages": messages if error is None else [],
                                   "error": error})
            yield pa.RecordBatch.from_arrays([pa.array([result], pa.binary())],
                                             names=["payload"])


def unit_messages(table, unit) -> list:
    """The commit messages of one unit: a postpone partition's move (ops/postpone.py) gives
    one per bucket it writes, every other unit one."""
    from dbt.adapters.paimon.ops.postpone import PostponeMoveUnit, move_partition

    if isinstance(unit, PostponeMoveUnit):
        return move_partition(table, unit)
    return [compact_unit(table, unit)]


def compact_unit(table, unit: CompactUnit):
    """Merge one unit's files; the commit message replacing them (files written, not
    committed)."""
    from dbt.adapters.paimon.datasource.source import merge_spec_of
    from dbt.adapters.paimon.format.kv_files import (new_commit_message, read_split_records,
                                                     write_kv_file)
    from dbt.adapters.paimon.runtime import premerge_arrow

    if isinstance(unit, AppendCompactUnit):
        return compact_append_unit(table, unit)
    if isinstance(unit, DataEvolutionCompactUnit):
        return compact_data_evolution_unit(table, unit)
    split = unit.split
    spec = merge_spec_of(table)
    records = read_split_records(table, split)
    if split.deletion_vectors:
        return _lookup_compact_unit(table, unit, spec, records)
    merged = premerge_arrow(spec, records.drop_columns(["_level"]))
    if unit.drop_delete:
        merged = _additions(merged)
    new_files = write_kv_file(table, split.partition_values, split.bucket, merged,
                              level=unit.output_level)
    changelog_files = []
    producer = str(table.table_schema.options.get("changelog-producer", "none"))
    if unit.full and producer == "full-compaction":
        try:
            # before: what the previous full compaction left at the top level
            top = records.filter(pc.equal(records.column("_level"), unit.output_level))
            before = _additions(premerge_arrow(spec, top.drop_columns(["_level"])))
            changes = full_compaction_changelog(spec, before, merged)
            changelog_files = write_kv_file(table, split.partition_values, split.bucket,
                                            changes, changelog=True, check_order=False)
        except BaseException:
            from dbt.adapters.paimon.format.commit import abort

            abort(table, [new_commit_message(split.partition_values, split.bucket,
                                             new_files=new_files)])
            raise
    return new_commit_message(split.partition_values, split.bucket, new_files=new_files,
                              deleted_files=split.files, changelog_files=changelog_files)


def _lookup_compact_unit(table, unit: CompactUnit, spec, records: pa.Table):
    """A deletion-vector table's compaction unit (see the module docstring)."""
    from dbt.adapters.paimon.format.deletion_vectors import (read_deletion_vectors,
                                                            replace_bucket_index)
    from dbt.adapters.paimon.format.kv_files import (new_commit_message, read_split_records,
                                                     rows_with_keys, write_kv_file)
    from dbt.adapters.paimon.runtime import premerge_arrow

    split = unit.split
    pk = list(table.primary_keys)
    # changelog-producer 'lookup': a unit lifting level-0 files emits their keys' changes
    # (Java ChangelogMergeTreeRewriter.rewriteLookupChangelog)
    with_changelog = str(table.table_schema.options.get("changelog-producer", "none")) == \
        "lookup" and unit.output_level > 0 and any(f.level == 0 for f in split.files)
    levels = records.column("_level")
    upper = records.filter(pc.greater(levels, 0)).drop_columns(["_level"]) \
        if with_changelog else None
    changed_keys = records.filter(pc.equal(levels, 0)).select(pk).group_by(pk).aggregate([]) \
        if with_changelog else None
    records = records.drop_columns(["_level"])
    schema = records.schema
    new_positions: Dict[str, np.ndarray] = {}
    older = stored = None
    if unit.other_files and records.num_rows:
        others = replace(split, files=list(unit.other_files),
                         levels=[f.level for f in unit.other_files])
        stored = read_split_records(table, others, with_positions=True)
        keys = records.select(pk).group_by(pk).aggregate([])
        found = rows_with_keys(stored, keys, pk)
        if found.num_rows:
            names = found.column("_file").to_numpy(zero_copy_only=False)
            positions = found.column("_position").to_numpy()
            for name in np.unique(names):
                new_positions[str(name)] = positions[names == name]
            older = found.drop_columns(["_level", "_file", "_position"]).cast(schema)
            records = pa.concat_tables([older, records])
    merged = _additions(premerge_arrow(spec, records))
    new_files = write_kv_file(table, split.partition_values, split.bucket, merged,
                              level=unit.output_level)
    index_adds, index_deletes, changelog_files, purged, purge_files = [], [], [], [], []
    rewritten = {f.file_name for f in split.files}
    try:
        if with_changelog:
            before = _latest_additions(pk, [t for t in (upper, older) if t is not None],
                                       changed_keys)
            after = rows_with_keys(merged, changed_keys, pk)
            changelog_files = write_kv_file(
                table, split.partition_values, split.bucket,
                full_compaction_changelog(spec, before, after), level=unit.output_level,
                changelog=True, check_order=False)
        if new_positions or rewritten & set(split.deletion_files):
            kept = {n: d for n, d in split.deletion_files.items() if n not in rewritten}
            vectors = read_deletion_vectors(table.file_io, kept) if kept else {}
            for name, positions in new_positions.items():
                old = vectors.get(name)
                vectors[name] = positions if old is None else \
                    np.union1d(old.astype(np.int64), positions)
            if stored is not None:
                purged, purge_files = _purge_deleted_rows(
                    table, unit, stored, new_positions, vectors, schema)
            index_adds, index_deletes = replace_bucket_index(table, split, vectors)
            pause_at("compact-index-written")  # test-only (crash tests); inert unless configured
    except BaseException:
        from dbt.adapters.paimon.format.commit import abort

        abort(table, [new_commit_message(split.partition_values, split.bucket,
                                         new_files=new_files + purge_files,
                                         changelog_files=changelog_files)])
        raise
    message = new_commit_message(split.partition_values, split.bucket,
                                 new_files=new_files + purge_files,
                                 deleted_files=list(split.files) + purged,
                                 changelog_files=changelog_files)
    message.index_adds = index_adds
    message.index_deletes = index_deletes
    return message


def _purge_deleted_rows(table, unit: CompactUnit, stored: pa.Table,
                        new_positions: Dict[str, np.ndarray], vectors: Dict[str, np.ndarray],
                        schema: pa.Schema):
    """(files rewritten, their new files): each file left out of ``unit`` whose vector in
    ``vectors`` deletes more than ``compaction.delete-ratio-threshold`` of its rows, written
    again at its level with its live rows only (``stored``: those files' rows without their
    old vectors' positions, with ``_file`` and ``_position``); its vector leaves ``vectors``.
    A file's live rows keep their key order and sequence numbers."""
    from dbt.adapters.paimon.format.kv_files import write_kv_file

    threshold = CompactionConfig.from_options(_options(table)).delete_ratio_threshold
    over = [f for f in unit.other_files if f.file_name in vectors
            and len(vectors[f.file_name]) > f.row_count * threshold]
    purged, written = [], []
    if not over:
        return purged, written
    files = stored.column("_file")
    try:
        for meta in over:
            rows = stored.filter(pc.equal(files, meta.file_name))
            gone = new_positions.get(meta.file_name)
            if gone is not None:
                rows = rows.filter(pc.invert(pc.is_in(rows.column("_position"),
                                                      pa.array(gone, pa.int64()))))
            rows = rows.drop_columns(["_level", "_file", "_position"]).cast(schema)
            written.extend(write_kv_file(table, unit.split.partition_values, unit.split.bucket,
                                         rows, level=meta.level))
            purged.append(meta)
            del vectors[meta.file_name]
    except BaseException:
        from dbt.adapters.paimon.format.commit import abort
        from dbt.adapters.paimon.format.kv_files import new_commit_message

        abort(table, [new_commit_message(unit.split.partition_values, unit.split.bucket,
                                         new_files=written)])
        raise
    return purged, written


def _latest_additions(pk, tables: Sequence[pa.Table], keys: pa.Table) -> pa.Table:
    """Per key of ``keys``: its newest stored record above level 0 when that is an addition
    (Java's ``highLevel`` record in LookupChangelogMergeFunctionWrapper: the changelog's
    before-image; a retraction there means the key was absent)."""
    import polars as pl

    from dbt.adapters.paimon.format.kv_files import rows_with_keys
    from dbt.adapters.paimon.runtime.kernel import to_arrow

    rows = rows_with_keys(pa.concat_tables(tables), keys, pk)
    latest = pl.from_arrow(rows).sort("_seq").group_by(pk, maintain_order=True).last()
    return _additions(to_arrow(latest, rows.schema))  # polars' large lists back to maps


def _additions(rows: pa.Table) -> pa.Table:
    return rows.filter(pc.is_in(rows.column("_row_kind"), value_set=pa.array(["+I", "+U"])))


# --------------------------------------------------------------------------- commit

def commit_units(table, messages: Sequence, properties: Optional[Dict[str, str]] = None
                 ) -> Optional[int]:
    """One COMPACT snapshot (with snapshot ``properties``); on failure the new files are
    deleted unless the snapshot became visible after all."""
    from dbt.adapters.paimon.format.commit import abort_unless_committed, commit_compact

    try:
        snapshot_id = commit_compact(table, messages, properties)
    except BaseException:
        abort_unless_committed(table, messages)
        raise
    return snapshot_id
