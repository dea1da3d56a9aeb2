"""Deletion vectors: which row positions of a data file are deleted (Paimon merge-on-write).

A table with ``deletion-vectors.enabled`` keeps, per (partition, bucket), DELETION_VECTORS index
files listed in the snapshot's index manifest. Each index file starts with a version byte (1),
followed by one serialized vector per data file; the index entry's ``dv_ranges`` map each data
file name to (offset, length, cardinality). Paimon writes two encodings (paimon-core
``deletionvectors/``):

- ``BitmapDeletionVector`` (default): int32 length (big-endian) of what follows up to the CRC,
  int32 magic 1581511376 (big-endian), a 32-bit RoaringBitmap (portable format), int32 CRC32 of
  magic + bitmap. ``dv_ranges`` length = magic + bitmap (the length field).
- ``Bitmap64DeletionVector`` (``deletion-vectors.bitmap64``, Paimon 1.1+, Iceberg's layout):
  int32 length (big-endian) of magic + bitmap, magic 1681511377 written LITTLE-endian, a 64-bit
  RoaringBitmap (portable format: int64 count of 32-bit bitmaps, each an int32 key and a 32-bit
  bitmap), int32 CRC32 (big-endian). ``dv_ranges`` length = the whole blob (4 + length + 4).

Positions are 0-based row numbers in the data file. pypaimon 2.1 reads only the 32-bit
encoding, row by row; here vectors decode to sorted numpy position arrays so a reader drops
deleted rows with one vectorized take.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from pyroaring import BitMap, BitMap64

from dbt.adapters.paimon.format.errors import PaimonFormatError

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
INDEX_FILE_VERSION = 1
MAGIC_BITMAP32 = 1581511376
MAGIC_BITMAP64 = 1681511377
_MAGIC_BITMAP64_AS_READ = struct.unpack(">i", struct.pack("<i", MAGIC_BITMAP64))[0]
MAX_BITMAP32_POSITION = 2**31 - 1


@dataclass(frozen=True)
class DeletionFile:
    """Where one data file's deletion vector lives: picklable, handed to Spark tasks."""

    path: str              # the index file (full path for the table's FileIO)
    offset: int
    length: int            # as recorded in the index manifest's dv_ranges
    cardinality: Optional[int] = None


# --------------------------------------------------------------------------- encoding

def encode(positions: Iterable[int], bitmap64: bool = False) -> bytes:
    """One deletion vector serialized as Paimon's writer does (header, magic, bitmap, CRC)."""
    values = np.asarray(positions if not isinstance(positions, np.ndarray)
                        else positions, dtype=np.int64).ravel()
    if values.size and values.min() < 0:
        raise ValueError("deletion vector positions must be >= 0")
    if bitmap64:
        bitmap = BitMap64(values.astype(np.uint64).tolist())
        bitmap.run_optimize()  # Java run-length encodes before serializing
        data = struct.pack("<i", MAGIC_BITMAP64) + bitmap.serialize()
    else:
        if values.size and values.max() > MAX_BITMAP32_POSITION:
            raise ValueError(
                f"a data file has row position {int(values.max())}, beyond the 32-bit deletion "
                f"vector limit {MAX_BITMAP32_POSITION}: set 'deletion-vectors.bitmap64' = 'true'")
        data = struct.pack(">i", MAGIC_BITMAP32) + BitMap(values.astype(np.uint32)).serialize()
    return struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))


def decode(blob: bytes, expected_length: Optional[int] = None) -> np.ndarray:
    """The sorted deleted positions (uint64) of one serialized vector (as ``encode`` writes,
    Java's 32-bit or 64-bit one); ``expected_length`` is the index manifest's recorded length."""
    if len(blob) < 12:
        raise PaimonFormatError(f"deletion vector of {len(blob)} bytes is truncated")
    length, magic = struct.unpack_from(">ii", blob, 0)
    if magic == MAGIC_BITMAP32:
        if expected_length is not None and length != expected_length:
            raise PaimonFormatError(f"deletion vector size does not match: {length} bytes, "
                                    f"the index records {expected_length}")
        bitmap = BitMap.deserialize(bytes(blob[8:4 + length]))
    elif magic == _MAGIC_BITMAP64_AS_READ:
        if expected_length is not None and length != expected_length - 8:
            raise PaimonFormatError(f"deletion vector size does not match: {length} bytes, "
                                    f"the index records {expected_length - 8}")
        bitmap = BitMap64.deserialize(bytes(blob[8:4 + length]))
    else:
        raise PaimonFormatError(
            f"invalid deletion vector magic number {magic} (Paimon's are {MAGIC_BITMAP32} and "
            f"{MAGIC_BITMAP64})")
    if len(blob) >= 8 + length:
        (crc,) = struct.unpack_from(">I", blob, 4 + length)
        if crc != zlib.crc32(blob[4:4 + length]):
            raise PaimonFormatError("deletion vector checksum does not match (corrupt file)")
    return np.asarray(bitmap.to_array(), dtype=np.uint64) if len(bitmap) else \
        np.empty(0, np.uint64)


def blob_length(blob: bytes, bitmap64: bool) -> int:
    """The length the index manifest records for ``blob`` (see the module docstring)."""
    return len(blob) if bitmap64 else len(blob) - 8


# --------------------------------------------------------------------------- reading

def live_mask(row_count: int, deleted: Optional[np.ndarray]) -> Optional[np.ndarray]:
    """Boolean mask of the rows a deletion vector keeps; None when it deletes nothing."""
    if deleted is None or deleted.size == 0:
        return None
    if int(deleted[-1]) >= row_count:
        raise PaimonFormatError(f"deletion vector deletes position {int(deleted[-1])} of a file "
                                f"with {row_count} rows")
    mask = np.ones(row_count, dtype=bool)
    mask[deleted.astype(np.int64)] = False
    return mask


def read_deletion_vectors(file_io, files: Mapping[str, DeletionFile]) -> Dict[str, np.ndarray]:
    """Deleted positions per data file name; each index file is opened once."""
    by_path: Dict[str, List[Tuple[str, DeletionFile]]] = {}
    for name, deletion in files.items():
        by_path.setdefault(deletion.path, []).append((name, deletion))
    out: Dict[str, np.ndarray] = {}
    for path, wanted in by_path.items():
        try:
            with file_io.new_input_stream(path) as stream:
                data = stream.read()
        except FileNotFoundError as exc:
            raise PaimonFormatError(
                f"deletion vector index file {path} is missing (expired snapshot, or deleted "
                f"by another writer?)") from exc
        if not data or data[0] != INDEX_FILE_VERSION:
            raise PaimonFormatError(f"deletion vector index file {path} has version "
                                    f"{data[0] if data else None}, expected "
                                    f"{INDEX_FILE_VERSION}")
        for name, deletion in wanted:
            length = struct.unpack_from(">i", data, deletion.offset)[0] if \
                deletion.offset + 4 <= len(data) else -1
            end = deletion.offset + 4 + length + 4
            if length < 4 or end > len(data):
                raise PaimonFormatError(f"deletion vector of {name} in {path} is truncated")
            out[name] = decode(data[deletion.offset:end], deletion.length)
    return out


def index_entries(table, snapshot) -> list:
    """The DELETION_VECTORS entries of ``snapshot``'s index manifest (pypaimon entries)."""
    from pypaimon.manifest.index_manifest_file import IndexManifestFile

    if snapshot is None or not snapshot.index_manifest:
        return []
    return [e for e in IndexManifestFile(table).read(snapshot.index_manifest)
            if e.index_file.index_type == DELETION_VECTORS_INDEX and e.kind == 0]


def index_file_path(table, partition_values: Tuple, bucket: int, index_file) -> str:
    return table.path_factory().bucket_index_path(tuple(partition_values), bucket, index_file,
                                                  table.file_io)


def deletion_files_by_bucket(table, snapshot) -> Dict[Tuple[Tuple, int], Dict[str, DeletionFile]]:
    """(partition values, bucket) -> {data file name: DeletionFile} at ``snapshot``."""
    return {key: files for key, (files, _) in bucket_deletion_index(table, snapshot).items()}


def bucket_deletion_index(table, snapshot
                          ) -> Dict[Tuple[Tuple, int], Tuple[Dict[str, DeletionFile], list]]:
    """(partition values, bucket) -> ({data file name: DeletionFile}, the bucket's
    DELETION_VECTORS index file metas) at ``snapshot``."""
    out: Dict[Tuple[Tuple, int], Tuple[Dict[str, DeletionFile], list]] = {}
    for entry in index_entries(table, snapshot):
        values = tuple(entry.partition.values)
        files, metas = out.setdefault((values, entry.bucket), ({}, []))
        metas.append(entry.index_file)
        ranges = entry.index_file.dv_ranges
        if not ranges:
            continue
        path = index_file_path(table, values, entry.bucket, entry.index_file)
        for name, meta in ranges.items():
            files[name] = DeletionFile(path, int(meta.offset), int(meta.length),
                                       None if meta.cardinality is None else int(meta.cardinality))
    return out


# --------------------------------------------------------------------------- writing

def has_64bit_vectors(table) -> bool:
    """Whether the table keeps deletion vectors as 64-bit bitmaps (``deletion-vectors.enabled``
    and ``deletion-vectors.bitmap64``), which pypaimon 2.1 cannot decode."""
    options = table.table_schema.options
    return all(str(options.get(key, "")).lower() == "true"
               for key in ("deletion-vectors.enabled", "deletion-vectors.bitmap64"))


def write_index_file(table, vectors: Mapping[str, Sequence[int]], bitmap64: Optional[bool] = None):
    """Write one DELETION_VECTORS index file holding ``vectors`` (data file name -> deleted
    positions; empty vectors are left out, as Java's maintainer drops them). Returns the
    pypaimon ``IndexFileMeta`` (None when nothing is deleted). Not visible until an index
    manifest of a committed snapshot lists it; delete it with ``delete_index_files`` otherwise.
    """
    from pypaimon.index.deletion_vector_meta import DeletionVectorMeta
    from pypaimon.index.index_file_meta import IndexFileMeta

    if bitmap64 is None:
        bitmap64 = str(table.table_schema.options.get("deletion-vectors.bitmap64",
                                                      "false")).lower() == "true"
    parts = [bytes([INDEX_FILE_VERSION])]
    offset = 1
    ranges: Dict[str, DeletionVectorMeta] = {}
    for name, positions in vectors.items():
        positions = np.unique(np.asarray(positions, dtype=np.int64))
        if positions.size == 0:
            continue
        blob = encode(positions, bitmap64)
        ranges[name] = DeletionVectorMeta(name, offset, blob_length(blob, bitmap64),
                                          int(positions.size))
        parts.append(blob)
        offset += len(blob)
    if not ranges:
        return None
    file_name = f"index-{uuid.uuid4()}-0"
    path = f"{table.path_factory().index_path()}/{file_name}"
    data = b"".join(parts)
    with table.file_io.new_output_stream(path) as out:
        out.write(data)
    return IndexFileMeta(index_type=DELETION_VECTORS_INDEX, file_name=file_name,
                         file_size=len(data), row_count=len(ranges), dv_ranges=ranges)


def delete_index_files(table, index_files: Iterable) -> None:
    """Remove written but never committed index files (abort)."""
    for meta in index_files:
        if meta is not None:
            table.file_io.delete_quietly(f"{table.path_factory().index_path()}/{meta.file_name}")


def replace_bucket_index(table, split, vectors: Mapping[str, Sequence[int]]):
    """The index changes that make ``vectors`` (data file name -> deleted positions) the
    deletion vectors of ``split``'s bucket: one new index file (none when nothing is deleted)
    added, the bucket's current index files deleted -- Java keeps one index file per bucket and
    rewrites it whole. Returns (index_adds, index_deletes) for a pypaimon CommitMessage."""
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.table.row.generic_row import GenericRow

    partition = GenericRow(list(split.partition_values), table.partition_keys_fields)
    meta = write_index_file(table, vectors)
    adds = [IndexManifestEntry(0, partition, split.bucket, meta)] if meta is not None else []
    deletes = [IndexManifestEntry(1, partition, split.bucket, old)
               for old in split.deletion_index_files]
    return adds, deletes
