"""An append-table run (paimon_append, dbt's table/incremental without a key, copy-on-write
replaces): the rows written as ONE commit, by the executor path_choice.py picks.

In-process: Spark evaluates the query, its Arrow comes to this process (``toArrow``), the
files are written and committed here. Distributed: the ``paimon`` data source's writer, one
Spark task per input partition, the commit on the driver. Both call the same two functions
(``write_append_files``, ``commit_append_files``), so they write the same rows into the same
kinds of files. A small run skips what a data-source write costs whatever its size: Spark
plans the writer and commits it in Python processes of their own, each importing pyarrow
and pypaimon.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from dbt.adapters.paimon.datasource.source import (TableRef, commit_append_files,
                                                   encode_partitions, write_append_files)
from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
from dbt.adapters.paimon.write.path_choice import (IN_PROCESS, PathChoice, choose_path,
                                                   warehouse_table_bytes)


@dataclass(frozen=True)
class AppendResult:
    snapshot_id: Optional[int]      # None: nothing was committed
    choice: PathChoice


def write_append_run(spark, frame, location: TableRef, model_name: str,
                     overwrite: Optional[str] = None, overwrite_partitions: Sequence[tuple] = (),
                     write_path: Optional[str] = None,
                     in_process_max_bytes: Optional[int] = None) -> AppendResult:
    """Write ``frame``'s rows into the append table at ``location`` as one commit: APPEND, or
    with ``overwrite`` ('table' / 'partitions') an OVERWRITE of the table or of the partitions
    written plus ``overwrite_partitions`` (partition value tuples). On failure no file of the
    run stays and the table keeps its snapshot."""
    from dbt.adapters.paimon.format.commit import abort_unless_committed
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    choice = choose_path(spark, frame, model_name, write_path, in_process_max_bytes,
                         table_bytes=warehouse_table_bytes(location))
    before = current_snapshot_id(location.open())
    if choice.path == IN_PROCESS:
        rows = collect_arrow(frame)
        table = location.open()
        written = write_append_files(table, [rows]) if rows.num_rows else []
        try:
            commit_append_files(table, written, overwrite, overwrite_partitions)
        except BaseException:
            abort_unless_committed(table, written)
            raise
    else:
        writer = frame.write.format("paimon").options(**location.source_options())
        if overwrite:
            writer = writer.option("overwrite", overwrite).mode("overwrite")
            if overwrite_partitions:
                writer = writer.option("overwrite_partitions",
                                       encode_partitions(list(overwrite_partitions)))
        else:
            writer = writer.mode("append")
        writer.save()
    after = current_snapshot_id(location.open())
    return AppendResult(after if after != before else None, choice)
