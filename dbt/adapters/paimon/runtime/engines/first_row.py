"""first-row: the first record wins (FirstRowMergeFunction); it keeps that record's sequence
number. A retraction that reaches the merge function raises unless ignore-delete is set; a
key's only record skips the merge function (ReducerMergeFunctionWrapper) and is stored as-is."""
from __future__ import annotations

import polars as pl

from ..errors import PaimonDataError
from .base import ADD, out_columns


def check_retractions(frame: pl.DataFrame, group) -> None:
    """Raise as Paimon does for a retraction merged with another record of its key."""
    if not frame[ADD].all():
        several = frame.select((pl.len().over(group) > 1) & ~pl.col(ADD)).to_series()
        if several.any():
            raise PaimonDataError(
                "By default, First row merge engine can not accept DELETE/UPDATE_BEFORE records. "
                "You can config 'ignore-delete' (or 'first-row.ignore-delete') = 'true' to ignore them."
            )


def merge(spec, frame: pl.DataFrame, group) -> pl.DataFrame:
    check_retractions(frame, group)
    cols = [c for c in out_columns(spec, group) if c not in group]
    return frame.group_by(group, maintain_order=True).agg([pl.col(c).first() for c in cols])
