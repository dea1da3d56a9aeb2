"""format/pypaimon_compat.py's mend of pypaimon's data-evolution read: a row-id range whose
VECTOR column lies in several ``.vector`` files (here pypaimon 2.1's own writer rolls them at
``vector.target-file-size``; a compaction leaves the same, tests/integration/ops/
test_data_evolution_compact.py) reads exactly the rows written, through pypaimon's reader and
dbt-paimon's (format/data_evolution.py), whole or projected."""
import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.read import split_read

from dbt.adapters.paimon.format import pypaimon_compat
from tests.data_evolution_tables import (  # noqa: F401  (fixtures)
    EVOLUTION, catalog, our_rows, pypaimon_rows, warehouse, write)

VECTOR = pa.list_(pa.float32(), 2)
SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.list_(pa.float32())), ("v", VECTOR)])
# 'a' is named a vector field but created as ARRAY: it stays in the data files
OPTIONS = {**EVOLUTION, "vector-field": "a,v", "field.a.vector-dim": "2",
           "field.v.vector-dim": "2", "vector.file.format": "parquet",
           "vector.target-file-size": "1b"}


def _rows(ids):
    return [{"id": i, "a": [float(i), -1.0], "v": None if i % 5 == 3 else [float(i), float(-i)]}
            for i in ids]


@pytest.fixture
def rolled(catalog):
    """Two commits of rows 0-5 and 6-9: a data file each, a .vector file per row."""
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=OPTIONS), False)
    for ids in (range(0, 6), range(6, 10)):
        write(catalog.get_table("db.t"), pa.Table.from_pylist(_rows(ids), schema=SCHEMA))
    table = catalog.get_table("db.t")
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    ranges = sorted((f.first_row_id, f.row_count) for f in files if ".vector." not in f.file_name)
    vectors = sorted(f.first_row_id for f in files if ".vector." in f.file_name)
    assert ranges == [(0, 6), (6, 4)] and vectors == list(range(10))
    return table


def _read(table, projection=None):
    builder = table.new_read_builder()
    if projection:
        builder = builder.with_projection(projection)
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted(data.to_pylist(), key=lambda r: r["id"] if "id" in r else repr(r))


def test_pypaimon_alone_misreads_a_range_of_several_vector_files(rolled, monkeypatch):
    # the gap the mend fills: pypaimon's lazily made readers see the whole read's fields.
    # If pypaimon learns it, the mend can go.
    monkeypatch.setattr(split_read, "MergeAllBatchReader",
                        split_read.MergeAllBatchReader.pypaimon)
    with pytest.raises(pa.ArrowNotImplementedError,
                       match="Unsupported cast from int64 to fixed_size_list"):
        _read(rolled)
    # 'a' (absent from the vector files) takes the vector's place: NULL vectors, no error
    assert [r["v"] for r in _read(rolled, ["a", "v"])] == [None] * 10


def test_a_range_of_several_vector_files_reads_the_rows_written(rolled, catalog, warehouse):
    written = _rows(range(10))
    assert _read(rolled) == written
    assert pypaimon_rows(catalog, "t") == sorted((tuple(r.values()) for r in written),
                                                 key=repr)
    assert our_rows(warehouse, "t") == pypaimon_rows(catalog, "t")
    projected = [{"a": r["a"], "v": r["v"]} for r in written]
    assert _read(rolled, ["a", "v"]) == sorted(projected, key=repr)
    assert _read(rolled, ["v", "id"]) == [{"v": r["v"], "id": r["id"]} for r in written]


def test_the_mend_is_installed_once():
    installed = split_read.MergeAllBatchReader
    assert installed._dbt_paimon_compat and installed.pypaimon.__name__ == "MergeAllBatchReader"
    pypaimon_compat._make_bunch_file_readers_at_once()
    assert split_read.MergeAllBatchReader is installed


def test_readers_left_unread_are_closed():
    class Reader:
        def __init__(self):
            self.batches, self.closed = [pa.record_batch([pa.array([1])], ["x"])], 0

        def read_arrow_batch(self):
            return self.batches.pop() if self.batches else None

        def close(self):
            self.closed += 1

    readers = [Reader(), Reader(), Reader()]
    made = []
    merged = split_read.MergeAllBatchReader(
        [lambda r=r: made.append(r) or r for r in readers], batch_size=1)
    assert made == readers      # made at once, in order
    assert merged.read_arrow_batch().num_rows == 1
    merged.close()
    assert [r.closed for r in readers] == [1, 1, 1]
