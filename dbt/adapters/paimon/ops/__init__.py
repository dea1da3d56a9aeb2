"""Table maintenance on Spark: compaction, bucket rescaling, snapshot expiry, inspection.

No dbt here (as ``runtime``/``format``): the adapter's ``@available`` methods and the
``run-operation`` macros call these functions with a SparkSession and a ``TableRef``.

- ``compact.compact_table``: full or size-tiered (Paimon's universal) compaction per
  (partition, bucket) in Spark tasks, one COMPACT snapshot;
- ``rescale.rescale_buckets``: new ``bucket`` count, selected partitions rewritten, one
  OVERWRITE snapshot;
- ``expire.expire_snapshots`` / ``expire.remove_orphan_files``;
- ``table_info.table_info``: options, snapshots, files per bucket and level, as text;
- ``maintenance.after_run``: what Paimon's writer does after a commit (compaction triggers,
  automatic expiry), for the model builder.
"""

from dbt.adapters.paimon.ops.compact import CompactResult, compact_table
from dbt.adapters.paimon.ops.expire import (ExpireResult, OrphanResult, expire_snapshots,
                                            remove_orphan_files)
from dbt.adapters.paimon.ops.after_run import AfterRunResult, after_run
from dbt.adapters.paimon.ops.rescale import RescaleResult, rescale_buckets
from dbt.adapters.paimon.ops.table_info import table_info

__all__ = [
    "AfterRunResult", "CompactResult", "ExpireResult", "OrphanResult", "after_run",
    "compact_table", "expire_snapshots", "remove_orphan_files", "rescale_buckets",
    "table_info",
]
