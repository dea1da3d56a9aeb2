"""format/variant_inference.py: the shredding schema Paimon's per-file inference
(``InferVariantShreddingSchema``: schemaOf, mergeSchema, finalizeSimpleSchema) gives a file's
VARIANT columns, each case citing the Java rule it checks; files written through pypaimon's
writer with `variant.inferShreddingSchema` carry it and read back whole (hypothesis)."""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypaimon.data.generic_variant import GenericVariant
from pypaimon.data.variant_shredding import (assemble_shredded_column, build_variant_schema,
                                             shred_variant_column)

from dbt.adapters.paimon.catalog.warehouse import create_table
from dbt.adapters.paimon.format import variant_inference as vi
from dbt.adapters.paimon.format import variant_shredder
from dbt.adapters.paimon.format.kv_files import write_kv_file
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW
from paimon_format_helpers import records

Row, Field, Array, Decimal = vi.Row, vi.Field, vi.Array, vi.Decimal


JSON_NULL = object()  # a variant holding JSON null (None: a NULL variant)


def column(values) -> pa.Array:
    return GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(None if v is JSON_NULL else v)
         for v in values])


def inferred(values, **options):
    [schema] = vi.infer_schemas([column(values)], {k.replace("_", "."): str(v)
                                                   for k, v in options.items()})
    return schema


def row(**fields):
    return Row(tuple(Field(name, t, None) for name, t in sorted(fields.items())))


def read_back(shredded) -> list:
    back = assemble_shredded_column(shredded, build_variant_schema(shredded.type))
    return [None if v is None else GenericVariant.from_arrow_struct(v).to_python()
            for v in back.to_pylist()]


# ---------------------------------------------------------------------------- schemaOf

def test_an_integer_is_a_decimal_of_its_digits_and_finalized_as_bigint():
    # schemaOf LONG: DECIMAL(precision, 0) when precision <= 18, else BIGINT
    value = GenericVariant.from_python(-12345)
    assert vi.schema_of(value.value(), value.metadata(), 0, 50) == Decimal(5, 0)
    big = GenericVariant.from_python(10 ** 18)  # 19 digits
    assert vi.schema_of(big.value(), big.metadata(), 0, 50) == "BIGINT"
    # finalizeSimpleSchema: DECIMAL(p <= 18, 0) -> BIGINT
    assert inferred([{"a": 1}, {"a": 10 ** 18}, {"a": -7}]) == row(a="BIGINT")


def test_a_decimal_is_typed_by_its_digits_without_trailing_zeros():
    # schemaOf DECIMAL reads getDecimal(): stripTrailingZeros; precision >= scale
    from decimal import Decimal as D
    for number, expected in [(D("1.50"), Decimal(2, 1)), (D("0.01"), Decimal(2, 2)),
                             (D("0.00"), Decimal(1, 0))]:
        value = GenericVariant.from_python(number)
        assert vi.schema_of(value.value(), value.metadata(), 0, 50) == expected, number
    # finalizeSimpleSchema: DECIMAL(p <= 18, s > 0) -> DECIMAL(18, s)
    assert inferred([{"d": D("1.25")}, {"d": D("10.5")}]) == row(d=Decimal(18, 2))


def test_scalars_and_json_nulls():
    # schemaOf: STRING, DOUBLE, BOOLEAN of their types; NULL -> no type (mergeSchema: null
    # merges into any type); a field only ever null finalizes to VARIANT
    assert inferred([{"s": "x", "d": 1.5, "b": True, "n": None},
                     {"s": None, "d": 2.5, "b": False, "n": None}]) == \
        row(b="BOOLEAN", d="DOUBLE", n=vi.VARIANT, s="STRING")


# ---------------------------------------------------------------------------- mergeSchema

def test_an_integer_and_a_double_are_not_shredded():
    # mergeSchema: DECIMAL and DOUBLE differ -> VARIANT (shredding will not put both in one
    # typed_value)
    assert inferred([{"a": 1, "b": "x"}, {"a": 1.5, "b": "y"}]) == \
        row(a=vi.VARIANT, b="STRING")
    assert inferred([1, 1.5]) == vi.VARIANT


def test_decimals_widen_and_meet_bigints():
    # mergeDecimal: max scale, max integral digits; mergeDecimalWithLong
    assert vi.merge(Decimal(5, 2), Decimal(4, 0)) == Decimal(6, 2)
    assert vi.merge(Decimal(5, 0), "BIGINT") == "BIGINT"
    assert vi.merge("BIGINT", Decimal(5, 2)) == Decimal(21, 2)
    assert vi.merge(Decimal(38, 0), Decimal(10, 5)) == vi.VARIANT  # over 38 digits


def test_rows_merge_field_by_field_with_counts():
    # mergeRowTypes: a sorted union, counts (kept in the field's description) added
    a = Row((Field("a", Decimal(1, 0), 1), Field("c", "STRING", 1)))
    b = Row((Field("b", "BOOLEAN", 1), Field("c", "STRING", 1)))
    assert vi.merge(a, b) == Row((Field("a", Decimal(1, 0), 1), Field("b", "BOOLEAN", 1),
                                  Field("c", "STRING", 2)))


# ---------------------------------------------------------------------------- finalize

def test_rare_fields_are_dropped_by_the_cardinality_ratio():
    # inferInitial: minCardinality = ceil(non-null values * minFieldCardinalityRatio);
    # finalizeSimpleSchema keeps a field seen at least that often
    ten = [{"a": i} for i in range(9)] + [{"a": 9, "rare": "x"}]
    assert inferred(ten) == row(a="BIGINT", rare="STRING")  # ceil(1.0) = 1
    assert inferred(ten + [{"a": 10}]) == row(a="BIGINT")  # ceil(1.1) = 2
    # NULL variants are not counted; variant nulls are
    assert inferred(ten + [None] * 5) == row(a="BIGINT", rare="STRING")
    assert inferred(ten + [JSON_NULL]) == row(a="BIGINT")
    assert inferred(ten + [{"a": 10}], variant_shredding_minFieldCardinalityRatio=0.05) == \
        row(a="BIGINT", rare="STRING")


def test_the_schema_width_is_a_budget_for_the_whole_file():
    # finalizeSimpleSchema: every field spends one column, a typed scalar one more; a field
    # reached with none left is VARIANT; the budget is shared by the file's columns
    values = [{"a": 1, "b": 2, "c": 3}]
    assert inferred(values, variant_shredding_maxSchemaWidth=7) == \
        row(a="BIGINT", b="BIGINT", c="BIGINT")
    assert inferred(values, variant_shredding_maxSchemaWidth=6) == \
        row(a="BIGINT", b="BIGINT", c=vi.VARIANT)
    # 4: the row 1, a 2, then b reached with 1 left spends it (VARIANT), c is not reached
    assert inferred(values, variant_shredding_maxSchemaWidth=4) == \
        row(a="BIGINT", b=vi.VARIANT)
    both = vi.infer_schemas([column(values), column(values)],
                            {vi.MAX_WIDTH: "10"})
    assert both == [row(a="BIGINT", b="BIGINT", c="BIGINT"), row(a="BIGINT")]


def test_nested_objects_arrays_and_depth():
    # schemaOf OBJECT -> ROW, ARRAY -> ARRAY of the merged elements (an empty one VARIANT);
    # below maxSchemaDepth levels VARIANT
    values = [{"o": {"x": 1, "y": "s"}, "l": [1, 2], "e": []},
              {"o": {"x": 2}, "l": [3], "e": []}]
    assert inferred(values) == row(o=row(x="BIGINT", y="STRING"), l=Array("BIGINT"),
                                   e=Array(vi.VARIANT))
    assert inferred(values, variant_shredding_maxSchemaDepth=1) == \
        row(o=vi.VARIANT, l=vi.VARIANT, e=vi.VARIANT)
    assert inferred([[1, "a"]]) == Array(vi.VARIANT)


def test_what_is_shredded_and_what_is_not():
    # a column whose finalized schema is VARIANT (an empty object, all NULL, conflicting
    # roots) is not shredded, as in Paimon
    for values in ([{}, None], [None], [{"a": 1}, 2], [1, "x"]):
        assert vi.infer(pa.table({"v": column(values)}), ["v"], {}) == {}, values
    # a scalar schema: the whole column into one typed_value (variantShreddingSchema of a
    # scalar); a string among integers past the sampled rows stays in value
    data = pa.table({"v": column([1, 2, None, JSON_NULL, "s"])})
    [(inferred, target)] = vi.infer(data, ["v"], {vi.MAX_ROWS: "3"}).values()
    assert inferred.schema.scalar_arrow_type == pa.int64()
    shredded = shred_variant_column(data.column("v"), inferred, target)
    assert shredded.field("typed_value").to_pylist() == [1, 2, None, None, None]
    assert [v is not None for v in shredded.field("value").to_pylist()] == \
        [False, False, False, True, True]
    assert read_back(shredded) == [1, 2, None, None, "s"]
    import datetime
    [(inferred, _)] = vi.infer(pa.table({"v": column([datetime.date(2024, 1, 1)])}), ["v"],
                               {}).values()
    assert inferred.schema.scalar_arrow_type == pa.date32()
    # an array schema: a LIST of its elements' value and typed_value, at the top or in a field
    data = pa.table({"v": column([[1, 2], [3, "x"], {"a": 1}])})
    [(inferred, target)] = vi.infer(data, ["v"], {vi.MAX_ROWS: "1"}).values()
    assert target.field("typed_value").type.value_type.field("typed_value").type == pa.int64()
    shredded = shred_variant_column(data.column("v"), inferred, target)
    assert shredded.field("typed_value").to_pylist() == [
        [{"value": None, "typed_value": 1}, {"value": None, "typed_value": 2}],
        [{"value": None, "typed_value": 3}, {"value": b"\x05x", "typed_value": None}], None]
    assert read_back(shredded) == [[1, 2], [3, "x"], {"a": 1}]
    [(inferred, target)] = vi.infer(pa.table({"v": column([{"l": [1], "o": {"l": ["s"]}}])}),
                                    ["v"], {}).values()
    typed = target.field("typed_value").type
    assert typed.field("l").type.field("typed_value").type.value_type \
        .field("typed_value").type == pa.int64()


def test_only_the_first_max_infer_buffer_rows_are_sampled():
    data = pa.table({"v": column([{"a": 1}] * 3 + [{"b": "x"}] * 10)})
    [(inferred, _)] = vi.infer(data, ["v"], {vi.MAX_ROWS: "3"}).values()
    assert [f.field_name for f in inferred.schema.object_fields] == ["a"]


# ---------------------------------------------------------------------------- shredding

def test_untyped_fields_are_shredded_into_their_value_alone():
    # variantShreddingSchema(VARIANT) for a field: a struct of value only
    written = [{"a": 1, "b": "x"}, {"a": 1.5, "b": "y"}, {"b": None}, None, {}]
    data = pa.table({"v": column(written)})
    [(fields, target)] = vi.infer(data, ["v"], {}).values()
    a = target.field("typed_value").type.field("a").type
    assert [a.field(i).name for i in range(a.num_fields)] == ["value"]
    shredded = shred_variant_column(data.column("v"), fields, target)
    assert shredded.type == target
    assert read_back(shredded) == written


scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1),
                    st.floats(allow_nan=False), st.text(max_size=20))
KEYS = ["a", "b", "c", "é"]
anything = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=8)
flat_objects = st.dictionaries(st.sampled_from(KEYS), scalars, max_size=4)
objects = st.dictionaries(st.sampled_from(KEYS), anything, max_size=4)
# a field holding an integer in one row, a double or a string in another: untyped
mixed_objects = st.dictionaries(st.sampled_from(["a", "b"]), st.one_of(
    st.integers(-10, 10), st.floats(allow_nan=False), st.text(max_size=3)), min_size=1)
# mostly objects (the values inference shreds), sometimes a NULL or another root
variants = st.one_of(flat_objects, objects, mixed_objects, st.none(), anything)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.lists(variants, min_size=1, max_size=30),
                 st.lists(st.one_of(st.none(), st.integers(-2 ** 63, 2 ** 63 - 1)), min_size=1),
                 st.lists(st.one_of(st.none(), st.text(max_size=5), scalars), min_size=1)),
       st.integers(1, 40))
def test_any_column_shredded_as_inferred_reads_back_exactly(values, sample):
    data = pa.table({"v": column(values)})
    plan = vi.infer(data, ["v"], {vi.MAX_ROWS: str(sample)})
    if not plan:
        return
    [(fields, target)] = plan.values()
    assert variant_shredder.shreds(fields)  # vectorized: no value is refused
    shredded = shred_variant_column(data.column("v"), fields, target)
    assert shredded.type == target
    assert variant_shredder._same(read_back(shredded), values)


# ---------------------------------------------------------------------------- written files

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", VARIANT_ARROW),
                    ("w", VARIANT_ARROW)])


def rows(v, w) -> pa.Table:
    return records(pa.table({"id": pa.array(range(len(v)), pa.int64()), "v": column(v),
                             "w": column(w)}, schema=SCHEMA))


def data_files(warehouse):
    return [os.path.join(root, name) for root, _, names in os.walk(warehouse) for name in names
            if name.startswith("data-")]


def keyed_table(warehouse, name, **options):
    return create_table(warehouse, "db", name, SCHEMA, primary_keys=["id"],
                        options={"bucket": "1", **options})


def test_each_parquet_file_is_shredded_as_inferred_from_its_rows(warehouse):
    table = keyed_table(warehouse, "inferred", **{vi.INFER: "true"})
    # a: untyped (an integer and a double); l: an array of BIGINT
    v = [{"a": 1, "s": "x"}, {"a": 2.5, "s": "y"}, None, {"s": "z", "l": [1]}]
    w = [[1], None, "x", 2]
    write_kv_file(table, (), 0, rows(v, w))
    [path] = data_files(warehouse)
    stored = pq.read_table(path)
    typed = stored.schema.field("v").type.field("typed_value").type
    assert [typed.field(i).name for i in range(typed.num_fields)] == ["a", "l", "s"]
    assert stored.column("v").combine_chunks().field("typed_value").field("s") \
        .field("typed_value").to_pylist() == ["x", "y", None, "z"]
    assert "typed_value" not in [f.name for f in stored.schema.field("w").type]
    assert read_back(stored.column("v").combine_chunks()) == v
    # another file of the same table infers from its own rows
    write_kv_file(table, (), 0, rows([{"b": True}], [{"c": "q"}]), level=1)
    [second] = [p for p in data_files(warehouse) if p != path]
    typed = pq.read_schema(second).field("v").type.field("typed_value").type
    assert [typed.field(i).name for i in range(typed.num_fields)] == ["b"]
    assert "typed_value" in [f.name for f in pq.read_schema(second).field("w").type]


def test_a_configured_schema_wins_over_inference(warehouse):
    configured = json.dumps({"type": "ROW", "fields": [
        {"name": "v", "type": {"type": "ROW", "fields": [{"name": "s", "type": "STRING"}]}}]})
    table = keyed_table(warehouse, "configured", **{vi.INFER: "true",
                                                    "variant.shreddingSchema": configured})
    write_kv_file(table, (), 0, rows([{"a": 1, "s": "x"}], [{"b": 1}]))
    [path] = data_files(warehouse)
    schema = pq.read_schema(path)
    typed = schema.field("v").type.field("typed_value").type
    assert [typed.field(i).name for i in range(typed.num_fields)] == ["s"]
    assert "typed_value" not in [f.name for f in schema.field("w").type]


def test_other_formats_are_not_shredded(warehouse):
    table = keyed_table(warehouse, "orc", **{vi.INFER: "true", "file.format": "orc"})
    write_kv_file(table, (), 0, rows([{"a": 1}], [{"b": 1}]))
    [path] = data_files(warehouse)
    assert path.endswith(".orc")
