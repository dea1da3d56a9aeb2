"""sum, count, product (Paimon FieldSumAgg / FieldProductAgg; ``count`` is dbt-paimon's name for
an INT/BIGINT sum: Apache Paimon has no count function and documents counting as a sum of 1s)."""
from __future__ import annotations

import decimal
import math

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


def _round_half_up(n: int, d: int) -> int:
    """n / d rounded to an integer, halves away from zero (RoundingMode.HALF_UP)."""
    q, r = divmod(abs(n), abs(d))
    if 2 * r >= abs(d):
        q += 1
    return q if (n < 0) == (d < 0) else -q


def _fit(unscaled: int, bound: int):
    """Decimal.fromBigDecimal: NULL when the value needs more digits than the precision."""
    return unscaled if abs(unscaled) < bound else None


def _unscaled(value: decimal.Decimal, s: int) -> int:
    """value * 10^s as an exact integer (no decimal context rounding)."""
    sign, digits, exponent = value.as_tuple()
    n = int("".join(map(str, digits)) or "0") * 10 ** (exponent + s)
    return -n if sign else n


def _as_decimal(unscaled: int, s: int) -> decimal.Decimal:
    return decimal.Decimal(f"{unscaled}E-{s}")  # string construction is exact


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
        if self.sql_type.root == "DECIMAL" and not m.has_retract:
            return col.filter(m.add & col.is_not_null())  # list; finish() multiplies with HALF_UP
        if m.has_retract:
            # FieldProductAgg.retract divides the accumulator step by step (integer division
            # truncates, a NULL accumulator stays NULL): the order matters, finish() folds.
            return pl.struct(col.alias("v"), m.add.alias("a")).filter((m.add | m.ret) & col.is_not_null())
        if self.sql_type.is_integer:
            return when_any(col, m.add, col.cast(pl.Int64).filter(m.add).product())
        return when_any(col, m.add, col.filter(m.add).product())

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        return self.agg(col, Masks(g.w | g.l, g.rw | g.rl, g.has_retract))

    def validate(self, frame: pl.DataFrame, column: str, group: list, m: Masks) -> None:
        if not self.sql_type.is_integer or m.has_retract:
            return  # with retraction _fold checks every step exactly
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
        dtype = frame.schema[column]
        if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
            fold = self._fold_decimal if root == "DECIMAL" else self._fold
            return frame.with_columns(fold(frame[column]).alias(column))
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

    def _fold(self, lists: pl.Series) -> pl.Series:
        """Multiply (+I/+U) and divide (-U/-D) each key's inputs in merge order, as Paimon's
        agg/retract do one record at a time. Loops over positions inside a merge (at most the
        longest merge's length), every step vectorized over all keys."""
        root = self.sql_type.root
        arrow = lists.to_arrow()
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        n = len(arrow)
        flat = pc.list_flatten(arrow)
        numpy_type = {"FLOAT": np.float32, "DOUBLE": np.float64}.get(root, np.int64)
        values = np.asarray(flat.field("v").cast(pa.from_numpy_dtype(numpy_type)).to_numpy(zero_copy_only=False))
        adds = np.asarray(flat.field("a").to_numpy(zero_copy_only=False), dtype=bool)
        parent = np.asarray(pc.list_parent_indices(arrow), dtype=np.int64)
        offsets = np.asarray(arrow.offsets, dtype=np.int64)[:-1]
        position = np.arange(len(parent)) - offsets[parent] if len(parent) else parent
        order = np.argsort(position, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(position))]) if len(parent) else np.zeros(1, np.int64)
        acc = np.zeros(n, dtype=numpy_type)
        seen = np.zeros(n, dtype=bool)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for j in range(len(bounds) - 1):
                index = order[bounds[j]:bounds[j + 1]]
                rows, x, add = parent[index], values[index], adds[index]
                # agg: a NULL accumulator takes the input, else multiplies
                r_add, x_add = rows[add], x[add]
                product = self._multiply(acc[r_add], x_add)
                acc[r_add] = np.where(seen[r_add], product, x_add)
                seen[r_add] = True
                # retract: a NULL accumulator stays NULL, else divides
                keep = ~add & seen[rows]
                r_ret, x_ret = rows[keep], x[keep]
                acc[r_ret] = self._divide(acc[r_ret], x_ret)
        out = pa.array(acc, mask=~seen).cast(self.sql_type.arrow)
        return pl.from_arrow(out)

    def _fold_decimal(self, lists: pl.Series) -> pl.Series:
        """DECIMAL multiply/divide in merge order, as FieldProductAgg does with BigDecimal: each
        step is exact, then Decimal.fromBigDecimal rounds HALF_UP to the column's scale and gives
        NULL when the precision overflows (a NULL accumulator then takes the next input). The
        exact quotient (BigDecimal.divide, which raises on a non-terminating expansion) has no
        Arrow kernel, so this runs on Python integers (unscaled values), one step per record; it
        is used only when the merged records hold a retraction (additions alone are multiplied
        vectorized in finish())."""
        p, s = self.sql_type.precision, self.sql_type.scale
        scale, bound = 10**s, 10**p
        out = []
        for inputs in lists.to_list():
            acc = None
            for item in inputs or ():
                x = _unscaled(item["v"], s)
                if item["a"]:
                    acc = x if acc is None else _fit(_round_half_up(acc * x, scale), bound)
                elif acc is not None:
                    acc = _fit(self._exact_quotient(acc, x, scale), bound)
            out.append(acc)
        return pl.Series([None if v is None else _as_decimal(v, s) for v in out], dtype=pl.Decimal(p, s))

    def _exact_quotient(self, a: int, b: int, scale: int) -> int:
        """(a / 10^s) / (b / 10^s) exactly, rounded HALF_UP to s digits, as unscaled."""
        if b == 0:
            raise PaimonDataError(
                f"Division by zero while retracting aggregate function 'product' of field '{self.field}' "
                "(Paimon raises ArithmeticException)."
            )
        if a != 0:
            rest = abs(b) // math.gcd(abs(a), abs(b))
            for factor in (2, 5):
                while rest % factor == 0:
                    rest //= factor
            if rest != 1:
                raise PaimonDataError(
                    f"Retracting {_as_decimal(b, len(str(scale)) - 1)} from the DECIMAL product of field "
                    f"'{self.field}' has no exact decimal result (Paimon's BigDecimal.divide raises "
                    "'Non-terminating decimal expansion'). Set "
                    f"'fields.{self.field}.ignore-retract' = 'true' or use DOUBLE."
                )
        return _round_half_up(a * scale, b)

    def _multiply(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        product = a * b
        if self.sql_type.is_integer:
            self._check_range(a, b, product, "*")
        return product

    def _divide(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if not self.sql_type.is_integer:
            return a / b
        if (b == 0).any():
            raise PaimonDataError(
                f"Division by zero while retracting aggregate function 'product' of field '{self.field}' "
                "(Paimon raises ArithmeticException)."
            )
        # Java integer division truncates toward zero
        quotient = a // b
        quotient += ((a % b != 0) & ((a < 0) != (b < 0))).astype(np.int64)
        self._check_range(a, b, quotient, "/")
        return quotient

    def _check_range(self, a, b, result, op: str) -> None:
        lo, hi = _INT_LIMITS[self.sql_type.root]
        if self.sql_type.root == "BIGINT":
            if op == "*":
                nonzero = b != 0
                wrapped = nonzero & ((result // np.where(nonzero, b, 1) != a) | (result % np.where(nonzero, b, 1) != 0))
                bad = wrapped | ((a == lo) & (b == -1)) | ((b == lo) & (a == -1))
            else:
                bad = (a == lo) & (b == -1)
        else:
            bad = (result > hi) | (result < lo) | ((a == lo) & (b == -1) if op == "/" else False)
        if np.any(bad):
            raise PaimonDataError(
                f"{self.sql_type.root.lower()} overflow in aggregate function 'product' of field "
                f"'{self.field}' (Paimon raises ArithmeticException). Use DOUBLE or DECIMAL."
            )
