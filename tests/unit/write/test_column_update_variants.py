"""VARIANT columns written by column updates of data-evolution tables (write/column_update.py,
which Spark tasks also run: write/column_update_job.py): a NULL variant as a Spark task's Arrow
batch carries it (a null struct whose NOT NULL ``value`` and ``metadata`` are null too) is
written as NULL, and a table with `variant.inferShreddingSchema` gets its column files shredded
as inferred, read back whole by pypaimon 2.1."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.data.generic_variant import GenericVariant

from dbt.adapters.paimon.catalog.warehouse import create_table
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW
from dbt.adapters.paimon.datasource.spark_arrow import null_variants_filled
from dbt.adapters.paimon.write.column_update import update_columns
from tests.data_evolution_tables import EVOLUTION, write

SCHEMA = pa.schema([("id", pa.int64()), ("v", VARIANT_ARROW)])


def as_spark_sends(values) -> pa.StructArray:
    """Variants of ``values`` (None: a NULL variant) whose NULL ones have null children, as
    Spark's Arrow batches hold them in a ``mapInArrow`` task."""
    whole = GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(v) for v in values])
    mask = pa.array([v is None for v in values])
    children = [pa.array([None if v is None else c for v, c in
                          zip(values, whole.field(name).to_pylist())], pa.binary())
                for name in ("value", "metadata")]
    return pa.StructArray.from_arrays(children, fields=list(VARIANT_ARROW), mask=mask)


def as_python(stored) -> list:
    return [None if s is None else GenericVariant(s["value"], s["metadata"]).to_python()
            for s in stored]


def test_arrow_alone_cannot_write_such_a_null_variant_and_the_fill_keeps_it_null(tmp_path):
    spark = as_spark_sends([{"a": 1}, None])
    with pytest.raises(pa.ArrowInvalid, match="non-nullable but contains nulls"):
        pq.write_table(pa.table({"v": spark}), tmp_path / "raw.parquet")
    filled = null_variants_filled(pa.chunked_array([spark.slice(1), spark]), VARIANT_ARROW)
    pq.write_table(pa.table({"v": filled}), tmp_path / "filled.parquet")
    assert as_python(pq.read_table(tmp_path / "filled.parquet")["v"].to_pylist()) == \
        [None, {"a": 1}, None]
    # inside a list and a struct, and columns holding no variant as they are
    nested = pa.ListArray.from_arrays(pa.array([0, 1, 2]), spark)
    listed = null_variants_filled(nested, pa.list_(VARIANT_ARROW))
    assert listed.values.field("value").null_count == 0
    assert as_python(listed.values.to_pylist()) == [{"a": 1}, None]
    boxed = pa.StructArray.from_arrays([spark], names=["inner"])
    assert null_variants_filled(boxed, pa.struct([("inner", VARIANT_ARROW)])) \
        .field("inner").field("metadata").null_count == 0
    plain = pa.array([1, None])
    assert null_variants_filled(plain, pa.int64()) is plain


@pytest.mark.parametrize("infer", [False, True])
def test_a_variant_column_is_updated_null_included_and_shredded_when_inferred(tmp_path, infer):
    warehouse = str(tmp_path / "warehouse")
    options = {**EVOLUTION, **({"variant.inferShreddingSchema": "true"} if infer else {})}
    table = create_table(warehouse, "db", "t", SCHEMA, options=options)
    write(table, pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                           "v": GenericVariant.to_arrow_array(
                               [GenericVariant.from_python({"a": i}) for i in (1, 2)] + [None])},
                          schema=SCHEMA))
    new = [None, {"a": 30, "tag": "u"}]
    update = pa.table({"id": pa.array([2, 3], pa.int64()), "v": as_spark_sends(new)})
    result = update_columns(table, "m", update, "id", ["v"])
    assert (result.rows, result.ranges) == (2, 1)

    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits()).sort_by("id")
    assert as_python(data["v"].to_pylist()) == [{"a": 1}, None, {"a": 30, "tag": "u"}]
    [column_file] = [os.path.join(root, name) for root, _, names in os.walk(warehouse)
                     for name in names if name.startswith("data-")
                     and pq.read_schema(os.path.join(root, name)).names == ["v"]]
    stored = pq.read_schema(column_file).field("v").type
    assert ("typed_value" in [f.name for f in stored]) == infer
    if infer:
        assert [f.name for f in stored.field("typed_value").type] == ["a", "tag"]
