"""sum, count, product (Paimon FieldSumAgg / FieldProductAgg; ``count`` is dbt-paimon's name for
an INT/BIGINT sum: Apache Paimon has no count function and documents counting as a sum of 1s)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import PaimonDataError
from .base import Aggregator, GroupMasks, Masks, when_any

_INT_LIMITS = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
_POLARS_INT = {"TINYINT": pl.Int8, "SMALLINT": pl.Int16, "INT": pl.Int32, "BIGINT": pl.Int64}


def _wide(sql_type) -> pl.DataType:
    """Exact type for running sums while checking overflow."""
    return pl.Int128 if sql_type.root == "BIGINT" else pl.Int64


class Sum(Aggregator):
    """Signed sum: additions add, retractions subtract; NULL inputs are skipped; all NULL -> NULL."""

    name = "sum"
    order_insensitive = True
    supports_retract = True
    supports_sequence_group = True

    def check_type(self, t):
        if not t.is_numeric:
            raise self.type_error("DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE")

    def _value(self, col: pl.Expr) -> pl.Expr:
        # validate() has proven that no running sum leaves the type's range, so an Int64 sum
        # (wrapping for BIGINT) equals the exact one.
        return col.cast(pl.Int64) if self.sql_type.is_integer else col

    def agg(self, col: pl.Expr, m: Masks) -> pl.Expr:
        x = self._value(col)
        if m.all_add:
            return when_any(col, None, x.sum())
        if not m.has_retract:
            return when_any(col, m.add, x.filter(m.add).sum())
        signed = pl.when(m.add).then(x).when(m.ret).then(self._negate(x))
        return when_any(col, m.add | m.ret, signed.sum())

    def _negate(self, x: pl.Expr) -> pl.Expr:
        return -x

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        # Order-independent: newer and older records all take part (seed 001).
        return self.agg(col, Masks(g.w | g.l, g.rw | g.rl, g.has_retract))

    def validate(self, frame: pl.DataFrame, column: str, group: list, m: Masks) -> None:
        if not self.sql_type.is_integer:
            return
        lo, hi = _INT_LIMITS[self.sql_type.root]
        wide = _wide(self.sql_type)
        active = m.add | m.ret if m.has_retract else m.add
        if self.sql_type.root == "BIGINT":  # float bound, generous margin for rounding
            bound = frame.select(pl.col(column).cast(pl.Float64).filter(active).abs().sum()).item()
            safe = bound is None or bound < 2.0**62
        else:
            bound = frame.select(pl.col(column).cast(pl.Int64).filter(active).abs().sum()).item()
            safe = bound is None or bound <= hi
        if safe:
            return  # no running sum of any merge can leave the type's range
        x = pl.col(column).cast(wide)
        # Paimon checks every addition (Math.addExact): look at each running sum.
        signed = pl.when(m.add).then(x).when(m.ret).then(pl.lit(0, dtype=wide) - x).otherwise(0).fill_null(0)
        prefix = frame.select(signed.cum_sum().over(group).alias("p"))["p"]
        if prefix.max() > hi or prefix.min() < lo:
            raise PaimonDataError(
                f"{self.sql_type.root.lower()} overflow in aggregate function '{self.name}' of field "
                f"'{self.field}' (Paimon raises ArithmeticException). Use a wider type such as BIGINT or DECIMAL."
            )

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        if self.sql_type.is_integer:
            return frame.with_columns(pl.col(column).cast(_POLARS_INT[self.sql_type.root]))
        if self.sql_type.root == "DECIMAL":
            # Paimon's Decimal.fromBigDecimal returns NULL when the result no longer fits the precision.
            dtype = pl.Decimal(self.sql_type.precision, self.sql_type.scale)
            return frame.with_columns(pl.col(column).cast(dtype, strict=False))
        return frame


class Count(Sum):
    """INT/BIGINT sum of the written values (write 1 per counted row); supports retraction."""

    name = "count"

    def check_type(self, t):
        if t.root not in ("INT", "BIGINT"):
            raise self.type_error("INTEGER, BIGINT")


class Product(Aggregator):
    """Product of additions; retraction divides (exact for the values that were multiplied in)."""

    name = "product"
    order_insensitive = True
    supports_retract = True
    single_safe = False  # DECIMAL products are finished from lists
    supports_sequence_group = True

    def check_type(self, t):
        if not t.is_numeric:
            raise self.type_error("DECIMAL, TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE")

    def agg(self, col: pl.Expr, m: Masks) -> pl.Expr:
        if self.sql_type.root == "DECIMAL":
            # validate() has refused DECIMAL retraction already
            return col.filter(m.add & col.is_not_null())  # list; finish() multiplies with HALF_UP
        if self.sql_type.is_integer:
            x = col.cast(pl.Int64)
            num = x.filter(m.add).product()
            if not m.has_retract:
                return when_any(col, m.add, num)
            den = x.filter(m.ret).product()
            return when_any(col, m.add, num // den)
        num = col.filter(m.add).product()
        if not m.has_retract:
            return when_any(col, m.add, num)
        return when_any(col, m.add, num / col.filter(m.ret).product())

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        return self.agg(col, Masks(g.w | g.l, g.rw | g.rl, g.has_retract))

    def validate(self, frame: pl.DataFrame, column: str, group: list, m: Masks) -> None:
        if self.sql_type.root == "DECIMAL" and m.has_retract:
            if frame.select((m.ret & pl.col(column).is_not_null()).any()).item():
                raise PaimonDataError(
                    f"Retraction of a DECIMAL product (field '{self.field}') is not supported by dbt-paimon; "
                    f"set 'fields.{self.field}.ignore-retract' = 'true' or use DOUBLE."
                )
        if not self.sql_type.is_integer:
            return
        lo, hi = _INT_LIMITS[self.sql_type.root]
        bits = float(np.log2(hi))
        x = pl.col(column).cast(pl.Float64).abs()
        logs = frame.group_by(group).agg(
            pl.when(x > 0).then(x.log(2)).otherwise(0.0).filter(m.add).sum().alias("b")
        )["b"]
        if logs.len() and logs.max() >= bits:
            raise PaimonDataError(
                f"{self.sql_type.root.lower()} overflow in aggregate function 'product' of field "
                f"'{self.field}' (Paimon raises ArithmeticException). Use DOUBLE or DECIMAL."
            )

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        root = self.sql_type.root
        if root in _POLARS_INT:
            return frame.with_columns(pl.col(column).cast(_POLARS_INT[root]))
        if root != "DECIMAL":
            return frame
        # Sequential multiply, rounding HALF_UP to the column's scale after every step, as
        # Paimon's Decimal.fromBigDecimal does. Loops over list positions, not over rows.
        p, s = self.sql_type.precision, self.sql_type.scale
        target = pa.decimal128(p, s)
        lists = frame[column].to_arrow()
        if isinstance(lists, pa.ChunkedArray):
            lists = lists.combine_chunks()
        n = len(lists)
        work = pa.decimal256(min(p, 37), s)  # product precision 2p+1 must stay <= 76
        flat = pc.list_flatten(lists).cast(work)
        parent = np.asarray(pc.list_parent_indices(lists))
        offsets = np.asarray(lists.offsets)[:-1]
        position = np.arange(len(parent)) - offsets[parent] if len(parent) else parent
        acc = pa.nulls(n, work)
        for j in range(int(position.max()) + 1 if len(position) else 0):
            index = np.full(n, -1, dtype=np.int64)
            hit = np.nonzero(position == j)[0]
            index[parent[hit]] = hit
            item = pc.take(flat, pa.array(index, mask=index < 0))
            product = pc.round(pc.multiply(acc, item), ndigits=s, round_mode="half_up")
            try:
                product = product.cast(work)
            except pa.ArrowInvalid:
                raise PaimonDataError(f"DECIMAL product of field '{self.field}' exceeds DECIMAL({p},{s}).") from None
            acc = pc.coalesce(product, acc, item)
        try:
            out = acc.cast(target)
        except pa.ArrowInvalid:
            raise PaimonDataError(f"DECIMAL product of field '{self.field}' exceeds DECIMAL({p},{s}).") from None
        return frame.with_columns(pl.from_arrow(out).alias(column).cast(pl.Decimal(p, s)))
