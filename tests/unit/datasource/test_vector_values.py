"""A run's VECTOR values are checked before pypaimon writes them (write_append_files): a list
of another length than the vector's, or a NULL vector bound for Lance vector files, fails the
run with no file left; valid ones, NULL vectors included, are written and read back exactly
(by pypaimon 2.1), BLOB bytes beside them in a .blob file."""
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


@pytest.mark.parametrize("vectors, vector_format, expected", [
    ([[1, 2], None], "lance", "1 row(s) have a NULL in VECTOR column 'emb' of db.t, whose "
                              "vectors are stored in lance files ('vector.file.format')"),
    ([[1, 2], [1, 2, 3], [1]], None, "2 row(s) of VECTOR column 'emb' of db.t are not 2 long "
                                     "(the column's 'field.emb.vector-dim'); lengths found: "
                                     "[1, 3]"),
])
def test_bad_vectors_fail_before_anything_is_written(tmp_path, vectors, vector_format,
                                                     expected):
    options = {**OPTIONS, **({"vector.file.format": vector_format} if vector_format else {})}
    table = wh.create_table(str(tmp_path), "db", "t", stored_types(QUERY, options),
                            options=options)
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


@pytest.mark.parametrize("vector_format, suffixes", [
    (None, ["blob", "parquet"]),
    ("parquet", ["blob", "parquet", "vector.parquet"]),
])
def test_null_vectors_are_stored_in_data_and_vector_files(tmp_path, vector_format, suffixes):
    """Arrow's Parquet writer refuses a NULL fixed-size list; pypaimon's writers get the column
    as a list with empty NULL slots (format/pypaimon_compat.py), the same Parquet LIST, and
    pypaimon 2.1 reads the NULLs back as NULL vectors."""
    options = {**OPTIONS, **({"vector.file.format": vector_format} if vector_format else {})}
    table = wh.create_table(str(tmp_path), "db", "t", stored_types(QUERY, options),
                            options=options)
    commit_append_files(table, write_append_files(table, [rows([[1, 2], None, [0.5, None]]),
                                                          rows([None])]))
    assert sorted({n.split(".", 1)[-1] for n in data_files(tmp_path)}) == suffixes
    read = table.new_read_builder()
    got = read.new_read().to_arrow(read.new_scan().plan().splits())
    assert pa.types.is_fixed_size_list(got.schema.field("emb").type)
    by_row = sorted(got.to_pylist(), key=lambda r: (r["id"], r["emb"] is not None))
    assert by_row == [{"id": 0, "picture": b"\x00\xff", "emb": None},
                      {"id": 0, "picture": b"\x00\xff", "emb": [1.0, 2.0]},
                      {"id": 1, "picture": b"\x00\xff", "emb": None},
                      {"id": 2, "picture": b"\x00\xff", "emb": [0.5, None]}]
