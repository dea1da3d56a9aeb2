"""Planning a read: a snapshot's live data files grouped into one split per (partition, bucket).

We plan from the manifests ourselves (through pypaimon's FileScanner) instead of pypaimon's
batch scan because that scan drops level-0 files of primary-key tables when
``batch_scan_skip_level0`` holds (first-row tables): our merge reads every level. Splits are
plain picklable dataclasses so the Spark driver can hand them to its tasks.

A table with ``deletion-vectors.enabled`` also gets each file's deletion vector location
(``Split.deletion_files``, from the snapshot's index manifest). Writers and compaction see every
file of a split; a batch read of a primary-key table sees only ``Split.batch_read_files()``:
as Paimon's ``batchScanSkipLevel0``, level-0 files stay invisible until compaction lifts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.manifest.manifest_list_manager import ManifestListManager
from pypaimon.manifest.schema.data_file_meta import DataFileMeta
from pypaimon.read.scanner.file_scanner import FileScanner
from pypaimon.utils.file_store_path_factory import canonical_data_file_path

from dbt.adapters.paimon.format.deletion_vectors import DeletionFile, bucket_deletion_index
from dbt.adapters.paimon.format.errors import PaimonFormatError
from dbt.adapters.paimon.format.file_stats import Condition, stats_predicate

PartitionFilter = Union[None, Mapping[str, Any], Sequence[Mapping[str, Any]]]


@dataclass
class Split:
    """The live data files of one (partition, bucket) at one snapshot."""

    partition: Dict[str, Any]          # partition column -> value ({} when unpartitioned)
    partition_values: Tuple[Any, ...]  # the same values in partition-key order
    bucket: int
    files: List[DataFileMeta]          # by min sequence number, then commit order
    snapshot_id: Optional[int]          # None: the table had no snapshot
    total_buckets: Optional[int] = None
    primary_key_table: bool = True
    # the files' levels, for callers that only want e.g. the top level
    levels: List[int] = field(default_factory=list)
    # deletion-vector tables: True, and data file name -> where its deletion vector is
    deletion_vectors: bool = False
    deletion_files: Dict[str, DeletionFile] = field(default_factory=dict)
    # ... and the bucket's DELETION_VECTORS index files (pypaimon IndexFileMeta), which a
    # rewrite of the bucket's vectors replaces
    deletion_index_files: List[Any] = field(default_factory=list)

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)

    def batch_read_files(self) -> List[DataFileMeta]:
        """The files a batch read uses: all, or for a deletion-vector primary-key table those
        above level 0 (Paimon Java's ``batchScanSkipLevel0``; the writer's compaction lifts
        every commit's level-0 files and records what they supersede as deletion vectors)."""
        if self.deletion_vectors and self.primary_key_table:
            return [f for f in self.files if f.level > 0]
        return list(self.files)

    @property
    def max_sequence_number(self) -> int:
        """Largest sequence number in the bucket at this snapshot, -1 if it has no files."""
        return max((f.max_sequence_number for f in self.files), default=-1)


@dataclass(frozen=True)
class SnapshotInfo:
    id: int
    commit_kind: str          # APPEND, COMPACT, OVERWRITE
    time_millis: int
    total_record_count: Optional[int]
    delta_record_count: Optional[int]
    commit_user: str
    commit_identifier: int
    properties: Optional[Dict[str, str]] = field(default=None, compare=False, hash=False)


def current_snapshot_id(table) -> Optional[int]:
    """Id of the table's latest snapshot, None for a table never committed to."""
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return snapshot.id if snapshot is not None else None


def list_snapshots(table) -> List[SnapshotInfo]:
    """All retained snapshots, oldest first."""
    snapshots = table.snapshot_manager().list_snapshots()
    return sorted((SnapshotInfo(s.id, s.commit_kind, s.time_millis, s.total_record_count,
                                s.delta_record_count, s.commit_user, s.commit_identifier,
                                s.properties)
                   for s in snapshots), key=lambda s: s.id)


def written_buckets(table, snapshot_id: Optional[int] = None) -> set:
    """The (partition values, bucket) pairs a snapshot (the latest by default) added data
    files to: the buckets its writer had open."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    snapshot = _resolve_snapshot(table, snapshot_id)
    if snapshot is None:
        return set()
    manifests = ManifestFileManager(table)
    return {(tuple(entry.partition.values), entry.bucket)
            for meta in ManifestListManager(table).read_delta(snapshot)
            for entry in manifests.read(meta.file_name, drop_stats=True) if entry.kind == 0}


def _resolve_snapshot(table, snapshot_id: Optional[int]):
    manager = table.snapshot_manager()
    if snapshot_id is None:
        return manager.get_latest_snapshot()
    snapshot = manager.get_snapshot_by_id(int(snapshot_id))
    if snapshot is None:  # expired, but kept by a tag?
        from dbt.adapters.paimon.format.time_travel import snapshot_by_id

        snapshot = snapshot_by_id(table, int(snapshot_id))
    if snapshot is None:
        known = [s.id for s in list_snapshots(table)]
        raise PaimonFormatError(
            f"snapshot {snapshot_id} of Paimon table {table.identifier} does not exist "
            f"(retained snapshots: {known[:3]}{'...' if len(known) > 3 else ''}"
            f"{known[-1:] if len(known) > 3 else ''})")
    return snapshot


def partition_predicate(table, partition_filter: PartitionFilter):
    """A pypaimon predicate for ``{col: value}`` (a list/tuple/set value means IN, None IS NULL),
    or a list of such dicts OR-ed together; None for no filter."""
    if partition_filter is None:
        return None
    alternatives = [partition_filter] if isinstance(partition_filter, Mapping) \
        else list(partition_filter)
    if not alternatives:
        raise ValueError("partition_filter is an empty list: it would select nothing; "
                         "pass None to read every partition")
    keys = list(table.partition_keys)
    builder = table.new_read_builder().new_predicate_builder()
    ors = []
    for spec in alternatives:
        unknown = [c for c in spec if c not in keys]
        if unknown:
            raise ValueError(f"partition_filter names {unknown}, which are not partition "
                             f"columns of {table.identifier} (partition keys: {keys})")
        ands = []
        for column, value in spec.items():
            if value is None:
                ands.append(builder.is_null(column))
            elif isinstance(value, (list, tuple, set, frozenset)):
                ands.append(builder.is_in(column, list(value)))
            else:
                ands.append(builder.equal(column, value))
        if not ands:
            return None  # an empty dict matches every partition
        ors.append(builder.and_predicates(ands) if len(ands) > 1 else ands[0])
    return builder.or_predicates(ors) if len(ors) > 1 else ors[0]


def plan_splits(table, snapshot_id: Optional[int] = None,
                partition_filter: PartitionFilter = None,
                conditions: Sequence[Condition] = ()) -> List[Split]:
    """One Split per (partition, bucket) holding ALL its live files (every level).

    ``partition_filter`` prunes on the manifests' partition values before any data file is
    opened; ``conditions`` skip the files whose statistics say no row can match
    (``file_stats.stats_predicate``): the splits then hold only the files a read of the
    matching rows needs, and the reader still applies the filters. Returns [] for a table without snapshots.
    """
    snapshot = _resolve_snapshot(table, snapshot_id)
    if snapshot is None:
        return []
    manifests = ManifestListManager(table).read_all(snapshot)
    scanner = FileScanner(table, lambda: (manifests, snapshot),
                          predicate=stats_predicate(table, conditions),
                          partition_predicate=partition_predicate(table, partition_filter),
                          skip_level0=False)
    entries = scanner.plan_files()

    keys = list(table.partition_keys)
    groups: Dict[Tuple[Tuple[Any, ...], int], List] = {}
    for entry in entries:
        values = tuple(entry.partition.values)
        groups.setdefault((values, entry.bucket), []).append(entry)

    with_vectors = table.options.deletion_vectors_enabled()
    vectors = bucket_deletion_index(table, snapshot) if with_vectors else {}
    splits = []
    for (values, bucket), group in sorted(groups.items(), key=lambda kv: _sort_key(kv[0])):
        files = []
        for entry in group:
            meta = entry.file
            meta.file_path = (meta.physical_path() if meta.external_path
                              else canonical_data_file_path(table, values, bucket, meta.file_name))
            files.append(meta)
        # Stable: ties keep manifest (= commit) order. pypaimon's append writer stamps every
        # file with sequence numbers (1, 1), so for its tables commit order is write order.
        files.sort(key=lambda f: f.min_sequence_number)
        splits.append(Split(
            partition=dict(zip(keys, values)), partition_values=values, bucket=bucket,
            files=files, snapshot_id=snapshot.id,
            total_buckets=group[0].total_buckets,
            primary_key_table=bool(table.primary_keys),
            levels=[f.level for f in files], deletion_vectors=with_vectors,
            deletion_files=_live_deletion_files(vectors.get((values, bucket), ({}, []))[0],
                                                files),
            deletion_index_files=list(vectors.get((values, bucket), ({}, []))[1])))
    return splits


POSTPONE_BUCKET = -2
POSTPONE_MERGE_ON_READ = "postpone.merge-on-read"


def is_postpone_table(table) -> bool:
    """A postpone-bucket primary-key table (``bucket`` = -2): its writers' rows wait in the
    postpone bucket until a compaction moves them into real buckets, whose count is per
    partition."""
    return table.options.bucket() == POSTPONE_BUCKET and bool(table.primary_keys)


def data_file_bytes(table, snapshot_id: Optional[int] = None) -> int:
    """The bytes of the live data files of a snapshot (the latest by default): what a read of
    the table opens. Manifests only."""
    return sum(f.file_size for split in plan_splits(table, snapshot_id) for f in split.files)


def _live_deletion_files(deletion_files: Dict[str, DeletionFile], files) -> Dict[str, DeletionFile]:
    names = {f.file_name for f in files}
    return {name: d for name, d in deletion_files.items() if name in names}


def _sort_key(group_key):
    values, bucket = group_key
    return tuple((v is None, str(v)) for v in values), bucket


def bucket_split(table, partition: Mapping[str, Any], bucket: int,
                 snapshot_id: Optional[int] = None) -> Split:
    """The split of one (partition, bucket); an empty Split if it has no files yet."""
    keys = list(table.partition_keys)
    if set(partition) != set(keys):
        raise ValueError(f"partition {dict(partition)} must name exactly the partition keys "
                         f"{keys} of {table.identifier}")
    spec = {k: partition[k] for k in keys}
    for split in plan_splits(table, snapshot_id, spec if keys else None):
        if split.bucket == bucket and split.partition == spec:
            return split
    snapshot = _resolve_snapshot(table, snapshot_id)
    return Split(partition=spec, partition_values=tuple(spec[k] for k in keys), bucket=bucket,
                 files=[], snapshot_id=snapshot.id if snapshot else None,
                 total_buckets=None, primary_key_table=bool(table.primary_keys),
                 deletion_vectors=table.options.deletion_vectors_enabled())
