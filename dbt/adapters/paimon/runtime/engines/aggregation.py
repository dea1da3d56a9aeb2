"""aggregation: every value field goes through its aggregate function (AggregateMergeFunction).

The merged record is +I with the last record's sequence number; with
aggregation.remove-record-on-delete a -D restarts the row from the -D's values and, when it is
the last record, the result is a -D.
"""
from __future__ import annotations

import polars as pl

from ..aggregators import Masks
from .base import (
    ADD, DELETE, INSERT, ROW_KIND, SEQ, UPDATE_BEFORE, check_not_null, not_null_fields, out_columns, position,
    split_singles,
)


_SEED, _EARLIER = "__seed", "__earlier"


def merge(spec, frame: pl.DataFrame, group) -> pl.DataFrame:
    cols = out_columns(spec, group)
    aggregators = spec.aggregator_of
    if frame[ADD].all() and all(a.single_safe for a in aggregators.values()):
        return _merge_additions(spec, frame, group, cols)
    singles, multi = split_singles(frame, group)
    if multi.height == 0:
        return singles.select(cols)
    last_kind = pl.col(ROW_KIND).last()
    kind = pl.lit(INSERT)
    if spec.remove_record_on_delete and (multi[ROW_KIND] == DELETE).any():
        # The last -D seeds the row with its own values and only the records from it on count.
        # The records before it stay in the frame outside every mask: first_value's flag, set by
        # an earlier addition, survives the restart, and an earlier -U reached the functions.
        check_not_null(spec, multi, pl.col(ROW_KIND) == DELETE, not_null_fields(spec),
                       "a -D that restarts the row (initRow)")
        pos = position().over(group)
        last_delete = pl.when(pl.col(ROW_KIND) == DELETE).then(pos).max().over(group)
        multi = multi.with_columns(
            (last_delete.is_not_null() & (pos < last_delete)).alias(_EARLIER),
            (pos == last_delete).fill_null(False).alias(_SEED),
        )
        earlier, seed = pl.col(_EARLIER), pl.col(_SEED)
        kind = pl.when(last_kind == DELETE).then(pl.lit(DELETE)).otherwise(pl.lit(INSERT))
        has_retract = bool((multi[ROW_KIND] == UPDATE_BEFORE).any())
        masks = Masks((pl.col(ADD) & ~earlier) | seed, ~pl.col(ADD) & ~earlier & ~seed, has_retract,
                      restarts=True, seed=seed, earlier_add=earlier & pl.col(ADD))
    else:
        has_retract = not multi[ADD].all()
        masks = Masks(pl.col(ADD), ~pl.col(ADD), has_retract)
    for name, aggregator in aggregators.items():
        if has_retract and not aggregator.supports_retract:
            raise aggregator.retract_error()
        aggregator.validate(multi, name, group, masks)
    merged = multi.group_by(group, maintain_order=True).agg(
        [pl.col(k).first() for k in spec.primary_keys if k not in group]
        + [aggregators[f].agg(pl.col(f), masks).alias(f) for f in spec.value_fields]
        + [kind.alias(ROW_KIND), pl.col(SEQ).last()]
    )
    for name, aggregator in aggregators.items():
        merged = aggregator.finish(merged, name)
    merged = merged.with_columns([pl.col(f).cast(singles.schema[f]) for f in spec.value_fields])
    return pl.concat([singles.select(cols), merged.select(cols)], how="vertical_relaxed")


def _merge_additions(spec, frame: pl.DataFrame, group, cols) -> pl.DataFrame:
    """Fast path: only +I/+U and functions for which one record merges to itself -- no split
    between single and multi-record keys is needed, only the kind of a lone record is kept."""
    masks = Masks(pl.col(ADD), ~pl.col(ADD), False, all_add=True)
    aggregators = spec.aggregator_of
    for name, aggregator in aggregators.items():
        aggregator.validate(frame, name, group, masks)
    merged = frame.group_by(group, maintain_order=True).agg(
        [pl.col(k).first() for k in spec.primary_keys if k not in group]
        + [aggregators[f].agg(pl.col(f), masks).alias(f) for f in spec.value_fields]
        + [
            pl.when(pl.len() == 1).then(pl.col(ROW_KIND).first()).otherwise(pl.lit(INSERT)).alias(ROW_KIND),
            pl.col(SEQ).last(),
        ]
    )
    for name, aggregator in aggregators.items():
        merged = aggregator.finish(merged, name)
    return merged.with_columns([pl.col(f).cast(frame.schema[f]) for f in spec.value_fields]).select(cols)
