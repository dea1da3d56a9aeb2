"""A run's VECTOR values are checked before pypaimon writes them (write_append_files): a NULL
vector, or a list of another length than the vector's, fails the run with no file left; valid
ones are written and read back exactly, BLOB bytes beside them in a .blob file."""
import os

import pyarrow as pa
import pytest

from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.config.blob_vector import stored_types
from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files
from dbt.adapters.paimon.runtime import PaimonDataError

OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
           "blob-field": "picture", "vector-field": "emb", "field.emb.vector-dim": "2"}
QUERY = pa.schema([("id", pa.int64()), ("picture", pa.binary()),
                   ("emb", pa.list_(pa.float32()))])


def rows(vectors):
    return pa.table({"id": pa.array(range(len(vectors)), pa.int64()),
                     "picture": pa.array([b"\x00\xff"] * len(vectors), pa.binary()),
                     "emb": pa.array(vectors, pa.list_(pa.float32()))}, schema=QUERY)


def data_files(folder):
    return [n for _, _, names in os.walk(folder) for n in names if n.startswith("data-")]


@pytest.mark.parametrize("vectors, expected", [
    ([[1, 2], None], "1 row(s) have a NULL in VECTOR column 'emb' of db.t"),
    ([[1, 2], [1, 2, 3], [1]], "2 row(s) of VECTOR column 'emb' of db.t are not 2 long "
                               "(the column's 'field.emb.vector-dim'); lengths found: [1, 3]"),
])
def test_bad_vectors_fail_before_anything_is_written(tmp_path, vectors, expected):
    table = wh.create_table(str(tmp_path), "db", "t", stored_types(QUERY, OPTIONS),
                            options=OPTIONS)
    with pytest.raises(PaimonDataError) as info:
        write_append_files(table, [rows([[5, 6]]), rows(vectors)])
    assert expected in str(info.value)
    assert data_files(tmp_path) == []


def test_vectors_and_blobs_are_written_as_paimon_stores_them(tmp_path):
    table = wh.create_table(str(tmp_path), "db", "t", stored_types(QUERY, OPTIONS),
                            options=OPTIONS)
    commit_append_files(table, write_append_files(table, [rows([[1, 2], [0.5, None]])]))
    assert sorted(n.rsplit("-", 1)[-1].split(".", 1)[-1] for n in data_files(tmp_path)) == \
        ["blob", "parquet"]
    read = table.new_read_builder()
    assert read.new_read().to_arrow(read.new_scan().plan().splits()).to_pylist() == [
        {"id": 0, "picture": b"\x00\xff", "emb": [1.0, 2.0]},
        {"id": 1, "picture": b"\x00\xff", "emb": [0.5, None]}]
