"""The checks behind :meth:`MergeSpec.from_table_options` (spec.py), one function per rule
family (``validate_*``), which it calls in order as Paimon's ``SchemaValidation.
validateTableSchema`` calls its ``validateXxx`` methods. Each raises :class:`PaimonConfigError`
naming the option and the fix, and returns what it parsed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Mapping, Optional, Tuple

from . import options as O
from .aggregators import Aggregator, IgnoreRetract, check_function_name, create_aggregator
from .aggregators.values import LastValue
from .errors import PaimonConfigError
from .types import parse_type


@dataclass(frozen=True)
class SequenceGroup:
    """partial-update ``fields.<order_fields>.sequence-group = <protected>``."""

    order_fields: Tuple[str, ...]
    protected: Tuple[str, ...]
    remove_record_on_delete: bool = False  # named in partial-update.remove-record-on-sequence-group


# ---- parsing ----------------------------------------------------------------------------------
def _split(value: Optional[str]) -> list:
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def parse_schema(schema) -> list:
    pairs = list(schema.items()) if isinstance(schema, Mapping) else list(schema or [])
    if not pairs:
        raise PaimonConfigError("The table schema is empty: give a list of (column name, Paimon type).")
    columns, seen = [], set()
    for pair in pairs:
        try:
            name, type_text = pair
        except (TypeError, ValueError):
            raise PaimonConfigError(f"Schema entries must be (name, type) pairs, got {pair!r}.") from None
        if name in seen:
            raise PaimonConfigError(f"Column '{name}' appears twice in the schema.")
        if str(name).startswith("_"):
            raise PaimonConfigError(f"Column name '{name}' is reserved: names starting with '_' are system fields.")
        seen.add(name)
        columns.append((name, parse_type(type_text)))
    return columns


# Paimon's SchemaValidation refuses these in a primary key (PRIMARY_KEY_UNSUPPORTED_LOGICAL_TYPES:
# MapType, ArrayType, RowType, MultisetType; since 1.x validateOnlyContainPrimitiveType, which
# refuses VECTOR too), and a VARIANT, whose bytes have no bucket hash here
KEY_UNSUPPORTED_ROOTS = ("MAP", "ARRAY", "ROW", "MULTISET", "VARIANT", "VECTOR")


def parse_primary_keys(primary_keys, names) -> list:
    pks = _split(primary_keys) if isinstance(primary_keys, str) else list(primary_keys or [])
    if not pks:
        raise PaimonConfigError("A primary-key table needs at least one primary key column.")
    for k in pks:
        if k not in names:
            raise PaimonConfigError(f"Primary key '{k}' can not be found in the table schema {names}.")
        if pks.count(k) > 1:
            raise PaimonConfigError(f"Primary key '{k}' is listed twice.")
    return pks


def validate_primary_key_types(pks, types) -> None:
    for k in pks:
        if types[k].root in KEY_UNSUPPORTED_ROOTS:
            raise PaimonConfigError(
                f"The type {types[k].text} in primary key field '{k}' is unsupported: Paimon "
                f"keys are atomic values (no {', '.join(KEY_UNSUPPORTED_ROOTS)}); key the "
                f"table by another column.")


def parse_field_options(opts: Mapping[str, str], names: Iterable[str]) -> Dict[str, Tuple[Tuple[str, ...], str]]:
    """Check every ``fields.*`` key: the fields exist, the suffix is known and supported."""
    names = list(names)
    parsed = {}
    for key in opts:
        split = O.split_field_key(key)
        if split is None:
            continue
        target, suffix = split
        fields = tuple(f.strip() for f in target.split(","))
        option = O.FIELD_OPTIONS.get(suffix)
        if option is None:
            raise PaimonConfigError(
                f"Unknown field option '{key}'. Field options are fields.<field>.<one of: "
                f"{', '.join(s for s, o in O.FIELD_OPTIONS.items() if o.supported)}>."
            )
        if not option.merge:
            continue
        if not option.supported:
            raise PaimonConfigError(f"Field option '{key}' is not supported by dbt-paimon; remove it.")
        if len(fields) > 1 and suffix != O.SEQUENCE_GROUP.suffix:
            raise PaimonConfigError(f"Option '{key}' must name exactly one field.")
        for f in fields:
            if f not in names:
                raise PaimonConfigError(
                    f"Field '{f}' in option '{key}' can not be found in the table schema {names}."
                )
        parsed[key] = (fields, suffix)
    return parsed


def validate_engine_options(engine: str, opts, field_options, pks) -> None:
    def reject(key: str, engines: str) -> None:
        raise PaimonConfigError(
            f"Option '{key}' only applies to {engines}, but 'merge-engine' is '{engine}'. Remove the option "
            "or change 'merge-engine'."
        )

    for key, (fields, suffix) in field_options.items():
        if suffix != O.SEQUENCE_GROUP.suffix and all(f in pks for f in fields):
            continue  # options of a primary key: Paimon never aggregates keys, in any engine
        if suffix == O.SEQUENCE_GROUP.suffix and engine != "partial-update":
            reject(key, "'merge-engine' = 'partial-update'")
        if suffix in ("aggregate-function", "ignore-retract", "list-agg-delimiter", "distinct", "nested-key",
                      "nested-key-null-strategy", "nested-sequence-field", "count-limit", "ts-field") and (
            engine not in ("aggregation", "partial-update")
        ):
            reject(key, "the 'aggregation' and 'partial-update' merge engines")
    if O.FIELDS_DEFAULT_AGG_FUNC.key in opts and engine not in ("aggregation", "partial-update"):
        reject(O.FIELDS_DEFAULT_AGG_FUNC.key, "the 'aggregation' and 'partial-update' merge engines")
    for option in (O.PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE, O.PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP):
        if option.key in opts and engine != "partial-update":
            reject(option.key, "'merge-engine' = 'partial-update'")
    if O.AGGREGATION_REMOVE_RECORD_ON_DELETE.key in opts and engine != "aggregation":
        reject(O.AGGREGATION_REMOVE_RECORD_ON_DELETE.key, "'merge-engine' = 'aggregation'")


def _function_name(opts, f: str) -> Optional[str]:
    name = opts.get(O.AGGREGATE_FUNCTION.key(f)) or O.FIELDS_DEFAULT_AGG_FUNC.get(opts)
    return name.strip().lower() if name else None


def _check_key_function(f: str, opts) -> None:
    """A primary key keeps its value whatever its function says (Paimon's getAggFuncName returns
    ``primary-key`` for keys before reading the option), but the name must still be a function
    Paimon knows (SchemaValidation.validateMergeFunctionFactory discovers it for every field)."""
    name = _function_name(opts, f)
    if name is not None:
        check_function_name(name, f)


def _aggregation_aggregators(names, types, pks, sequence_fields, opts) -> Dict[str, Aggregator]:
    out = {}
    for f in names:
        if f in pks:
            _check_key_function(f, opts)
            continue
        if f in sequence_fields:
            # Paimon: sequence fields keep the last value (FieldAggregatorFactory still wraps it
            # in FieldIgnoreRetractAgg when the field has ignore-retract)
            last = LastValue(f, types[f], opts)
            out[f] = IgnoreRetract(last) if O.IGNORE_RETRACT.get(opts, f) else last
            continue
        out[f] = create_aggregator(_function_name(opts, f) or "last_non_null_value", f, types[f], opts)
    return out


def _sequence_groups(opts, names, types, pks, field_options) -> Tuple[SequenceGroup, ...]:
    groups, owner = [], {}
    for key, (order_fields, suffix) in field_options.items():
        if suffix != O.SEQUENCE_GROUP.suffix:
            continue
        protected = tuple(_split(opts[key]))
        if not protected:
            raise PaimonConfigError(f"Option '{key}' must list the fields the sequence group protects.")
        for f in protected:
            if f not in names:
                raise PaimonConfigError(
                    f"Field '{f}' in option '{key}' can not be found in the table schema {names}."
                )
        for f in order_fields + protected:
            if f in pks:
                raise PaimonConfigError(
                    f"The sequence-group '{key}' contains primary key field '{f}', which is not allowed: "
                    "primary key columns cannot be put in a sequence-group."
                )
            if f in owner and not (f in order_fields and owner[f] == key):
                raise PaimonConfigError(
                    f"Field '{f}' is defined repeatedly by multiple sequence groups: '{owner[f]}' and '{key}'. "
                    "A field may belong to one sequence group only."
                )
            owner[f] = key
        for f in order_fields:
            if not types[f].is_comparable:
                raise PaimonConfigError(
                    f"Sequence-group field '{f}' of '{key}' has type {types[f].text}; use DECIMAL, TINYINT, "
                    "SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ."
                )
            if O.AGGREGATE_FUNCTION.key(f) in opts:
                raise PaimonConfigError(
                    f"Should not define aggregation on sequence-group field '{f}': remove "
                    f"'{O.AGGREGATE_FUNCTION.key(f)}'."
                )
        groups.append(SequenceGroup(tuple(order_fields), protected))
    # deterministic order: by the position of the first ordering field
    groups.sort(key=lambda g: names.index(g.order_fields[0]))
    return tuple(groups)


def _partial_update_aggregators(names, types, pks, groups, opts) -> Dict[str, Aggregator]:
    ordering = {f for g in groups for f in g.order_fields}
    protected = {f for g in groups for f in g.protected}
    out = {}
    for f in names:
        if f in pks:
            _check_key_function(f, opts)
            continue
        if f in ordering:
            continue  # no aggregation for sequence-group fields (checked above for explicit ones)
        name = _function_name(opts, f)
        if name is None:
            continue
        if name != "last_non_null_value" and f not in protected:
            raise PaimonConfigError(
                f"Must use sequence group for aggregation functions but not found for field '{f}' "
                f"(function '{name}'): add it to a 'fields.<seq>.sequence-group' or remove "
                f"'{O.AGGREGATE_FUNCTION.key(f)}'."
            )
        aggregator = create_aggregator(name, f, types[f], opts)
        if f in protected and not aggregator.supports_sequence_group:
            aggregator.agg_in_group(None, None)  # raises the explanatory PaimonConfigError
        out[f] = aggregator
    return out


# ---- the checks from_table_options runs, one per rule family ---------------------------------
def validate_sequence_field(opts, names, types, engine: str) -> list:
    """``sequence.field``: existing, distinct, orderable columns with no aggregation, and not
    with the first-row engine. Returns the fields."""
    sequence_fields = _split(O.SEQUENCE_FIELD.get(opts))
    for f in sequence_fields:
        if f not in names:
            raise PaimonConfigError(
                f"Sequence field '{f}' in 'sequence.field' can not be found in the table schema {names}."
            )
        if sequence_fields.count(f) > 1:
            raise PaimonConfigError(f"Sequence field '{f}' is defined repeatedly in 'sequence.field'.")
        if O.AGGREGATE_FUNCTION.key(f) in opts:
            raise PaimonConfigError(
                f"Should not define aggregation on sequence field '{f}': remove "
                f"'{O.AGGREGATE_FUNCTION.key(f)}' (sequence fields always keep the last value)."
            )
        if not types[f].is_comparable:
            raise PaimonConfigError(f"Sequence field '{f}' has type {types[f].text}, which cannot be ordered.")
    if sequence_fields and engine == "first-row":
        raise PaimonConfigError(
            "Do not support use sequence field on FIRST_ROW merge engine: remove 'sequence.field' or use "
            "'merge-engine' = 'deduplicate'."
        )
    return sequence_fields


def validate_changelog_producer(opts, names, engine: str) -> Tuple[str, list]:
    """The changelog producer the engine supports, and the row-deduplicate ignore fields are
    columns. Returns both."""
    changelog_producer = O.CHANGELOG_PRODUCER.get(opts)
    if engine == "first-row" and changelog_producer not in ("none", "lookup"):
        raise PaimonConfigError(
            f"'changelog-producer' = '{changelog_producer}' is not supported with 'merge-engine' = "
            "'first-row': Paimon only supports 'none' and 'lookup' there."
        )
    ignore_fields = _split(O.CHANGELOG_ROW_DEDUPLICATE_IGNORE_FIELDS.get(opts))
    for f in ignore_fields:
        if f not in names:
            raise PaimonConfigError(
                f"'changelog-producer.row-deduplicate-ignore-fields' names '{f}', which is not a column."
            )
    return changelog_producer, ignore_fields


def validate_aggregation(opts, names, types, pks, sequence_fields) -> Tuple[bool, Dict[str, Aggregator]]:
    """The aggregation engine: each field's function, and remove-record-on-delete without
    ignore-retract. Returns remove-record-on-delete and the aggregators."""
    remove_on_delete = O.AGGREGATION_REMOVE_RECORD_ON_DELETE.get(opts)
    aggregators = _aggregation_aggregators(names, types, pks, sequence_fields, opts)
    if remove_on_delete:
        for f in names:
            if O.IGNORE_RETRACT.get(opts, f):
                raise PaimonConfigError(
                    f"'aggregation.remove-record-on-delete' and '{O.IGNORE_RETRACT.key(f)}' have "
                    "conflicting behavior so should not be enabled at the same time; remove one."
                )
    return remove_on_delete, aggregators


def validate_partial_update(opts, names, types, pks, field_options, ignore_delete: bool
                            ) -> Tuple[bool, Tuple[SequenceGroup, ...], Dict[str, Aggregator]]:
    """The partial-update engine: its sequence groups, the functions of their fields, and the
    delete options. Returns remove-record-on-delete, the groups and the aggregators."""
    remove_on_delete = O.PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE.get(opts)
    groups = _sequence_groups(opts, names, types, pks, field_options)
    aggregators = _partial_update_aggregators(names, types, pks, groups, opts)
    remove_groups = _split(O.PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP.get(opts))
    validate_ignore_delete(ignore_delete, remove_on_delete, remove_groups)
    if remove_on_delete and groups:
        raise PaimonConfigError(
            "'sequence-group' and 'partial-update.remove-record-on-delete' have conflicting behavior so "
            "should not be enabled at the same time; use 'partial-update.remove-record-on-sequence-group'."
        )
    return remove_on_delete, validate_remove_groups(groups, remove_groups), aggregators


def validate_ignore_delete(ignore_delete: bool, remove_on_delete: bool, remove_groups) -> None:
    """'ignore-delete' excludes partial-update's options that act on deletes."""
    if remove_on_delete and ignore_delete:
        raise PaimonConfigError(
            "'ignore-delete' and 'partial-update.remove-record-on-delete' have conflicting behavior "
            "so should not be enabled at the same time; remove one."
        )
    if remove_groups and ignore_delete:
        raise PaimonConfigError(
            "'ignore-delete' and 'partial-update.remove-record-on-sequence-group' have conflicting "
            "behavior so should not be enabled at the same time; remove one."
        )


def validate_remove_groups(groups: Tuple[SequenceGroup, ...], remove_groups
                           ) -> Tuple[SequenceGroup, ...]:
    """'partial-update.remove-record-on-sequence-group' names sequence-group fields; returns
    the groups with the ones it names marked."""
    if not remove_groups:
        return groups
    ordering = {f: i for i, g in enumerate(groups) for f in g.order_fields}
    missing = [f for f in remove_groups if f not in ordering]
    if missing:
        raise PaimonConfigError(
            f"field '{','.join(missing)}' defined in 'partial-update.remove-record-on-sequence-group' "
            f"option must be part of sequence groups (sequence fields: {sorted(ordering)})."
        )
    chosen = {ordering[f] for f in remove_groups}
    return tuple(SequenceGroup(g.order_fields, g.protected, i in chosen) for i, g in enumerate(groups))
