"""A model's dbt config -> the Paimon table it describes (keys, partitions, options), validated.

Pure Python (no dbt, no Spark): the materializations call it through the adapter before any data
is touched, with the column list of the model's query. Every error names the model, the config
key, the value and what to do; all problems are gathered and reported at once.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from dbt.adapters.paimon.config.blob_vector import check_blob_and_vector
from dbt.adapters.paimon.config.option_keys import (
    CORE_OPTION_KEYS,
    FLINK_OPTION_KEYS,
    SPARK_OPTION_KEYS,
)
from dbt.adapters.paimon.runtime import MergeSpec, PaimonConfigError

# dbt config name -> Paimon option, for the settings that map one to one.
CONFIG_TO_OPTION: Dict[str, str] = {
    "buckets": "bucket",
    "bucket_key": "bucket-key",
    "merge_engine": "merge-engine",
    "sequence_field": "sequence.field",
    "default_aggregate_function": "fields.default-aggregate-function",
    "ignore_delete": "ignore-delete",
    "changelog_producer": "changelog-producer",
    "row_tracking": "row-tracking.enabled",
    "deletion_vectors": "deletion-vectors.enabled",
}
MATERIALIZATIONS = ("paimon_pk", "partial_update", "paimon_append")
# dbt's own materializations with file_format='paimon': a primary-key table when the model has a
# key (`primary_key`, or `unique_key` of the merge strategies), an append table otherwise.
STANDARD_MATERIALIZATIONS = ("table", "incremental", "seed")
INCREMENTAL_STRATEGIES = ("append", "insert_overwrite", "merge", "delete+insert", "microbatch")
# strategies that need a `unique_key`; for `merge` it is the table's primary key
KEYED_STRATEGIES = ("merge", "delete+insert")
CHANGELOG_PRODUCERS = ("none", "input", "lookup", "full-compaction")
# Option families whose keys embed a column or format name.
FIELD_OPTION_SUFFIXES = (
    "aggregate-function", "ignore-retract", "distinct", "list-agg-delimiter", "sequence-group",
    "nested-key", "nested-key-null-strategy", "nested-sequence-field", "count-limit", "ts-field",
    "stats-mode", "default-value",
)
OPTION_PREFIXES = ("file-index.", "parquet.", "orc.", "avro.", "blob-descriptor.", "fs.")
_FIELD_OPTION = re.compile(r"^fields\.(.+)\.([a-z-]+)$")
# a VECTOR column's length, as Paimon's Spark catalog reads it (blob_vector.py)
_VECTOR_DIM_OPTION = re.compile(r"^field\.(.+)\.vector-dim$")
# Options a run must not change on an existing table: they decide where rows live or how they merge.
IMMUTABLE_OPTIONS = ("merge-engine", "bucket-key", "sequence.field", "row-tracking.enabled")
# config `write_path`: which executor writes a run (write/path_choice.py)
WRITE_PATHS = ("auto", "in_process", "distributed")


@dataclass(frozen=True)
class TableDefinition:
    """What a model's table is: the input to create_table and to the merge write path."""

    model: str
    materialization: str
    primary_keys: Tuple[str, ...]
    partition_keys: Tuple[str, ...]
    options: Dict[str, str] = field(default_factory=dict)
    row_kind_column: Optional[str] = None
    target: Optional[str] = None
    # paimon_append with incremental_strategy='merge': the `unique_key` columns of MERGE INTO
    merge_keys: Tuple[str, ...] = ()
    # config `write_path` and `in_process_max_bytes` (None: the profile's)
    write_path: Optional[str] = None
    in_process_max_bytes: Optional[int] = None
    # an enforced contract's not_null (and primary_key) columns: NOT NULL in the table
    not_null: Tuple[str, ...] = ()

    @property
    def has_primary_key(self) -> bool:
        return bool(self.primary_keys)

    @property
    def buckets(self) -> int:
        return int(self.options.get("bucket", "-1"))


class ConfigProblems:
    """Collects every problem with a model's config, then raises one PaimonConfigError."""

    def __init__(self, model: str):
        self.model = model
        self.messages: List[str] = []

    def add(self, message: str) -> None:
        self.messages.append(message)

    def raise_if_any(self) -> None:
        if self.messages:
            bullet = "\n  - "
            raise PaimonConfigError(
                f"Model '{self.model}' has an invalid Paimon configuration:{bullet}"
                + bullet.join(self.messages)
            )


def as_list(value: Any) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(v).strip() for v in value]


def option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def is_known_option(key: str) -> bool:
    if key in CORE_OPTION_KEYS or key in FLINK_OPTION_KEYS or key in SPARK_OPTION_KEYS:
        return True
    match = _FIELD_OPTION.match(key)
    if match and match.group(2) in FIELD_OPTION_SUFFIXES:
        return True
    if _VECTOR_DIM_OPTION.match(key):
        return True
    return key.startswith(OPTION_PREFIXES)


def table_definition(
    model: str,
    materialization: str,
    config: Mapping[str, Any],
    columns: Sequence[Tuple[str, str]],
) -> TableDefinition:
    """Validate ``config`` against the query's ``columns`` [(name, Paimon type)]."""
    problems = ConfigProblems(model)
    names = [name for name, _ in columns]
    if materialization in STANDARD_MATERIALIZATIONS:
        return _standard_definition(model, materialization, config, columns, problems)
    if materialization not in MATERIALIZATIONS:
        raise PaimonConfigError(f"Model '{model}': unknown materialization {materialization!r}")

    merge_keys: List[str] = []
    if materialization == "paimon_append":
        # an append table has no primary key: unique_key is the key of its merge strategy
        merge_keys = _append_merge_keys(config, problems)
        config = {k: v for k, v in config.items() if k != "unique_key"}
    primary_keys = _primary_keys(config, problems)
    partition_keys = as_list(config.get("partition_by"))
    options = _options(config, problems)
    row_kind_column = config.get("row_kind_column")

    if materialization == "partial_update":
        engine = options.setdefault("merge-engine", "partial-update")
        if engine != "partial-update":
            problems.add(
                f"config `merge_engine` is {engine!r} but materialized='partial_update' always "
                "uses 'partial-update': remove merge_engine or use materialized='paimon_pk'."
            )
    if materialization in ("paimon_pk", "partial_update"):
        if not primary_keys:
            problems.add(
                f"materialized='{materialization}' needs a primary key: set config "
                "`primary_key` (a column name or a list)."
            )
        if options.get("row-tracking.enabled") == "true":
            problems.add(
                "config `row_tracking` is only for materialized='paimon_append' "
                "(row tracking exists on append tables only)."
            )
    else:
        _check_append(config, primary_keys, options, problems)
        if (config.get("incremental_strategy") == "merge"
                and options.get("row-tracking.enabled") != "true"):
            problems.add("incremental_strategy='merge' on materialized='paimon_append' needs "
                         "row_tracking=true (MERGE INTO keeps the row ids of a row-tracking "
                         "table); or use materialized='paimon_pk' with primary_key.")

    if options.get("deletion-vectors.enabled") == "true" and \
            options.get("merge-engine") == "first-row":
        # Paimon's SchemaValidation refuses the table
        problems.add("config `deletion_vectors` with merge_engine 'first-row': Paimon refuses it "
                     "(first-row never deletes old data, so it needs no deletion vectors); "
                     "remove deletion_vectors.")
    if options.get("deletion-vectors.enabled") == "true" and \
            options.get("changelog-producer") == "full-compaction":
        # Paimon's SchemaValidation.validateForDeletionVectors: NONE/INPUT/LOOKUP only
        problems.add("config `deletion_vectors` with changelog_producer 'full-compaction': "
                     "Paimon supports deletion vectors only with changelog producer 'none', "
                     "'input' or 'lookup'; use changelog_producer='lookup' (the same "
                     "before/after changelog, made by each run's compaction) or remove "
                     "deletion_vectors.")
    _check_columns(names, primary_keys, partition_keys, options, row_kind_column, columns, problems)
    check_blob_and_vector(materialization, primary_keys, partition_keys, options, columns,
                          problems)
    write_path, max_bytes = _write_path(config, problems)
    missing_keys = [c for c in merge_keys if c not in names]
    if missing_keys:
        problems.add(f"config `unique_key` names {missing_keys}, which the model's query does "
                     f"not return (columns: {names}).")
    problems.raise_if_any()

    definition = TableDefinition(
        model=model,
        materialization=materialization,
        primary_keys=tuple(primary_keys),
        partition_keys=tuple(partition_keys),
        options=options,
        row_kind_column=row_kind_column,
        target=config.get("target"),
        merge_keys=tuple(merge_keys),
        write_path=write_path,
        in_process_max_bytes=max_bytes,
    )
    if definition.has_primary_key:
        _check_merge_spec(definition, columns, problems)
    problems.raise_if_any()
    return definition


def default_strategy(unique_key) -> str:
    """As dbt-databricks on Delta: a model with a unique_key merges, one without appends."""
    return "merge" if as_list(unique_key) else "append"


def _standard_definition(model, materialization, config, columns, problems: ConfigProblems
                         ) -> TableDefinition:
    """``table``, ``incremental`` and ``seed`` with file_format='paimon': validated as the
    paimon_pk (a key) or paimon_append (no key) model they build. dbt-spark's and
    dbt-databricks' own configs are mapped or refused first (spark_configs.py)."""
    from dbt.adapters.paimon.config.spark_configs import (apply_spark_configs,
                                                         check_schema_evolution)

    config = apply_spark_configs(config, problems)
    unique_key = list(dict.fromkeys(as_list(config.pop("unique_key", None))))  # ['a', 'a']
    strategy = config.pop("incremental_strategy", None) or default_strategy(unique_key)
    check_schema_evolution(config, materialization, strategy, problems)
    config.pop("merge_with_schema_evolution", None)
    if materialization == "incremental":
        if strategy not in INCREMENTAL_STRATEGIES:
            problems.add(f"incremental_strategy '{strategy}' is not supported with "
                         f"file_format='paimon'. Expected one of: "
                         f"{', '.join(INCREMENTAL_STRATEGIES)}"
                         + (" (insert_overwrite replaces the run's partitions, microbatch "
                            "the batch's time window)." if strategy == "replace_where"
                            else "."))
        elif strategy in KEYED_STRATEGIES:
            if not as_list(unique_key) and config.get("primary_key") is None:
                problems.add(f"incremental_strategy='{strategy}' needs config `unique_key` (the "
                             "column or list of columns identifying a row): it becomes the "
                             "Paimon table's primary key. Set unique_key, or use "
                             "incremental_strategy='append'.")
            elif as_list(unique_key) and config.get("primary_key") is not None and \
                    as_list(unique_key) != as_list(config["primary_key"]):
                problems.add(f"config `unique_key` {as_list(unique_key)} and `primary_key` "
                             f"{as_list(config['primary_key'])} differ: the merge key is the "
                             "table's primary key, keep one of them.")
            elif strategy == "merge" and as_list(unique_key):
                config["primary_key"] = unique_key
            if strategy == "delete+insert":
                names = [name for name, _ in columns]
                missing = [c for c in as_list(unique_key) if c not in names]
                if missing:
                    problems.add(f"config `unique_key` names {missing}, which the model's "
                                 f"query does not return (columns: {names}).")
        if strategy == "microbatch" and not config.get("event_time"):
            problems.add("incremental_strategy='microbatch' needs config `event_time` (the "
                         "model's timestamp column each batch replaces), with `batch_size` "
                         "and `begin`.")
        update, exclude = config.get("merge_update_columns"), config.get("merge_exclude_columns")
        if update is not None and exclude is not None:
            problems.add("configs `merge_update_columns` and `merge_exclude_columns` are both "
                         "set: keep one of them.")
        names = [name for name, _ in columns]
        for key in ("merge_update_columns", "merge_exclude_columns"):
            missing = [c for c in as_list(config.get(key)) if c not in names]
            if missing:
                problems.add(f"config `{key}` names {missing}, which the model's query does not "
                             f"return (columns: {names}).")
        if strategy == "microbatch" and config.get("event_time") and \
                config["event_time"] not in names:
            problems.add(f"config `event_time` is {config['event_time']!r}, which the model's "
                         f"query does not return (columns: {names}).")
    if config.get("target") is not None:
        problems.add("config `target` (a shared wide table) is only for materialized="
                     "'partial_update' or 'paimon_pk': remove it.")
    kind = "paimon_pk" if config.get("primary_key") is not None else "paimon_append"
    problems.raise_if_any()
    definition = table_definition(model, kind, config, columns)
    return dataclasses.replace(definition, materialization=materialization)


def _primary_keys(config: Mapping[str, Any], problems: ConfigProblems) -> List[str]:
    primary_key, unique_key = config.get("primary_key"), config.get("unique_key")
    if primary_key is not None and unique_key is not None:
        problems.add(
            "the primary key is given two ways (`primary_key` and `unique_key`): keep `primary_key`."
        )
    return as_list(primary_key if primary_key is not None else unique_key)


def _options(config: Mapping[str, Any], problems: ConfigProblems) -> Dict[str, str]:
    options: Dict[str, str] = {}
    sources: Dict[str, str] = {}

    def put(key: str, value: Any, source: str) -> None:
        if key in options:
            problems.add(
                f"Paimon option '{key}' is given two ways ({sources[key]} and {source}): keep one."
            )
            return
        options[key] = option_value(value)
        sources[key] = source

    for config_key, option in CONFIG_TO_OPTION.items():
        if config.get(config_key) is not None:
            put(option, config[config_key], f"config `{config_key}`")
    for group_fields, members in _mapping(config, "sequence_groups", problems).items():
        put(f"fields.{group_fields}.sequence-group", as_list(members),
            f"config `sequence_groups['{group_fields}']`")
    for column, function in _mapping(config, "aggregations", problems).items():
        put(f"fields.{column}.aggregate-function", function, f"config `aggregations['{column}']`")
    for key, value in _mapping(config, "table_options", problems).items():
        if not is_known_option(str(key)):
            problems.add(
                f"config `table_options` has '{key}', which is not a Paimon table option: check "
                "the spelling against Paimon's CoreOptions (or remove it)."
            )
            continue
        put(str(key), value, f"config `table_options['{key}']`")

    _check_option_values(options, problems)
    return options


_MAPPING_EXAMPLES = {"sequence_groups": "{'pay_ts': ['paid_amount', 'pay_status']}",
                     "aggregations": "{'amount': 'sum'}", "table_options": "{'bucket': '4'}"}


def _mapping(config: Mapping[str, Any], key: str, problems: ConfigProblems) -> Mapping:
    value = config.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.add(f"config `{key}` must be a mapping such as {_MAPPING_EXAMPLES[key]}, got "
                     f"{type(value).__name__} {value!r}.")
        return {}
    return value


def _check_option_values(options: Dict[str, str], problems: ConfigProblems) -> None:
    if "bucket" in options:
        try:
            buckets = int(options["bucket"])
        except ValueError:
            buckets = 0
        if buckets == 0 or buckets < -2:
            problems.add(
                f"config `buckets` is {options['bucket']!r}: use a whole number > 0 for fixed "
                "buckets, -1 for dynamic buckets, or -2 for postpone buckets."
            )
        if buckets == -2:
            _check_postpone_options(options, problems)
    producer = options.get("changelog-producer")
    if producer is not None and producer not in CHANGELOG_PRODUCERS:
        problems.add(
            f"config `changelog_producer` is {producer!r}: expected one of {', '.join(CHANGELOG_PRODUCERS)}."
        )
    for key in ("ignore-delete", "row-tracking.enabled"):
        if key in options and options[key] not in ("true", "false"):
            problems.add(f"Paimon option '{key}' must be true or false, got {options[key]!r}.")


def _check_postpone_options(options: Dict[str, str], problems: ConfigProblems) -> None:
    """A postpone-bucket table (bucket = -2): the settings under which Paimon's batch write
    does what dbt-paimon's does not (ops/postpone.py)."""
    if str(options.get("postpone.batch-write-fixed-bucket", "true")).lower() != "true":
        problems.add(
            "config `table_options` sets 'postpone.batch-write-fixed-bucket' = "
            f"{options['postpone.batch-write-fixed-bucket']!r}: a batch write would then put "
            "its rows into the postpone bucket like a streaming writer; dbt-paimon writes a "
            "run straight into fixed buckets only. Remove the option.")
    if options.get("deletion-vectors.enabled") == "true":
        problems.add(
            "config `deletion_vectors` with buckets -2 (postpone buckets): batch reads skip "
            "level 0, where a run's rows land until the table's postpone compaction; "
            "dbt-paimon does not write such tables. Remove deletion_vectors.")
    if "postpone.target-row-num-per-bucket" in options and \
            "postpone.default-bucket-num" not in options:
        problems.add(
            "config `table_options` sets 'postpone.target-row-num-per-bucket' without "
            "'postpone.default-bucket-num': Paimon then sizes a new partition's buckets from "
            "the run's row count, which dbt-paimon does not. Set "
            "'postpone.default-bucket-num' to the bucket count new partitions should get.")


def _append_merge_keys(config, problems: ConfigProblems) -> List[str]:
    strategy = config.get("incremental_strategy") or "append"
    keys = as_list(config.get("unique_key"))
    if strategy != "merge":
        if keys:
            problems.add(
                "config `unique_key` on materialized='paimon_append' is the key of "
                "incremental_strategy='merge' (an append table has no primary key): set "
                "incremental_strategy='merge' with row_tracking=true, or remove unique_key.")
        return []
    if not keys:
        problems.add("incremental_strategy='merge' needs config `unique_key` (the column(s) "
                     "matching the model's rows to the table's rows).")
    return keys


def _write_path(config, problems: ConfigProblems):
    write_path = config.get("write_path")
    if write_path is not None and write_path not in WRITE_PATHS:
        problems.add(f"config `write_path` is {write_path!r}; expected one of "
                     f"{list(WRITE_PATHS)}.")
        write_path = None
    max_bytes = config.get("in_process_max_bytes")
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            problems.add(f"config `in_process_max_bytes` is {max_bytes!r}; expected a whole "
                         "number of bytes >= 0 (e.g. 268435456 for 256 MiB).")
            max_bytes = None
    return write_path, max_bytes


def _check_append(config, primary_keys, options, problems: ConfigProblems) -> None:
    if primary_keys:
        problems.add(
            "materialized='paimon_append' builds an append table without primary key: remove "
            "`primary_key`/`unique_key`, or use materialized='paimon_pk'."
        )
    for config_key in ("merge_engine", "sequence_field", "sequence_groups", "aggregations",
                       "default_aggregate_function", "row_kind_column"):
        if config.get(config_key) is not None:
            problems.add(
                f"config `{config_key}` only applies to primary-key tables "
                "(materialized='paimon_pk' or 'partial_update'); remove it from this append model."
            )
    if options.get("bucket") == "-2":
        problems.add(
            "config `buckets` is -2 (postpone buckets), which Paimon allows only for "
            "primary-key tables: use materialized='paimon_pk', or buckets -1 or > 0.")
    if options.get("row-tracking.enabled") == "true":
        if int(options.get("bucket", "-1") or -1) != -1 or "bucket-key" in options:
            problems.add(
                "config `row_tracking` needs an unbucketed append table: remove `buckets` and "
                "`bucket_key` (Paimon supports row tracking only with bucket = -1)."
            )


def _int_or(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _check_columns(names, primary_keys, partition_keys, options, row_kind_column, columns,
                   problems: ConfigProblems) -> None:
    def require(config_key: str, wanted: Sequence[str]) -> None:
        missing = [c for c in wanted if c not in names]
        if missing:
            problems.add(
                f"config `{config_key}` names {missing}, which the model's query does not "
                f"return (columns: {names})."
            )

    require("primary_key", primary_keys)
    require("partition_by", partition_keys)
    bucket_key = as_list(options.get("bucket-key"))
    require("bucket_key", bucket_key)
    if primary_keys and bucket_key and not set(bucket_key) <= set(primary_keys):
        problems.add(
            f"config `bucket_key` {bucket_key} must be a subset of the primary key {primary_keys}."
        )
    bucket = _int_or(options.get("bucket", "-1"), -1)
    if primary_keys and partition_keys and (bucket > 0 or bucket == -2):
        if not set(partition_keys) <= set(primary_keys):
            problems.add(
                f"primary key {primary_keys} does not contain all partition keys "
                f"{partition_keys}: with {'postpone' if bucket == -2 else 'fixed'} buckets "
                "Paimon cannot update across partitions. Add the partition columns to "
                "`primary_key`, or use dynamic buckets (buckets=-1)."
            )
    if row_kind_column is not None:
        types = dict(columns)
        if row_kind_column not in types:
            problems.add(
                f"config `row_kind_column` is {row_kind_column!r}, which the query does not return."
            )
        elif row_kind_column in primary_keys:
            problems.add("config `row_kind_column` cannot be a primary-key column.")
        elif not types[row_kind_column].upper().startswith(("STRING", "VARCHAR", "CHAR")):
            problems.add(
                f"config `row_kind_column` {row_kind_column!r} must be a string column holding "
                f"+I, -U, +U or -D (it is {types[row_kind_column]})."
            )


def _check_merge_spec(definition: TableDefinition, columns, problems: ConfigProblems) -> None:
    stored = [(n, t) for n, t in columns if n != definition.row_kind_column]
    try:
        MergeSpec.from_table_options(
            schema=stored, primary_keys=list(definition.primary_keys), options=definition.options
        )
    except PaimonConfigError as exc:
        problems.add(str(exc))
