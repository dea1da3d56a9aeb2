"""Changelog of lookup / full-compaction: each key's state before vs after every commit.

For commit c and a key written in c, *after* is what a reader sees at snapshot c (all stored
records of that key with commit <= c merged once) and *before* is the same at the key's
previous commit. Emitted (LookupChangelogMergeFunctionWrapper / FullChangelogMergeFunctionWrapper):
+I (new or revived key), -D (removed key), -U/+U (changed -- also when the value is identical,
unless changelog-producer.row-deduplicate), nothing for a key that stays absent. first-row
emits only +I for new keys (FirstRowMergeFunctionWrapper).

The states are computed in one vectorized merge over (commit, key) groups; a key written in
k commits contributes 1 + 2 + ... + k stored records to it.
"""
from __future__ import annotations

import polars as pl
import pyarrow as pa

from .engines.base import ADD, DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE

_COMMIT = "__commit"
_AT = "__at"


def changelog_frames(spec, stored: pl.DataFrame, merge):
    from .kernel import COMMIT, to_arrow

    pk = list(spec.primary_keys)
    touched = stored.select(pk + [pl.col(_COMMIT).alias(_AT)])
    history = stored.join(touched, on=pk, how="inner").filter(pl.col(_COMMIT) <= pl.col(_AT))
    states = merge(spec, history, pk + [_AT]).sort(pk + [_AT])
    names = list(spec.names)
    before = states.select(
        [pl.col(c).shift(1).over(pk).alias(f"__b_{c}") for c in names]
        + [pl.col(ADD).shift(1).over(pk).fill_null(False).alias("__b_live")]
    )
    states = pl.concat([states, before], how="horizontal")
    was, now = pl.col("__b_live"), pl.col(ADD)

    def emit(condition, kind: str, prefix: str, order: int) -> pl.DataFrame:
        return states.filter(condition).select(
            [pl.col(f"{prefix}{c}").alias(c) for c in names]
            + [pl.lit(kind).alias(ROW_KIND), pl.col(_AT).alias(COMMIT), pl.lit(order).alias("__o")]
            + [pl.col(k).alias(f"__k_{k}") for k in pk]
        )

    parts = [emit(~was & now, INSERT, "", 1)]
    if spec.engine != "first-row":
        compared = [c for c in names if c not in spec.changelog_ignore_fields]
        same = pl.all_horizontal([pl.col(c).eq_missing(pl.col(f"__b_{c}")) for c in compared])
        changed = ~same if spec.changelog_row_deduplicate else pl.lit(True)
        parts += [
            emit(was & ~now, DELETE, "__b_", 0),
            emit(was & now & changed, UPDATE_BEFORE, "__b_", 0),
            emit(was & now & changed, UPDATE_AFTER, "", 1),
        ]
    changes = pl.concat(parts, how="vertical_relaxed").sort([COMMIT] + [f"__k_{k}" for k in pk] + ["__o"])
    schema = spec.arrow_schema.append(pa.field(ROW_KIND, pa.string(), nullable=False)).append(
        pa.field(COMMIT, pa.int64(), nullable=False)
    )
    final = states.group_by(pk, maintain_order=True).agg(pl.all().last())
    return final, to_arrow(changes, schema)


def full_compaction_changelog(spec, before: pa.Table, after: pa.Table) -> pa.Table:
    """changelog-producer 'full-compaction' (Java FullChangelogMergeTreeCompactRewriter): each
    key's top-level state before vs after the full compaction: +I new, -D removed, -U/+U
    changed (also unchanged ones unless changelog-producer.row-deduplicate)."""
    from .kernel import to_arrow

    pk = list(spec.primary_keys)
    names = list(spec.names)
    old = pl.from_arrow(before.select(names + ["_seq"]))
    new = pl.from_arrow(after.select(names + ["_seq"]))
    old = old.rename({c: f"__b_{c}" for c in old.columns if c not in pk})
    joined = new.join(old, on=pk, how="full", coalesce=True)
    was, now = pl.col("__b__seq").is_not_null(), pl.col("_seq").is_not_null()
    compared = [c for c in names if c not in pk and c not in spec.changelog_ignore_fields]
    same = pl.all_horizontal([pl.col(c).eq_missing(pl.col(f"__b_{c}")) for c in compared]) \
        if compared else pl.lit(True)
    changed = ~same if spec.changelog_row_deduplicate else pl.lit(True)

    def emit(condition, kind, prefix, order):
        return joined.filter(condition).select(
            [pl.col(c) if c in pk else pl.col(f"{prefix}{c}").alias(c) for c in names]
            + [pl.col(f"{prefix}_seq").alias("_seq"), pl.lit(kind).alias("_row_kind"),
               pl.lit(order).alias("__o")])

    parts = [emit(~was & now, "+I", "", 1), emit(was & ~now, "-D", "__b_", 0),
             emit(was & now & changed, "-U", "__b_", 0), emit(was & now & changed, "+U", "", 1)]
    changes = pl.concat(parts, how="vertical_relaxed").sort(pk + ["__o"]).drop("__o")
    schema = spec.arrow_schema.append(pa.field("_seq", pa.int64())).append(
        pa.field("_row_kind", pa.string()))
    return to_arrow(changes.select(schema.names), schema)
