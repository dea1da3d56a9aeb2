"""What Paimon's writer does after each commit, done after each dbt run of a model.

1. compaction: a full compaction when ``full-compaction.delta-commits`` commits happened since
   the last full one, else Paimon's size-tiered compaction of the buckets whose sorted runs
   reach ``num-sorted-run.compaction-trigger`` (and, for first-row / lookup tables, of every
   bucket holding level-0 files, which their readers would not see). A bucketed append table
   (``bucket`` = N): the minor compaction of the buckets the run wrote, as Java's
   BucketedAppendCompactManager runs when its writer flushes (unbucketed append tables are
   compacted only by ``compact``, as in Paimon);
2. expiry: ``snapshot.num-retained.min/max``, ``snapshot.time-retained``, at most
   ``snapshot.expire.limit`` snapshots per run;
3. tags: automatic tag creation (``tag.automatic-creation``) and expiry of tags past their
   retention (ops/auto_tags.py), after snapshot expiry as in Java's committer.
``write-only`` = true skips 1 and 2, as in Paimon (a separate job maintains such tables).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.splits import is_postpone_table
from dbt.adapters.paimon.ops.compact import (FULL_COMPACTION_PROPERTY, CompactResult,
                                             compact_table)
from dbt.adapters.paimon.ops.expire import DEFAULT_EXPIRE_LIMIT, ExpireResult, expire_snapshots


@dataclass(frozen=True)
class AfterRunResult:
    compaction: Optional[CompactResult]
    expiry: Optional[ExpireResult]
    tags: List[str] = field(default_factory=list)

    @property
    def messages(self) -> List[str]:
        out = list(self.tags)
        if self.compaction is not None and self.compaction.snapshot_id is not None:
            out.append(self.compaction.message)
        if self.expiry is not None and self.expiry.expired_snapshots:
            out.append(self.expiry.message)
        return out


def commits_since_full_compaction(table) -> int:
    """APPEND/OVERWRITE snapshots after the newest full compaction (all retained ones when
    there was none)."""
    count = 0
    for snapshot in sorted(table.snapshot_manager().list_snapshots(), key=lambda s: -s.id):
        if snapshot.commit_kind == "COMPACT":
            if (snapshot.properties or {}).get(FULL_COMPACTION_PROPERTY) == "full":
                break
            continue
        count += 1
    return count


def after_run(spark, location: TableRef, compact: bool = True, expire: bool = True
              ) -> AfterRunResult:
    """Run the table's automatic maintenance after a dbt run committed to it. Primary-key
    and bucketed append tables are compacted; every table's snapshots are expired."""
    from dbt.adapters.paimon.ops.auto_tags import after_commit

    table = location.open()
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    if options.get("write-only", "false").lower() == "true":
        return AfterRunResult(None, None, after_commit(location))
    compaction = None
    bucket = int(options.get("bucket", "-1"))
    if compact and table.primary_keys and not is_postpone_table(table):
        delta_commits = options.get("full-compaction.delta-commits")
        full = bool(delta_commits) and \
            commits_since_full_compaction(table) >= max(1, int(delta_commits))
        compaction = compact_table(spark, location, full=full)
    elif compact and not table.primary_keys and bucket > 0:
        from dbt.adapters.paimon.format.splits import written_buckets

        written = written_buckets(table)
        if written:
            compaction = compact_table(spark, location, buckets=written)
    expiry = None
    if expire:
        limit = int(options.get("snapshot.expire.limit", DEFAULT_EXPIRE_LIMIT))
        expiry = expire_snapshots(location, max_deletes=limit)
    return AfterRunResult(compaction, expiry, after_commit(location))
