"""Every Paimon option the merge runtime reads, declared once with its default and doc.

Keys, defaults and fallback keys follow Apache Paimon's ``CoreOptions``. Options
that do not concern merging (``bucket``, ``file.format``, ...) are not declared here
and are ignored by the runtime.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Optional, Tuple

from .errors import PaimonConfigError


def _parse_bool(key: str, value: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise PaimonConfigError(f"Option '{key}' must be 'true' or 'false', got {value!r}.")


def _parse_str(key: str, value: str) -> str:
    return str(value)


def _enum(*choices: str) -> Callable[[str, str], str]:
    def parse(key: str, value: str) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise PaimonConfigError(
                f"Option '{key}' has unknown value {value!r}. Expected one of: {', '.join(choices)}."
            )
        return text

    return parse


@dataclass(frozen=True)
class Option:
    key: str
    default: object
    doc: str
    parse: Callable[[str, str], object] = _parse_str
    fallback_keys: Tuple[str, ...] = ()

    def get(self, options: Mapping[str, str]):
        for key in (self.key,) + self.fallback_keys:
            if key in options and options[key] is not None:
                return self.parse(key, options[key])
        return self.default

    def given(self, options: Mapping[str, str]) -> bool:
        return any(k in options for k in (self.key,) + self.fallback_keys)


MERGE_ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")

MERGE_ENGINE = Option(
    "merge-engine", "deduplicate", "Merge engine of a primary-key table.", _enum(*MERGE_ENGINES)
)
IGNORE_DELETE = Option(
    "ignore-delete", False, "Drop -D and -U records before they are written (all engines).", _parse_bool,
    fallback_keys=("first-row.ignore-delete", "deduplicate.ignore-delete", "partial-update.ignore-delete"),
)
IGNORE_UPDATE_BEFORE = Option(
    "ignore-update-before", False, "Drop -U records before they are written (all engines).", _parse_bool
)
SEQUENCE_FIELD = Option(
    "sequence.field", None, "Comma-separated fields that order records of a key before the arrival order."
)
SEQUENCE_FIELD_SORT_ORDER = Option(
    "sequence.field.sort-order", "ascending", "Order of sequence.field values.", _enum("ascending", "descending")
)
PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE = Option(
    "partial-update.remove-record-on-delete", False, "partial-update: a -D removes the whole row.", _parse_bool
)
PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP = Option(
    "partial-update.remove-record-on-sequence-group", None,
    "partial-update: a -D that wins one of these sequence groups removes the whole row.",
)
AGGREGATION_REMOVE_RECORD_ON_DELETE = Option(
    "aggregation.remove-record-on-delete", False, "aggregation: a -D removes the whole row.", _parse_bool
)
FIELDS_DEFAULT_AGG_FUNC = Option(
    "fields.default-aggregate-function", None, "Aggregate function of fields without their own."
)
CHANGELOG_PRODUCER = Option(
    "changelog-producer", "none", "Changelog producer.", _enum("none", "input", "lookup", "full-compaction")
)
CHANGELOG_ROW_DEDUPLICATE = Option(
    "changelog-producer.row-deduplicate", False,
    "Do not emit -U/+U for a key whose value did not change (lookup / full-compaction).", _parse_bool,
)
CHANGELOG_ROW_DEDUPLICATE_IGNORE_FIELDS = Option(
    "changelog-producer.row-deduplicate-ignore-fields", None,
    "Fields ignored when comparing before/after for changelog-producer.row-deduplicate.",
)

TABLE_OPTIONS: Dict[str, Option] = {
    o.key: o
    for o in (
        MERGE_ENGINE, IGNORE_DELETE, IGNORE_UPDATE_BEFORE, SEQUENCE_FIELD, SEQUENCE_FIELD_SORT_ORDER,
        PARTIAL_UPDATE_REMOVE_RECORD_ON_DELETE,
        PARTIAL_UPDATE_REMOVE_RECORD_ON_SEQUENCE_GROUP, AGGREGATION_REMOVE_RECORD_ON_DELETE,
        FIELDS_DEFAULT_AGG_FUNC, CHANGELOG_PRODUCER, CHANGELOG_ROW_DEDUPLICATE,
        CHANGELOG_ROW_DEDUPLICATE_IGNORE_FIELDS,
    )
}

# ---- per-field options: fields.<name>.<suffix> -------------------------------------------
FIELDS_PREFIX = "fields."


@dataclass(frozen=True)
class FieldOption:
    suffix: str
    default: object
    doc: str
    parse: Callable[[str, str], object] = _parse_str
    supported: bool = True
    merge: bool = True  # False: a Paimon field option that does not concern merging (ignored here)

    def key(self, field: str) -> str:
        return f"{FIELDS_PREFIX}{field}.{self.suffix}"

    def get(self, options: Mapping[str, str], field: str):
        key = self.key(field)
        return self.parse(key, options[key]) if key in options else self.default


AGGREGATE_FUNCTION = FieldOption("aggregate-function", None, "Aggregate function of the field.")
IGNORE_RETRACT = FieldOption(
    "ignore-retract", False, "Skip -U/-D for this field's aggregate function.", _parse_bool
)
LIST_AGG_DELIMITER = FieldOption("list-agg-delimiter", ",", "Delimiter of listagg.")
DISTINCT = FieldOption("distinct", False, "listagg / collect keep distinct elements.", _parse_bool)
NESTED_KEY = FieldOption("nested-key", None, "nested_update / nested_partial_update: keys of the nested rows.")
def _parse_count(key: str, value: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise PaimonConfigError(f"Option '{key}' must be an integer, got {value!r}.") from None


NESTED_KEY_NULL_STRATEGY = FieldOption(
    "nested-key-null-strategy", "merge",
    "nested_update / nested_partial_update: rows whose nested key has a NULL are merged, ignored or an error.",
    _enum("merge", "ignore", "error"),
)
NESTED_SEQUENCE_FIELD = FieldOption(
    "nested-sequence-field", None, "nested_update: fields of the nested row ordering rows of one nested key."
)
TS_FIELD = FieldOption("ts-field", None, "merge_map_with_keytime: the row field holding the timestamp string.")
COUNT_LIMIT = FieldOption("count-limit", None, "nested_update: the most nested rows (keys) kept.", _parse_count)
SEQUENCE_GROUP = FieldOption(
    "sequence-group", None, "partial-update: fields ordered by this (these) sequence field(s)."
)

FIELD_OPTIONS: Dict[str, FieldOption] = {
    o.suffix: o
    for o in (
        AGGREGATE_FUNCTION, IGNORE_RETRACT, LIST_AGG_DELIMITER, DISTINCT, NESTED_KEY, SEQUENCE_GROUP,
        NESTED_KEY_NULL_STRATEGY, NESTED_SEQUENCE_FIELD, COUNT_LIMIT, TS_FIELD,
        # Paimon field options we deliberately do not implement: rejected with a clear error.
        # Paimon field options of other layers (statistics, defaults, storage): not ours, ignored.
        FieldOption("stats-mode", None, "metadata statistics", merge=False),
        FieldOption("default-value", None, "default value of a column", merge=False),
        FieldOption("map.storage-layout", None, "map storage", merge=False),
        FieldOption("map.shared-shredding.max-columns", None, "map storage", merge=False),
        FieldOption("map.shared-shredding.column-placement-policy", None, "map storage", merge=False),
    )
}


def split_field_key(key: str) -> Optional[Tuple[str, str]]:
    """``fields.a,b.sequence-group`` -> (``a,b``, ``sequence-group``); None for other keys."""
    if not key.startswith(FIELDS_PREFIX) or key == FIELDS_DEFAULT_AGG_FUNC.key:
        return None
    rest = key[len(FIELDS_PREFIX):]
    for suffix in sorted(FIELD_OPTIONS, key=len, reverse=True):
        if rest.endswith("." + suffix):
            return rest[: -len(suffix) - 1], suffix
    if "." in rest:
        name, suffix = rest.rsplit(".", 1)
        return name, suffix
    return rest, ""
