"""changelog-producer 'lookup' in a write task: the changelog of this commit for one bucket.

Java (LookupChangelogMergeFunctionWrapper, FirstRowMergeFunctionWrapper) computes it while
compacting level 0: for each key written in the commit, the key's merged state in the upper
levels (``before``, looked up) against the state after merging the new records (``after``):
+I new or revived key, -D removed key, -U/+U otherwise (skipped when the values are equal and
``changelog-producer.row-deduplicate`` is on, ``...-ignore-fields`` excluded from the
comparison); first-row emits only +I of keys the bucket did not hold. Here ``before`` is the
merged state of the bucket's files at the run's base snapshot (what a reader sees) and the
runtime's ``merge_arrow(..., with_changelog=True)`` emits the same rows, with the bucket's
stored records as commit 0 and the run's records as commit 1.
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
    """The changelog rows (table columns, ``_row_kind``, ``_seq``) of one bucket.

    ``stored``: the bucket's raw records (``read_split_records``), None when the bucket is new;
    ``run``: the run's records of the bucket (columns, ``_row_kind``, ``_seq``); ``written``:
    what the run stores (primary key, ``_seq`` = the stored sequence number). Each changelog
    row carries the sequence number of the record it shows, as Java's (replaceBefore /
    replaceAfter): +I/+U the new stored record's, -U/-D the key's latest stored one's (readers
    that merge changelog files, e.g. Paimon 1.0's incremental-between, order by it).
    """
    import polars as pl

    from dbt.adapters.paimon.runtime import merge_arrow

    names = list(spec.names)
    pk = list(spec.primary_keys)
    run = run.select(names + [ROW_KIND, SEQ])
    pieces = []
    before_seq = pl.from_arrow(run.select(pk).slice(0, 0)).with_columns(
        pl.lit(None, pl.Int64).alias("__before"))
    if stored is not None and stored.num_rows:
        written_keys = run.select(pk).group_by(pk).aggregate([])
        # only keys this run writes get a changelog: the rest of the bucket is not merged
        touched = stored.select(names + [ROW_KIND, SEQ]).join(written_keys, keys=pk,
                                                              join_type="left semi")
        pieces.append(_with_commit(touched.cast(run.schema), 0))
        before_seq = pl.from_arrow(touched.select(pk + [SEQ])).group_by(pk).agg(
            pl.col(SEQ).max().alias("__before"))
    pieces.append(_with_commit(run, 1))
    _, changes = merge_arrow(spec, pa.concat_tables(pieces), with_changelog=True)
    changes = changes.filter(pc.equal(changes.column(_COMMIT), 1)).drop_columns([_COMMIT])
    after_seq = pl.from_arrow(written.select(pk + [SEQ])).rename({SEQ: "__after"})
    keys = pl.from_arrow(changes.select(pk + [ROW_KIND])).with_row_index("__row")
    seq = (keys.join(after_seq, on=pk, how="left").join(before_seq, on=pk, how="left")
           .sort("__row")
           .select(pl.when(pl.col(ROW_KIND).is_in(["+I", "+U"])).then(pl.col("__after"))
                   .otherwise(pl.col("__before")).alias(SEQ)))
    if seq[SEQ].null_count():
        raise AssertionError("lookup changelog: a changelog row without its record's sequence "
                             "number (a bug)")
    return changes.append_column(SEQ, seq[SEQ].to_arrow().cast(pa.int64()))


def _with_commit(records: pa.Table, commit: int) -> pa.Table:
    return records.append_column(_COMMIT, pa.array(np.full(records.num_rows, commit, np.int64)))
