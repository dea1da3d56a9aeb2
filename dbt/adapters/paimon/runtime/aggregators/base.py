"""The aggregate-function interface (one small class per function, see Paimon's FieldAggregator).

An aggregator turns the records of one merge (rows of a polars group, in merge order)
into one value with *vectorized* polars expressions:

* ``agg(col, m)``: aggregation engine. ``m.add`` marks records that accumulate
  (+I/+U), ``m.ret`` records that retract (-U/-D).
* ``agg_in_group(col, g)``: partial-update field protected by a sequence group; ``g.w``/``g.l``
  mark additions whose group sequence is newer-or-equal / older than the stored one
  (Paimon calls ``agg`` / ``aggReversed``), ``g.rw``/``g.rl`` the same for retractions.
* ``finish(frame, col)``: optional post-processing on the one-row-per-key frame.

Retraction raises by default, naming the option that fixes it (``ignore-retract``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Mapping, Optional

import polars as pl

from ..errors import PaimonConfigError, PaimonDataError
from ..options import IGNORE_RETRACT
from ..types import SqlType


@dataclass(frozen=True)
class Masks:
    add: pl.Expr
    ret: pl.Expr
    has_retract: bool
    all_add: bool = False  # every record of the merge adds: no filtering needed (fast path)
    # aggregation.remove-record-on-delete: the last -D restarts the row from its values (seed,
    # also under ``add``); ``earlier_add`` marks the additions before it, which no longer count
    # but did reach stateful functions (first_value's ``initialized`` flag survives the restart)
    restarts: bool = False
    seed: pl.Expr = pl.lit(False)
    earlier_add: pl.Expr = pl.lit(False)

    def adds(self, col: pl.Expr) -> pl.Expr:
        return col if self.all_add else col.filter(self.add)


@dataclass(frozen=True)
class GroupMasks:
    w: pl.Expr  # addition, group sequence >= stored
    l: pl.Expr  # addition, group sequence < stored
    rw: pl.Expr  # retraction, group sequence >= stored
    rl: pl.Expr  # retraction, group sequence < stored
    has_retract: bool
    # the record whose values start the row (Paimon initRow): it is the accumulator, not an input
    seed: pl.Expr = pl.lit(False)
    # the function's ``initialized`` flag was set by the records before a restart of the row
    primed: pl.Expr = pl.lit(False)


def when_any(col: pl.Expr, mask, value: pl.Expr) -> pl.Expr:
    """``value`` if any record under ``mask`` has a non-null ``col``, else NULL (Paimon: agg(null, null) = null)."""
    counted = col if mask is None else col.filter(mask)
    return pl.when(counted.count() > 0).then(value)


class Aggregator:
    name: ClassVar[str] = ""
    supports_retract: ClassVar[bool] = False
    supports_sequence_group: ClassVar[bool] = False
    # merging one addition gives that addition back (so a key's only record needs no special case)
    single_safe: ClassVar[bool] = True
    # the result does not depend on the order of the additions (sum, max, ...)
    order_insensitive: ClassVar[bool] = False
    # an ``initialized`` flag set only by a non-null value (first_non_null_value): a partial-update
    # group gives it its own ``GroupMasks.primed`` after a restart of the row
    initialized_by_non_null: ClassVar[bool] = False

    def __init__(self, field: str, sql_type: SqlType, options: Mapping[str, str]):
        self.field = field
        self.sql_type = sql_type
        self.check_type(sql_type)

    # -- creation ---------------------------------------------------------------------------
    def check_type(self, sql_type: SqlType) -> None:
        """Raise PaimonConfigError when the function does not accept the field's type."""

    def type_error(self, expected: str) -> PaimonConfigError:
        return PaimonConfigError(
            f"Aggregate function '{self.name}' of field '{self.field}' does not support type "
            f"{self.sql_type.text or self.sql_type.root}; it accepts {expected}. Change "
            f"'fields.{self.field}.aggregate-function' or the column type."
        )

    # -- merge ------------------------------------------------------------------------------
    def agg(self, col: pl.Expr, m: Masks) -> pl.Expr:
        raise NotImplementedError

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        raise PaimonConfigError(
            f"Aggregate function '{self.name}' inside a partial-update sequence group (field "
            f"'{self.field}') is not supported by dbt-paimon. Use one of: sum, count, product, max, min, "
            "bool_and, bool_or, first_value, last_value, last_non_null_value, listagg (without distinct)."
        )

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        return frame

    def validate(self, frame: pl.DataFrame, column: str, group: list, m: Masks) -> None:
        """Data checks Paimon does while merging (overflow); called on multi-record merges only."""

    def retract_error(self) -> PaimonDataError:
        return PaimonDataError(
            f"Aggregate function '{self.name}' does not support retraction (-U/-D) on field "
            f"'{self.field}'. If retraction messages may be ignored for this field, set "
            f"'{IGNORE_RETRACT.key(self.field)}' = 'true'; or drop them with 'ignore-delete' = 'true'."
        )


class IgnoreRetract(Aggregator):
    """Wraps an aggregator so retractions leave the field untouched (Paimon FieldIgnoreRetractAgg)."""

    supports_retract = True

    def __init__(self, inner: Aggregator):  # noqa: D107 - wrapper, no type check of its own
        self.inner = inner
        self.field = inner.field
        self.sql_type = inner.sql_type
        self.name = inner.name
        self.supports_sequence_group = inner.supports_sequence_group
        self.single_safe = inner.single_safe
        self.order_insensitive = inner.order_insensitive
        self.initialized_by_non_null = inner.initialized_by_non_null

    def agg(self, col: pl.Expr, m: Masks) -> pl.Expr:
        return self.inner.agg(col, replace(m, ret=pl.lit(False), has_retract=False))

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        return self.inner.agg_in_group(col, replace(g, rw=pl.lit(False), rl=pl.lit(False), has_retract=False))

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        return self.inner.finish(frame, column)

    def validate(self, frame, column, group, m: Masks) -> None:
        self.inner.validate(frame, column, group, replace(m, ret=pl.lit(False), has_retract=False))


def is_blank(col: pl.Expr) -> pl.Expr:
    """Java StringUtils.isBlank: null or only whitespace."""
    return col.is_null() | (col.str.strip_chars() == "")


def last_of(col: pl.Expr, mask: pl.Expr) -> pl.Expr:
    return col.filter(mask).last()


def first_of(col: pl.Expr, mask: pl.Expr) -> pl.Expr:
    return col.filter(mask).first()


def optional(value: Optional[pl.Expr]) -> pl.Expr:
    return value if value is not None else pl.lit(None)
