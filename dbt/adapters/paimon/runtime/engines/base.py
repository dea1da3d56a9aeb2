"""The engine interface: merge each group of sorted records into one stored record.

``merge(spec, frame, group)`` receives records sorted in merge order (polars keeps that
order inside every group) with the schema columns, ``_row_kind``, ``_seq``, ``__add``
(True for +I/+U) and returns one row per group: the group columns, the value columns,
``_row_kind`` (the stored kind; retractions are kept) and ``_seq`` (the sequence number
Paimon keeps for the merged record).

Paimon's ReducerMergeFunctionWrapper returns a key's only record as-is without calling the
merge function; ``split_singles`` gives engines that distinction.
"""
from __future__ import annotations

from typing import List, Tuple

import polars as pl

from ..errors import PaimonDataError

ADD = "__add"
ROW_KIND = "_row_kind"
SEQ = "_seq"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = "+I", "-U", "+U", "-D"


def split_singles(frame: pl.DataFrame, group: List[str]) -> Tuple[pl.DataFrame, pl.DataFrame]:
    """(keys with one record, keys with several records)."""
    single = frame.select((pl.len().over(group) == 1).alias("s"))["s"]
    return frame.filter(single), frame.filter(~single)


def position() -> pl.Expr:
    """0-based position of a record inside its merge (use with .over(group))."""
    return pl.int_range(pl.len())


def out_columns(spec, group: List[str]) -> List[str]:
    extra = [g for g in group if g not in spec.names]
    return extra + list(spec.names) + [ROW_KIND, SEQ]


def not_null_fields(spec) -> List[str]:
    """The NOT NULL value columns (keys are never NULL: the kernel refuses them first)."""
    return [n for n, t in spec.columns if not t.nullable and n not in spec.primary_keys]


def check_not_null(spec, frame: pl.DataFrame, mask: pl.Expr, fields: List[str], role: str) -> None:
    """Raise where Paimon's merge function raises ``IllegalArgumentException("Field i can not be
    null")``: a record under ``mask`` holds NULL in a NOT NULL column (``i`` is the column's
    position in the row). ``role`` says which step of the merge function checks it."""
    if not fields or frame.height == 0 or not any(frame[f].null_count() for f in fields):
        return
    hits = frame.select([(mask & pl.col(f).is_null()).any().alias(f) for f in fields]).row(0)
    for name, hit in zip(fields, hits):
        if hit:
            raise PaimonDataError(
                f"Field {list(spec.names).index(name)} can not be null: column '{name}' is NOT NULL, and "
                f"{role} holds NULL in it. Write a value for '{name}' in every record, or declare the "
                "column nullable."
            )
