"""format/pypaimon_compat.py's mend of pypaimon's Parquet writers: a NULL VECTOR value (a NULL
slot of an Arrow fixed-size list), which Arrow's Parquet writer refuses or writes as a file it
cannot read back, is written as the same Parquet LIST with the slot NULL; the values around it
are kept exactly, by the whole-file writer and the batch-by-batch one alike."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.filesystem.local_file_io import LocalFileIO

from dbt.adapters.paimon.format.pypaimon_compat import storable_vectors

VECTOR = pa.list_(pa.field("element", pa.float32()), 2)


def vectors(values, slice_from=0):
    return pa.array(values, VECTOR).slice(slice_from)


def test_arrow_alone_cannot_write_a_null_vector(tmp_path):
    # the gap the mend fills (pyarrow 19 refuses a NULL slot between two others, and writes
    # one at either end into a file it cannot read); if pyarrow learns it, the mend can go
    with pytest.raises(pa.ArrowNotImplementedError, match="non-zero length null"):
        pq.write_table(pa.table({"v": vectors([[1, 2], None, [3, 4]])}),
                       str(tmp_path / "f.parquet"))
    pq.write_table(pa.table({"v": vectors([[1, 2], None])}), str(tmp_path / "end.parquet"))
    with pytest.raises(pa.ArrowInvalid, match="Expected all lists to be of size=2"):
        pq.read_table(str(tmp_path / "end.parquet"))


def test_null_slots_become_empty_lists_of_the_same_parquet_type(tmp_path):
    column = pa.chunked_array([vectors([[9, 9], [1, 2], None], slice_from=1),
                               vectors([None, [3, None]])])
    table = pa.table({"v": column, "id": pa.array([1, 2, 3, 4])})
    stored = storable_vectors(table)
    assert stored.column("v").to_pylist() == [[1.0, 2.0], None, None, [3.0, None]]
    assert stored.column("id") == table.column("id")
    pq.write_table(stored, str(tmp_path / "mended.parquet"))
    pq.write_table(pa.table({"v": vectors([[1, 2]]), "id": pa.array([1])}),
                   str(tmp_path / "plain.parquet"))
    assert pq.ParquetFile(str(tmp_path / "mended.parquet")).schema.equals(
        pq.ParquetFile(str(tmp_path / "plain.parquet")).schema)
    back = pq.read_table(str(tmp_path / "mended.parquet")).column("v").cast(VECTOR)
    assert back.to_pylist() == [[1.0, 2.0], None, None, [3.0, None]]


def test_data_without_null_vectors_is_passed_as_it_is():
    table = pa.table({"v": vectors([[1, 2]]), "l": pa.array([None, ], pa.list_(pa.int32()))})
    assert storable_vectors(table) is table
    batch = pa.record_batch([vectors([None])], names=["v"])
    assert storable_vectors(batch).column("v").to_pylist() == [None]


@pytest.mark.parametrize("values", [[[3, 4], None, [1, 2]], [None, [1, 2]], [[1, 2], None]])
def test_pypaimons_parquet_writer_stores_a_null_vector(tmp_path, values):
    path = str(tmp_path / "data.parquet")
    LocalFileIO(str(tmp_path), {}).write_parquet(path, pa.table({"v": vectors(values)}))
    expected = [None if v is None else [float(x) for x in v] for v in values]
    assert pq.read_table(path).column("v").to_pylist() == expected


def test_pypaimons_batch_by_batch_writer_stores_null_vectors(tmp_path):
    from pypaimon.write.writer.single_file_writer import SingleFileWriter

    path = str(tmp_path / "update.parquet")
    batch = pa.table({"id": pa.array([1, 2]), "v": vectors([[1, 2], None])})
    writer = SingleFileWriter(LocalFileIO(str(tmp_path), {}), path, batch.schema, "parquet",
                              "zstd", 1, [], None)
    writer.write(batch)
    writer.write(pa.table({"id": pa.array([3]), "v": vectors([[3, 4]])}))
    writer.close()
    assert writer.row_count == 3
    assert pq.read_table(path).to_pylist() == [
        {"id": 1, "v": [1.0, 2.0]}, {"id": 2, "v": None}, {"id": 3, "v": [3.0, 4.0]}]
