"""The in-process executor of a primary-key write: the run's rows as one Arrow table in this
process, the same stages as the Spark tasks (tasks.py), no shuffle.

    Arrow rows --validate (all rows, before any file)--> + _bucket (fixed: bucket hash;
    dynamic: key hash, assigner, HASH index) --group (partition, bucket)--> write_groups in
    threads --> commit messages

Every stage is the function a Spark task runs on its share of the rows, so both executors write
the same files. A grouping by (partition, bucket) here is what the writing shuffle is there: one
writer per bucket. Threads write disjoint buckets; the merge kernel, Arrow and parquet release
the GIL for most of their work.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional, Tuple

import pyarrow as pa

from dbt.adapters.paimon.format.commit import abort
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write.plan import BUCKET, FIXED, WritePlan
from dbt.adapters.paimon.write.tasks import (_not_null, _with_route, assign_buckets,
                                             conform_assigned, existing_splits, fixed_buckets,
                                             split_groups, write_groups)
from dbt.adapters.paimon.write.validation import Problems, conform_and_check

MAX_THREADS = 8


def write_in_process(plan: WritePlan, table, rows: pa.Table,
                     threads: Optional[int] = None) -> Tuple[list, int]:
    """Write ``rows`` (the model's rows as Spark returned them: Spark-side names, ``_seq`` and
    maybe ``_row_kind``) as level-0 files of ``table``; returns (commit messages, records).
    Bad rows raise PaimonDataError before any file is written; any later failure deletes every
    file written and raises."""
    if rows.num_rows == 0:
        return [], 0
    data = _validated(plan, plan.from_spark_names(rows))
    if plan.mode == FIXED:
        keys = [data.column(k) for k in plan.bucket_input_columns]
        data = data.append_column(BUCKET, fixed_buckets(plan, *keys))
    else:
        routed = _with_route(plan, data)
        data = conform_assigned(plan, pa.concat_tables(assign_buckets(plan, table, routed)))
    groups = list(split_groups(data, plan.group_columns))
    existing = existing_splits(plan, table, groups)
    messages = _write_in_threads(plan, groups, existing, threads)
    return messages, data.num_rows


def _validated(plan: WritePlan, rows: pa.Table) -> pa.Table:
    """All rows at the table's types, or the run's data error (every bad row counted)."""
    problems = Problems(plan)
    data = conform_and_check(plan, rows.combine_chunks(), problems, _not_null(plan))
    if problems:
        raise problems.error()
    return data


def _write_in_threads(plan: WritePlan, groups, existing, threads: Optional[int]) -> List:
    workers = max(1, min(threads or min(os.cpu_count() or 1, MAX_THREADS), len(groups)))
    # the largest groups first, each to the thread with the fewest rows so far
    shares: List[list] = [[] for _ in range(workers)]
    loads = [0] * workers
    for group in sorted(groups, key=lambda g: -g[1].num_rows):
        i = loads.index(min(loads))
        shares[i].append(group)
        loads[i] += group[1].num_rows
    outputs = [[] for _ in range(workers)]

    def run(i: int) -> None:
        # a table object per thread: pypaimon's readers and writers keep state on it
        write_groups(plan, plan.open_table(), shares[i], existing, outputs[i])

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="paimon-write") as pool:
        futures = [pool.submit(run, i) for i in range(workers)]
        errors = [f.exception() for f in futures]
    messages = [m for out in outputs for m in out]
    errors = [e for e in errors if e is not None]
    if errors:
        if messages:
            abort(plan.open_table(), messages)
        data_errors = [e for e in errors if isinstance(e, PaimonDataError)]
        raise (data_errors or errors)[0]
    return messages
