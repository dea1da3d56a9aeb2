"""listagg (Paimon FieldListaggAgg): joins non-blank strings with ``fields.<f>.list-agg-delimiter``;
with ``fields.<f>.distinct`` the first value is kept whole and later values add only new tokens."""
from __future__ import annotations

import polars as pl

from ..options import DISTINCT, LIST_AGG_DELIMITER
from .base import Aggregator, GroupMasks, Masks, is_blank


class ListAgg(Aggregator):
    name = "listagg"
    single_safe = False  # a lone blank string is stored as-is, a merged one is skipped

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        self.delimiter = LIST_AGG_DELIMITER.get(options, field)
        self.distinct = DISTINCT.get(options, field)
        self.supports_sequence_group = not self.distinct

    def check_type(self, t):
        if not t.is_unbounded_string:
            raise self.type_error("STRING (unbounded VARCHAR)")

    def _join(self, col, mask):
        keep = mask & ~is_blank(col)
        return pl.when(keep.any()).then(col.filter(keep).str.join(self.delimiter))

    def agg(self, col, m: Masks):
        if self.distinct:
            return col.filter(m.add & ~is_blank(col))  # a list, finished below
        return self._join(col, m.add)

    def agg_in_group(self, col, g: GroupMasks):
        # an older record is prepended (agg(x, acc)), a newer one appended
        keep_old = g.l & ~is_blank(col)
        older = pl.when(keep_old.any()).then(col.filter(keep_old).reverse().str.join(self.delimiter))
        return pl.concat_str([older, self._join(col, g.w)], separator=self.delimiter, ignore_nulls=True)

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        if not self.distinct:
            return frame
        d = self.delimiter
        rows = frame.select(pl.col(column)).with_row_index("__r")
        first = rows.select("__r", pl.col(column).list.first().alias("__first"))
        first_tokens = first.select("__r", pl.col("__first").str.split(d).alias("__t")).explode("__t")
        tokens = (
            rows.select("__r", pl.col(column).list.slice(1).alias("__t"))
            .explode("__t")
            .with_columns(pl.col("__t").str.split(d))
            .explode("__t")
            .filter(~is_blank(pl.col("__t")))
            .unique(subset=["__r", "__t"], keep="first", maintain_order=True)
            .join(first_tokens, on=["__r", "__t"], how="anti", maintain_order="left")
            .group_by("__r", maintain_order=True)
            .agg(pl.col("__t").str.join(d).alias("__rest"))
        )
        joined = first.join(tokens, on="__r", how="left", maintain_order="left").select(
            pl.concat_str(["__first", "__rest"], separator=d, ignore_nulls=True).alias(column)
        )
        return frame.with_columns(joined[column])
