"""The merge runtime's output crosses Arrow IPC intact: the Python data source hands it to Spark
as an Arrow stream, so a list or map column must serialize to the rows it holds.

pyarrow's IPC writer (19.x) rebases a list's offsets only when the array itself has an offset;
an array built by ``from_arrays`` from a slice's offsets (offset 0, first offset > 0) is written
with its values cut to the used range but its offsets left as they are: the reader (Spark's
Arrow Java) then reads past them. Records read a batch at a time are such slices."""
from decimal import Decimal

import pyarrow as pa
import pytest

from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow

SCHEMA = [("id", "INT NOT NULL"), ("m", "MAP<INT NOT NULL, ARRAY<STRING>>"),
          ("rows", "ARRAY<ROW<a INT, b DECIMAL(10, 2)>>"), ("tags", "ARRAY<STRING>"),
          ("r", "ROW<x ARRAY<INT>, y STRING>"), ("s", "STRING"), ("bin", "BYTES")]
ARROW = pa.schema([
    pa.field("id", pa.int32(), nullable=False),
    pa.field("m", pa.map_(pa.field("key", pa.int32(), nullable=False), pa.list_(pa.string()))),
    pa.field("rows", pa.list_(pa.struct([("a", pa.int32()), ("b", pa.decimal128(10, 2))]))),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("r", pa.struct([("x", pa.list_(pa.int32())), ("y", pa.string())])),
    pa.field("s", pa.string()), pa.field("bin", pa.binary()),
    pa.field("_row_kind", pa.string()), pa.field("_seq", pa.int64())])

ENGINES = {
    "deduplicate": {},
    "first-row": {"merge-engine": "first-row"},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.tags.aggregate-function": "collect",
                    "fields.m.aggregate-function": "merge_map"},
}


def _records() -> pa.Table:
    rows = [(key, [(key, ["a", None]), (key + 10, [])], [{"a": key, "b": Decimal("1.50")}, None],
             ["t", str(key)], {"x": [key, key], "y": "y"}, f"s{key}", b"b" * key, "+I", seq)
            for seq, key in enumerate([1, 1, 2, 3, 4, 5])]
    return pa.Table.from_pylist([dict(zip(ARROW.names, row)) for row in rows], schema=ARROW)


def _through_ipc(table: pa.Table) -> pa.Table:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("start", [0, 2, 5])  # from 2 on: one record per key; 5: one record
def test_merged_nested_columns_of_a_sliced_input_cross_ipc_intact(engine, start):
    spec = MergeSpec.from_table_options(schema=SCHEMA, primary_keys=["id"],
                                        options=ENGINES[engine])
    records = _records().slice(start)  # a batch read from the middle of a file
    merged = merge_arrow(spec, records)
    assert merged.num_rows == len(set(records.column("id").to_pylist()))
    received = _through_ipc(merged)
    received.validate(full=True)
    assert received.to_pylist() == merged.to_pylist()
