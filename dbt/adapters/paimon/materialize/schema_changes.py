"""What a run changes in an existing table's definition, and whether that is allowed.

Keys, partitions and the options that decide where rows live or how they merge can only change
by rebuilding (--full-refresh); the bucket count by the rescale operation; columns as
``on_schema_change`` says (dbt's ignore / fail / append_new_columns / sync_all_columns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from dbt.adapters.paimon.config import IMMUTABLE_OPTIONS, TableDefinition
from dbt.adapters.paimon.runtime import PaimonConfigError

ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")

# integer types by width; each holds every value of the ones before it
_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_INTEGER_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}
_DECIMAL = re.compile(r"DECIMAL\((\d+), ?(\d+)\)")


def _decimal(type_name: str) -> Optional[Tuple[int, int]]:
    match = _DECIMAL.fullmatch(type_name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def widens(query_type: str, stored_type: str) -> bool:
    """Whether every value of ``query_type`` is exactly a value of ``stored_type``: an integer
    into a wider integer, a DECIMAL or DOUBLE holding all its digits, FLOAT into DOUBLE, a
    DECIMAL into one with as many integer and fraction digits. Such a run is written cast to the
    stored type (as Spark's store assignment casts an INSERT into a Paimon table); any other
    type change would lose or reinterpret values."""
    if query_type in _INTEGERS:
        if stored_type in _INTEGERS:
            return _INTEGERS.index(stored_type) >= _INTEGERS.index(query_type)
        stored_decimal = _decimal(stored_type)
        if stored_decimal is not None:
            return stored_decimal[0] - stored_decimal[1] >= _INTEGER_DIGITS[query_type]
        return stored_type == "DOUBLE" and query_type != "BIGINT"
    if query_type == "FLOAT":
        return stored_type == "DOUBLE"
    query_decimal, stored_decimal = _decimal(query_type), _decimal(stored_type)
    if query_decimal and stored_decimal:
        (qp, qs), (sp, ss) = query_decimal, stored_decimal
        return ss >= qs and sp - ss >= qp - qs
    return False


@dataclass
class SchemaPlan:
    add_columns: List[Tuple[str, str]] = field(default_factory=list)   # (name, Paimon type)
    drop_columns: List[str] = field(default_factory=list)
    set_options: Dict[str, str] = field(default_factory=dict)
    # query columns not stored (on_schema_change=ignore): left out of the write
    ignored_columns: List[str] = field(default_factory=list)
    # query columns of a narrower type than stored (on_schema_change=ignore): name -> stored
    # Paimon type, written cast to it
    cast_columns: Dict[str, str] = field(default_factory=dict)
    # nullable stored columns an enforced contract makes not_null: altered to NOT NULL
    not_null_columns: List[str] = field(default_factory=list)
    # NOT NULL stored columns a replaced table (dbt's table, --full-refresh) has nullable
    nullable_columns: List[str] = field(default_factory=list)

    @property
    def changes_schema(self) -> bool:
        return bool(self.add_columns or self.drop_columns or self.set_options
                    or self.not_null_columns or self.nullable_columns)


@dataclass(frozen=True)
class StoredTable:
    """The existing Paimon table as a run finds it."""

    primary_keys: Tuple[str, ...]
    partition_keys: Tuple[str, ...]
    options: Mapping[str, str]
    columns: Tuple[Tuple[str, str], ...]       # (name, Paimon type)
    nullable: Tuple[str, ...] = ()             # the stored columns that are nullable


@dataclass(frozen=True)
class ChangeRequest:
    """What plan_changes compares: the model's ``definition`` and its query's columns against
    the ``stored`` table named ``relation`` (for messages), under dbt's ``on_schema_change``."""

    definition: TableDefinition
    stored: StoredTable
    query_columns: Tuple[Tuple[str, str], ...]
    on_schema_change: str
    relation: str


def plan_changes(request: ChangeRequest) -> SchemaPlan:
    """The changes a run makes to the stored table; PaimonConfigError for a change that needs
    a rebuild, the rescale operation or another on_schema_change."""
    definition, relation = request.definition, request.relation
    on_schema_change, query_columns = request.on_schema_change, request.query_columns
    table_primary_keys = request.stored.primary_keys
    table_partition_keys = request.stored.partition_keys
    table_options, table_columns = request.stored.options, request.stored.columns
    table_nullable = request.stored.nullable
    model = definition.model
    rebuild = f"run `dbt run --full-refresh -s {model}` to rebuild {relation} (this drops its history)."
    if on_schema_change not in ON_SCHEMA_CHANGE:
        raise PaimonConfigError(
            f"Model '{model}': on_schema_change={on_schema_change!r}; expected one of "
            f"{', '.join(ON_SCHEMA_CHANGE)}."
        )
    if tuple(table_primary_keys) != definition.primary_keys:
        raise PaimonConfigError(
            f"Model '{model}': the primary key changed from {list(table_primary_keys)} to "
            f"{list(definition.primary_keys)}; a Paimon table's primary key is fixed: {rebuild}"
        )
    if tuple(table_partition_keys) != definition.partition_keys:
        raise PaimonConfigError(
            f"Model '{model}': the partition keys changed from {list(table_partition_keys)} to "
            f"{list(definition.partition_keys)}; they are fixed: {rebuild}"
        )
    plan = SchemaPlan()
    for key, value in definition.options.items():
        current = table_options.get(key)
        if current == value:
            continue
        if key == "bucket":
            raise PaimonConfigError(
                f"Model '{model}': buckets changed from {current or '-1'} to {value}. Change the "
                f"bucket count with `dbt run-operation rescale_buckets --args "
                f"'{{model: {model}, buckets: {value}}}'`, which rewrites the data into the new "
                "buckets, then run again."
            )
        if key in IMMUTABLE_OPTIONS or key.endswith(".sequence-group") and current is not None:
            raise PaimonConfigError(
                f"Model '{model}': Paimon option '{key}' changed from {current!r} to {value!r}; "
                f"it decides how stored rows merge: {rebuild}"
            )
        plan.set_options[key] = value
    after = {**table_options, **plan.set_options}
    if after.get("deletion-vectors.enabled") == "true" and \
            after.get("changelog-producer") == "full-compaction":
        # Paimon validates every altered schema (SchemaValidation.validateForDeletionVectors)
        raise PaimonConfigError(
            f"Model '{model}': {relation} would have deletion vectors with changelog producer "
            f"'full-compaction', which Paimon does not support (only 'none', 'input', "
            f"'lookup'): use changelog_producer='lookup', or {rebuild}"
        )
    if definition.options.get("merge-engine", "deduplicate") != table_options.get(
        "merge-engine", "deduplicate"
    ):
        raise PaimonConfigError(
            f"Model '{model}': merge engine changed from "
            f"{table_options.get('merge-engine', 'deduplicate')!r} to "
            f"{definition.options.get('merge-engine', 'deduplicate')!r}: {rebuild}"
        )

    stored = dict(table_columns)
    wanted = dict(query_columns)
    new = [(n, t) for n, t in query_columns if n not in stored]
    gone = [n for n, _ in table_columns if n not in wanted]
    changed = [(n, stored[n], t) for n, t in query_columns if n in stored and stored[n] != t]
    if on_schema_change == "fail" and (new or gone or changed):
        raise PaimonConfigError(
            f"Model '{model}': the query's columns no longer match {relation} (new: "
            f"{[n for n, _ in new]}, missing: {gone}, changed type: "
            f"{[(n, a, b) for n, a, b in changed]}) and on_schema_change='fail'. Set "
            "on_schema_change to append_new_columns or sync_all_columns, or rebuild with "
            "--full-refresh."
        )
    if changed and on_schema_change != "ignore":
        raise PaimonConfigError(
            f"Model '{model}': column types changed {[(n, a, b) for n, a, b in changed]}; "
            f"dbt-paimon does not alter column types of existing Paimon tables yet: cast in the "
            f"query to the stored type, or {rebuild}"
        )
    # on_schema_change='ignore' keeps the stored types: the run's values are written as them
    # when that is exact (widens), otherwise nothing is written
    lossy = [(n, a, b) for n, a, b in changed if not widens(b, a)]
    if lossy:
        described = "; ".join(f"column '{n}' is {a} in {relation} but {b} in the query"
                              for n, a, b in lossy)
        raise PaimonConfigError(
            f"Model '{model}': {described}. on_schema_change='ignore' keeps the stored column "
            f"types, and these values cannot be written as them without loss. Cast the "
            f"column(s) in the query to the stored type (e.g. cast({lossy[0][0]} as "
            f"{lossy[0][1].lower()})), or {rebuild}"
        )
    plan.cast_columns = {n: a for n, a, b in changed}
    if on_schema_change == "ignore":
        plan.ignored_columns = [n for n, _ in new]
    else:
        plan.add_columns = new
    if on_schema_change == "sync_all_columns":
        protected = set(table_primary_keys) | set(table_partition_keys)
        blocked = [n for n in gone if n in protected]
        if blocked:
            raise PaimonConfigError(
                f"Model '{model}': key columns {blocked} are missing from the query; they "
                f"cannot be dropped: {rebuild}"
            )
        plan.drop_columns = gone
    plan.not_null_columns = _not_null_changes(definition, table_primary_keys, table_nullable,
                                              after, relation, rebuild)
    return plan


# Paimon's table option that lets ALTER make a nullable column NOT NULL (false: allowed)
NULL_TO_NOT_NULL_DISABLED = "alter-column-null-to-not-null.disabled"


def _not_null_changes(definition: TableDefinition, table_primary_keys: Sequence[str],
                      table_nullable: Sequence[str], options: Mapping[str, str],
                      relation: str, rebuild: str) -> List[str]:
    """Stored nullable columns the model's contract makes not_null. Paimon changes a column
    from nullable to NOT NULL only when the table's option 'alter-column-null-to-not-null.
    disabled' is 'false' (SchemaManager.generateTableSchema: UpdateColumnNullability and
    assertNullabilityChange; CoreOptions.DISABLE_ALTER_COLUMN_NULL_TO_NOT_NULL, default true):
    otherwise the run is refused, as Paimon refuses the ALTER. (Primary-key columns are NOT
    NULL already.)"""
    columns = [c for c in definition.not_null
               if c in table_nullable and c not in table_primary_keys]
    if not columns:
        return []
    if str(options.get(NULL_TO_NOT_NULL_DISABLED, "true")).lower() != "false":
        raise PaimonConfigError(
            f"Model '{definition.model}': its contract makes column(s) {columns} not_null, but "
            f"they are nullable in {relation}, and Paimon changes a nullable column to NOT NULL "
            f"only on a table whose option '{NULL_TO_NOT_NULL_DISABLED}' is 'false' (it is "
            f"true by default). Set table_options={{'{NULL_TO_NOT_NULL_DISABLED}': 'false'}} "
            f"on the model (the next run checks that no stored row holds a NULL there, then "
            f"alters the column), remove the not_null constraint, or {rebuild}"
        )
    return columns
