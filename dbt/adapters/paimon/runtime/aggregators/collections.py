"""collect, merge_map, nested_update, nested_partial_update (Paimon FieldCollectAgg,
FieldMergeMapAgg, FieldNestedUpdateAgg, FieldNestedPartialUpdateAgg).

``agg``/``agg_in_group`` gather each merge's inputs as events ``{v, o, p}``: the input, the
operation (``ADD`` = ``agg(acc, x)``, ``ADD_OLDER`` = ``aggReversed(acc, x)`` of a record older
than its sequence group, ``RETRACT`` = ``retract(acc, x)``) and the record's position in the
merge. ``finish`` explodes the events to elements and decides, per element, what Java's
one-record-at-a-time fold leaves -- with vectorized window expressions, never a row loop.

Element order: Paimon keeps distinct collect elements of scalar types, map entries and keyed
nested rows in a Java HashSet/HashMap and writes its iteration order, which depends on every
step's table (docs/merge_runtime.md, known difference); we keep first appearance. Non-distinct
collect, unkeyed nested_update and inputs kept as written keep Java's order exactly.
"""
from __future__ import annotations

from typing import List, Optional

import polars as pl

from ..errors import PaimonConfigError, PaimonDataError
from ..options import COUNT_LIMIT, DISTINCT, NESTED_KEY, NESTED_KEY_NULL_STRATEGY, NESTED_SEQUENCE_FIELD, TS_FIELD
from .base import Aggregator, GroupMasks, Masks

ADD, ADD_OLDER, RETRACT = 0, 1, 2
_R, _P, _I, _O, _V, _S = "__r", "__p", "__i", "__o", "__v", "__s"


def _events(col: pl.Expr, op: pl.Expr, mask: pl.Expr, seed: pl.Expr = pl.lit(False)) -> pl.Expr:
    """The merge's inputs under ``mask`` as a list of {v, o, p, s}; ``s`` marks the seed, the
    record whose values start the row (Paimon's initRow) rather than an input."""
    return pl.struct(col.alias(_V), op.alias(_O), pl.int_range(pl.len()).alias(_P), seed.alias(_S)).filter(mask)


class _Collection(Aggregator):
    single_safe = False  # a lone record is stored as-is; merged ones go through the fold
    # the inputs (ADD = agg, ADD_OLDER = aggReversed) that a NULL accumulator returns as written,
    # not rebuilt: FieldMergeMapAgg.agg(null, x) = x; aggReversed(null, x) = agg(x, null) = x for
    # the functions that reverse (nested_update keeps NULL rows and repeated keys there)
    as_written_ops: tuple = ()
    # aggReversed(acc, null) = agg(null, acc) rebuilds the accumulator (nested_update and
    # nested_partial_update take the accumulator as the input there)
    older_null_rebuilds = False
    empty_retract_keeps_acc = False  # retract(acc, []) returns acc itself (FieldCollectAgg, FieldMergeMapAgg)
    supports_retract = True
    supports_sequence_group = True

    def agg(self, col, m: Masks):
        if not m.has_retract:
            return _events(col, pl.lit(ADD), m.add)
        return _events(col, pl.when(m.add).then(ADD).otherwise(RETRACT), m.add | m.ret)

    def agg_in_group(self, col, g: GroupMasks):
        op = pl.when(g.w).then(ADD).when(g.l).then(ADD_OLDER).otherwise(RETRACT)
        mask = g.w | g.l | g.rw | g.rl if g.has_retract else g.w | g.l
        return _events(col, op, mask, g.seed)

    # -- finish: events -> elements -> survivors -> one list per key ------------------------------
    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        events = frame.select(pl.col(column)).with_row_index(_R).explode(column).drop_nulls(column).unnest(column)
        events = events.with_columns(self.kept_as_written().alias("__raw"))
        raw = events.filter(pl.col("__raw")).group_by(_R).agg(pl.col(_V).last().alias("__raw"))
        events = events.drop("__raw")
        empty = pl.col(_V).is_null() | (pl.col(_V).list.len() == 0)
        empty_adds = events.filter(empty & (pl.col(_O) != RETRACT) & ~pl.col(_S))
        events = events.filter(pl.col(_V).is_not_null())
        seen = events.filter(pl.col(_O) != RETRACT).select(_R).unique()
        elements = self.elements(events)
        if getattr(self, "distinct", False) and empty_adds.height:
            # a distinct collect's agg(acc, null / []) still rebuilds the set (a seed's
            # duplicates go): keep such inputs as markers without an element (``_I`` = -1)
            markers = empty_adds.select(_R, _P, _O, _S).with_columns(
                pl.lit(-1, elements.schema[_I]).alias(_I), pl.lit(None, elements.schema[_V]).alias(_V))
            elements = pl.concat([elements, markers.select(elements.columns)], how="vertical_relaxed")
        survivors = self.survivors(elements)
        packed = survivors.group_by(_R, maintain_order=True).agg(self.pack(survivors).alias(column))
        dtype = frame.schema[column].inner.fields[0].dtype  # the events' {v} is the column's type
        out = (
            frame.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias(_R))
            .join(seen.with_columns(pl.lit(True).alias("__seen")), on=_R, how="left", maintain_order="left")
            .join(packed, on=_R, how="left", maintain_order="left")
            .join(raw, on=_R, how="left", maintain_order="left")
        )
        # agg(null, null) = null; once an input was added the result is a list, possibly empty
        empty = pl.lit([], dtype=dtype) if not isinstance(dtype, pl.Struct) else None
        value = pl.col(column).fill_null(empty) if empty is not None else pl.col(column)
        result = pl.when(pl.col("__raw").is_not_null()).then(pl.col("__raw")).when(pl.col("__seen")).then(value)
        return frame.with_columns(out.select(result.cast(dtype).alias(column))[column])

    def kept_as_written(self) -> pl.Expr:
        """The event whose value is the merge's result byte for byte: the accumulator it becomes is
        never rebuilt by a later input. A seed (initRow) starts the row as written, and so does the
        first non-null input meeting a NULL accumulator when its operation is in
        ``as_written_ops``. A NULL input leaves the accumulator as-is (except for a distinct
        collect, whose agg -- not its retract -- rebuilds the set), and so does an empty
        retraction of collect / merge_map (their retract returns early)."""
        retract = pl.col(_O) == RETRACT
        present = pl.col(_V).is_not_null()
        touching = present & ~(
            pl.lit(self.empty_retract_keeps_acc) & retract & (pl.col(_V).list.len() == 0)
        ) | (pl.lit(getattr(self, "distinct", False)) & ~retract) | (
            pl.lit(self.older_null_rebuilds) & (pl.col(_O) == ADD_OLDER))
        keeper = pl.col(_S) & present
        if self.as_written_ops:
            # a seed comes first in its merge; without a non-null one the accumulator is NULL
            # until the first non-null input (a retraction of a NULL accumulator leaves it NULL)
            input_ = ~pl.col(_S) & ~retract & present
            first_input = input_ & (input_.cast(pl.Int32).cum_sum().over(_R) == 1) & pl.col(_O).is_in(
                list(self.as_written_ops))
            keeper = keeper | (first_input & ~(pl.col(_S) & present).any().over(_R))
        at = pl.when(keeper).then(pl.col(_P)).min().over(_R)
        rebuilt = (~pl.col(_S) & touching & (pl.col(_P) > at)).any().over(_R)
        return keeper & ~rebuilt

    def elements(self, events: pl.DataFrame) -> pl.DataFrame:
        """One row per element: __r, __p, __o, __i (index inside its input), __v."""
        return (
            events.with_columns(pl.int_ranges(pl.col(_V).list.len()).alias(_I))
            .explode([_V, _I])
            .filter(pl.col(_I).is_not_null())
        )

    def survivors(self, elements: pl.DataFrame) -> pl.DataFrame:
        raise NotImplementedError

    def pack(self, survivors: pl.DataFrame) -> pl.Expr:
        return pl.col(_V)


class Collect(_Collection):
    name = "collect"
    empty_retract_keeps_acc = True

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        self.distinct = DISTINCT.get(options, field)

    def check_type(self, t):
        if t.root != "ARRAY":
            raise self.type_error("ARRAY")

    def survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        # FieldCollectAgg.aggReversed calls agg(acc, x): an older record appends too
        push = pl.col(_O) != RETRACT
        same = [_R, _V]
        if self.distinct:
            seeded = el.filter(pl.col(_S).any().over(_R))
            el = el.filter(pl.col(_I) >= 0)  # markers only matter after a seed
            if seeded.height:
                rest = self.survivors(el.join(seeded.select(_R).unique(), on=_R, how="anti"))
                return pl.concat([rest, self._distinct_from_seed(seeded)], how="diagonal_relaxed").sort(
                    _R, maintain_order=True)
            # a distinct element is present iff its last event adds it; it sits where that
            # run of additions first added it (HashSet order is unspecified in Paimon)
            last_pop = pl.when(~push).then(pl.col(_P)).max().over(same).fill_null(-1)
            return el.filter(push & (pl.col(_P) > last_pop)).unique(subset=same, keep="first", maintain_order=True)
        if el.select((~push).any()).item() is False:
            return el
        # retract removes, per retracted element, the first equal element still in the list: a
        # FIFO queue per value, where a retraction of an absent value removes nothing.
        step = pl.when(push).then(1).otherwise(-1)
        el = el.with_columns(
            step.cum_sum().over(same).alias("__balance"), push.cast(pl.Int64).cum_sum().over(same).alias("__rank")
        )
        failed = (-pl.col("__balance").min().over(same)).clip(lower_bound=0)
        removed = (~push).sum().over(same) - failed
        return el.filter(push & (pl.col("__rank") > removed))

    def _distinct_from_seed(self, el: pl.DataFrame) -> pl.DataFrame:
        """Distinct collect of merges that start from a seed (initRow keeps its array as written,
        duplicates included): agg makes a set again, retract removes one occurrence per retracted
        element (FieldCollectAgg.retract), so a seed's duplicates count until the next agg. A
        Python loop over these merges' elements only (a leading retraction or a restart)."""
        out = []
        for (r,), merge in el.sort([_R, _P, _I]).group_by(_R, maintain_order=True):
            counts: dict = {}  # hashable value -> [value, occurrences], in first-appearance order
            for _, event in merge.group_by(_P, maintain_order=True):
                values = event.filter(pl.col(_I) >= 0)[_V].to_list()
                if event[_S][0]:
                    for v in values:
                        counts.setdefault(_hashable(v), [v, 0])[1] += 1
                elif event[_O][0] != RETRACT:
                    counts = {h: [v, 1] for h, (v, n) in counts.items() if n > 0}
                    for v in values:
                        counts.setdefault(_hashable(v), [v, 1])
                else:
                    for v in values:
                        entry = counts.get(_hashable(v))
                        if entry is not None and entry[1] > 0:
                            entry[1] -= 1
            out.extend({_R: r, _V: v} for v, n in counts.values() for _ in range(n))
        schema = {_R: el.schema[_R], _V: el.schema[_V]}
        return pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)


class _Keyed(_Collection):
    """Entries with a key (map keys, nested keys): per key, what the HashMap keeps."""

    def entry_keys(self, el: pl.DataFrame) -> List[str]:
        raise NotImplementedError

    def sequence(self) -> List[str]:
        return []

    def survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        keys = self.entry_keys(el)
        same = [_R] + keys
        push = pl.col(_O) != RETRACT
        last_removal = pl.when(~push).then(pl.col(_P)).max().over(same).fill_null(-1)
        candidates = el.filter(push & (pl.col(_P) > last_removal))
        # A newer record's entry replaces the stored one (put); an older record's entry only
        # fills a missing key (aggReversed = agg(x, acc): acc's entries are put last). With a
        # nested sequence field the greatest sequence wins and the stored entry keeps ties
        # against an older record's (compareSequence(row, existing) >= 0).
        newer = pl.col(_O) == ADD
        big = pl.lit(1 << 40, pl.Int64)
        rank = pl.when(newer).then(big + pl.col(_P).cast(pl.Int64) * (1 << 20) + pl.col(_I)).otherwise(
            -pl.col(_P).cast(pl.Int64) * (1 << 20) + pl.col(_I)
        )
        chosen = candidates.with_columns(rank.alias("__rank")).sort(
            self.sequence() + ["__rank"], nulls_last=False, maintain_order=True
        ).unique(subset=same, keep="last", maintain_order=False)
        return chosen.sort([_R, _P, _I])


class MergeMap(_Keyed):
    name = "merge_map"
    empty_retract_keeps_acc = True
    as_written_ops = (ADD, ADD_OLDER)

    def check_type(self, t):
        if t.root != "MAP":
            raise self.type_error("MAP")

    def elements(self, events):
        return super().elements(events).unnest(_V)

    def entry_keys(self, el):
        return ["key"]

    def pack(self, survivors):
        return pl.struct(["key", "value"])


class MergeMapWithKeyTime(MergeMap):
    """FieldMergeMapWithKeyTimeAgg: MAP<K, ROW<..., ts STRING>>. The first input is taken as it is
    (agg(null, x) = x); after it, an entry with a NULL row removes its key, one with a NULL
    timestamp is skipped, and otherwise it replaces a missing entry, a NULL row, a row without
    timestamp or one with a smaller timestamp (String.compareTo; ties keep the stored row)."""

    name = "merge_map_with_keytime"
    supports_retract = False  # no retract override in Java: it raises

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        row = sql_type.children[1]
        names = [f.name for f in sql_type.arrow.item_type]
        ts = TS_FIELD.get(options, field)
        self.ts = ts if ts is not None else names[-1]  # default: the last field of the row
        if self.ts not in names:
            raise PaimonConfigError(
                f"Timestamp field '{self.ts}' ('{TS_FIELD.key(field)}') not found in ROW type for field "
                f"'{field}'. Available fields: {names}."
            )
        ts_type = row.children[names.index(self.ts)]
        if not ts_type.is_unbounded_string and ts_type.root not in ("VARCHAR", "CHAR"):
            raise PaimonConfigError(
                f"Timestamp field '{self.ts}' of '{field}' must be a STRING (Paimon compares it as a string)."
            )

    def check_type(self, t):
        if t.root != "MAP" or t.children[1].root != "ROW" or len(t.children[1].children) < 2:
            raise self.type_error("MAP<K, ROW<...>> with at least 2 row fields")

    def survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        stepwise = el.filter(((pl.col(_O) != ADD) | pl.col(_S)).any().over(_R))
        if not stepwise.height:
            return self._in_order(el)
        rest = self._in_order(el.join(stepwise.select(_R).unique(), on=_R, how="anti"))
        return pl.concat([rest, self._fold(stepwise)], how="diagonal_relaxed").sort(_R, maintain_order=True)

    def _fold(self, el: pl.DataFrame) -> pl.DataFrame:
        """Merges with an older record of a sequence group (aggReversed(acc, x) = agg(x, acc): the
        older map is the base, the stored entries merge into it) or a seed, replayed one record at
        a time: a Python loop over these merges' entries only."""
        ts = self.ts

        def merge_into(base, entries):  # putToMap(base), then mergeInputMap(entries)
            result = {_hashable(key): (key, row) for key, row in base}
            for key, row in entries:
                h = _hashable(key)
                stored = result.get(h, (None, None))[1]
                if row is None:
                    result.pop(h, None)
                elif row[ts] is None:
                    continue
                elif stored is None or stored[ts] is None or row[ts] > stored[ts]:
                    result[h] = (key, row)
            return list(result.values())

        out = []
        for (r,), merge in el.sort([_R, _P, _I]).group_by(_R, maintain_order=True):
            acc = None  # list of (key, row) entries, as written when taken whole
            for _, event in merge.group_by(_P, maintain_order=True):
                entries = list(zip(event["key"].to_list(), event["value"].to_list()))
                if acc is None:
                    acc = entries  # agg(null, x) = x and aggReversed(null, x) = x: as written
                elif event[_O][0] == ADD:
                    acc = merge_into(acc, entries)
                else:
                    acc = merge_into(entries, acc)
            out.extend({_R: r, "key": key, "value": row} for key, row in acc or [])
        schema = {c: el.schema[c] for c in (_R, "key", "value")}
        return pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)

    def _in_order(self, el: pl.DataFrame) -> pl.DataFrame:
        same = [_R, "key"]
        first = pl.col(_P).min().over(_R)
        initial = pl.col(_P) == first
        removal = ~initial & pl.col("value").is_null()
        last_removal = pl.when(removal).then(pl.col(_P)).max().over(same)
        ts = pl.col("value").struct.field(self.ts)
        valid = pl.col("value").is_not_null() & ts.is_not_null()
        el = el.with_columns(
            (initial & last_removal.is_null()).alias("__initial"),
            (~initial & valid & (last_removal.is_null() | (pl.col(_P) > last_removal))).alias("__put"),
            ts.alias("__ts"),
        )
        # the stored initial entry competes only when it has a row and a timestamp
        candidates = el.filter(pl.col("__put") | (pl.col("__initial") & valid))
        chosen = candidates.sort([_R, "key", "__ts", _P, _I], descending=[False, False, True, False, False],
                                 nulls_last=True).unique(subset=same, keep="first")
        puts_any = el.filter(pl.col("__put")).select(same).unique()
        # an initial entry no put reaches stays as written (NULL row or NULL timestamp included)
        raw = el.filter(pl.col("__initial")).join(puts_any, on=same, how="anti", nulls_equal=True)
        raw = raw.join(chosen.select(same), on=same, how="anti", nulls_equal=True)
        return pl.concat([chosen.drop("__ts"), raw.drop("__ts")], how="vertical_relaxed").sort([_R, _P, _I])


class NestedUpdate(_Keyed):
    name = "nested_update"
    as_written_ops = (ADD_OLDER,)  # agg(null, x) drops NULL rows and keys the rows; agg(x, null) = x
    older_null_rebuilds = True

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        names = [f.name for f in sql_type.arrow.value_type]
        self.row_fields = names
        self.nested_key = _field_list(NESTED_KEY.get(options, field))
        self.nested_sequence = _field_list(NESTED_SEQUENCE_FIELD.get(options, field))
        self.count_limit: Optional[int] = COUNT_LIMIT.get(options, field)
        self.null_strategy = NESTED_KEY_NULL_STRATEGY.get(options, field)
        for option, fields in ((NESTED_KEY, self.nested_key), (NESTED_SEQUENCE_FIELD, self.nested_sequence)):
            for k in fields:
                if k not in names:
                    raise PaimonConfigError(
                        f"'{option.key(field)}' names '{k}', which is not a field of {sql_type.text}."
                    )
        # FieldNestedUpdateAggFactory.checkOptionDependencies
        for option, given in ((NESTED_KEY_NULL_STRATEGY, NESTED_KEY_NULL_STRATEGY.key(field) in options),
                              (NESTED_SEQUENCE_FIELD, bool(self.nested_sequence))):
            if given and not self.nested_key:
                raise PaimonConfigError(
                    f"Option '{option.key(field)}' requires '{NESTED_KEY.key(field)}' to be configured."
                )
        if self.count_limit is not None and self.count_limit < 0:
            raise PaimonConfigError(f"'{COUNT_LIMIT.key(field)}' must not be negative.")

    def check_type(self, t):
        if t.root != "ARRAY" or t.children[0].root != "ROW":
            raise self.type_error("ARRAY<ROW<...>>")

    def elements(self, events):
        el = super().elements(events).filter(pl.col(_V).is_not_null())  # addNonNullRows
        el = el.unnest(_V)
        if self.nested_key and self.null_strategy != "merge":
            null_key = pl.any_horizontal([pl.col(k).is_null() for k in self.nested_key])
            if self.null_strategy == "ignore":
                el = el.filter(~null_key)
            elif el.select(null_key.any()).item():
                raise PaimonDataError(
                    f"Nested key {self.nested_key} of field '{self.field}' contains null values. Primary key "
                    f"fields must not be null ('{NESTED_KEY_NULL_STRATEGY.key(self.field)}' = 'error')."
                )
        return el

    def entry_keys(self, el):
        return list(self.nested_key) or list(self.row_fields)

    def sequence(self):
        return list(self.nested_sequence)

    def survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        if self.count_limit is not None:
            stepwise = el.filter(((pl.col(_O) != ADD) | pl.col(_S)).any().over(_R))
            if stepwise.height:
                rest = self._survivors(el.join(stepwise.select(_R).unique(), on=_R, how="anti"))
                folded = self._limited_fold(stepwise)
                return pl.concat([rest, folded], how="diagonal_relaxed").sort(_R, maintain_order=True)
        return self._survivors(el)

    def _limited_fold(self, el: pl.DataFrame) -> pl.DataFrame:
        """count-limit with retractions, older records of a sequence group or a seed: the limit
        depends on the accumulator's size after every step, so FieldNestedUpdateAgg's agg /
        retract are replayed one record at a time (a Python loop over these merges' records only;
        merges of plain additions stay vectorized)."""
        limit, keyed = self.count_limit, bool(self.nested_key)
        fields = list(self.row_fields)

        def key_of(row):
            return tuple(_hashable(row[f]) for f in self.nested_key)

        def order_of(row):  # nested sequence, NULL first
            return tuple((row[f] is not None, row[f]) for f in self.nested_sequence)

        def put_all(entries: dict, rows, limit_new: bool) -> None:  # addNestedRows
            for row in rows:
                key = key_of(row)
                if key in entries:
                    if not self.nested_sequence or order_of(row) >= order_of(entries[key]):
                        entries[key] = row
                elif not limit_new or len(entries) < limit:
                    entries[key] = row

        def agg(acc, rows):  # FieldNestedUpdateAgg.agg(acc, rows); acc None = NULL
            if keyed:
                entries = {}
                put_all(entries, acc or [], False)
                put_all(entries, rows, True)
                return list(entries.values())
            if acc is None:
                return rows[:limit]
            return acc if len(acc) >= limit else acc + rows[:limit - len(acc)]

        def retract(acc, rows):
            if keyed:
                entries = {key_of(x): x for x in acc}
                for key in {key_of(x) for x in rows}:
                    entries.pop(key, None)
                return list(entries.values())
            return [x for x in acc if x not in rows]

        out = []
        for (r,), merge in el.sort([_R, _P, _I]).group_by(_R, maintain_order=True):
            acc = None
            for _, event in merge.group_by(_P, maintain_order=True):
                op = event[_O][0]
                rows = [dict(zip(fields, t)) for t in event.select(fields).iter_rows()]
                if event[_S][0] and acc is None:
                    acc = rows  # initRow: the seed's array as written
                elif op == ADD:
                    acc = agg(acc, rows)
                elif op == ADD_OLDER:  # aggReversed(acc, x) = agg(x, acc)
                    acc = rows if acc is None else agg(rows, acc)
                elif acc is not None:
                    acc = retract(acc, rows)
            out.extend({_R: r, **row} for row in acc or [])
        schema = {c: el.schema[c] for c in [_R] + fields}
        return pl.DataFrame(out, schema=schema) if out else pl.DataFrame(schema=schema)

    def _survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        if self.nested_key:
            out = super().survivors(self._limited_keys(el))
            return out
        # Without a key every row is appended (an older record's rows go before the stored ones:
        # agg(x, acc)); a retraction removes every equal row (removeIf).
        same = [_R] + list(self.row_fields)
        push = pl.col(_O) != RETRACT
        last_removal = pl.when(~push).then(pl.col(_P)).max().over(same).fill_null(-1)
        kept = el.filter(push & (pl.col(_P) > last_removal))
        older = pl.col(_O) == ADD_OLDER
        kept = kept.with_columns(
            older.alias("__older"), pl.when(older).then(-pl.col(_P)).otherwise(pl.col(_P)).alias("__at")
        ).sort([_R, "__older", "__at", _I], descending=[False, True, False, False])
        if self.count_limit is not None:
            kept = kept.filter(pl.int_range(pl.len()).over(_R) < self.count_limit)
        return kept

    def _limited_keys(self, el: pl.DataFrame) -> pl.DataFrame:
        """count-limit with a key: a new key enters only while fewer than the limit are stored."""
        if self.count_limit is None:
            return el
        first_seen = el.group_by([_R] + self.nested_key, maintain_order=True).agg(pl.col(_P).min(), pl.col(_I).min())
        admitted = first_seen.filter(pl.int_range(pl.len()).over(_R) < self.count_limit).drop([_P, _I])
        return el.join(admitted, on=[_R] + self.nested_key, how="semi", nulls_equal=True, maintain_order="left")

    def pack(self, survivors):
        return pl.struct(self.row_fields)


class NestedPartialUpdate(NestedUpdate):
    name = "nested_partial_update"
    supports_retract = False  # FieldNestedPartialUpdateAgg does not override retract: it raises

    def __init__(self, field, sql_type, options):
        super().__init__(field, sql_type, options)
        if not self.nested_key:
            raise PaimonConfigError(
                f"Aggregate function 'nested_partial_update' of field '{field}' needs "
                f"'{NESTED_KEY.key(field)}' (the keys of the nested rows)."
            )

    def survivors(self, el: pl.DataFrame) -> pl.DataFrame:
        # Per key and field: a newer row's non-null value overwrites, an older input's only
        # fills a NULL (aggReversed(acc, x) = agg(x, acc): x's rows first, then acc's), so
        # among older inputs the first one's value stands. Inside one input the rows update in
        # order: its last non-null value. Nothing makes a value NULL again.
        values = [f for f in self.row_fields if f not in self.nested_key]
        newer = pl.col(_O) == ADD

        def older_value(v: str) -> pl.Expr:
            # the first older input, its last row: sort the whole group, then filter
            order = [pl.col(_P), -pl.col(_I).cast(pl.Int64)]
            older = ~newer & pl.col(v).is_not_null()
            return pl.col(v).sort_by(order).filter(older.sort_by(order)).first()

        return el.group_by([_R] + self.nested_key, maintain_order=True).agg(
            [pl.col(_P).min(), pl.col(_I).first()]
            + [
                pl.coalesce(
                    pl.col(v).filter(newer & pl.col(v).is_not_null()).last(),
                    older_value(v),
                ).alias(v)
                for v in values
            ]
        )


def _hashable(value):
    """A dict key for a map key of any type (ROW keys arrive as dicts, ARRAY keys as lists)."""
    if isinstance(value, dict):
        return tuple((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


def _field_list(text: Optional[str]) -> List[str]:
    return [k.strip() for k in (text or "").split(",") if k.strip()]
