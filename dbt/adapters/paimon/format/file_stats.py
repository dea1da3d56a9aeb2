"""File statistics: what the adapter's writers store, and how reads skip files by them.

Paimon records each data file's per-column minimum, maximum and null count in the manifests
(``metadata.stats-mode``). Java writes them by default (``truncate(16)``); pypaimon writes none
unless asked. The adapter's writers store full statistics when the table chooses no mode, so
that a read filtering on any column (Paimon's engines, and the adapter's Python data source:
``stats_predicate``) opens only the files that can hold matching rows.
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

STATS_MODE = "metadata.stats-mode"
# The comparisons file statistics can answer (Spark's pushed filters, as data):
# (operation, column, value); operation one of STATS_OPERATIONS.
Condition = Tuple[str, str, Any]
STATS_OPERATIONS = ("equal", "less_than", "less_or_equal", "greater_than", "greater_or_equal",
                    "is_in", "is_null", "is_not_null", "startswith")
# types whose statistics pypaimon decodes to the values Spark's filters carry (ints, strings,
# dates); floating point (NaN) and the other types are not used to skip files
_STATS_TYPES = ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "STRING", "VARCHAR", "DATE")


def stats_predicate(table, conditions: Sequence[Condition]):
    """A pypaimon predicate (AND) of the ``conditions`` that can skip whole files by their
    statistics, or None. A primary-key table's files are skipped by their keys' statistics
    only: a key none of whose records is read cannot match, whereas a value filter could drop a
    file holding the update that supersedes a matching record (Java skips by value statistics
    only for files above level 0 of a table that needs no merge). Partition columns are left
    to the partition filter."""
    from pypaimon.common.predicate_builder import PredicateBuilder

    fields = {f.name: f for f in table.table_schema.fields}
    usable = set(table.trimmed_primary_keys) if table.primary_keys else \
        set(fields) - set(table.partition_keys)
    builder = PredicateBuilder(table.table_schema.fields)
    predicates = []
    for operation, column, value in conditions:
        field = fields.get(column)
        if operation not in STATS_OPERATIONS or column not in usable or field is None \
                or not skips_by_stats(field):
            continue
        if operation in ("is_null", "is_not_null"):
            predicates.append(getattr(builder, operation)(column))
        elif operation == "is_in":
            predicates.append(builder.is_in(column, list(value)))
        else:
            predicates.append(getattr(builder, operation)(column, value))
    if not predicates:
        return None
    return predicates[0] if len(predicates) == 1 else builder.and_predicates(predicates)


def skips_by_stats(field) -> bool:
    """Whether statistics of the column (a pypaimon DataField) may skip files or row groups."""
    return str(field.type).split("(")[0].split(" ")[0].upper() in _STATS_TYPES


def full_stats_options(table):
    """The table's options for a writer: full statistics unless it chooses a stats mode."""
    from pypaimon.common.options.core_options import CoreOptions

    options = CoreOptions.copy(table.options)
    if STATS_MODE not in table.table_schema.options:
        options.set(CoreOptions.METADATA_STATS_MODE, "full")
    return options


def with_full_stats(table):
    """``table`` for its own write builder, with ``full_stats_options``."""
    if STATS_MODE in table.table_schema.options:
        return table
    return table.copy({STATS_MODE: "full"})
