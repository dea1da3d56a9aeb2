"""The driver side of a primary-key write: plan, run the Spark stages, make one commit.

    rows --select + _seq--> + bucket --shuffle (partition, bucket)--> write_task --collect-->
         messages --> commit_append (one APPEND snapshot) | abort (delete every file written)

Fixed buckets: integer bucket keys get ``_bucket`` from Spark itself (jvm_bucket.py); other keys
make a trip through Python before the shuffle (an Arrow UDF over the bucket-key columns only).
The writing task validates the rows. Dynamic bucket mode validates
in ``route_task`` (key hash and assigner) and adds ``--shuffle (partition, assigner)-->
assign_task`` before the writing shuffle. ``_seq`` is numbered (``monotonically_increasing_id``)
in the stage that produces the model's rows, before any shuffle, so it is the order the model's
query returns them. The driver only ever holds commit messages (one small row per writing task).
"""
from __future__ import annotations

import dataclasses
import functools
import pickle
from dataclasses import dataclass
from typing import List, Optional, Sequence

from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import dynamic_index, task_errors
from dbt.adapters.paimon.write.in_process import write_in_process
from dbt.adapters.paimon.write.jvm_bucket import jvm_bucket_column
from dbt.adapters.paimon.write.path_choice import (DISTRIBUTED, IN_PROCESS, choose_path,
                                                   warehouse_table_bytes)
from dbt.adapters.paimon.write.plan import (ASSIGNER, BUCKET, DEFAULT_MAX_BUCKETS,
                                            DEFAULT_TARGET_ROW_NUM, DYNAMIC, FIXED,
                                            INTERNAL_COLUMNS, POSTPONE_BUCKET, ROW_KIND, SEQ,
                                            WritePlan, spark_names_for)
from dbt.adapters.paimon.write.tasks import (_spark_schema, assign_task, bucket_udf,
                                             existing_keys_task, locate_task, route_task,
                                             validate_task, write_task)

@dataclass(frozen=True)
class WriteResult:
    snapshot_id: Optional[int]   # the run's snapshot; None when there was nothing to commit
    records: int                 # rows written: the model's rows (plus, cross-partition
                                 # deduplicate, one -D per key leaving its partition)
    files: int                   # data files committed
    buckets: int                 # (partition, bucket) pairs written
    path: str = DISTRIBUTED      # the executor that wrote the files (path_choice.py)
    path_reason: str = ""

    @property
    def path_label(self) -> str:
        return "in-process" if self.path == IN_PROCESS else "distributed"


def write_primary_key_run(spark, df, location, row_kind_column: Optional[str] = None,
                          model_name: str = "model", write_path: Optional[str] = None,
                          in_process_max_bytes: Optional[int] = None,
                          overwrite: Optional[str] = None,
                          overwrite_partitions: Sequence[tuple] = ()) -> WriteResult:
    """Merge ``df``'s rows into the existing Paimon primary-key table at ``location`` as ONE
    atomic commit. On any failure every file written is deleted and the table keeps its
    previous snapshot. Raises PaimonDataError for bad rows (naming the model, the column and
    up to 5 sample rows), NotImplementedError for table layouts not supported yet.

    ``write_path`` ('auto', 'in_process', 'distributed') and ``in_process_max_bytes`` choose
    the executor (path_choice.py); None defers to the session conf, then to 'auto'.

    ``overwrite``: None merges; 'table' replaces the whole table, 'partitions' the partitions
    the rows write plus ``overwrite_partitions`` (partition value tuples), as ONE OVERWRITE
    commit. The replaced data is not merged with: the rows are planned as for an empty table."""
    table = location.open()
    plan = make_plan(spark, table, location, model_name, row_kind_column,
                     as_empty=overwrite is not None)
    frame = _select_input(df, plan, row_kind_column)
    choice = choose_path(spark, frame, model_name, write_path, in_process_max_bytes,
                         supported="cross-partition update" if plan.cross_partition else None,
                         table_bytes=warehouse_table_bytes(location))
    if choice.path == IN_PROCESS:
        # Arrow batches straight from Spark's result (never Python rows)
        messages, records = write_in_process(plan, table, collect_arrow(frame))
        result = _commit(table, plan, messages, records, overwrite, overwrite_partitions)
    else:
        result = _write_distributed(spark, table, plan, frame, overwrite, overwrite_partitions)
    return dataclasses.replace(result, path=choice.path, path_reason=choice.reason)


def _write_distributed(spark, table, plan: WritePlan, frame, overwrite: Optional[str] = None,
                       overwrite_partitions: Sequence[tuple] = ()) -> WriteResult:
    if plan.cross_partition:
        routed = _locate_keys(spark, table, plan, frame)
    elif plan.mode == FIXED:
        bucket = jvm_bucket_column(plan, frame)
        if bucket is None:
            bucket = bucket_udf(plan)(*[_column(plan.spark_name(k))
                                        for k in plan.bucket_input_columns])
        routed = frame.withColumn(BUCKET, bucket)
    else:
        routed = frame.mapInArrow(functools.partial(route_task, plan),
                                  _struct(plan, plan.routed_schema()))
    partitions = [_column(plan.spark_name(k)) for k in plan.partition_keys]
    if plan.mode == DYNAMIC:
        routed = routed.repartition(*partitions, _column(ASSIGNER)).mapInArrow(
            functools.partial(assign_task, plan), _struct(plan, plan.assigned_schema()))
    # one task per (partition, bucket): the only writer of the bucket in this commit
    shuffled = routed.repartition(*partitions, _column(BUCKET))
    payloads, messages, errors = task_errors.collect_results(
        shuffled.mapInArrow(functools.partial(write_task, plan), "payload binary"))
    if errors:
        _abort(table, messages)
        data_errors = [e for e in errors if isinstance(e, PaimonDataError)]
        raise (data_errors or errors)[0]
    return _commit(table, plan, messages, sum(p["records"] for p in payloads), overwrite,
                   overwrite_partitions)


# --------------------------------------------------------------------------- planning

def make_plan(spark, table, location, model_name: str,
              row_kind_column: Optional[str], as_empty: bool = False,
              postpone_counts: Optional[dict] = None) -> WritePlan:
    from pypaimon.schema.data_types import PyarrowFieldParser

    from dbt.adapters.paimon.format.bucket import bucket_key_columns
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    name = f"{location.database}.{location.table}"
    if not table.primary_keys:
        raise ValueError(f"Model '{model_name}': Paimon table {name} has no primary key; "
                         f"append tables are written by the paimon data source")
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    primary_keys = list(table.primary_keys)
    partition_keys = list(table.partition_keys)
    bucket = int(options.get("bucket", "-1"))
    engine = options.get("merge-engine", "deduplicate")
    postpone_buckets, new_partition_buckets = (), 1
    if bucket == POSTPONE_BUCKET:
        # a batch run goes straight into fixed buckets, a count per partition (ops/postpone.py)
        from dbt.adapters.paimon.format.postpone_buckets import (known_bucket_counts,
                                                                  write_bucket_settings)

        if postpone_counts is None:  # a run (the compaction gives every partition's count)
            new_partition_buckets = write_bucket_settings(table, model_name)
            postpone_counts = {} if as_empty else \
                known_bucket_counts(table, current_snapshot_id(table))
        postpone_buckets = tuple(sorted(postpone_counts.items(), key=repr))
    cross_partition = bucket == -1 and not set(partition_keys) <= set(primary_keys)
    if (bucket > 0 or bucket == POSTPONE_BUCKET) and \
            not set(partition_keys) <= set(primary_keys):
        raise ValueError(
            f"Model '{model_name}': Paimon table {name} has fixed buckets but its primary key "
            f"{primary_keys} does not contain every partition key {partition_keys}; Paimon "
            f"requires dynamic buckets ('bucket' = '-1') for cross-partition updates")
    if bucket == 0 or bucket < -2:
        raise ValueError(f"Model '{model_name}': Paimon table {name} has 'bucket' = {bucket}")
    names = list(table.field_names)
    clash = [c for c in names if c in INTERNAL_COLUMNS]
    if clash:
        raise ValueError(f"Model '{model_name}': columns {clash} of Paimon table {name} clash "
                         f"with the write path's internal columns {list(INTERNAL_COLUMNS)}")
    mode = FIXED if bucket > 0 or bucket == POSTPONE_BUCKET else DYNAMIC
    if mode == DYNAMIC:
        if options.get("bucket-key"):
            raise ValueError(f"Model '{model_name}': Paimon table {name} sets 'bucket-key' in "
                             f"dynamic bucket mode, which Paimon does not allow")
        bucket_keys = [k for k in primary_keys if k not in partition_keys]
        # as Paimon's Spark writer: assigner tasks ("channels") = 'dynamic-bucket.assigner-
        # parallelism' or Spark's parallelism (at most max-buckets); assigners (each creating
        # the buckets b with b % assigners == its id) = min('dynamic-bucket.initial-buckets',
        # channels)
        max_buckets = int(options.get("dynamic-bucket.max-buckets", DEFAULT_MAX_BUCKETS))
        num_channels = int(options.get("dynamic-bucket.assigner-parallelism", 0)) or \
            _default_parallelism(spark)
        if max_buckets > 0:
            num_channels = min(max_buckets, num_channels)
        initial = options.get("dynamic-bucket.initial-buckets")
        num_assigners = min(int(initial), num_channels) if initial else num_channels
    else:
        bucket_keys = bucket_key_columns(primary_keys, partition_keys, options, names)
        num_assigners = num_channels = 1
    plan = WritePlan(
        location=location, model_name=model_name, table_name=name,
        arrow_schema=PyarrowFieldParser.from_paimon_schema(table.table_schema.fields),
        paimon_types=tuple((f.name, str(f.type)) for f in table.table_schema.fields),
        options=tuple(sorted(options.items())), primary_keys=tuple(primary_keys),
        partition_keys=tuple(partition_keys), bucket_keys=tuple(bucket_keys), mode=mode,
        num_buckets=bucket, num_assigners=max(1, num_assigners),
        num_channels=max(1, num_channels),
        target_row_num=int(options.get("dynamic-bucket.target-row-num",
                                       DEFAULT_TARGET_ROW_NUM)),
        max_buckets=int(options.get("dynamic-bucket.max-buckets", DEFAULT_MAX_BUCKETS)),
        base_snapshot_id=None if as_empty else current_snapshot_id(table),
        row_kind_label=row_kind_column or ROW_KIND, cross_partition=cross_partition,
        spark_names=spark_names_for(names),
        engine=engine, postpone_buckets=postpone_buckets,
        postpone_new_partition_buckets=new_partition_buckets)
    plan.merge_spec()  # PaimonConfigError before any Spark job
    # cross-partition tables need no HASH index: each key's bucket is read from the data
    if mode == DYNAMIC and not cross_partition and plan.base_snapshot_id is not None:
        from dbt.adapters.paimon.format.splits import plan_splits

        snapshot = plan.base_snapshot(table)
        missing = dynamic_index.buckets_without_index(
            table, snapshot, plan_splits(table, plan.base_snapshot_id))
        if missing:
            raise NotImplementedError(
                f"Model '{model_name}': Paimon table {name} (dynamic buckets) has data in "
                f"{missing[:5]} without a HASH index (written by a writer that does not keep "
                f"the index): the buckets of its keys are unknown; rewrite the table")
    return plan


def _default_parallelism(spark) -> int:
    from dbt.adapters.paimon.datasource.spark_env import default_parallelism

    return default_parallelism(spark)


def _column(name: str):
    from pyspark.sql import functions as F

    from dbt.adapters.paimon.datasource.spark_types import quote_identifier

    return F.col(quote_identifier(name))


def _struct(plan: WritePlan, schema):
    from dbt.adapters.paimon.datasource.spark_types import spark_schema

    return spark_schema(_spark_schema(plan, schema))


def _select_input(df, plan: WritePlan, row_kind_column: Optional[str]):
    from dbt.adapters.paimon.datasource.spark_types import quote_identifier

    columns = list(df.columns)
    missing = [c for c in plan.names if c not in columns]
    extra = [c for c in columns if c not in plan.names and c != row_kind_column]
    if row_kind_column is not None and row_kind_column not in columns:
        raise PaimonDataError(f"Model '{plan.model_name}': row_kind_column "
                              f"'{row_kind_column}' is not a column of its output {columns}")
    if missing or extra:
        raise PaimonDataError(
            f"Model '{plan.model_name}': its columns {columns} do not match Paimon table "
            f"{plan.table_name} {plan.names}: missing {missing}, unknown {extra}")
    # without a row_kind_column every row is +I: no column to carry through the shuffle
    kind = ([f"cast({quote_identifier(row_kind_column)} as string) as "
             f"{quote_identifier(ROW_KIND)}"] if row_kind_column else [])
    # SQL text, which Spark parses in the one projection call: each classic PySpark Column
    # function first resolves `functions` through py4j's JVM view (~2 ms a column)
    return df.selectExpr(*[f"{quote_identifier(c)} as {quote_identifier(plan.spark_name(c))}"
                           for c in plan.names],
                         *kind, f"monotonically_increasing_id() as {quote_identifier(SEQ)}")


# --------------------------------------------------------------------------- cross-partition

def _locate_keys(spark, table, plan: WritePlan, frame):
    """Cross-partition update: the run's rows meet the table's existing keys in one shuffle by
    primary key; ``locate_task`` routes each key to its home partition (see there)."""
    from dbt.adapters.paimon.format.splits import plan_splits

    validated = frame.mapInArrow(functools.partial(validate_task, plan),
                                 _struct(plan, plan.validated_schema()))
    keys_schema = _struct(plan, plan.existing_keys_schema())
    splits = plan_splits(table, plan.base_snapshot_id) if plan.base_snapshot_id else []
    if splits:
        # the live keys: a merged read of the table's key columns (as Paimon's bootstrap)
        payloads = [(pickle.dumps(s),) for s in splits]
        existing = spark.createDataFrame(payloads, "split binary").repartition(
            min(len(payloads), _default_parallelism(spark) * 2)).mapInArrow(
            functools.partial(existing_keys_task, plan), keys_schema)
    else:
        existing = spark.createDataFrame([], keys_schema)
    combined = validated.unionByName(existing, allowMissingColumns=True)
    return combined.repartition(*[_column(plan.spark_name(k)) for k in plan.primary_keys]) \
        .mapInArrow(functools.partial(locate_task, plan), _struct(plan, plan.routed_schema()))


# --------------------------------------------------------------------------- commit

def _commit(table, plan: WritePlan, messages: List, records: int,
            overwrite: Optional[str] = None, overwrite_partitions: Sequence[tuple] = ()
            ) -> WriteResult:
    from dbt.adapters.paimon.format.commit import (abort_unless_committed, commit_append,
                                                   commit_overwrite)
    from dbt.adapters.paimon.format.pause_points import pause_at

    pause_at("before-commit")  # test-only (crash tests); inert unless configured
    data, changelog = _separate_lookup_changelog(plan, messages)
    try:
        if overwrite is None:
            snapshot_id = commit_append(table, data)
        else:
            partitions = _overwritten(table, data, overwrite, overwrite_partitions)
            # no rows and no partition to replace: nothing to commit
            snapshot_id = None if partitions == [] else commit_overwrite(table, data, partitions)
    except BaseException:
        abort_unless_committed(table, messages)
        raise
    if changelog:
        _commit_lookup_changelog(table, plan, snapshot_id, changelog)
    files = sum(len(m.new_files) for m in messages)
    buckets = len({(tuple(m.partition), m.bucket) for m in messages if m.new_files})
    return WriteResult(snapshot_id=snapshot_id, records=records, files=files, buckets=buckets)


def _overwritten(table, messages, overwrite: str, extra: Sequence[tuple]):
    """The partitions an overwrite replaces (None: the whole table)."""
    keys = list(table.partition_keys)
    if overwrite == "table" or not keys:
        return None
    touched = {tuple(m.partition) for m in messages if m.new_files} | set(map(tuple, extra))
    return [dict(zip(keys, p)) for p in sorted(touched, key=repr)]


def _separate_lookup_changelog(plan: WritePlan, messages: List):
    """changelog-producer 'lookup': Java commits the data as an APPEND snapshot and the changelog
    (made by the lookup compaction) in the COMPACT snapshot after it, and Paimon 1.0's streaming
    readers only look for lookup changelogs in COMPACT snapshots. So the data messages, and
    messages holding only the changelog files for a second, COMPACT commit."""
    from dbt.adapters.paimon.format.kv_files import new_commit_message

    if plan.options_dict.get("changelog-producer") != "lookup":
        return messages, []
    data, changelog = [], []
    for m in messages:
        data.append(dataclasses.replace(m, changelog_files=[]))
        if m.changelog_files:
            changelog.append(new_commit_message(m.partition, m.bucket,
                                                changelog_files=m.changelog_files))
    return data, changelog


def _commit_lookup_changelog(table, plan: WritePlan, snapshot_id, changelog: List) -> None:
    from dbt.adapters.paimon.format.commit import abort, commit_compact

    try:
        commit_compact(table, changelog)
    except BaseException as exc:
        abort(table, changelog)
        raise RuntimeError(
            f"Model '{plan.model_name}': its rows are committed to {plan.table_name} (snapshot "
            f"{snapshot_id}) but the changelog commit after it failed ({exc}): consumers of the "
            f"changelog do not see this run's changes. Fix the cause and run the model again "
            f"(its rows then show as updates).") from exc


def _abort(table, messages) -> None:
    from dbt.adapters.paimon.format.commit import abort

    if messages:
        abort(table, messages)
