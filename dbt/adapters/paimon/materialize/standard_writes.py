"""How dbt's own materializations (``table``, ``incremental``, ``seed`` with file_format='paimon')
write a run into an existing Paimon table: each is ONE commit of the shared write paths.

    table, seed, --full-refresh    OVERWRITE of the whole table (replace_table)
    append                         APPEND (append table) | merge (primary-key table)
    insert_overwrite               OVERWRITE of the partitions the run writes
    merge                          merge into the primary-key table on unique_key: the run
                                   rows its clauses write (matched_condition, ...); columns a
                                   matched key keeps are filled from its stored row first;
                                   with not_matched_by_source_action='delete', a -D for each
                                   stored row the run does not match, in the same commit
    delete+insert                  OVERWRITE (copy-on-write) of the table or the affected
                                   partitions: stored rows of the run's keys (and predicates)
                                   left out, the run's rows added (APPEND when an
                                   unpartitioned table loses no row)
    microbatch                     the batch's [event_time_start, event_time_end) replaced:
                                   copy-on-write as delete+insert (append table), or the
                                   batch's rows merged with a -D for each stored key of the
                                   window the batch no longer has (primary-key table)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from dbt.adapters.paimon.config import TableDefinition
from dbt.adapters.paimon.datasource.entry_names import sql_text
from dbt.adapters.paimon.datasource.registry import provider_name
from dbt.adapters.paimon.datasource.source import TableRef, table_source_class
from dbt.adapters.paimon.datasource.spark_env import register_data_source
from dbt.adapters.paimon.datasource.spark_types import quote_identifier
from dbt.adapters.paimon.runtime import PaimonConfigError

# internal columns of these plans (never a model's column: the write path refuses '_'-names
# of its own, these are checked against the model's columns before use)
MATCHED = "__dbt_paimon_matched"
REMOVED = "__dbt_paimon_removed"
PREDICATES = "__dbt_paimon_predicates"
ROW_KIND = "__dbt_paimon_row_kind"
STORED_PREFIX = "__dbt_paimon_stored_"
DEST_ALIAS = "DBT_INTERNAL_DEST"  # how dbt's incremental_predicates name the stored rows
SOURCE_ALIAS = "DBT_INTERNAL_SOURCE"  # how dbt-databricks' merge conditions name the run's rows


@dataclass(frozen=True)
class WriteRequest:
    """What the materialization asks for (from the model's config and dbt's run state)."""

    strategy: str                                   # replace, or an incremental strategy
    unique_key: Tuple[str, ...] = ()
    merge_update_columns: Optional[Tuple[str, ...]] = None
    merge_exclude_columns: Tuple[str, ...] = ()
    predicates: Tuple[str, ...] = ()
    event_time: Optional[str] = None
    # microbatch: the batch's window [start, end), as dbt renders it for ref() filters
    event_time_start: Optional[str] = None
    event_time_end: Optional[str] = None
    # merge: what happens to a stored row no row of the run matches ('ignore' or 'delete',
    # validated by the materialization), and the condition such a row must meet to be deleted
    not_matched_by_source_action: str = "ignore"
    not_matched_by_source_condition: Optional[str] = None
    # merge: dbt-databricks' WHEN MATCHED / WHEN NOT MATCHED clauses (merge_clauses)
    matched_condition: Optional[str] = None
    not_matched_condition: Optional[str] = None
    skip_matched_step: bool = False
    skip_not_matched_step: bool = False
    # merge: dbt-databricks' merge_with_schema_evolution (the run's new columns are added)
    schema_evolution: bool = False

    @property
    def has_merge_clauses(self) -> bool:
        return bool(self.matched_condition or self.not_matched_condition
                    or self.skip_matched_step or self.skip_not_matched_step)

    @classmethod
    def from_config(cls, strategy: str, config: dict, batch_start=None, batch_end=None
                    ) -> "WriteRequest":
        from dbt.adapters.paimon.config.model_config import as_list

        predicates = config.get("incremental_predicates") or config.get("predicates") or []
        if isinstance(predicates, str):
            predicates = [predicates]
        update = config.get("merge_update_columns")
        return cls(
            strategy=strategy,
            unique_key=tuple(as_list(config.get("unique_key"))),
            merge_update_columns=None if update is None else tuple(as_list(update)),
            merge_exclude_columns=tuple(as_list(config.get("merge_exclude_columns"))),
            predicates=tuple(str(p) for p in predicates),
            event_time=config.get("event_time"),
            event_time_start=None if batch_start is None else str(batch_start),
            event_time_end=None if batch_end is None else str(batch_end),
            not_matched_by_source_action=str(
                config.get("not_matched_by_source_action") or "ignore").lower(),
            not_matched_by_source_condition=config.get("not_matched_by_source_condition"),
            matched_condition=config.get("matched_condition") or None,
            not_matched_condition=config.get("not_matched_condition") or None,
            skip_matched_step=bool(config.get("skip_matched_step")),
            skip_not_matched_step=bool(config.get("skip_not_matched_step")),
            schema_evolution=config.get("merge_with_schema_evolution") is True,
        )

    def window(self) -> Optional[Column]:
        """The microbatch window as a condition on the stored rows (None: no bound at all)."""
        column = quote_identifier(self.event_time)
        bounds = []
        if self.event_time_start:
            bounds.append(f"{column} >= '{sql_text(self.event_time_start)}'")
        if self.event_time_end:
            bounds.append(f"{column} < '{sql_text(self.event_time_end)}'")
        return F.expr(" and ".join(bounds)) if bounds else None


def read_table(spark, location: TableRef) -> DataFrame:
    """The table's current rows (a merged read), lazily: a write planned from it reads the
    files of the snapshot it was planned on, which stay on disk after the commit. Read through
    the table's own provider (``paimon.<db>.<table>``, registry.py) so that the plan names the
    table, and a write planned on it is sized from the table's metadata (write/plan_size.py)."""
    provider = provider_name(location.database, location.table)
    register_data_source(spark, table_source_class(provider, location.warehouse,
                                                   location.database, location.table,
                                                   location.catalog_options))
    return spark.read.format(provider).load()


def _columns(names: Sequence[str]) -> List[Column]:
    return [F.col(quote_identifier(n)) for n in names]


def merge_clauses(spark, location: TableRef, df: DataFrame, keys: Sequence[str],
                  request: WriteRequest) -> DataFrame:
    """The run's rows a merge writes under dbt-databricks' clause configs, as SQL's ``MERGE
    ... ON <key> = <key> AND <incremental predicates> WHEN MATCHED [AND matched_condition]
    THEN UPDATE WHEN NOT MATCHED [AND not_matched_condition] THEN INSERT``: a run row matching
    a stored row is written when the matched clause applies (no skip_matched_step, its
    condition holds), a run row matching none when the not-matched clause applies (no
    skip_not_matched_step, its condition holds); any other run row is left out, and the stored
    row stays as it is. Conditions name the run's row DBT_INTERNAL_SOURCE and the stored row
    DBT_INTERNAL_DEST; a condition that is NULL does not hold, as in SQL."""
    if not request.has_merge_clauses:
        return df
    stored = read_table(spark, location).alias(DEST_ALIAS)
    for predicate in request.predicates:  # part of the ON clause: a failing row is no match
        stored = stored.filter(F.expr(predicate))
    dest = stored.withColumn(MATCHED, F.lit(True)).alias(DEST_ALIAS)
    source = df.alias(SOURCE_ALIAS)
    on = None
    for key in keys:
        clause = (F.col(f"{SOURCE_ALIAS}.{quote_identifier(key)}")
                  == F.col(f"{DEST_ALIAS}.{quote_identifier(key)}"))
        on = clause if on is None else on & clause
    joined = source.join(dest, on=on, how="left")

    def clause_applies(skipped: bool, condition: Optional[str]) -> Column:
        applies = F.lit(not skipped)
        return applies & F.coalesce(F.expr(condition), F.lit(False)) if condition else applies

    matched = F.col(f"{DEST_ALIAS}.{MATCHED}").isNotNull()
    written = joined.where(
        (matched & clause_applies(request.skip_matched_step, request.matched_condition))
        | (~matched & clause_applies(request.skip_not_matched_step,
                                     request.not_matched_condition)))
    return written.select(*[F.col(f"{SOURCE_ALIAS}.{quote_identifier(c)}").alias(c)
                            for c in df.columns])


def fill_kept_columns(spark, location: TableRef, df: DataFrame, keys: Sequence[str],
                      kept: Sequence[str], predicates: Sequence[str]) -> DataFrame:
    """``merge`` with merge_update_columns / merge_exclude_columns (or columns the query lacks):
    the run's rows where each matched key's ``kept`` columns hold its stored values (NULL
    included), so a deduplicate merge writes exactly dbt's ``update set <updated columns>``.
    A stored row is matched when its key is the run row's key and every predicate holds."""
    if not kept:
        return df
    stored = read_table(spark, location).alias(DEST_ALIAS)
    for predicate in predicates:
        stored = stored.filter(F.expr(predicate))
    renamed = [F.col(quote_identifier(c)).alias(f"{STORED_PREFIX}{i}") for i, c in enumerate(kept)]
    stored = stored.select(*_columns(keys), *renamed, F.lit(True).alias(MATCHED))
    joined = df.join(stored, on=list(keys), how="left")
    index = {c: i for i, c in enumerate(kept)}
    return joined.select(*[
        F.when(F.col(MATCHED).isNotNull(), F.col(f"{STORED_PREFIX}{index[c]}"))
        .otherwise(F.col(quote_identifier(c))).alias(c) if c in index
        else F.col(quote_identifier(c))
        for c in df.columns
    ])


def copy_on_write(spark, location: TableRef, definition: TableDefinition, df: DataFrame,
                  marked: DataFrame) -> bool:
    """Replace the stored rows ``marked`` (the stored rows plus a boolean REMOVED column) flags
    by ``df``'s rows, as ONE OVERWRITE commit of the whole table (unpartitioned) or of every
    partition that loses or gains rows. False when there was nothing to replace."""
    from dbt.adapters.paimon.write.append_run import write_append_run

    names = [c for c in marked.columns if c != REMOVED]
    kept = marked.filter(~F.col(REMOVED)).select(*_columns(names))
    incoming = df.select(*_columns(names))
    write = functools.partial(write_append_run, spark, location=location,
                              model_name=definition.model, write_path=definition.write_path,
                              in_process_max_bytes=definition.in_process_max_bytes)
    partitions = list(definition.partition_keys)
    if partitions:
        # the partitions this run rewrites: those losing rows (even if they end up empty) and
        # those the run writes; their other rows are written again
        losing = marked.filter(F.col(REMOVED)).select(*_columns(partitions))
        # through Arrow, not Row objects: a TIMESTAMP (LTZ) partition value then is an aware
        # datetime, as pypaimon reads stored partitions and writes the run's (a Row holds a
        # naive local time, which neither compares nor matches)
        found = losing.union(incoming.select(*_columns(partitions))).distinct().toArrow()
        affected = [tuple(row.values()) for row in found.to_pylist()]
        if not affected:
            return False
        affected_frame = spark.createDataFrame(affected, schema=losing.schema)
        condition = None
        for p in partitions:
            clause = kept[quote_identifier(p)].eqNullSafe(affected_frame[quote_identifier(p)])
            condition = clause if condition is None else condition & clause
        kept = kept.join(affected_frame, on=condition, how="left_semi")
        write(kept.unionByName(incoming), overwrite="partitions",
              overwrite_partitions=[tuple(r) for r in affected])
    elif marked.filter(F.col(REMOVED)).limit(1).count() == 0:
        # nothing to remove (a batch's first run, new keys): one APPEND, no rewrite
        write(incoming)
    else:
        write(kept.unionByName(incoming), overwrite="table")
    return True


def delete_insert(spark, location: TableRef, definition: TableDefinition, df: DataFrame,
                  keys: Sequence[str], predicates: Sequence[str]) -> bool:
    """dbt's delete+insert on an append table, as one copy-on-write commit: stored rows whose
    key is one of the run's keys and for which every incremental predicate holds are replaced
    by the run's rows (``delete from dest where key in (select key from source) and
    <predicates>; insert into dest select * from source``)."""
    stored = read_table(spark, location)
    names = list(stored.columns)
    run_keys = df.select(*_columns(keys)).distinct().withColumn(MATCHED, F.lit(True))
    condition = F.lit(True)
    for predicate in predicates:
        condition = condition & F.expr(predicate)
    flagged = stored.alias(DEST_ALIAS).withColumn(REMOVED, F.coalesce(condition, F.lit(False)))
    joined = flagged.join(run_keys, on=list(keys), how="left")
    removed = (F.col(MATCHED).isNotNull() & F.col(REMOVED)).alias(REMOVED)
    return copy_on_write(spark, location, definition, df,
                         joined.select(*_columns(names), removed))


def microbatch_append(spark, location: TableRef, definition: TableDefinition,
                      df: DataFrame, request: WriteRequest) -> bool:
    """A batch of an append table: the stored rows of its window replaced by its rows."""
    window = request.window()
    stored = read_table(spark, location)
    flag = F.coalesce(window, F.lit(False)) if window is not None else F.lit(True)
    return copy_on_write(spark, location, definition, df, stored.withColumn(REMOVED, flag))


def merge_deleting_unmatched(spark, location: TableRef, definition: TableDefinition,
                             df: DataFrame, request: WriteRequest,
                             source: Optional[DataFrame] = None) -> DataFrame:
    """The rows of a merge with not_matched_by_source_action='delete', as SQL's ``MERGE ... ON
    <key> = <key> AND <incremental predicates> WHEN NOT MATCHED BY SOURCE [AND <condition>] THEN
    DELETE`` (dbt-databricks' config): the run's rows (+I), and a -D for each stored row that no
    run row matches (its key is not the run's, or an incremental predicate does not hold for
    it) and that meets not_matched_by_source_condition; merged as one commit. Predicates and
    the condition name the stored row as DBT_INTERNAL_DEST. Deduplicate tables only: a -D
    means 'delete the key' there. ``source``: all the run's rows, when ``df`` holds only those
    its merge clauses write (a stored row a run row matches is matched, written or not)."""
    _require_deduplicate(definition, "incremental_strategy='merge' with "
                                     "not_matched_by_source_action='delete'",
                         "a stored row the run does not match is deleted")
    keys = list(definition.primary_keys)
    names = list(df.columns)
    stored = read_table(spark, location).alias(DEST_ALIAS)
    on = F.lit(True)  # the ON clause's predicates, on the stored row
    for predicate in request.predicates:
        on = on & F.expr(predicate)
    deletable = F.lit(True)
    if request.not_matched_by_source_condition:
        deletable = F.expr(str(request.not_matched_by_source_condition))
    flagged = stored.select(*_columns(names), F.coalesce(on, F.lit(False)).alias(PREDICATES),
                            F.coalesce(deletable, F.lit(False)).alias(REMOVED))
    run_keys = (df if source is None else source).select(*_columns(keys)).distinct() \
        .withColumn(MATCHED, F.lit(True))
    matched = F.col(MATCHED).isNotNull() & F.col(PREDICATES)
    unmatched = flagged.join(run_keys, on=keys, how="left").where(~matched & F.col(REMOVED))
    return df.withColumn(ROW_KIND, F.lit("+I")).unionByName(
        unmatched.select(*_columns(names)).withColumn(ROW_KIND, F.lit("-D")))


def _require_deduplicate(definition: TableDefinition, what: str, why: str) -> None:
    engine = definition.options.get("merge-engine", "deduplicate")
    if engine != "deduplicate":
        raise PaimonConfigError(
            f"Model '{definition.model}': {what} on a primary-key table needs merge_engine "
            f"'deduplicate' ({why}), not {engine!r}: remove merge_engine, or remove "
            f"primary_key for an append table.")


def microbatch_primary_key(spark, location, definition, df: DataFrame, request: WriteRequest
                           ) -> DataFrame:
    """The rows of a primary-key table's microbatch: the batch's rows (+I) and a -D for each
    stored key in the batch's window that the batch does not bring again; merged as one
    commit. Only deduplicate tables: a -D means 'delete the key' there."""
    _require_deduplicate(definition, "incremental_strategy='microbatch'",
                         "a batch replaces the rows of its window")
    keys = list(definition.primary_keys)
    names = list(df.columns)
    stored = read_table(spark, location)
    window = request.window()
    if window is not None:
        stored = stored.filter(window)
    gone = stored.select(*_columns(names)).join(df.select(*_columns(keys)), on=keys,
                                                how="left_anti")
    return df.withColumn(ROW_KIND, F.lit("+I")).unionByName(
        gone.withColumn(ROW_KIND, F.lit("-D")))
