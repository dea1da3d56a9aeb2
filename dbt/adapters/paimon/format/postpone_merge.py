"""``postpone.merge-on-read``: a batch read of a postpone-bucket table (``bucket`` = -2) that
also returns the rows still in the postpone bucket, merged with the real buckets' rows as the
postpone compaction (ops/postpone.py) would merge them.

Paimon (``PostponeMergeReadBuilder``, ``PostponeMergePlan``, ``MergeFileSplitRead
.createPostponeMergeReader``; Spark's ``PostponeMergeOnRead``):
- applies when the option is true on a primary-key postpone table, unless ``scan.mode`` is
  ``compacted-full`` (that scan reads an older compacted snapshot, without merging); it refuses
  ``query-auth.enabled`` and the scan modes ``incremental``, ``from-file-creation-time`` and
  ``from-creation-timestamp`` (``validateReadMode``);
- the postpone files of the read's snapshot are replayed writer by writer, each writer's files
  by creation time (``PostponeUtils.groupPostponeFiles``): the same order as the compaction's;
- each record goes to its real bucket (the partition's bucket count: its real buckets', else
  the compaction's choice). A key is in one bucket of its partition, so the merged rows do
  not depend on the count. Here a partition is merged a bucket per task (its real buckets'
  count, or for a partition without real buckets the count the compaction would give it,
  ``compaction_bucket_counts``): each task reads the partition's postpone files one at a time
  and keeps the records of its bucket (Paimon's bucket hash of the bucket key), so a task
  holds one bucket's share of the pending rows;
- the routed records get sequence numbers above every real file of the bucket (``maxSequence
  Number + 1 + relative order``), are sorted and reduced as one run (a write buffer), then
  merged with the real splits' records by the merge engine (``sequence.field`` first, then
  sequence number): for the same key the pending record wins unless its sequence field is
  smaller; a pending delete removes the key; partial-update and aggregation combine;
- the real buckets are read as a batch read reads them (deletion-vector tables: above level 0).

That is what ops/postpone.py's compaction writes (the pending records merged as a write
buffer, numbered above the bucket's largest sequence number) and a read then merges, so a read
before ``compact`` returns the rows a read after it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.manifest.manifest_list_manager import ManifestListManager
from pypaimon.manifest.schema.data_file_meta import DataFileMeta
from pypaimon.read.scanner.file_scanner import FileScanner
from pypaimon.utils.file_store_path_factory import canonical_data_file_path

from dbt.adapters.paimon.format.postpone_buckets import compaction_bucket_counts
from dbt.adapters.paimon.format.splits import (POSTPONE_BUCKET, POSTPONE_MERGE_ON_READ,
                                               PartitionFilter, Split, _resolve_snapshot,
                                               is_postpone_table, partition_predicate,
                                               plan_splits)
from dbt.adapters.paimon.runtime import PaimonConfigError

SCAN_MODE = "scan.mode"
QUERY_AUTH = "query-auth.enabled"
# the scan modes Paimon's validateReadMode refuses with the option (not a full snapshot scan)
REFUSED_SCAN_MODES = ("incremental", "from-file-creation-time", "from-creation-timestamp")


def _options(table) -> Dict[str, str]:
    return {str(k): str(v) for k, v in table.table_schema.options.items()}


def merge_on_read(table) -> bool:
    """True when a batch read of ``table`` merges its postpone bucket's rows in (Paimon's
    ``PostponeMergeOnRead.usesCustomSource``); refuses, before anything is read, the settings
    Paimon refuses with the option."""
    options = _options(table)
    if options.get(POSTPONE_MERGE_ON_READ, "false").strip().lower() != "true":
        return False
    if not is_postpone_table(table):
        return False
    mode = options.get(SCAN_MODE, "default").strip().lower()
    if mode == "compacted-full":
        return False
    name = table.identifier.get_full_name()
    if options.get(QUERY_AUTH, "false").strip().lower() == "true":
        raise PaimonConfigError(
            f"Paimon table {name} sets '{POSTPONE_MERGE_ON_READ}' = 'true' and "
            f"'{QUERY_AUTH}' = 'true': Paimon's postpone merge-on-read does not support query "
            f"authorization, so neither does dbt-paimon. Unset '{POSTPONE_MERGE_ON_READ}' (the "
            f"rows still in the postpone bucket are then not read) or '{QUERY_AUTH}'.")
    if mode in REFUSED_SCAN_MODES:
        raise PaimonConfigError(
            f"Paimon table {name} sets '{POSTPONE_MERGE_ON_READ}' = 'true' with "
            f"'{SCAN_MODE}' = '{mode}': Paimon's postpone merge-on-read requires a full "
            f"snapshot scan. Unset '{SCAN_MODE}' (or '{POSTPONE_MERGE_ON_READ}').")
    return True


def pending_files(table, snapshot, partition_filter: PartitionFilter = None
                  ) -> Dict[tuple, List[DataFileMeta]]:
    """The postpone bucket's live files at ``snapshot``, by partition values, in manifest
    order, each with its ``file_path`` set."""
    manifests = ManifestListManager(table).read_all(snapshot)
    scanner = FileScanner(table, lambda: (manifests, snapshot), skip_level0=False,
                          partition_predicate=partition_predicate(table, partition_filter))
    scanner.with_all_buckets()
    out: Dict[tuple, List[DataFileMeta]] = {}
    for entry in scanner.plan_files():
        if entry.bucket != POSTPONE_BUCKET:
            continue
        values = tuple(entry.partition.values)
        meta = entry.file
        meta.file_path = (meta.physical_path() if meta.external_path
                          else canonical_data_file_path(table, values, POSTPONE_BUCKET,
                                                        meta.file_name))
        out.setdefault(values, []).append(meta)
    return out


def postpone_files(table, snapshot_id: Optional[int] = None) -> List[DataFileMeta]:
    """The live files of a postpone-bucket table's (``bucket`` = -2) postpone bucket at a
    snapshot (the latest by default), every partition's: rows a writer committed that no
    compaction has yet moved into a real bucket. ``plan_splits`` leaves them out, as Paimon's
    batch reads do (but with ``postpone.merge-on-read``: plan_merge_on_read)."""
    if not is_postpone_table(table):
        return []
    snapshot = _resolve_snapshot(table, snapshot_id)
    if snapshot is None:
        return []
    return [meta for files in pending_files(table, snapshot).values() for meta in files]


def writer_order(files: Sequence[DataFileMeta]) -> List[DataFileMeta]:
    """The files in the order the compaction (and a merge-on-read) replays them: grouped by
    writer (the file-name prefix up to ``-w-``, Paimon's ``getWriterPrefix``), each writer's
    files by creation time (ties: manifest order), writers by their first file's creation
    time."""
    groups: Dict[str, List[Tuple[int, DataFileMeta]]] = {}
    for position, meta in enumerate(files):
        cut = meta.file_name.rfind("-w-")
        prefix = meta.file_name[:cut + 3] if cut >= 0 else meta.file_name
        groups.setdefault(prefix, []).append((position, meta))

    def created(item):
        position, meta = item
        return (_creation_millis(meta), position)

    ordered = [sorted(group, key=created) for group in groups.values()]
    ordered.sort(key=lambda group: created(group[0]))
    return [meta for group in ordered for _, meta in group]


def _creation_millis(meta: DataFileMeta) -> int:
    value = getattr(meta, "creation_time", None)
    if value is None:
        return 0
    if hasattr(value, "get_millisecond"):
        return int(value.get_millisecond())
    if hasattr(value, "timestamp"):
        return int(value.timestamp() * 1000)
    return int(value)


@dataclass
class PostponeMerge:
    """One partition of a merge-on-read: its real buckets' splits and its pending files (a
    bucket -2 split, files in replay order). Picklable: a Spark task reads it."""

    partition: Dict
    partition_values: Tuple
    real_splits: List[Split]
    pending: Split
    snapshot_id: Optional[int] = None
    # the real bucket of ``total_buckets`` whose records this task merges (``real_splits``
    # are that bucket's); None: the whole partition
    bucket: Optional[int] = None
    total_buckets: Optional[int] = None

    @property
    def pending_rows(self) -> int:
        """The partition's pending rows (every bucket task of it reads them all)."""
        return self.pending.row_count


@dataclass
class MergePlan:
    """A batch read's splits with ``postpone.merge-on-read``: ``splits`` read as usual (the
    partitions without pending files) and ``merges``, a partition each."""

    snapshot_id: Optional[int]
    splits: List[Split]
    merges: List[PostponeMerge] = field(default_factory=list)


def plan_merge_on_read(table, splits: List[Split], snapshot_id: Optional[int],
                       partition_filter: PartitionFilter = None) -> MergePlan:
    """``splits`` (``plan_splits``'s, maybe narrowed by file statistics) as they are when the
    table does not merge postpone rows on read or has none pending at the snapshot; else the
    partitions with pending rows taken out of them, each re-planned whole (a pending record may
    replace any of its partition's rows, so no real file is skipped by value statistics, as
    Paimon's ``createPostponeMergeReader`` filters real files by key only)."""
    if splits:
        snapshot_id = splits[0].snapshot_id
    if not merge_on_read(table):
        return MergePlan(snapshot_id, list(splits))
    snapshot = _resolve_snapshot(table, snapshot_id)
    if snapshot is None:
        return MergePlan(snapshot_id, list(splits))
    pending = pending_files(table, snapshot, partition_filter)
    if not pending:
        return MergePlan(snapshot.id, list(splits))
    keys = list(table.partition_keys)
    specs = [dict(zip(keys, values)) for values in pending]
    real = plan_splits(table, snapshot.id, specs if keys else None)
    merges = []
    for values, files in pending.items():
        spec = dict(zip(keys, values))
        ordered = writer_order(files)
        postponed = Split(partition=spec, partition_values=values, bucket=POSTPONE_BUCKET,
                          files=ordered, snapshot_id=snapshot.id, primary_key_table=True,
                          levels=[f.level for f in ordered])
        mine = [s for s in real if s.bucket >= 0 and tuple(s.partition_values) == tuple(values)]
        if mine:
            counts = {s.total_buckets for s in mine}
            count = counts.pop() if len(counts) == 1 else None
        else:  # no real bucket yet: the count the compaction would give the partition
            count = compaction_bucket_counts(table, {}, {values: files})[values]
        if not count or count <= 0:  # no known bucket count: the partition whole
            merges.append(PostponeMerge(spec, values, mine, postponed, snapshot.id))
            continue
        merges += [PostponeMerge(spec, values, [s for s in mine if s.bucket == bucket],
                                 postponed, snapshot.id, bucket, count)
                   for bucket in range(count)]
    rest = [s for s in splits if tuple(s.partition_values) not in pending]
    return MergePlan(snapshot.id, rest, merges)


def pending_rows(plan: MergePlan) -> int:
    """The rows in the postpone bucket that ``plan`` merges into the read (a partition's once,
    however many bucket tasks read them)."""
    return sum({m.partition_values: m.pending_rows for m in plan.merges}.values())


def read_postpone_merge(table, merge: PostponeMerge, columns: Sequence[str]) -> pa.Table:
    """A partition's rows with its pending postpone rows merged in (``columns`` of them, in
    primary-key order): the real splits' records (as a batch read reads them) and the pending
    records, numbered in replay order above the partition's largest sequence number and
    merged as one write buffer, merged by the table's merge engine."""
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow, premerge_arrow

    spec = MergeSpec.from_table_options(
        schema=[(f.name, str(f.type)) for f in table.table_schema.fields],
        primary_keys=list(table.primary_keys), options=dict(table.table_schema.options))
    pending = _pending_records(table, merge)
    names = [n for n in pending.column_names if n not in ("_seq", "_row_kind")]
    # replay order: writer by writer, file by file, row by row (as the compaction numbers them)
    pending = pending.set_column(pending.schema.get_field_index("_seq"), "_seq",
                                 pa.array(np.arange(pending.num_rows, dtype=np.int64)))
    buffered = premerge_arrow(spec, pending.select(names + ["_row_kind", "_seq"]))
    real = []
    for split in merge.real_splits:
        read = split
        if split.deletion_vectors:
            from dataclasses import replace

            read = replace(split, files=split.batch_read_files())
        if read.files:
            real.append(read_split_records(table, read).drop_columns(["_level"]))
    base = max((s.max_sequence_number for s in merge.real_splits), default=-1) + 1
    buffered = buffered.set_column(
        buffered.schema.get_field_index("_seq"), "_seq",
        pa.array(buffered.column("_seq").to_numpy() + base, pa.int64()))
    order = names + ["_row_kind", "_seq"]
    pieces = [r.select(order) for r in real] + [buffered.select(order)]
    schema = pieces[0].schema
    records = pa.concat_tables([p.cast(schema) for p in pieces]).combine_chunks()
    return merge_arrow(spec, records).select(list(columns))


def _pending_records(table, merge: PostponeMerge) -> pa.Table:
    """The pending records ``merge`` merges, in replay order: every one of the partition's, or
    with a ``bucket``, those whose bucket key hashes to it (read a file at a time, so the
    task holds only its bucket's share)."""
    from dataclasses import replace

    from dbt.adapters.paimon.format.bucket import bucket_ids, bucket_key_columns
    from dbt.adapters.paimon.format.kv_files import read_split_records

    if merge.bucket is None:
        return read_split_records(table, merge.pending).drop_columns(["_level"])
    fields = {f.name: str(f.type) for f in table.table_schema.fields}
    keys = bucket_key_columns(list(table.primary_keys), list(table.partition_keys),
                              dict(table.table_schema.options), list(fields))
    pieces = []
    for meta in merge.pending.files:
        records = read_split_records(table, replace(merge.pending, files=[meta],
                                                    levels=[meta.level]))
        hashed = bucket_ids(records.select(keys), merge.total_buckets,
                            [fields[k] for k in keys])
        pieces.append(records.filter(pa.array(hashed == merge.bucket)))
    return pa.concat_tables(pieces).drop_columns(["_level"])
