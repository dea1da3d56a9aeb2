"""Dynamic bucket mode (``bucket`` = -1): HASH index files and the assignment of new keys.

Java Paimon keeps, per (partition, bucket), one HASH index file: the 32-bit hashes of the keys in
the bucket (Java ``BinaryRow.hashCode`` of the primary key minus the partition keys; big-endian
ints). A key whose hash is in a bucket's index stays in that bucket for ever. New keys go to the
assigner's buckets that hold fewer than ``dynamic-bucket.target-row-num`` keys, in order, then to
new buckets: each assigner owns the bucket ids ``b`` with ``b % num_assigners == assigner``
(Java ``HashBucketAssigner`` / ``PartitionIndex``), so assigners never create the same bucket.

We do the same vectorized: a partition's index files are read as numpy int32 arrays, looked up
with a sorted search, and new keys are dealt into bucket capacities with ``np.repeat``. A bucket's
index is rewritten whole (old hashes + new ones) by the one task that writes the bucket; the
commit replaces the bucket's previous index entry (Java ``BucketedCombiner``).
"""
from __future__ import annotations

import uuid
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

HASH_INDEX = "HASH"


def _java_abs_remainder(values: np.ndarray, divisor: int) -> np.ndarray:
    return np.abs(np.fmod(values.astype(np.int64), divisor))


def assigner_ids(partition_hashes: np.ndarray, key_hashes: np.ndarray, num_channels: int,
                 num_assigners: int) -> np.ndarray:
    """Java ``BucketAssigner.computeAssigner``: the channel (task) assigning each key."""
    start = _java_abs_remainder(partition_hashes, num_channels)
    offset = _java_abs_remainder(key_hashes, num_assigners)
    return ((start + offset) % num_channels).astype(np.int32)


def hash_index_entries(table, snapshot, partition: Optional[Tuple] = None,
                       bucket: Optional[int] = None) -> list:
    """The snapshot's HASH index entries (of one partition / bucket when given)."""
    if snapshot is None:
        return []
    from pypaimon.index.index_file_handler import IndexFileHandler

    def wanted(entry) -> bool:
        return (entry.index_file.index_type == HASH_INDEX
                and (partition is None or tuple(entry.partition.values) == tuple(partition))
                and (bucket is None or entry.bucket == bucket))

    return IndexFileHandler(table).scan(snapshot, wanted)


def read_hashes(table, entry) -> np.ndarray:
    """The key hashes of one HASH index file (int32)."""
    meta = entry.index_file
    path = table.path_factory().bucket_index_path(tuple(entry.partition.values), entry.bucket,
                                                  meta, table.file_io)
    with table.file_io.new_input_stream(path) as stream:
        payload = stream.read()
    if len(payload) % 4:
        raise RuntimeError(f"HASH index {path} of Paimon table {table.identifier} is corrupt: "
                           f"its size {len(payload)} is not a multiple of 4 bytes")
    return np.frombuffer(payload, dtype=">i4").astype(np.int32)


class PartitionIndex:
    """A partition's key hash -> bucket map and per-bucket key counts, at the base snapshot."""

    def __init__(self, hashes: np.ndarray, buckets: np.ndarray, counts: Dict[int, int]):
        order = np.argsort(hashes, kind="stable")
        self.hashes = hashes[order]
        self.buckets = buckets[order]
        self.counts = dict(counts)  # bucket -> keys in its index, in index-manifest order

    @classmethod
    def load(cls, table, snapshot, partition: Tuple) -> "PartitionIndex":
        hashes, buckets, counts = [], [], {}
        for entry in hash_index_entries(table, snapshot, partition):
            if entry.bucket in counts:
                raise RuntimeError(
                    f"Paimon table {table.identifier} has two HASH indexes for partition "
                    f"{partition} bucket {entry.bucket}; it needs a rewrite (compaction)")
            values = read_hashes(table, entry)
            hashes.append(values)
            buckets.append(np.full(len(values), entry.bucket, dtype=np.int32))
            counts[entry.bucket] = int(entry.index_file.row_count)
        if not hashes:
            return cls(np.zeros(0, np.int32), np.zeros(0, np.int32), {})
        return cls(np.concatenate(hashes), np.concatenate(buckets), counts)

    def lookup(self, key_hashes: np.ndarray) -> np.ndarray:
        """Bucket of each hash already in the index, -1 for new keys."""
        if not len(self.hashes):
            return np.full(len(key_hashes), -1, dtype=np.int32)
        pos = np.searchsorted(self.hashes, key_hashes)
        pos = np.minimum(pos, len(self.hashes) - 1)
        found = self.hashes[pos] == key_hashes
        return np.where(found, self.buckets[pos], -1).astype(np.int32)

    def assign_new(self, new_hashes: np.ndarray, assigner: int, num_assigners: int,
                   target_row_num: int, max_buckets: int, where: str) -> np.ndarray:
        """Buckets for distinct new hashes (in arrival order) of one assigner."""
        n = len(new_hashes)
        if n == 0:
            return np.zeros(0, np.int32)
        mine = [b for b in self.counts if b % num_assigners == assigner % num_assigners]
        capacity = [(b, target_row_num - self.counts[b]) for b in mine
                    if self.counts[b] < target_row_num]
        needed = n - sum(c for _, c in capacity)
        limit = 32768 if max_buckets in (-1, None) or max_buckets <= 0 else max_buckets
        taken = set(self.counts)
        candidate = assigner % num_assigners
        while needed > 0:
            while candidate in taken:
                candidate += num_assigners
            if candidate >= limit:
                break
            capacity.append((candidate, target_row_num))
            taken.add(candidate)
            needed -= target_row_num
        if not capacity:
            raise RuntimeError(
                f"{where}: no dynamic bucket is left for new keys (assigner {assigner} of "
                f"{num_assigners}, 'dynamic-bucket.max-buckets' = {max_buckets}); raise "
                f"'dynamic-bucket.max-buckets' or 'dynamic-bucket.target-row-num'")
        ids = np.array([b for b, _ in capacity], dtype=np.int32)
        sizes = np.array([c for _, c in capacity], dtype=np.int64)
        if sizes.sum() >= n:
            result = np.repeat(ids, np.minimum(sizes, n))[:n]
        else:  # max-buckets reached: Java picks a random bucket of the assigner; we go round
            filled = np.repeat(ids, sizes)
            rest = ids[np.arange(n - len(filled)) % len(ids)]
            result = np.concatenate([filled, rest])
        for bucket, count in zip(*np.unique(result, return_counts=True)):
            self.counts[int(bucket)] = self.counts.get(int(bucket), 0) + int(count)
        return result.astype(np.int32)


def write_hash_index(table, partition: Tuple, bucket: int, hashes: np.ndarray):
    """Write one complete HASH index file for (partition, bucket); its IndexManifestEntry."""
    from pypaimon.index.index_file_meta import IndexFileMeta
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.table.row.generic_row import GenericRow

    values = np.unique(np.asarray(hashes, dtype=np.int32))
    file_name = f"index-{uuid.uuid4()}-0"
    path, external = table.path_factory().new_bucket_index_path(tuple(partition), bucket,
                                                                file_name)
    table.file_io.check_or_mkdirs(path.rsplit("/", 1)[0])
    try:
        with table.file_io.new_output_stream(path) as stream:
            stream.write(values.astype(">i4").tobytes())
    except Exception:
        table.file_io.delete_quietly(path)
        raise
    meta = IndexFileMeta(index_type=HASH_INDEX, file_name=path.rsplit("/", 1)[-1],
                         file_size=table.file_io.get_file_size(path), row_count=len(values),
                         external_path=path if external else None)
    return IndexManifestEntry(kind=0, partition=GenericRow(list(partition),
                                                           table.partition_keys_fields),
                              bucket=int(bucket), index_file=meta)


def bucket_hashes(table, snapshot, partition: Tuple, bucket: int) -> np.ndarray:
    entries = hash_index_entries(table, snapshot, partition, bucket)
    if not entries:
        return np.zeros(0, np.int32)
    return np.concatenate([read_hashes(table, e) for e in entries])


def buckets_without_index(table, snapshot, splits: Sequence) -> List[Tuple[Tuple, int]]:
    """(partition, bucket) pairs holding data files but no HASH index (written by a writer that
    did not maintain the index): their keys' buckets are unknown."""
    indexed = {(tuple(e.partition.values), e.bucket) for e in hash_index_entries(table, snapshot)}
    return [(s.partition_values, s.bucket) for s in splits
            if s.files and (s.partition_values, s.bucket) not in indexed]
