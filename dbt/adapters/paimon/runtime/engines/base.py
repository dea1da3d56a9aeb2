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
