"""format/variant_shredder.py against pypaimon 2.1's own shredder and reader, over generated
variants (hypothesis): where every shredded field holds its field's type, both shredders give
the same columns, byte for byte; for any variant, pypaimon's reader puts the original variant
back together from ours, as Paimon's Java writer leaves a value of another type (a variant
NULL included) in the field's untyped bytes (VariantShreddingWriter.castShredded)."""
import datetime
import decimal
import json
import math

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypaimon.data.generic_variant import GenericVariant
from pypaimon.data.variant_shredding import (assemble_shredded_column, build_variant_schema,
                                             parse_shredding_schema_option,
                                             shred_variant_column,
                                             shredding_schema_to_arrow_type)

from dbt.adapters.paimon.format import variant_shredder

KEYS = ["a", "b", "c", "é", "a_long_key_name"]
# a field type of the option, and values of exactly that type (the Variant encoding picks the
# narrowest integer width, so INT and TINYINT fields meet wider values too)
TYPES = {
    "BIGINT": st.integers(-2 ** 63, 2 ** 63 - 1),
    "INT": st.integers(-2 ** 31, 2 ** 31 - 1),
    "TINYINT": st.integers(-128, 127),
    "BOOLEAN": st.booleans(),
    "DOUBLE": st.floats(allow_nan=False),
    "STRING": st.text(max_size=80),
    # an integer or a decimal held exactly at the field's scale (Paimon's writer changes a
    # number's scale: allowNumericScaleChanges)
    "DECIMAL(18, 2)": st.one_of(st.integers(-10 ** 15, 10 ** 15), st.decimals(
        -10 ** 15, 10 ** 15, places=2, allow_nan=False, allow_infinity=False)),
    "DATE": st.dates(),
    "TIMESTAMP(6)": st.datetimes(),
    "TIMESTAMP(6) WITH LOCAL TIME ZONE": st.datetimes(timezones=st.just(datetime.timezone.utc)),
    "DECIMAL(38, 4)": st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1), st.decimals(
        -10 ** 15, 10 ** 15, places=3, allow_nan=False, allow_infinity=False)),
}
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1),
                    st.floats(allow_nan=False), st.text(max_size=80),
                    st.decimals(-10 ** 12, 10 ** 12, places=2, allow_nan=False,
                                allow_infinity=False))
anything = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=8)
schemas = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(sorted(TYPES)), min_size=1,
                          max_size=4)


def as_type(kind):
    """A field type of the option: a type name, or a nested object's ROW of its fields."""
    if isinstance(kind, str):
        return kind
    return {"type": "ROW", "fields": [{"id": i, "name": name, "type": as_type(sub)}
                                      for i, (name, sub) in enumerate(kind.items())]}


def option(schema):
    fields = [{"id": i, "name": name, "type": as_type(kind)} for i, (name, kind) in
              enumerate(schema.items())]
    parsed = parse_shredding_schema_option(json.dumps({"type": "ROW", "fields": [
        {"id": 0, "name": "v", "type": {"type": "ROW", "fields": fields}}]}))["v"]
    return parsed, shredding_schema_to_arrow_type(parsed)


def column(values):
    return GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(v) for v in values])


def reassembled(shredded):
    back = assemble_shredded_column(shredded, build_variant_schema(shredded.type))
    return [None if v is None else GenericVariant.from_arrow_struct(v).to_python()
            for v in back.to_pylist()]


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, decimal.Decimal)) and isinstance(b, (int, decimal.Decimal)) \
            and decimal.Decimal in (type(a), type(b)) and bool not in (type(a), type(b)):
        return a == b  # a number whose scale changed (allowNumericScaleChanges)
    return a == b and type(a) is type(b)


# objects nested in objects, their leaves of the types above
nested_schemas = st.dictionaries(st.sampled_from(KEYS), st.recursive(
    st.sampled_from(sorted(TYPES)),
    lambda inner: st.dictionaries(st.sampled_from(KEYS), inner, min_size=1, max_size=3),
    max_leaves=6), min_size=1, max_size=3)


def matching_value(draw, kind):
    """A value of ``kind``: a leaf type's, or an object holding some of its fields' and other
    keys' values."""
    if isinstance(kind, str):
        return draw(TYPES[kind])
    value = draw(st.dictionaries(st.sampled_from([k for k in KEYS if k not in kind]),
                                 anything, max_size=2))
    for name, sub in kind.items():
        if draw(st.booleans()):
            value[name] = matching_value(draw, sub)
    return value


@st.composite
def matching_nested_rows(draw):
    schema = draw(nested_schemas)
    return schema, [None if draw(st.integers(0, 5)) == 0 else matching_value(draw, schema)
                    for _ in range(draw(st.integers(0, 10)))]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matching_nested_rows())
def test_nested_objects_the_same_columns_as_pypaimons_shredder(case):
    assert_shredded_as_pypaimon_shreds(*case)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested_schemas, st.lists(st.one_of(st.none(), anything,
                                           st.dictionaries(st.sampled_from(KEYS), anything)),
                                 max_size=12))
def test_nested_objects_any_variant_reads_back_whole(schema, rows):
    fields, target = option(schema)
    back = reassembled(variant_shredder.shred(column(rows), fields, target))
    assert len(back) == len(rows) and all(same(b, r) for b, r in zip(back, rows)), (back, rows)


@st.composite
def matching_rows(draw):
    """A schema and objects whose shredded fields, when present, hold exactly their type."""
    schema = draw(schemas)
    rows = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()) and draw(st.booleans()):
            rows.append(None)
            continue
        row = draw(st.dictionaries(st.sampled_from([k for k in KEYS if k not in schema]),
                                   anything, max_size=3))
        for name, kind in schema.items():
            if draw(st.booleans()):
                row[name] = draw(TYPES[kind])
        rows.append(row)
    return schema, rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(matching_rows())
def test_the_same_columns_as_pypaimons_shredder(case):
    assert_shredded_as_pypaimon_shreds(*case)


def assert_shredded_as_pypaimon_shreds(schema, rows):
    fields, target = option(schema)
    assert variant_shredder.shreds(fields)
    variants = column(rows)
    ours = variant_shredder.shred(variants, fields, target)
    assert ours.type == target
    assert ours.to_pylist() == pypaimon_shredder(variants, fields, target).to_pylist()


def pypaimon_shredder(variants, fields, target):
    # pypaimon's own shredder, not the one format/pypaimon_compat.py installs in its place
    own = getattr(shred_variant_column, "pypaimon", shred_variant_column)
    return own(variants, fields, target)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(st.one_of(st.none(), anything,
                                    st.dictionaries(st.sampled_from(KEYS), anything)),
                          max_size=12))
def test_any_variant_reads_back_whole(schema, rows):
    fields, target = option(schema)
    shredded = variant_shredder.shred(column(rows), fields, target)
    back = reassembled(shredded)
    assert len(back) == len(rows) and all(same(b, r) for b, r in zip(back, rows)), (back, rows)


def test_a_value_of_another_type_stays_in_the_fields_untyped_bytes():
    fields, target = option({"a": "BIGINT", "b": "TINYINT"})
    shredded = variant_shredder.shred(column([{"a": 1.5, "b": 300}, {"a": None, "b": -3}]),
                                      fields, target)
    typed = shredded.field("typed_value")
    assert typed.field("a").field("typed_value").to_pylist() == [None, None]
    assert typed.field("b").field("typed_value").to_pylist() == [None, -3]
    assert [v is not None for v in typed.field("a").field("value").to_pylist()] == [True, True]
    assert reassembled(shredded) == [{"a": 1.5, "b": 300}, {"a": None, "b": -3}]


def test_a_decimal_of_integral_value_is_typed_in_an_integer_field():
    # Paimon's writer changes a number's scale (allowNumericScaleChanges): 2.00 -> 2
    fields, target = option({"a": "BIGINT", "b": "TINYINT"})
    written = [{"a": decimal.Decimal("2.00"), "b": decimal.Decimal("300")},
               {"a": decimal.Decimal("2.50"), "b": decimal.Decimal("-1.0")}]
    shredded = variant_shredder.shred(column(written), fields, target)
    typed = shredded.field("typed_value")
    assert typed.field("a").field("typed_value").to_pylist() == [2, None]
    assert typed.field("b").field("typed_value").to_pylist() == [None, -1]
    back = reassembled(shredded)
    assert all(same(b, r) for b, r in zip(back, written)), back


def test_numbers_a_decimal_field_cannot_hold_exactly_stay_in_its_untyped_bytes():
    fields, target = option({"a": "DECIMAL(18, 2)"})
    written = [{"a": 1}, {"a": decimal.Decimal("0.125")}, {"a": 10 ** 16}, {"a": 1.5},
               {"a": decimal.Decimal("12345678901234567890.5")}, {"a": decimal.Decimal("-2.5")}]
    shredded = variant_shredder.shred(column(written), fields, target)
    assert shredded.field("typed_value").field("a").field("typed_value").to_pylist() == [
        decimal.Decimal("1.00"), None, None, None, None, decimal.Decimal("-2.50")]
    back = reassembled(shredded)
    assert all(same(b, r) for b, r in zip(back, written)), back
    # a 16-byte decimal whose unscaled value needs more than 8 bytes is not typed (Paimon's
    # writer would type it when it fits): it reads back all the same
    wide = [{"a": decimal.Decimal("1234567890123456789.12")}]
    _, wide_target = option({"a": "DECIMAL(38, 2)"})
    shredded = variant_shredder.shred(column(wide), *option({"a": "DECIMAL(38, 2)"}))
    assert shredded.type == wide_target
    assert shredded.field("typed_value").field("a").field("typed_value").to_pylist() == [None]
    assert reassembled(shredded) == wide


@pytest.mark.parametrize("schema, handled", [
    ({"type": "ROW", "fields": [{"name": "a", "type": "BIGINT"}]}, True),
    ({"type": "ROW", "fields": [{"name": "a", "type": "DECIMAL(10, 2)"}]}, True),
    ({"type": "ROW", "fields": [{"name": "a", "type": "DATE"}]}, True),
    ({"type": "ROW", "fields": [{"name": "a", "type": {"type": "ROW", "fields": [
        {"name": "b", "type": "INT"}]}}]}, True),
    ({"type": "ROW", "fields": [{"name": "a", "type": "TIMESTAMP(3)"}]}, False),
    ({"type": "ROW", "fields": [{"name": "a", "type": {"type": "ARRAY", "element": "INT"}}]},
     False),
    ({"type": "ROW", "fields": [{"name": "a", "type": {"type": "ROW", "fields": [
        {"name": "b", "type": {"type": "ARRAY", "element": "INT"}}]}}]}, False),
])
def test_schemas_it_does_not_shred_keep_pypaimons_shredder(schema, handled):
    fields = parse_shredding_schema_option(json.dumps(
        {"type": "ROW", "fields": [{"name": "v", "type": schema}]}))["v"]
    assert variant_shredder.shreds(fields) is handled


def test_wide_objects_keep_their_widths_right():
    """300 fields (a 4-byte count, 2-byte key ids) and 70,000 bytes of data (3-byte offsets)
    in the untyped object, beside a shredded field; as pypaimon's shredder writes them."""
    wide = {f"k{i:03}": "x" * (i % 7) for i in range(300)}
    rows = [{**wide, "a": 5}, {"a": 6, "big": "y" * 70000}, {"k000": 1}]
    fields, target = option({"a": "BIGINT"})
    ours = variant_shredder.shred(column(rows), fields, target)
    assert ours.to_pylist() == pypaimon_shredder(column(rows), fields, target).to_pylist()
    assert reassembled(ours) == rows
