"""listagg (Paimon FieldListaggAgg): joins non-blank strings with ``fields.<f>.list-agg-delimiter``;
with ``fields.<f>.distinct`` the first value is kept whole and later values add only new tokens."""
from __future__ import annotations

import polars as pl

from ..options import DISTINCT, LIST_AGG_DELIMITER
from .base import Aggregator, GroupMasks, Masks, is_blank


class ListAgg(Aggregator):
    name = "listagg"
    single_safe = False  # a lone blank string is stored as-is, a merged one is skipped
    supports_sequence_group = True

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        self.delimiter = LIST_AGG_DELIMITER.get(options, field)
        self.distinct = DISTINCT.get(options, field)

    def check_type(self, t):
        if not t.is_unbounded_string:
            raise self.type_error("STRING (unbounded VARCHAR)")

    def _join(self, col, mask):
        keep = mask & ~is_blank(col)
        return pl.when(keep.any()).then(col.filter(keep).str.join(self.delimiter))

    def agg(self, col, m: Masks):
        if self.distinct:
            return self._events(col, m.add, pl.lit(False))
        return self._join(col, m.add)

    def agg_in_group(self, col, g: GroupMasks):
        if self.distinct:
            return self._events(col, g.w | g.l, g.l, g.seed)
        # an older record is prepended (agg(x, acc)), a newer one appended; a blank seed (initRow)
        # stays when no input replaces it
        keep_old = g.l & ~is_blank(col)
        older = pl.when(keep_old.any()).then(col.filter(keep_old).reverse().str.join(self.delimiter))
        newer = self._join(col, g.w)
        joined = pl.when(older.is_not_null() | newer.is_not_null()).then(
            pl.concat_str([older, newer], separator=self.delimiter, ignore_nulls=True)
        )
        return pl.coalesce(joined, self._all_blank(col, g))

    @staticmethod
    def _all_blank(col, g: GroupMasks):
        """No non-blank input: agg(acc, x) keeps acc, and an older record's agg(x, acc) returns x
        (acc is blank) -- the last older input, else the seed's value (initRow), else NULL."""
        return pl.when(g.l.any()).then(col.filter(g.l).last()).otherwise(col.filter(g.seed).last())

    @staticmethod
    def _events(col, mask, older, seed=pl.lit(False)):
        """The inputs with their position, whether they are older than their sequence group
        (aggReversed) and whether they are the seed (initRow)."""
        return pl.struct(
            col.alias("v"), older.alias("older"), pl.int_range(pl.len()).alias("p"), seed.alias("seed")
        ).filter(mask)

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        """listagg distinct, folded as Java does one input at a time: ``agg(acc, x)`` keeps acc whole
        and appends x's new non-blank tokens; an older record's ``agg(x, acc)`` keeps x whole and
        appends acc's tokens that x lacks (so acc's repeated tokens collapse). The result: the
        *head* (the last older input, else the first input) whole, then the other inputs' new
        tokens -- older inputs latest first, then newer inputs in order."""
        if not self.distinct:
            return frame
        d = self.delimiter
        events = frame.select(pl.col(column)).with_row_index("__r").explode(column).drop_nulls(column).unnest(column)
        # No non-blank input: agg(acc, x) keeps acc, an older record's agg(x, acc) returns x (acc is
        # blank) -- the last older input, else the seed's value (initRow), else NULL.
        older_v = pl.col("v").filter(pl.col("older") & ~pl.col("seed")).last()
        blank = events.group_by("__r").agg(
            pl.when((pl.col("older") & ~pl.col("seed")).any()).then(older_v)
            .otherwise(pl.col("v").filter(pl.col("seed")).last()).alias("__blank")
        )
        events = events.filter(~is_blank(pl.col("v")))
        older, p = pl.col("older"), pl.col("p")
        head_at = (
            pl.when(older.any()).then(p.filter(older).max()).otherwise(p.filter(~older).min()).over("__r")
        )
        events = events.with_columns((p == head_at).alias("__head"))
        head = events.filter("__head").select("__r", pl.col("v").alias("__first"))
        head_tokens = head.select("__r", pl.col("__first").str.split(d).alias("__t")).explode("__t")
        tokens = (
            events.filter(~pl.col("__head"))
            .with_columns(pl.when(older).then(-p).otherwise(p).alias("__at"))
            .sort(["__r", "older", "__at"], descending=[False, True, False], maintain_order=True)
            .select("__r", pl.col("v").str.split(d).alias("__t"))
            .explode("__t")
            .filter(~is_blank(pl.col("__t")))
            .unique(subset=["__r", "__t"], keep="first", maintain_order=True)
            .join(head_tokens, on=["__r", "__t"], how="anti", maintain_order="left")
            .group_by("__r", maintain_order=True)
            .agg(pl.col("__t").str.join(d).alias("__rest"))
        )
        joined = (
            frame.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("__r"))
            .join(blank, on="__r", how="left", maintain_order="left")
            .join(head, on="__r", how="left", maintain_order="left")
            .join(tokens, on="__r", how="left", maintain_order="left")
            .select(
                pl.when(pl.col("__first").is_not_null())
                .then(pl.concat_str(["__first", "__rest"], separator=d, ignore_nulls=True))
                .otherwise(pl.col("__blank")).alias(column)
            )
        )
        return frame.with_columns(joined[column])
