"""partial-update (PartialUpdateMergeFunction), vectorized.

Without sequence groups every field takes the last non-null value. With sequence groups a
record updates a group's fields only when its group sequence (compared field by field, NULL
smallest) is >= the stored one -- equal counts as newer -- and a record whose group sequence
is all NULL skips the group. Fields outside every group keep the last non-null value.

Paimon details reproduced here:
* the merged record is +I with the last record's sequence number; it is -D when no +I/+U
  was seen or when the last record removed the row;
* a -D with partial-update.remove-record-on-delete, or a -D that wins a group listed in
  partial-update.remove-record-on-sequence-group, restarts the row *from the -D's values*
  (Paimon's initRow); the records after it merge on top of those values;
* a merge that starts with a retraction first copies that record's values into the row;
* a retraction that wins a group sets the group's plain fields to NULL and retracts its
  aggregated fields; an older retraction only retracts aggregated fields.
"""
from __future__ import annotations

from dataclasses import replace

import polars as pl

from ..aggregators import GroupMasks, Masks
from ..errors import PaimonDataError
from .base import (
    ADD, DELETE, INSERT, ROW_KIND, SEQ, check_not_null, not_null_fields, out_columns, position, split_singles,
)

SEED = "__seed"
RESET = "__reset"
RESTART = "__restart"  # every -D that restarts the row (the last one is also RESET)
CUT = "__cut"  # the column at which that -D restarts the row: fields before it were retracted first

_NO_DELETE_OPTION = (
    "By default, Partial update can not accept delete records, you can choose one of the following solutions:\n"
    "1. Configure 'ignore-delete' to ignore delete records.\n"
    "2. Configure 'partial-update.remove-record-on-delete' to remove the whole row when receiving delete records.\n"
    "3. Configure 'sequence-group's to retract partial columns. Also configure "
    "'partial-update.remove-record-on-sequence-group' to remove the whole row when receiving deleted records of "
    "specified sequence group."
)


def merge(spec, frame: pl.DataFrame, group) -> pl.DataFrame:
    cols = out_columns(spec, group)
    if frame[ADD].all() and all(a.single_safe for a in spec.aggregator_of.values()):
        return _merge_additions(spec, frame, group, cols)
    singles, multi = split_singles(frame, group)
    if multi.height == 0:
        return singles.select(cols)
    has_retract = not multi[ADD].all()
    if has_retract and not spec.sequence_groups and not spec.remove_record_on_delete:
        raise PaimonDataError(_NO_DELETE_OPTION)
    fields = not_null_fields(spec)
    if fields and not spec.sequence_groups:
        check_not_null(spec, multi, pl.col(ADD), fields, "a record merged by partial-update (updateNonNullFields)")
    if fields and has_retract:
        check_not_null(spec, multi, (position().over(group) == 0) & ~pl.col(ADD), fields,
                       "the retraction that starts a partial-update merge (initRow)")

    # Paimon's meetInsert and the row kind of the last record, over the whole merge
    multi = multi.with_columns(
        pl.col(ADD).any().over(group).alias("__meet_insert"),
        pl.lit(False).alias(RESET),
        pl.lit(False).alias(SEED),
    )
    if has_retract:
        multi = _restart_points(spec, multi, group)
    multi = _with_winners(spec, multi, group)
    merged = multi.group_by(group, maintain_order=True).agg(
        [pl.col(k).first() for k in spec.primary_keys if k not in group]
        + _value_exprs(spec, has_retract)
        + [
            pl.when(pl.col(RESET).last() | ~pl.col("__meet_insert").first())
            .then(pl.lit(DELETE))
            .otherwise(pl.lit(INSERT))
            .alias(ROW_KIND),
            pl.col(SEQ).last(),
        ]
    )
    aggregators = spec.aggregator_of
    for name, aggregator in aggregators.items():
        merged = aggregator.finish(merged, name)
    merged = merged.with_columns([pl.col(f).cast(singles.schema[f]) for f in spec.value_fields])
    return pl.concat([singles.select(cols), merged.select(cols)], how="vertical_relaxed")


def _merge_additions(spec, frame: pl.DataFrame, group, cols) -> pl.DataFrame:
    """Fast path: only +I/+U. A key's only record is kept as-is (ReducerMergeFunctionWrapper) by
    choosing its own values where a sequence group would have skipped them."""
    if not spec.sequence_groups:
        check_not_null(spec, frame, pl.len().over(group) > 1, not_null_fields(spec),
                       "a record merged by partial-update (updateNonNullFields)")
    aggregators = spec.aggregator_of
    by_latest_max = all(
        aggregators[f].order_insensitive for g in spec.sequence_groups for f in g.protected if f in aggregators
    )
    if by_latest_max:
        return _merge_by_latest_max(spec, frame, group, cols)
    frame = _with_winners(spec, frame.with_columns(pl.lit(False).alias(SEED)), group)
    lone = pl.len() == 1
    grouped = {f for g in spec.sequence_groups for f in g.order_fields + g.protected}
    values = [
        (pl.when(lone).then(pl.col(e.meta.output_name()).first()).otherwise(e)
         if e.meta.output_name() in grouped else e)
        for e in _value_exprs(spec, False, all_add=True)
    ]
    merged = frame.group_by(group, maintain_order=True).agg(
        [pl.col(k).first() for k in spec.primary_keys if k not in group]
        + values
        + [
            pl.when(lone).then(pl.col(ROW_KIND).first()).otherwise(pl.lit(INSERT)).alias(ROW_KIND),
            pl.col(SEQ).last(),
        ]
    )
    for name, aggregator in aggregators.items():
        merged = aggregator.finish(merged, name)
    return merged.with_columns([pl.col(f).cast(frame.schema[f]) for f in spec.value_fields]).select(cols)


_ALL_ADD = Masks(pl.lit(True), pl.lit(False), False, all_add=True)


def _merge_by_latest_max(spec, frame: pl.DataFrame, group, cols) -> pl.DataFrame:
    """Additions only and no order-dependent function in a group. A group's last winner is the
    last record holding the group's greatest sequence (every later record is smaller): find its
    row with native aggregations and gather the group's fields from it. Order-insensitive
    functions take every record whose group sequence is not NULL. No per-group lists, no sort."""
    aggregators = spec.aggregator_of
    lone = pl.len() == 1
    keys = [pl.int_range(pl.len(), dtype=pl.Int64).alias("__row")]
    helpers, exprs, gathers, grouped = [], [], {}, set()
    n = max(frame.height, 1)
    for j, g in enumerate(spec.sequence_groups):
        present = pl.any_horizontal([pl.col(f).is_not_null() for f in g.order_fields])
        # latest = the greatest (sequence, row) pair; encoded in one Int64 so that a native max finds it
        order = _order_code(spec, g, frame, n)
        keys.append(pl.when(present).then(order * n + pl.int_range(pl.len(), dtype=pl.Int64)).alias(f"__latest{j}"))
        exprs.append(
            pl.when(lone).then(pl.col("__row").first())
            .otherwise(pl.col(f"__latest{j}").max() % n).alias(f"__take{j}")
        )
        for f in g.order_fields + g.protected:
            if f in aggregators:
                helpers.append(pl.when(present).then(pl.col(f)).alias(f"__in_{f}"))
                exprs.append(
                    pl.when(lone).then(pl.col(f).first())
                    .otherwise(aggregators[f].agg(pl.col(f"__in_{f}"), _ALL_ADD)).alias(f)
                )
            else:
                gathers[f] = f"__take{j}"
        grouped.update(g.order_fields + g.protected)
    for f in spec.value_fields:
        if f not in grouped:
            exprs.append(pl.col(f).drop_nulls().last().alias(f))
    frame = frame.with_columns(keys + helpers)
    for f, aggregator in aggregators.items():
        if f"__in_{f}" in frame.columns:
            aggregator.validate(frame, f"__in_{f}", group, _ALL_ADD)
    merged = frame.group_by(group, maintain_order=True).agg(
        [pl.col(k).first() for k in spec.primary_keys if k not in group]
        + exprs
        + [
            pl.when(lone).then(pl.col(ROW_KIND).first()).otherwise(pl.lit(INSERT)).alias(ROW_KIND),
            pl.col(SEQ).last(),
        ]
    )
    merged = merged.with_columns([frame[f].gather(merged[take]).alias(f) for f, take in gathers.items()])
    for name, aggregator in aggregators.items():
        merged = aggregator.finish(merged, name)
    return merged.with_columns([pl.col(f).cast(frame.schema[f]) for f in spec.value_fields]).select(cols)


def _order_code(spec, g, frame: pl.DataFrame, n: int) -> pl.Expr:
    """A non-negative Int64 that orders the group's sequence like Paimon (NULL smallest), small
    enough to be multiplied by the row count: the value itself when its range allows, else its rank."""
    if len(g.order_fields) == 1:
        field = g.order_fields[0]
        t = spec.types[field]
        if t.is_integer or t.root in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ"):
            physical = pl.col(field).to_physical().cast(pl.Int64)
            lo, hi = frame.select(physical.min().alias("lo"), physical.max().alias("hi")).row(0)
            if lo is None:
                return pl.lit(0, pl.Int64)
            if (hi - lo + 1) * n < 2**62:
                return physical - lo
    return _rank(g.order_fields).cast(pl.Int64)


def _check_retractable(spec, multi: pl.DataFrame, group) -> None:
    """Every retraction of a merge -- before a restart of the row too -- whose group sequence is not
    all NULL reaches the group's aggregate functions (retractWithSequenceGroup), in column order: a
    restarting -D retracts only the fields before the column at which it restarts (``CUT``)."""
    aggregators = spec.aggregator_of
    names = list(spec.names)
    for g in spec.sequence_groups:
        stubborn = [f for f in g.protected if f in aggregators and not aggregators[f].supports_retract]
        if not stubborn:
            continue
        present = pl.any_horizontal([pl.col(f).is_not_null() for f in g.order_fields])
        for f in stubborn:
            before_cut = pl.col(CUT).is_null() | (pl.col(CUT) > names.index(f))
            hit = multi.select((~pl.col(ADD) & present & before_cut).any()).item()
            if hit:
                raise aggregators[f].retract_error()


# ---- restart points ----------------------------------------------------------------------------
def _restart_points(spec, multi: pl.DataFrame, group) -> pl.DataFrame:
    """Keep each merge's records from its last restart on; mark the restarting record as seed."""
    is_delete = pl.col(ROW_KIND) == DELETE
    pos = position().over(group)
    if spec.remove_record_on_delete:
        reset = is_delete
        multi = multi.with_columns(is_delete.alias(RESTART), pl.lit(None, pl.Int64).alias(CUT))
    elif any(g.remove_record_on_delete for g in spec.sequence_groups):
        multi = _group_removals(spec, multi, group)
        reset = pl.col(RESET)
    else:
        reset = pl.lit(False)
        multi = multi.with_columns(pl.lit(False).alias(RESTART), pl.lit(None, pl.Int64).alias(CUT))
    # checks over every record of the merge, the ones a later restart drops included
    check_not_null(spec, multi, pl.col(RESTART), not_null_fields(spec), "a -D that restarts the row (initRow)")
    _check_retractable(spec, multi, group)
    last_reset = pl.when(reset).then(pos).max().over(group)
    # first_value in a group: records before the restart reached it (agg or aggReversed), so its
    # ``initialized`` flag is set when the row starts again
    earlier = last_reset.is_not_null() & (pos < last_reset) & pl.col(ADD)
    multi = multi.with_columns(
        [(earlier & pl.any_horizontal([pl.col(f).is_not_null() for f in g.order_fields])).any().over(group)
         .alias(f"__primed{j}") for j, g in enumerate(spec.sequence_groups)]
    )
    multi = _with_non_null_flags(spec, multi, group, last_reset)
    multi = (multi.with_columns(reset.alias(RESET)).filter(last_reset.is_null() | (pos >= last_reset))
             .drop([RESTART, CUT]))
    # the restarting -D seeds the row; it counts as an addition of its values
    multi = multi.with_columns(
        pl.col(RESET).alias(SEED), (pl.col(ADD) | pl.col(RESET)).alias(ADD)
    )
    if spec.sequence_groups:
        return _with_leading_retraction_seed(spec, multi, group)
    # without groups a leading retraction only seeds the row (Paimon initRow, then no-op)
    first_retract = (position().over(group) == 0) & ~pl.col(ADD)
    return multi.with_columns((pl.col(SEED) | first_retract).alias(SEED), (pl.col(ADD) | first_retract).alias(ADD))


def primed_column(j: int, field: str) -> str:
    return f"__primed{j}_{field}"


def _with_non_null_flags(spec, multi: pl.DataFrame, group, last_reset: pl.Expr) -> pl.DataFrame:
    """``primed_column(j, f)``: whether first_non_null_value's ``initialized`` flag
    (FieldFirstNonNullValueAgg) was set before the row's last restart. A newer input sets it when
    non-null; an older one (aggReversed = agg(x, acc)) when the value it meets is non-null -- the
    value of the latest seed (initRow) or older input before it. The records before the restart
    are replayed segment by segment: each restart starts a segment whose group sequences are
    compared with the restarting -D's."""
    aggregators = spec.aggregator_of
    fields = [(j, f) for j, g in enumerate(spec.sequence_groups) for f in g.protected
              if f in aggregators and aggregators[f].initialized_by_non_null]
    if not fields:
        return multi
    if not multi.select(pl.col(RESTART).any()).item():
        return multi.with_columns([pl.lit(False).alias(primed_column(j, f)) for j, f in fields])
    pos = position().over(group)
    seeds = pl.col(RESTART) | ((pos == 0) & ~pl.col(ADD))
    segment = pl.col(RESTART).cast(pl.Int64).cum_sum().over(group).alias("__segment")
    replay = _with_winners(spec, multi.with_columns(segment, seeds.alias(SEED)), list(group) + ["__segment"])
    flags = []
    for j, f in fields:
        ne, win = pl.col(f"__ne{j}"), pl.col(f"__win{j}")
        older = pl.col(ADD) & ne & ~win & ~pl.col(SEED)
        setter = pl.col(SEED) | older
        met_non_null = pl.when(setter).then(pl.col(f).is_not_null()).forward_fill().shift(1).over(group)
        sets_flag = (pl.col(ADD) & win & pl.col(f).is_not_null()) | (older & met_non_null.fill_null(False))
        flags.append((sets_flag & (pos < last_reset)).any().over(group).fill_null(False).alias(primed_column(j, f)))
    return multi.with_columns(replay.select(flags))


def _group_removals(spec, multi: pl.DataFrame, group) -> pl.DataFrame:
    """``RESET`` on the -D that restarts the row last (partial-update.remove-record-on-sequence-group),
    ``RESTART`` on every -D that restarts it and ``CUT`` on those: the column at which it restarts.
    A removing -D restarts the row from its own values (initRow), so whether a later -D wins its
    group is decided against those values, not against the records before: find the first
    removal, restart from it, find the next one, ... (one vectorized pass per removal in a chain)."""
    row, pos, start, found_at = "__removal_row", "__removal_pos", "__removal_start", "__removal_next"
    names = list(spec.names)
    removing = [j for j, g in enumerate(spec.sequence_groups) if g.remove_record_on_delete]
    # retractWithSequenceGroup restarts at the first sequence field of a won removing group
    cut = pl.min_horizontal([
        pl.when(pl.col(f"__win{j}")).then(pl.lit(min(names.index(f) for f in spec.sequence_groups[j].order_fields),
                                                   pl.Int64))
        for j in removing])
    multi = multi.with_row_index(row).with_columns(position().over(group).alias(pos), pl.lit(-1).alias(start))
    first_pass, restarts = True, []
    while True:
        part = multi.filter(pl.col(pos) >= pl.col(start)).with_columns(
            (pl.col(SEED) | (pl.col(pos) == pl.col(start))).alias(SEED))
        if first_pass:
            part = _with_leading_retraction_seed(spec, part, group)
        winners = _with_winners(spec, part, group)
        removal = (pl.col(ROW_KIND) == DELETE) & ~pl.col(SEED) & pl.any_horizontal(
            [pl.col(f"__win{j}") for j in removing])
        found = winners.filter(removal & (pl.col(pos) > pl.col(start))).group_by(group).agg(
            pl.col(pos).min().alias(found_at), cut.sort_by(pl.col(pos)).first().alias(CUT))
        if found.height == 0:
            break
        restarts.append(found)
        multi = (multi.join(found.drop(CUT), on=group, how="left", nulls_equal=True)
                 .with_columns(pl.coalesce(found_at, start).alias(start)).drop(found_at).sort(row))
        first_pass = False
    multi = multi.with_columns((pl.col(pos) == pl.col(start)).alias(RESET))
    if restarts:
        marks = pl.concat(restarts).rename({found_at: pos}).with_columns(pl.lit(True).alias(RESTART))
        multi = multi.join(marks, on=list(group) + [pos], how="left", nulls_equal=True, maintain_order="left")
        multi = multi.with_columns(pl.col(RESTART).fill_null(False))
    else:
        multi = multi.with_columns(pl.lit(False).alias(RESTART), pl.lit(None, pl.Int64).alias(CUT))
    return multi.drop([row, pos, start])


def _with_leading_retraction_seed(spec, multi: pl.DataFrame, group) -> pl.DataFrame:
    """A merge starting with a retraction: copy its values in first (a seed), then retract."""
    leading = multi.select((position().over(group) == 0) & ~pl.col(ADD) & ~pl.col(SEED)).to_series()
    if not leading.any():
        return multi
    seeds = multi.filter(leading).with_columns(pl.lit(True).alias(SEED), pl.lit(True).alias(ADD))
    tagged = pl.concat(
        [seeds.with_columns(pl.lit(0).alias("__o")), multi.with_columns(pl.lit(1).alias("__o"))],
        how="vertical_relaxed",
    ).with_row_index("__i")
    # seeds first inside their group, every group keeping its records' order
    first_index = pl.col("__i").filter(pl.col("__o") == 1).min().over(group)
    ordered = tagged.with_columns(
        pl.when(pl.col("__o") == 0).then(first_index).otherwise(pl.col("__i")).alias("__k")
    ).sort(["__k", "__o"])
    return ordered.drop(["__i", "__o", "__k"])


# ---- sequence groups ---------------------------------------------------------------------------
def _rank(fields) -> pl.Expr:
    """Dense rank of the group's sequence tuple, NULL smallest, compared field by field."""
    ranks = [pl.col(f).rank("dense").cast(pl.Int64).fill_null(0) for f in fields]
    if len(ranks) == 1:
        return ranks[0]
    return pl.struct(ranks).rank("dense").cast(pl.Int64)


def _with_winners(spec, frame: pl.DataFrame, group) -> pl.DataFrame:
    """Per group j: ``__ne{j}`` (sequence not all NULL) and ``__win{j}`` (>= everything before)."""
    if not spec.sequence_groups:
        return frame
    ranks = []
    for j, g in enumerate(spec.sequence_groups):
        non_empty = pl.any_horizontal([pl.col(f).is_not_null() for f in g.order_fields]) | pl.col(SEED)
        ranks.append(non_empty.alias(f"__ne{j}"))
        if not _orders_natively(spec, g):
            ranks.append(_rank(g.order_fields).alias(f"__rank{j}"))  # global: comparable across keys
    frame = frame.with_columns(ranks)
    winners = []
    for j, g in enumerate(spec.sequence_groups):
        ne = pl.col(f"__ne{j}")
        if _orders_natively(spec, g):
            # one numeric/temporal field: compare values directly (NULL only on skipped records)
            value = pl.col(g.order_fields[0])
            before = pl.when(ne).then(value).cum_max().forward_fill().shift(1).over(group)
            winners.append((ne & (before.is_null() | value.is_null() | (value >= before))).alias(f"__win{j}"))
        else:
            rank = pl.when(ne).then(pl.col(f"__rank{j}")).otherwise(-1)
            before = rank.cum_max().shift(1, fill_value=-1).over(group)
            winners.append((ne & (rank >= before)).alias(f"__win{j}"))
    return frame.with_columns(winners)


def _orders_natively(spec, g) -> bool:
    if len(g.order_fields) != 1:
        return False
    t = spec.types[g.order_fields[0]]
    return t.is_integer or t.root in ("FLOAT", "DOUBLE", "DATE", "TIMESTAMP", "TIMESTAMP_LTZ")


def _value_exprs(spec, has_retract: bool, all_add: bool = False) -> list:
    add = pl.lit(True) if all_add else pl.col(ADD)
    retract = pl.lit(False) if all_add else ~add & ~pl.col(SEED)
    aggregators = spec.aggregator_of
    exprs, grouped = [], set()
    for j, g in enumerate(spec.sequence_groups):
        win, ne = pl.col(f"__win{j}"), pl.col(f"__ne{j}")
        masks = GroupMasks(win & add, ne & ~win & add, win & retract, ne & ~win & retract, has_retract,
                           pl.lit(False) if all_add else pl.col(SEED),
                           pl.col(f"__primed{j}") if has_retract else pl.lit(False))
        for f in g.order_fields:
            exprs.append(pl.col(f).filter(win).last().alias(f))
        for f in g.protected:
            if f in aggregators:
                field_masks = masks
                if has_retract and aggregators[f].initialized_by_non_null:
                    field_masks = replace(masks, primed=pl.col(primed_column(j, f)))
                exprs.append(aggregators[f].agg_in_group(pl.col(f), field_masks).alias(f))
            else:
                # the last winner sets the field, NULL included; a winning retraction clears it
                exprs.append(pl.when(add.filter(win).last()).then(pl.col(f).filter(win).last()).alias(f))
        grouped.update(g.order_fields + g.protected)
    for f in spec.value_fields:
        if f not in grouped:  # last non-null value of the additions (last_non_null_value or none)
            kept = pl.col(f).drop_nulls() if all_add else pl.col(f).filter(add & pl.col(f).is_not_null())
            exprs.append(kept.last().alias(f))
    return exprs
