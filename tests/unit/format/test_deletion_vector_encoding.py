"""Deletion vector encodings (format/deletion_vectors.py) against Paimon's byte layouts."""
import struct
import zlib

import numpy as np
import pytest
from pyroaring import BitMap64

from dbt.adapters.paimon.format import deletion_vectors as dv
from dbt.adapters.paimon.format.errors import PaimonFormatError

# An index file Paimon 1.0 Java wrote (lookup compaction of a deduplicate table): version byte,
# then the vector of one data file at offset 1, recorded length 23, positions 2 and 5..9
# (Java run-length encodes: a run container, cookie 0x303b).
JAVA_INDEX_FILE = bytes.fromhex(
    "01000000175e43f2d03b300000010000050002000200000005000400f0c6d573")


def test_reads_a_java_written_32_bit_vector(tmp_path):
    from pypaimon.filesystem.local_file_io import LocalFileIO

    path = tmp_path / "index-java-0"
    path.write_bytes(JAVA_INDEX_FILE)
    located = {"data-1.parquet": dv.DeletionFile(str(path), 1, 23)}
    got = dv.read_deletion_vectors(LocalFileIO(str(tmp_path), {}), located)
    assert got["data-1.parquet"].tolist() == [2, 5, 6, 7, 8, 9]


def test_32_bit_layout_and_round_trip():
    blob = dv.encode([9, 2, 5, 7])
    length, magic = struct.unpack_from(">ii", blob)
    assert magic == dv.MAGIC_BITMAP32 and length == len(blob) - 8
    assert struct.unpack(">I", blob[-4:])[0] == zlib.crc32(blob[4:-4])
    assert dv.blob_length(blob, bitmap64=False) == length
    assert dv.decode(blob, length).tolist() == [2, 5, 7, 9]
    with pytest.raises(PaimonFormatError, match="size does not match"):
        dv.decode(blob, length + 1)


def test_64_bit_layout_matches_paimon_and_iceberg():
    """Bitmap64DeletionVector: big-endian length, LITTLE-endian magic, the portable 64-bit
    roaring format (int64 count, int32 key + 32-bit bitmap each), big-endian CRC; the index
    records the whole blob's length."""
    positions = [1, 3, 2**32 + 7]
    bitmap = BitMap64(positions).serialize()
    assert bitmap[:8] == struct.pack("<q", 2)  # two 32-bit bitmaps (keys 0 and 1)
    data = struct.pack("<i", dv.MAGIC_BITMAP64) + bitmap
    expected = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    assert dv.decode(expected, len(expected)).tolist() == positions
    blob = dv.encode(positions, bitmap64=True)
    assert dv.blob_length(blob, bitmap64=True) == len(blob)
    assert dv.decode(blob, len(blob)).tolist() == positions


def test_corrupt_and_oversized_vectors_are_refused():
    blob = bytearray(dv.encode([1, 2]))
    blob[-1] ^= 0xFF
    with pytest.raises(PaimonFormatError, match="checksum"):
        dv.decode(bytes(blob))
    with pytest.raises(PaimonFormatError, match="magic"):
        dv.decode(struct.pack(">ii", 8, 12345) + b"\0" * 8)
    with pytest.raises(ValueError, match="deletion-vectors.bitmap64"):
        dv.encode([2**31])


def test_live_mask():
    assert dv.live_mask(5, np.array([], np.uint64)) is None
    assert dv.live_mask(5, np.array([0, 3], np.uint64)).tolist() == [False, True, True, False,
                                                                      True]
    with pytest.raises(PaimonFormatError, match="position 5"):
        dv.live_mask(5, np.array([5], np.uint64))
