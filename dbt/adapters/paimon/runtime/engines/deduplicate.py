"""deduplicate: the last record wins, whatever its kind (DeduplicateMergeFunction); a last
-D/-U is stored as a retraction and hides the key on read."""
from __future__ import annotations

import polars as pl

from .base import out_columns


def merge(spec, frame: pl.DataFrame, group) -> pl.DataFrame:
    cols = [c for c in out_columns(spec, group) if c not in group]
    return frame.group_by(group, maintain_order=True).agg([pl.col(c).last() for c in cols])
