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


def lookup_changelog(spec, stored: Optional[pa.Table], run: pa.Table) -> pa.Table:
    """The changelog rows (table columns, ``_row_kind``, ``_seq`` counting from 0) of one
    bucket. ``stored``: the bucket's raw records (``read_split_records``), None when the bucket
    is new; ``run``: the run's records of the bucket (columns, ``_row_kind``, ``_seq``)."""
    from dbt.adapters.paimon.runtime import merge_arrow

    names = list(spec.names)
    run = run.select(names + [ROW_KIND, SEQ])
    pieces = []
    if stored is not None and stored.num_rows:
        pk = list(spec.primary_keys)
        written = run.select(pk).group_by(pk).aggregate([])
        # only keys this run writes get a changelog: the rest of the bucket is not merged
        touched = stored.select(names + [ROW_KIND, SEQ]).join(written, keys=pk,
                                                              join_type="left semi")
        pieces.append(_with_commit(touched.cast(run.schema), 0))
    pieces.append(_with_commit(run, 1))
    _, changes = merge_arrow(spec, pa.concat_tables(pieces), with_changelog=True)
    changes = changes.filter(pc.equal(changes.column(_COMMIT), 1)).drop_columns([_COMMIT])
    return changes.append_column(SEQ, pa.array(np.arange(changes.num_rows, dtype=np.int64)))


def _with_commit(records: pa.Table, commit: int) -> pa.Table:
    return records.append_column(_COMMIT, pa.array(np.full(records.num_rows, commit, np.int64)))
