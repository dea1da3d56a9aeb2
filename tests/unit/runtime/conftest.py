"""Helpers for the runtime tests: build specs and records tersely.

``rt.spec("k INT, a INT", "k", **{"merge-engine": "partial-update"})``
``rt.records(spec, [(1, 2), ("-D", 1, 2)], [(1, 3)])``: each list is one commit (one INSERT
statement); a row may start with its row kind; ``_seq`` counts up across all rows.
"""
from __future__ import annotations

import types

import pyarrow as pa
import pytest

from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow

KINDS = ("+I", "-U", "+U", "-D")


def split_schema(text: str):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    out = []
    for part in parts:
        name, type_text = part.strip().split(None, 1)
        out.append((name, type_text))
    return out


def spec(schema, primary_keys="k", **options):
    if isinstance(schema, str):
        schema = split_schema(schema)
    pks = [p.strip() for p in primary_keys.split(",")] if isinstance(primary_keys, str) else primary_keys
    return MergeSpec.from_table_options(schema=schema, primary_keys=pks, options=options)


def records(spec, *commits, seqs=None):
    names = list(spec.names)
    cols = {n: [] for n in names}
    kinds, seq, commit = [], [], []
    counter = 0
    for c, rows in enumerate(commits, start=1):
        for row in rows:
            kind = "+I"
            if row and isinstance(row[0], str) and row[0] in KINDS:
                kind, row = row[0], row[1:]
            assert len(row) == len(names), (row, names)
            for n, v in zip(names, row):
                cols[n].append(v)
            counter += 1
            kinds.append(kind)
            seq.append(counter)
            commit.append(c)
    arrays = {n: pa.array(cols[n], type=t.arrow) for n, t in spec.columns}
    arrays["_row_kind"] = pa.array(kinds, pa.string())
    arrays["_seq"] = pa.array(seqs if seqs is not None else seq, pa.int64())
    arrays["_commit"] = pa.array(commit, pa.int64())
    return pa.table(arrays)


def rows(table: pa.Table):
    return [tuple(r.values()) for r in table.to_pylist()]


def merge(spec, *commits):
    return rows(merge_arrow(spec, records(spec, *commits)))


@pytest.fixture
def rt():
    return types.SimpleNamespace(spec=spec, records=records, rows=rows, merge=merge)


# ---- record-at-a-time reference folds (test_reference_model, test_collections_model) ----------
ADD = ("+I", "+U")


class Raise(Exception):
    """A reference fold's merge raises where Paimon raises."""


class IgnoreRetract:
    """fields.<f>.ignore-retract around a reference aggregator (FieldIgnoreRetractAgg)."""

    def __init__(self, inner):
        self.inner = inner

    def reset(self):
        self.inner.reset()

    def agg(self, acc, x):
        return self.inner.agg(acc, x)

    def reversed(self, acc, x):
        return self.inner.reversed(acc, x)

    def retract(self, acc, x):
        return acc


def fold(merge, recs, canonical=tuple):
    """ReducerMergeFunctionWrapper + read: group ``(kind, row)`` records by key (row[0]), merge
    each group with ``merge``, hide retractions; rows sorted by key."""
    by_key = {}
    for kind, kv in recs:
        by_key.setdefault(kv[0], []).append((kind, kv))
    out = []
    for key in sorted(by_key):
        group = by_key[key]
        kind, row = group[0] if len(group) == 1 else merge(group)
        if kind in ADD:
            out.append(canonical(row))
    return out


def stored_per_commit(merge, commits):
    """Each commit through the write buffer: one stored record per key (ReducerMergeFunctionWrapper)."""
    stored = []
    for recs in commits:
        by_key = {}
        for kind, kv in recs:
            by_key.setdefault(kv[0], []).append((kind, kv))
        for key in sorted(by_key):
            group = by_key[key]
            stored.append(group[0] if len(group) == 1 else merge(group))
    return stored


def folded_commits(merge, commits, canonical=tuple):
    """(merged rows, lookup changelog) of ``commits`` (lists of ``(kind, row)``) by the reference
    fold: per commit, each written key's state before and after it
    (LookupChangelogMergeFunctionWrapper); ("raises", "raises") where the fold raises."""
    try:
        states = [{row[0]: row for row in fold(merge, stored_per_commit(merge, commits[:c]),
                                                canonical)}
                  for c in range(1, len(commits) + 1)]
    except Raise:
        return "raises", "raises"
    changes, before = [], {}
    for c, after in enumerate(states, start=1):
        for key in sorted({kv[0] for _, kv in commits[c - 1]}):
            was, now = before.get(key), after.get(key)
            if was is None and now is not None:
                changes.append(now + ("+I", c))
            elif was is not None and now is None:
                changes.append(was + ("-D", c))
            elif was is not None:
                changes += [was + ("-U", c), now + ("+U", c)]
        before = after
    return sorted(states[-1].values()), changes
