"""collect, merge_map, nested_update, nested_partial_update (Paimon FieldCollectAgg,
FieldMergeMapAgg, FieldNestedUpdateAgg, FieldNestedPartialUpdateAgg), additions only.

Java keeps distinct elements / map entries / keyed rows in hash order; we keep first-appearance
order (a deterministic choice inside Paimon's unspecified order). Retraction of these functions
is not implemented: it raises unless ``fields.<f>.ignore-retract`` is set.
"""
from __future__ import annotations

import polars as pl

from ..errors import PaimonConfigError
from ..options import DISTINCT, NESTED_KEY
from .base import Aggregator, Masks


def _packed_result(frame: pl.DataFrame, column: str, inputs: pl.DataFrame, packed: pl.DataFrame) -> pl.DataFrame:
    """All inputs NULL -> NULL (agg(null, null)); otherwise the packed list, possibly empty."""
    out = inputs.select("__r", (pl.col(column).list.len() > 0).alias("__seen")).join(
        packed, on="__r", how="left", maintain_order="left"
    )
    dtype = frame.schema[column].inner  # the aggregated column holds a list of inputs
    result = out.select(
        pl.when(pl.col("__seen")).then(pl.col(column).fill_null(pl.lit([], dtype=dtype))).cast(dtype).alias(column)
    )
    return frame.with_columns(result[column])


class Collect(Aggregator):
    name = "collect"
    single_safe = False

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        self.distinct = DISTINCT.get(options, field)

    def check_type(self, t):
        if t.root != "ARRAY":
            raise self.type_error("ARRAY")

    def agg(self, col, m: Masks):
        return col.filter(m.add & col.is_not_null())  # list of inputs, finished below

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        inputs = frame.select(pl.col(column)).with_row_index("__r")
        elements = (
            inputs.explode(column)
            .filter(pl.col(column).is_not_null() & (pl.col(column).list.len() > 0))
            .explode(column)
        )
        if self.distinct:
            elements = elements.unique(subset=["__r", column], keep="first", maintain_order=True)
        packed = elements.group_by("__r", maintain_order=True).agg(pl.col(column))
        return _packed_result(frame, column, inputs, packed)


class _Keyed(Aggregator):
    """Shared explode -> keep per key -> implode machinery for maps and keyed nested rows."""

    single_safe = False

    def key_fields(self):
        raise NotImplementedError

    def agg(self, col, m: Masks):
        return col.filter(m.add & col.is_not_null())  # list of inputs, finished below

    def merge_entries(self, entries: pl.DataFrame, keys) -> pl.DataFrame:
        return entries.unique(subset=["__r"] + keys, keep="last", maintain_order=True)

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        inputs = frame.select(pl.col(column)).with_row_index("__r")
        entries = (
            inputs.explode(column).filter(pl.col(column).is_not_null())
            .explode(column).filter(pl.col(column).is_not_null())
            .unnest(column)
        )
        fields = [c for c in entries.columns if c != "__r"]
        keys = self.key_fields() or fields
        merged = self.merge_entries(entries, keys)
        packed = merged.select("__r", pl.struct(fields).alias(column)).group_by("__r", maintain_order=True).agg(
            pl.col(column)
        )
        return _packed_result(frame, column, inputs, packed)


class MergeMap(_Keyed):
    name = "merge_map"

    def check_type(self, t):
        if t.root != "MAP":
            raise self.type_error("MAP")

    def key_fields(self):
        return ["key"]


class NestedUpdate(_Keyed):
    name = "nested_update"

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        self.nested_key = [k.strip() for k in (NESTED_KEY.get(options, field) or "").split(",") if k.strip()]
        names = [f.name for f in sql_type.arrow.value_type]
        for k in self.nested_key:
            if k not in names:
                raise PaimonConfigError(
                    f"'{NESTED_KEY.key(field)}' names '{k}', which is not a field of {sql_type.text}."
                )

    def check_type(self, t):
        if t.root != "ARRAY" or t.children[0].root != "ROW":
            raise self.type_error("ARRAY<ROW<...>>")

    def key_fields(self):
        return self.nested_key

    def merge_entries(self, entries, keys):
        if not self.nested_key:
            return entries  # no key: every row is appended
        return super().merge_entries(entries, keys)


class NestedPartialUpdate(NestedUpdate):
    name = "nested_partial_update"

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        if not self.nested_key:
            raise PaimonConfigError(
                f"Aggregate function 'nested_partial_update' of field '{field}' needs "
                f"'{NESTED_KEY.key(field)}' (the keys of the nested rows)."
            )

    def merge_entries(self, entries, keys):
        values = [c for c in entries.columns if c not in keys and c != "__r"]
        return entries.group_by(["__r"] + keys, maintain_order=True).agg(
            [pl.col(v).drop_nulls().last() for v in values]
        ).select(entries.columns)
