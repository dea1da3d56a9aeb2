"""Shredded VARIANT columns written through pypaimon 2.1's writer (format/variant_shredding.py):
the option's fields land in ``typed_value``; with a schema of objects and scalars (format/
variant_shredder.py) a value of another type than the option gives its field stays in the
field's untyped bytes and reads back whole; with the schemas pypaimon's shredder keeps (here a
millisecond timestamp) it is refused with an error that says what to do, and the writer's files
are gone."""

import datetime
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.data.generic_variant import GenericVariant
from pypaimon.data.variant_shredding import assemble_shredded_column, build_variant_schema

from dbt.adapters.paimon.catalog.warehouse import create_table
from dbt.adapters.paimon.format import variant_shredding
from dbt.adapters.paimon.format.kv_files import write_kv_file
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW
from paimon_format_helpers import records

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", VARIANT_ARROW)])
SHREDDING = json.dumps({"type": "ROW", "fields": [
    {"id": 0, "name": "v", "type": {"type": "ROW", "fields": [
        {"id": 0, "name": "a", "type": "BIGINT"}]}}]})
# a millisecond timestamp: a schema pypaimon's own shredder shreds
MILLIS = json.dumps({"type": "ROW", "fields": [
    {"id": 0, "name": "v", "type": {"type": "ROW", "fields": [
        {"id": 0, "name": "a", "type": "TIMESTAMP(3)"}]}}]})
NESTED = json.dumps({"type": "ROW", "fields": [
    {"id": 0, "name": "v", "type": {"type": "ROW", "fields": [
        {"id": 0, "name": "a", "type": {"type": "ROW", "fields": [
            {"id": 0, "name": "b", "type": "BIGINT"}]}}]}}]})


def keyed_table(warehouse, name, **options):
    return create_table(warehouse, "db", name, SCHEMA, primary_keys=["id"],
                        options={"bucket": "1", **options})


def rows(values) -> pa.Table:
    variants = GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(v) for v in values])
    return records(pa.table({"id": pa.array(range(len(values)), pa.int64()), "v": variants},
                            schema=SCHEMA))


def data_files(warehouse):
    return [os.path.join(root, name) for root, _, names in os.walk(warehouse) for name in names
            if name.startswith("data-")]


def test_the_options_fields_are_written_shredded(warehouse):
    table = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: SHREDDING})
    write_kv_file(table, (), 0, rows([{"a": 1, "b": "x"}, None, {"a": 3}]))
    [path] = data_files(warehouse)
    stored = pq.read_schema(path).field("v").type
    assert stored.get_field_index("typed_value") >= 0, stored


def test_a_value_of_another_type_is_kept_in_the_fields_untyped_bytes(warehouse):
    table = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: SHREDDING})
    written = [{"a": 1}, {"a": "one"}, {"a": 1.5, "b": [1]}, None, 7]
    write_kv_file(table, (), 0, rows(written))
    [path] = data_files(warehouse)
    stored = pq.read_table(path).column("v").combine_chunks()
    a = stored.field("typed_value").field("a")
    assert a.field("typed_value").to_pylist() == [1, None, None, None, None]
    assert [v is not None for v in a.field("value").to_pylist()] == \
        [False, True, True, False, False]
    # pypaimon's reader puts each row's variant back together from the shredded columns
    back = assemble_shredded_column(stored, build_variant_schema(stored.type))
    assert [None if v is None else GenericVariant.from_arrow_struct(v).to_python()
            for v in back.to_pylist()] == written


@pytest.mark.parametrize("other", [
    {"a": "one"},    # pypaimon's shredder fails on it
    {"a": 1.5},      # pypaimon's shredder would store it as a timestamp
    {"a": None},     # pypaimon's shredder would drop the key
], ids=["string", "double", "json-null"])
def test_a_value_of_another_type_is_refused_and_its_files_are_gone(warehouse, other):
    table = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: MILLIS})
    with pytest.raises(PaimonDataError) as refused:
        write_kv_file(table, (), 0, rows([{"a": datetime.datetime(2024, 1, 2, 3, 4, 5)},
                                          other]))
    message = str(refused.value)
    assert "db.shredded shreds VARIANT fields ('variant.shreddingSchema')" in message
    assert "pypaimon 2.1" in message and "leave it out of 'variant.shreddingSchema'" in message
    assert data_files(warehouse) == []


def test_a_nested_schema_keeps_every_value(warehouse):
    table = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: NESTED})
    written = [{"a": {"b": 1, "c": [1.5]}}, None, {"a": 7}, {"z": "x"}, {"a": {"d": 2.5}},
               {"a": {"b": "one"}}, {"a": {"b": None}}]
    write_kv_file(table, (), 0, rows(written))
    [path] = data_files(warehouse)
    stored = pq.read_table(path).column("v").combine_chunks()
    assert stored.field("typed_value").field("a").field("typed_value").field("b") \
        .field("typed_value").to_pylist() == [1, None, None, None, None, None, None]
    back = assemble_shredded_column(stored, build_variant_schema(stored.type))
    assert [None if v is None else GenericVariant.from_arrow_struct(v).to_python()
            for v in back.to_pylist()] == written


def test_a_nan_is_not_taken_for_a_changed_value(warehouse):
    table = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: MILLIS})
    write_kv_file(table, (), 0, rows([{"a": datetime.datetime(2024, 1, 2), "n": float("nan")}]))
    assert len(data_files(warehouse)) == 1


def test_other_failures_are_not_taken_for_the_shredders(warehouse):
    plain = keyed_table(warehouse, "plain")
    shredded = keyed_table(warehouse, "shredded", **{variant_shredding.OPTION: NESTED})
    try:
        raise pa.ArrowInvalid("not from the shredder")
    except pa.ArrowInvalid as error:
        assert variant_shredding.refused(shredded, error) is None
        assert variant_shredding.refused(plain, error) is None
    write_kv_file(plain, (), 0, rows([{"a": "one"}]))  # nothing shredded: any value is stored
    assert len(data_files(warehouse)) == 1
