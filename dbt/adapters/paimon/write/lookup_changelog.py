"""changelog-producer 'lookup' in a write task: the changelog of this commit for one bucket.

Java (LookupChangelogMergeFunctionWrapper, FirstRowMergeFunctionWrapper) computes it while
compacting level 0: for each key written in the commit, the key's merged state in the upper
levels (``before``, looked up) against the state after merging the new records (``after``):
+I new or revived key, -D removed key, -U/+U otherwise (skipped when the values are equal and
``changelog-producer.row-deduplicate`` is on, ``...-ignore-fields`` excluded from the
comparison); first-row emits only +I of keys the bucket did not hold. Here ``before`` is the
merged state of the written keys in the bucket's files at the run's base snapshot (what a
reader sees), ``after`` the same with the run's records merged in as a later commit, and the
two are compared as the full-compaction changelog compares a bucket's top level (the same rows
as ``merge_arrow(..., with_changelog=True)`` emits, in two plain merges).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.paimon.write.plan import ROW_KIND, SEQ

_COMMIT = "_commit"


def lookup_changelog(spec, stored: Optional[pa.Table], run: pa.Table,
                     written: pa.Table) -> pa.Table:
    """The changelog rows (table columns, ``_seq``, ``_row_kind``) of one bucket.

    ``stored``: the bucket's raw records (``read_split_records``), None when the bucket is new;
    ``run``: the run's records of the bucket (columns, ``_row_kind``, ``_seq``); ``written``:
    what the run stores (primary key, ``_seq`` = the stored sequence number). Each changelog
    row carries the sequence number of the record it shows, as Java's (replaceBefore /
    replaceAfter): +I/+U the new stored record's, -U/-D the key's latest stored one's (readers
    that merge changelog files order by it).
    """
    import polars as pl

    from dbt.adapters.paimon.format.kv_files import rows_with_keys
    from dbt.adapters.paimon.runtime import merge_arrow
    from dbt.adapters.paimon.runtime.changelog import full_compaction_changelog

    names = list(spec.names)
    pk = list(spec.primary_keys)
    run = run.select(names + [ROW_KIND, SEQ])
    touched = run.schema.empty_table()
    if stored is not None and stored.num_rows:
        written_keys = run.select(pk).group_by(pk).aggregate([])
        # only keys this run writes get a changelog: the rest of the bucket is not merged
        touched = rows_with_keys(stored.select(names + [ROW_KIND, SEQ]), written_keys,
                                 pk).cast(run.schema)
    # before: what a reader sees of those keys now; after: with the run's records merged in
    before = merge_arrow(spec, touched)
    after = merge_arrow(spec, pa.concat_tables([_with_commit(touched, 0), _with_commit(run, 1)]))
    before_seq = pl.from_arrow(touched.select(pk + [SEQ])).group_by(pk).agg(pl.col(SEQ).max())
    changes = full_compaction_changelog(spec, _with_seq(before, before_seq, pk),
                                        _with_seq(after, pl.from_arrow(written.select(pk + [SEQ])),
                                                  pk))
    if spec.engine == "first-row":  # FirstRowMergeFunctionWrapper: only keys new to the bucket
        changes = changes.filter(pc.equal(changes.column(ROW_KIND), "+I"))
    return changes


def _with_seq(rows: pa.Table, seqs, pk) -> pa.Table:
    """``rows`` (one per key) with the ``_seq`` of their key, in their order."""
    import polars as pl

    keys = pl.from_arrow(rows.select(pk)).with_row_index("__row")
    joined = keys.join(seqs, on=pk, how="left").sort("__row")
    return rows.append_column(SEQ, joined[SEQ].to_arrow().cast(pa.int64()))


def _with_commit(records: pa.Table, commit: int) -> pa.Table:
    return records.append_column(_COMMIT, pa.array(np.full(records.num_rows, commit, np.int64)))
