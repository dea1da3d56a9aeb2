"""Value-picking and comparing functions: first/last (non-null) value, max, min, bool_and, bool_or.

Sequence-group behaviour (``agg_in_group``) follows Paimon's ``aggReversed(acc, x) = agg(x, acc)``
for records whose group sequence is older than the stored one.
"""
from __future__ import annotations

import polars as pl

from .base import Aggregator, GroupMasks, Masks, when_any


def _position() -> pl.Expr:
    return pl.int_range(pl.len())


class LastValue(Aggregator):
    """Last record's value, NULL included; a retraction sets NULL (FieldLastValueAgg)."""

    name = "last_value"
    supports_retract = True
    supports_sequence_group = True

    def agg(self, col, m: Masks):
        if not m.has_retract:
            return m.adds(col).last()
        seen = m.add | m.ret
        return pl.when(m.add.filter(seen).last()).then(col.filter(seen).last())

    def agg_in_group(self, col, g: GroupMasks):
        # older additions leave the value (agg(x, acc) returns acc); every retraction sets NULL
        seen = g.w | g.rw | g.rl
        return pl.when(g.w.filter(seen).last()).then(col.filter(seen).last())


class PrimaryKeyValue(Aggregator):
    """Paimon's ``primary-key`` function (FieldPrimaryKeyAgg), which keys use: every record,
    added or retracted, sets its value, NULL included."""

    name = "primary-key"
    supports_retract = True
    supports_sequence_group = True

    def agg(self, col, m: Masks):
        if not m.has_retract:
            return m.adds(col).last()
        return col.filter(m.add | m.ret).last()

    def agg_in_group(self, col, g: GroupMasks):
        # an older addition keeps the value (aggReversed = agg(x, acc) returns acc)
        return col.filter(g.w | g.rw | g.rl).last()


class LastNonNullValue(Aggregator):
    """Last non-null value; retracting a non-null value sets NULL (FieldLastNonNullValueAgg)."""

    name = "last_non_null_value"
    supports_retract = True
    supports_sequence_group = True

    def agg(self, col, m: Masks):
        if m.all_add:
            return col.drop_nulls().last()
        if not m.has_retract:
            return col.filter(m.add & col.is_not_null()).last()
        seen = (m.add | m.ret) & col.is_not_null()
        return pl.when(m.add.filter(seen).last()).then(col.filter(seen).last())

    def agg_in_group(self, col, g: GroupMasks):
        nn = col.is_not_null()
        if g.has_retract:
            pos = _position()
            reset = pos.filter((g.rw | g.rl) & nn).max().fill_null(-1)
            after = pos > reset
        else:
            after = pl.lit(True)
        # newer non-null wins; an older record only fills a NULL accumulator
        return pl.coalesce(col.filter(g.w & nn & after).last(), col.filter(g.l & nn & after).first())


class FirstValue(Aggregator):
    """First record's value, NULL included (FieldFirstValueAgg); no retraction."""

    name = "first_value"
    supports_sequence_group = True

    def agg(self, col, m: Masks):
        if not m.restarts:
            return m.adds(col).first()
        # after a restart the row holds the -D's values; FieldFirstValueAgg's flag was set by any
        # addition before it, else the first addition after the -D initialises the value
        after = m.add & ~m.seed
        return pl.when(~m.earlier_add.any() & after.any()).then(col.filter(after).first()).otherwise(
            m.adds(col).first())

    def agg_in_group(self, col, g: GroupMasks):
        # The first input initialises the value: a newer one with itself, an older one keeps the
        # accumulator. After that a newer input keeps the value and an older one replaces it
        # (aggReversed = agg(x, acc)). A seed row is the starting accumulator, not an input; when
        # records before the restart reached the function, it is initialised already.
        older = g.l & ~g.seed
        primed_value = pl.when(older.any()).then(col.filter(older).last()).otherwise(col.filter(g.seed).last())
        return pl.when(g.primed.any()).then(primed_value).otherwise(self._fresh_in_group(col, g))

    def _fresh_in_group(self, col, g: GroupMasks):
        pos = _position()
        real = (g.w | g.l) & ~g.seed
        first = pos.filter(real).min()
        later_older = g.l & ~g.seed & (pos > first)
        seed_value = col.filter(g.seed).last()
        return (
            pl.when(later_older.any())
            .then(col.filter(later_older).last())
            .when(g.w.filter(real).first())
            .then(col.filter(real).first())
            .otherwise(seed_value)
        )


class FirstNonNullValue(Aggregator):
    """First non-null value (FieldFirstNonNullValueAgg); no retraction."""

    name = "first_non_null_value"
    supports_sequence_group = True
    initialized_by_non_null = True

    def agg_in_group(self, col, g: GroupMasks):
        # initialised before a restart of the row: the seed's value stays against newer inputs and
        # every older input replaces it (agg(x, acc) returns x)
        older = g.l & ~g.seed
        primed_value = pl.when(older.any()).then(col.filter(older).last()).otherwise(col.filter(g.seed).last())
        return pl.when(g.primed.any()).then(primed_value).otherwise(self._fresh_in_group(col, g))

    def _fresh_in_group(self, col, g: GroupMasks):
        """FieldFirstNonNullValueAgg keeps an ``initialized`` flag. A newer input x: ``agg(acc, x)``
        takes x if not initialized and x is non-null. An older one: ``aggReversed`` = ``agg(x, acc)``:
        not initialized and acc non-null -> keep acc and initialize; otherwise the result is x,
        NULL included -- so after initialization every older input replaces the value. The
        row's starting value is the seed's (initRow), not an input."""
        pos = _position()
        newer, older = g.w & ~g.seed, g.l & ~g.seed
        nn = col.is_not_null()
        seed_value = col.filter(g.seed).last()
        last_older = pl.when(older).then(pos).forward_fill().shift(1)
        last_older_nn = pl.when(older & nn).then(pos).forward_fill().shift(1)
        # an older input initializes when the value before it (last older input, else the seed) is non-null
        by_older = older & pl.when(last_older.is_null()).then(seed_value.is_not_null()).otherwise(
            last_older_nn.is_not_null() & (last_older_nn == last_older)
        ).fill_null(False)
        init_newer, init_older = pos.filter(newer & nn).min(), pos.filter(by_older).min()
        init = pl.min_horizontal(init_newer, init_older)
        older_before = pos.filter(older & (pos < init)).max()
        at_init = (
            pl.when(init_newer == init).then(col.filter(pos == init).first())
            .when(older_before.is_null()).then(seed_value)
            .otherwise(col.filter(pos == older_before).first())
        )
        last_older_after = pos.filter(older & (pos > init)).max()
        last_older_any = pos.filter(older).max()
        return (
            pl.when(init.is_null())
            .then(pl.when(last_older_any.is_null()).then(seed_value).otherwise(col.filter(pos == last_older_any).first()))
            .when(last_older_after.is_not_null()).then(col.filter(pos == last_older_after).first())
            .otherwise(at_init)
        )

    def agg(self, col, m: Masks):
        if m.all_add:
            return col.drop_nulls().first()
        first = col.filter(m.add & col.is_not_null()).first()
        if not m.restarts:
            return first
        # after a restart: FieldFirstNonNullValueAgg stays initialised by an earlier non-null
        # input (the -D's value is kept, NULL included); else the first non-null input after it
        after = m.add & ~m.seed & col.is_not_null()
        kept = (m.earlier_add & col.is_not_null()).any() | ~after.any()
        return pl.when(m.seed.any()).then(
            pl.when(kept).then(col.filter(m.seed).first()).otherwise(col.filter(after).first())
        ).otherwise(first)


class FirstNotNullValue(FirstNonNullValue):
    """Paimon's legacy name for first_non_null_value."""

    name = "first_not_null_value"


class Max(Aggregator):
    name = "max"
    order_insensitive = True
    supports_sequence_group = True

    def check_type(self, t):
        # Paimon's TypeCheckUtils.isComparable: every type but the constructed ones; BOOLEAN
        # orders false < true and BINARY compares unsigned bytes (InternalRowUtils.compare).
        if not (t.is_comparable or t.root in ("BOOLEAN", "VARBINARY")):
            raise self.type_error(
                "BOOLEAN, CHAR, VARCHAR, BINARY, VARBINARY, DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, "
                "DOUBLE, DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ"
            )

    def agg(self, col, m: Masks):
        return m.adds(col).max()

    def agg_in_group(self, col, g: GroupMasks):
        return self.agg(col, Masks(g.w | g.l, pl.lit(False), False))


class Min(Max):
    name = "min"

    def agg(self, col, m: Masks):
        return m.adds(col).min()


class BoolAnd(Aggregator):
    name = "bool_and"
    order_insensitive = True
    supports_sequence_group = True

    def check_type(self, t):
        if t.root != "BOOLEAN":
            raise self.type_error("BOOLEAN")

    def agg(self, col, m: Masks):
        return when_any(col, m.add, col.filter(m.add).all(ignore_nulls=True))

    def agg_in_group(self, col, g: GroupMasks):
        return self.agg(col, Masks(g.w | g.l, pl.lit(False), False))


class BoolOr(BoolAnd):
    name = "bool_or"

    def agg(self, col, m: Masks):
        return when_any(col, m.add, col.filter(m.add).any(ignore_nulls=True))
