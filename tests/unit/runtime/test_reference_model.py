"""The vectorized kernel against a record-at-a-time model of Paimon's merge functions.

The model below is written from the Java classes' behaviour (PartialUpdateMergeFunction,
AggregateMergeFunction, ReducerMergeFunctionWrapper, Field*Agg): one merge of a key's records
in order, a key's only record returned as-is, retractions hidden on read. Per-row Python is
fine here: it is the test oracle, not the runtime.
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.runtime import PaimonDataError, merge_arrow

from conftest import ADD, IgnoreRetract, Raise, fold, folded_commits, records, rows, spec as make_spec

NAMES = ["k", "a", "b", "g", "c", "h"]
INT_MAX = 2**31 - 1


# ---- field aggregators (None = NULL) ---------------------------------------------------------
class Sum:
    def reset(self):
        pass

    def agg(self, acc, x):
        if acc is None or x is None:
            return x if acc is None else acc
        return self.check(acc + x)

    def reversed(self, acc, x):
        return self.agg(x, acc)

    def retract(self, acc, x):
        if acc is None or x is None:
            return None if x is None and acc is None else (self.check(-x) if acc is None else acc)
        return self.check(acc - x)

    @staticmethod
    def check(v):
        if not -(2**31) <= v <= INT_MAX:
            raise Raise("overflow")
        return v


class Max(Sum):
    def agg(self, acc, x):
        if acc is None or x is None:
            return x if acc is None else acc
        return max(acc, x)

    def retract(self, acc, x):
        raise Raise("no retract")


class LastNonNull(Sum):
    def agg(self, acc, x):
        return acc if x is None else x

    def retract(self, acc, x):
        return None if x is not None else acc


class LastValue(Sum):
    def agg(self, acc, x):
        return x

    def retract(self, acc, x):
        return None


class FirstNonNull(Sum):
    """FieldFirstNonNullValueAgg: the flag is reset per key (reset), never by a restart of the row."""

    def reset(self):
        self.init = False

    def agg(self, acc, x):
        if not self.init and x is not None:
            self.init = True
            return x
        return acc

    def retract(self, acc, x):
        raise Raise("no retract")


class FirstValue(Sum):
    def reset(self):
        self.init = False

    def agg(self, acc, x):
        if not self.init:
            self.init = True
            return x
        return acc

    def retract(self, acc, x):
        raise Raise("no retract")


# ---- merge functions ---------------------------------------------------------------------------
def cmp(kv, row, fields):
    for f in fields:
        x, y = kv[f], row[f]
        if x is None and y is None:
            continue
        if x is None:
            return -1
        if y is None:
            return 1
        if x != y:
            return -1 if x < y else 1
    return 0


def init_row(kv, not_null):
    """initRow: the row restarts from ``kv``; a NOT NULL field holding NULL raises."""
    if any(kv[i] is None for i in not_null):
        raise Raise("Field can not be null")
    return list(kv)


def partial_update(recs, groups, aggs, remove_on_delete=False, delete_groups=(), not_null=()):
    """groups: list of (order_fields, protected_fields); fields are column indexes; ``not_null``:
    the NOT NULL value fields."""
    n = len(NAMES)
    seq_of = {}
    for g in groups:
        for f in g[0] + g[1]:
            seq_of[f] = g
    for a in aggs.values():
        a.reset()
    row, filled, meet_insert, delete_row = [None] * n, False, False, False
    for kind, kv in recs:
        delete_row = False
        if kind not in ADD:
            if not filled:
                row, filled = init_row(kv, not_null), True
            if groups:
                processed, updated = set(), set()
                for i in range(n):
                    if i not in seq_of or i in processed:
                        continue
                    order, _ = seq_of[i]
                    if all(kv[f] is None for f in order):
                        processed.update(order)
                        continue
                    agg = aggs.get(i)
                    if cmp(kv, row, order) >= 0:
                        if i in order:
                            for f in order:
                                if f not in updated:
                                    if kind == "-D" and f in delete_groups:
                                        delete_row, row = True, init_row(kv, not_null)
                                        break
                                    row[f] = kv[f]
                                    updated.add(f)
                                processed.add(f)
                            if delete_row:
                                break
                            continue
                        row[i] = None if agg is None else agg.retract(row[i], kv[i])
                    elif agg is not None:
                        row[i] = agg.retract(row[i], kv[i])
                continue
            if remove_on_delete:
                if kind == "-D":
                    delete_row, row = True, init_row(kv, not_null)
                continue
            raise Raise("partial-update delete")
        if not groups:  # updateNonNullFields
            for i in range(n):
                if kv[i] is not None:
                    row[i] = kv[i]
                elif i in not_null:
                    raise Raise("Field can not be null")
        else:
            processed = set()
            for i in range(n):
                agg = aggs.get(i)
                if i in seq_of:
                    if i in processed:
                        continue
                    order, _ = seq_of[i]
                    if all(kv[f] is None for f in order):
                        processed.update(order)
                        continue
                    if cmp(kv, row, order) >= 0:
                        if i in order:
                            for f in order:
                                row[f] = kv[f]
                                processed.add(f)
                            continue
                        row[i] = kv[i] if agg is None else agg.agg(row[i], kv[i])
                    elif agg is not None:
                        row[i] = agg.reversed(row[i], kv[i])
                else:
                    if agg is not None:
                        row[i] = agg.agg(row[i], kv[i])
                    elif kv[i] is not None:
                        row[i] = kv[i]
        meet_insert, filled = True, True
    return ("-D" if delete_row or not meet_insert else "+I"), row


def aggregation(recs, aggs, remove_on_delete=False, not_null=()):
    for a in aggs.values():
        a.reset()
    row, delete_row = [None] * len(NAMES), False
    row[0] = recs[0][1][0]
    for kind, kv in recs:
        delete_row = remove_on_delete and kind == "-D"
        if delete_row:
            row = init_row(kv, not_null)
            continue
        for i, a in aggs.items():
            row[i] = a.agg(row[i], kv[i]) if kind in ADD else a.retract(row[i], kv[i])
    return ("-D" if delete_row else "+I"), row




# ---- the configurations compared --------------------------------------------------------------
PU = {"merge-engine": "partial-update"}
I = {n: i for i, n in enumerate(NAMES)}
CASES = {
    "pu-groups-sum": (
        dict(PU, **{"fields.g.sequence-group": "a,b", "fields.h.sequence-group": "c",
                    "fields.b.aggregate-function": "sum"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"], I["b"])), ((I["h"],), (I["c"],))], {I["b"]: Sum()}),
    ),
    "pu-groups-lnnv-first": (
        dict(PU, **{"fields.g.sequence-group": "a", "fields.h.sequence-group": "b,c",
                    "fields.b.aggregate-function": "last_non_null_value", "fields.c.aggregate-function": "first_value",
                    "fields.c.ignore-retract": "true"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"],)), ((I["h"],), (I["b"], I["c"]))],
                                    {I["b"]: LastNonNull(), I["c"]: IgnoreRetract(FirstValue())}),
    ),
    "pu-groups-first-value-retract": (
        dict(PU, **{"fields.g.sequence-group": "a,b", "fields.b.aggregate-function": "first_value"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"], I["b"]))], {I["b"]: FirstValue()}),
    ),
    "pu-multi-field-group-last-value": (
        dict(PU, **{"fields.g,h.sequence-group": "a,b", "fields.b.aggregate-function": "last_value"}),
        lambda recs: partial_update(recs, [((I["g"], I["h"]), (I["a"], I["b"]))], {I["b"]: LastValue()}),
    ),
    "pu-remove-on-group": (
        dict(PU, **{"fields.g.sequence-group": "a", "fields.h.sequence-group": "b",
                    "partial-update.remove-record-on-sequence-group": "g"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"],)), ((I["h"],), (I["b"],))], {},
                                    delete_groups=(I["g"],)),
    ),
    "pu-remove-on-delete": (
        dict(PU, **{"partial-update.remove-record-on-delete": "true"}),
        lambda recs: partial_update(recs, [], {}, remove_on_delete=True),
    ),
    "pu-plain": (PU, lambda recs: partial_update(recs, [], {})),
    "pu-removals-first-non-null": (
        dict(PU, **{"fields.g.sequence-group": "a,b", "fields.h.sequence-group": "c",
                    "fields.a.aggregate-function": "first_non_null_value", "fields.a.ignore-retract": "true",
                    "fields.c.aggregate-function": "first_non_null_value", "fields.c.ignore-retract": "true",
                    "partial-update.remove-record-on-sequence-group": "g,h"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"], I["b"])), ((I["h"],), (I["c"],))],
                                    {I["a"]: IgnoreRetract(FirstNonNull()), I["c"]: IgnoreRetract(FirstNonNull())},
                                    delete_groups=(I["g"], I["h"])),
    ),
    "pu-removals-no-retract": (
        dict(PU, **{"fields.g.sequence-group": "a,c", "fields.h.sequence-group": "b",
                    "fields.c.aggregate-function": "first_value",
                    "partial-update.remove-record-on-sequence-group": "g,h"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"], I["c"])), ((I["h"],), (I["b"],))],
                                    {I["c"]: FirstValue()}, delete_groups=(I["g"], I["h"])),
    ),
    "pu-plain-not-null": (
        PU, lambda recs: partial_update(recs, [], {}, not_null=(I["b"],)), "b",
    ),
    "pu-removals-not-null": (
        dict(PU, **{"fields.g.sequence-group": "a", "fields.h.sequence-group": "b",
                    "partial-update.remove-record-on-sequence-group": "g"}),
        lambda recs: partial_update(recs, [((I["g"],), (I["a"],)), ((I["h"],), (I["b"],))], {},
                                    delete_groups=(I["g"],), not_null=(I["b"],)), "b",
    ),
    "pu-remove-on-delete-not-null": (
        dict(PU, **{"partial-update.remove-record-on-delete": "true"}),
        lambda recs: partial_update(recs, [], {}, remove_on_delete=True, not_null=(I["c"],)), "c",
    ),
    "agg": (
        {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "max",
         "fields.b.ignore-retract": "true", "fields.g.aggregate-function": "last_value",
         "fields.h.aggregate-function": "first_value", "fields.h.ignore-retract": "true"},
        lambda recs: aggregation(recs, {I["a"]: Sum(), I["b"]: IgnoreRetract(Max()), I["c"]: LastNonNull(),
                                        I["g"]: LastValue(), I["h"]: IgnoreRetract(FirstValue())}),
    ),
    "agg-remove-on-delete": (
        {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
         "aggregation.remove-record-on-delete": "true"},
        lambda recs: aggregation(recs, {I["a"]: Sum(), I["b"]: LastNonNull(), I["c"]: LastNonNull(),
                                        I["g"]: LastNonNull(), I["h"]: LastNonNull()}, remove_on_delete=True),
    ),
    "agg-remove-on-delete-not-null": (
        {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
         "aggregation.remove-record-on-delete": "true"},
        lambda recs: aggregation(recs, {I["a"]: Sum(), I["b"]: LastNonNull(), I["c"]: LastNonNull(),
                                        I["g"]: LastNonNull(), I["h"]: LastNonNull()}, remove_on_delete=True,
                                 not_null=(I["a"],)), "a",
    ),
}


def case(name):
    """(spec, merge): a case's third element names a column declared NOT NULL."""
    options, merge, *not_null = CASES[name]
    schema = ", ".join(f"{n} INT NOT NULL" if n in not_null else f"{n} INT" for n in NAMES)
    return make_spec(schema, **options), merge

value = st.one_of(st.none(), st.integers(0, 3))
record = st.tuples(st.sampled_from(["+I", "+I", "+U", "-U", "-D"]), st.integers(0, 2), value, value, value, value, value)


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=st.lists(record, min_size=1, max_size=7))
def test_kernel_matches_record_at_a_time_model(name, recs):
    s, merge = case(name)
    typed = [(r[0], tuple(r[1:])) for r in recs]
    try:
        expected = fold(merge, typed)
    except Raise:
        expected = "raises"
    try:
        got = rows(merge_arrow(s, records(s, [(r[0],) + r[1:] for r in recs])))
    except PaimonDataError:
        got = "raises"
    assert got == expected




@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(st.lists(record, min_size=1, max_size=4), min_size=1, max_size=4))
def test_commits_and_changelog_match_model(name, commits):
    s, merge = case(name)
    typed = [[(r[0], tuple(r[1:])) for r in c] for c in commits]
    expected, changes = folded_commits(merge, typed)
    try:
        t = records(s, *[[(r[0],) + r[1:] for r in c] for c in commits])
        merged, log = merge_arrow(s, t, with_changelog=True)
        got, got_changes = rows(merged), rows(log)
    except PaimonDataError:
        got = got_changes = "raises"
    assert got == expected
    assert got_changes == changes
