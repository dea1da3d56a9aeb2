"""BLOB ('blob-field') and VECTOR ('vector-field') columns of a model's table: the checks run
before anything is written (Paimon's rules, and what dbt-paimon does not write), and the
table's Arrow types for the query's columns."""

import pyarrow as pa
import pytest

from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.config.blob_vector import stored_types
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = [("id", "BIGINT"), ("dt", "STRING"), ("picture", "BYTES"),
           ("embedding", "ARRAY<FLOAT>"), ("label", "STRING")]
EVOLUTION = {"row_tracking": True, "table_options": {"data-evolution.enabled": "true"}}
BLOB = {"data-evolution.enabled": "true", "blob-field": "picture"}
VECTOR = {"vector-field": "embedding", "field.embedding.vector-dim": "3"}


def define(config, materialization="paimon_append", columns=COLUMNS):
    return table_definition("pictures", materialization, config, columns)


def error_of(config, materialization="paimon_append", columns=COLUMNS) -> str:
    with pytest.raises(PaimonConfigError) as info:
        define(config, materialization, columns)
    message = str(info.value)
    assert message.startswith("Model 'pictures'")
    return message


def test_blob_and_vector_columns_on_a_data_evolution_append_table():
    options = {**BLOB, **VECTOR, "vector.file.format": "parquet"}
    d = define({"row_tracking": True, "partition_by": "dt", "table_options": options})
    assert d.options["blob-field"] == "picture"
    assert d.options["field.embedding.vector-dim"] == "3"
    # vectors in the data files need no data evolution
    assert define({"table_options": VECTOR}).options["vector-field"] == "embedding"


@pytest.mark.parametrize("config, materialization, expected", [
    ({"table_options": {"blob-field": "picture"}}, "paimon_append",
     "need a data-evolution table"),
    ({"row_tracking": True, "table_options": {"blob-field": "picture"}}, "paimon_append",
     "'data-evolution.enabled': 'true'"),
    ({"table_options": {"data-evolution.enabled": "true"}}, "paimon_append",
     "needs row_tracking=true"),
    ({"row_tracking": True, "table_options": {**BLOB, "blob-field": "label"}}, "paimon_append",
     "column 'label' in 'blob-field' is STRING in the model's query; a BLOB column takes "
     "BINARY values (Paimon's BLOB), an ARRAY or a MAP of them (ARRAY<BLOB>, MAP<X, BLOB>): "
     "return it as binary (e.g. cast(label as binary))"),
    ({"row_tracking": True, "table_options": {**BLOB, "blob-field": "nope"}}, "paimon_append",
     "`table_options['blob-field']` names ['nope']"),
    ({"row_tracking": True, "partition_by": "picture", "table_options": BLOB}, "paimon_append",
     "column(s) ['picture'] are BLOB ('blob-field') and partition keys"),
    ({"primary_key": "id", "table_options": {"blob-field": "picture"}}, "paimon_pk",
     "in a primary-key table: Paimon 2.1 (pypaimon) stores BLOB columns in append tables only"),
    ({"row_tracking": True, "table_options": {**BLOB, "blob-descriptor-field": "picture"}},
     "paimon_append", "Remove 'blob-descriptor-field'"),
    ({"table_options": {"vector-field": "embedding"}}, "paimon_append",
     "no 'field.embedding.vector-dim' (the vector's length"),
    ({"table_options": {**VECTOR, "field.embedding.vector-dim": "0"}}, "paimon_append",
     "'field.embedding.vector-dim' is '0'; expected a whole number >= 1"),
    ({"table_options": {**VECTOR, "vector-field": "label", "field.label.vector-dim": "3"}},
     "paimon_append", "column 'label' in 'vector-field' is STRING in the model's query"),
    ({"table_options": {**VECTOR, "vector.file.format": "parquet"}}, "paimon_append",
     "'vector.file.format' stores VECTOR column(s) ['embedding'] in files of their own, which "
     "needs a data-evolution table"),
    ({"table_options": {**VECTOR, "vector.file.format": "csv"}}, "paimon_append",
     "'vector.file.format' is 'csv'"),
    ({**EVOLUTION, "partition_by": "embedding",
      "table_options": {**VECTOR, "data-evolution.enabled": "true",
                        "vector.file.format": "parquet"}}, "paimon_append",
     "column(s) ['embedding'] are VECTOR stored in vector files"),
    ({"primary_key": "id", "table_options": {**VECTOR, "vector.file.format": "parquet"}},
     "paimon_pk", "remove 'vector.file.format' to store them in the primary-key table's data"),
])
def test_refusals_name_the_column_and_the_fix(config, materialization, expected):
    assert expected in error_of(config, materialization)


@pytest.mark.parametrize("engine", ["deduplicate", "first-row", "partial-update", "aggregation"])
def test_vectors_in_the_data_files_of_a_primary_key_table_of_any_engine(engine):
    # partial-update and aggregation rows hold a NULL vector until a writer gives one, which
    # is stored as Paimon stores it (format/pypaimon_compat.py)
    d = define({"primary_key": "id", "merge_engine": engine, "table_options": VECTOR},
               "paimon_pk")
    assert d.options["vector-field"] == "embedding" and list(d.primary_keys) == ["id"]
    assert d.options["merge-engine"] == engine


@pytest.mark.parametrize("kind, stored", [
    ("ARRAY<BYTES>", True), ("ARRAY<BINARY(4) NOT NULL>", True), ("MAP<STRING, BYTES>", True),
    ("MAP<INT, VARBINARY(8)>", True), ("ARRAY<STRING>", False), ("MAP<BYTES, STRING>", False),
    ("MAP<STRING, DECIMAL(10, 2)>", False), ("ARRAY<ARRAY<BYTES>>", False)])
def test_an_array_or_map_of_binary_values_is_a_blob_column(kind, stored):
    """Paimon 2.x's ARRAY<BLOB> and MAP<X, BLOB> (pypaimon's SchemaManager: the element or the
    map's value BLOB, nothing deeper)."""
    config = {"row_tracking": True, "table_options": {**BLOB, "blob-field": "pictures"}}
    columns = [("id", "BIGINT"), ("pictures", kind)]
    if stored:
        assert define(config, columns=columns).options["blob-field"] == "pictures"
    else:
        assert f"column 'pictures' in 'blob-field' is {kind}" in error_of(config, columns=columns)


def test_every_column_a_blob_is_refused():
    message = error_of({"row_tracking": True, "table_options": BLOB},
                       columns=[("picture", "BYTES")])
    assert "Paimon needs at least one other column" in message


def test_vector_dim_is_a_known_option_only_in_its_own_spelling():
    assert "not a Paimon table option" in error_of(
        {"table_options": {"field.embedding.vector-dims": "3"}})


def test_stored_types_give_blob_and_vector_columns_their_paimon_types():
    query = pa.schema([pa.field("id", pa.int64(), nullable=False),
                       ("picture", pa.binary()), ("embedding", pa.list_(pa.float32())),
                       ("other", pa.list_(pa.float32())), ("label", pa.string())])
    stored = stored_types(query, {"blob-field": "picture", **VECTOR})
    assert stored.field("picture").type == pa.large_binary()
    assert stored.field("embedding").type == pa.list_(pa.float32(), 3)
    assert stored.field("other").type == pa.list_(pa.float32())
    assert not stored.field("id").nullable and stored.field("label").type == pa.string()
    assert stored_types(query, {}) is query
    collections = pa.schema([("pictures", pa.list_(pa.binary())),
                             ("album", pa.map_(pa.string(), pa.binary())),
                             ("names", pa.list_(pa.string()))])
    stored = stored_types(collections, {"blob-field": "pictures,album,names"})
    assert stored.field("pictures").type == pa.list_(pa.large_binary())
    assert stored.field("album").type == pa.map_(pa.string(), pa.large_binary())
    assert stored.field("names").type == pa.list_(pa.string())  # refused by the checks


def test_wrong_vector_lengths_names_the_rows_and_the_lengths_found():
    from dbt.adapters.paimon.config.blob_vector import wrong_vector_lengths

    values = pa.chunked_array([[[1.0, 2.0], [1.0], None], [[], [1.0, 2.0, 3.0], [0.0, 0.0]]],
                              pa.list_(pa.float32()))
    rows, found = wrong_vector_lengths(values, 2)
    assert rows.tolist() == [1, 3, 4] and found == [0, 1, 3]     # the NULL row is not one
    rows, found = wrong_vector_lengths(values.combine_chunks().slice(0, 1), 2)
    assert rows.tolist() == [] and found == []
