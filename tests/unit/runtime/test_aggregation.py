"""aggregation: seed 002/003 example, every function, retraction, overflow, types."""
import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError, merge_arrow, premerge_arrow

AGG = {"merge-engine": "aggregation"}


def agg_spec(rt, schema, **functions):
    opts = dict(AGG)
    for field, fn in functions.items():
        opts[f"fields.{field}.aggregate-function"] = fn
    return rt.spec(schema, **opts)


def test_seed_max_and_sum(rt):
    spec = rt.spec("product_id BIGINT, price DOUBLE, sales BIGINT", "product_id", **dict(AGG, **{
        "fields.price.aggregate-function": "max", "fields.sales.aggregate-function": "sum"}))
    assert rt.merge(spec, [(1, 23.0, 15)], [(1, 30.2, 20)]) == [(1, 30.2, 35)]
    assert rt.merge(spec, [(1, 23.0, 15), (1, 30.2, 20)]) == [(1, 30.2, 35)]


def test_default_is_last_non_null_value(rt):
    spec = rt.spec("k INT, v STRING", **AGG)
    assert rt.merge(spec, [(1, "a"), (1, None)]) == [(1, "a")]


def test_fields_default_aggregate_function(rt):
    spec = rt.spec("k INT, a INT, b INT", **dict(AGG, **{"fields.default-aggregate-function": "sum",
                                                        "fields.b.aggregate-function": "max"}))
    assert rt.merge(spec, [(1, 1, 1), (1, 2, 5), (1, 3, 2)]) == [(1, 6, 5)]


@pytest.mark.parametrize(
    "fn, values, expected",
    [
        ("sum", [1, None, 2], 3),
        ("sum", [None, None], None),
        ("product", [2, 3, None, 4], 24),
        ("count", [1, 1, 1], 3),
        ("max", [1, 5, None, 3], 5),
        ("min", [4, None, 2, 3], 2),
        ("first_value", [None, 2, 3], None),
        ("last_value", [1, 2, None], None),
        ("first_non_null_value", [None, 2, 3], 2),
        ("first_not_null_value", [None, 2, 3], 2),
        ("last_non_null_value", [1, 2, None], 2),
    ],
)
def test_int_functions(rt, fn, values, expected):
    spec = agg_spec(rt, "k INT, v INT", v=fn)
    assert rt.merge(spec, [(1, v) for v in values]) == [(1, expected)]


def test_bool_functions(rt):
    spec = agg_spec(rt, "k INT, a BOOLEAN, o BOOLEAN", a="bool_and", o="bool_or")
    assert rt.merge(spec, [(1, True, False), (1, None, None), (1, False, True)]) == [(1, False, True)]
    assert rt.merge(spec, [(1, True, False), (1, True, False)]) == [(1, True, False)]


def test_listagg_default_delimiter_skips_blank(rt):
    # FieldListaggAgg: null or blank inputs are skipped
    spec = agg_spec(rt, "k INT, s STRING", s="listagg")
    assert rt.merge(spec, [(1, "a"), (1, None), (1, " "), (1, "b")]) == [(1, "a,b")]


def test_listagg_delimiter_and_distinct(rt):
    spec = rt.spec("k INT, s STRING", **dict(AGG, **{
        "fields.s.aggregate-function": "listagg", "fields.s.list-agg-delimiter": ";",
        "fields.s.distinct": "true"}))
    assert rt.merge(spec, [(1, "a;b"), (1, "b;c"), (1, "a"), (1, "d;;c")]) == [(1, "a;b;c;d")]


def test_listagg_requires_string(rt):
    with pytest.raises(PaimonConfigError, match="listagg"):
        agg_spec(rt, "k INT, s VARCHAR(10)", s="listagg")


def test_collect_and_distinct(rt):
    spec = agg_spec(rt, "k INT, c ARRAY<INT>", c="collect")
    assert rt.merge(spec, [(1, [1, 2]), (1, None), (1, [2, 3])]) == [(1, [1, 2, 2, 3])]
    spec = rt.spec("k INT, c ARRAY<INT>", **dict(AGG, **{"fields.c.aggregate-function": "collect",
                                                        "fields.c.distinct": "true"}))
    assert rt.merge(spec, [(1, [1, 2]), (1, [2, 3])]) == [(1, [1, 2, 3])]


def test_merge_map(rt):
    spec = agg_spec(rt, "k INT, m MAP<STRING, INT>", m="merge_map")
    got = merge_arrow(spec, rt.records(spec, [(1, [("a", 1), ("b", 2)]), (1, [("b", 3)])]))
    assert dict(got.column("m")[0].as_py()) == {"a": 1, "b": 3}
    assert got.schema == spec.arrow_schema


def test_nested_update_with_key(rt):
    spec = rt.spec("k INT, items ARRAY<ROW<id INT, qty INT>>", **dict(AGG, **{
        "fields.items.aggregate-function": "nested_update", "fields.items.nested-key": "id"}))
    got = rt.merge(spec, [(1, [{"id": 1, "qty": 1}, {"id": 2, "qty": 1}])], [(1, [{"id": 1, "qty": 5}])])
    assert sorted(got[0][1], key=lambda r: r["id"]) == [{"id": 1, "qty": 5}, {"id": 2, "qty": 1}]


def test_nested_update_without_key_appends(rt):
    spec = agg_spec(rt, "k INT, items ARRAY<ROW<id INT, qty INT>>", items="nested_update")
    got = rt.merge(spec, [(1, [{"id": 1, "qty": 1}])], [(1, [{"id": 1, "qty": 1}])])
    assert got == [(1, [{"id": 1, "qty": 1}, {"id": 1, "qty": 1}])]


def test_nested_partial_update(rt):
    spec = rt.spec("k INT, items ARRAY<ROW<id INT, a INT, b INT>>", **dict(AGG, **{
        "fields.items.aggregate-function": "nested_partial_update", "fields.items.nested-key": "id"}))
    got = rt.merge(spec, [(1, [{"id": 1, "a": 1, "b": None}])], [(1, [{"id": 1, "a": None, "b": 2}])])
    assert got == [(1, [{"id": 1, "a": 1, "b": 2}])]


def test_sum_retraction(rt):
    spec = agg_spec(rt, "k INT, v BIGINT", v="sum")
    assert rt.merge(spec, [(1, 10)], [("-U", 1, 10), ("+U", 1, 7)], [("-D", 1, 2)]) == [(1, 5)]


def test_sum_retraction_keeps_row_with_zero(rt):
    # AggregateMergeFunction.getResult: the merged kind is INSERT unless remove-record-on-delete
    spec = agg_spec(rt, "k INT, v BIGINT", v="sum")
    assert rt.merge(spec, [(1, 10)], [("-D", 1, 10)]) == [(1, 0)]


def test_lone_retraction_stored_then_negated_later(rt):
    # ReducerMergeFunctionWrapper stores a lone -D as-is; the next merge retracts it (FieldSumAgg.retract)
    spec = agg_spec(rt, "k INT, v BIGINT", v="sum")
    assert rt.rows(premerge_arrow(spec, rt.records(spec, [("-D", 1, 5)]))) == [(1, 5, "-D", 1)]
    assert rt.merge(spec, [("-D", 1, 5)]) == []
    assert rt.merge(spec, [("-D", 1, 5)], [(1, 3)]) == [(1, -2)]


def test_retraction_unsupported_raises_naming_option(rt):
    spec = agg_spec(rt, "k INT, v INT", v="max")
    with pytest.raises(PaimonDataError, match="fields.v.ignore-retract"):
        rt.merge(spec, [(1, 1)], [("-U", 1, 1)])


def test_ignore_retract(rt):
    spec = rt.spec("k INT, v INT, s INT", **dict(AGG, **{
        "fields.v.aggregate-function": "max", "fields.v.ignore-retract": "true",
        "fields.s.aggregate-function": "sum"}))
    assert rt.merge(spec, [(1, 5, 5)], [("-U", 1, 5, 5), ("+U", 1, 3, 3)]) == [(1, 5, 3)]


def test_last_value_and_last_non_null_retraction(rt):
    # FieldLastValueAgg.retract -> null; FieldLastNonNullValueAgg.retract(non-null) -> null
    spec = agg_spec(rt, "k INT, a INT, b INT", a="last_value", b="last_non_null_value")
    assert rt.merge(spec, [(1, 1, 1)], [("-U", 1, None, None)]) == [(1, None, 1)]
    assert rt.merge(spec, [(1, 1, 1)], [("-U", 1, 1, 1)]) == [(1, None, None)]


def test_remove_record_on_delete(rt):
    spec = rt.spec("k INT, v BIGINT", **dict(AGG, **{"fields.v.aggregate-function": "sum",
                                                    "aggregation.remove-record-on-delete": "true"}))
    assert rt.merge(spec, [(1, 10)], [("-D", 1, 10)]) == []
    # AggregateMergeFunction.add: the -D re-initialises the row with its own values
    assert rt.merge(spec, [(1, 10), ("-D", 1, 10), (1, 3)]) == [(1, 13)]


@pytest.mark.parametrize("type_, big", [("TINYINT", 100), ("SMALLINT", 30000), ("INT", 2**31 - 1), ("BIGINT", 2**63 - 1)])
def test_integer_overflow_raises(rt, type_, big):
    spec = agg_spec(rt, f"k INT, v {type_}", v="sum")
    with pytest.raises(PaimonDataError, match="overflow"):
        rt.merge(spec, [(1, big), (1, big)])


def test_intermediate_overflow_raises(rt):
    # FieldSumAgg uses Math.addExact at every step: MAX + 1 overflows even if a later -1 would fix it
    spec = agg_spec(rt, "k INT, v INT", v="sum")
    with pytest.raises(PaimonDataError):
        rt.merge(spec, [(1, 2**31 - 1), (1, 1), (1, -1)])
    assert rt.merge(spec, [(1, 2**31 - 1), (1, -1), (1, 1)]) == [(1, 2**31 - 1)]


def test_product_overflow_raises(rt):
    spec = agg_spec(rt, "k INT, v INT", v="product")
    with pytest.raises(PaimonDataError, match="overflow"):
        rt.merge(spec, [(1, 2**20), (1, 2**20)])


def test_decimal_sum_keeps_scale(rt):
    spec = agg_spec(rt, "k INT, d DECIMAL(10, 2)", d="sum")
    got = merge_arrow(spec, rt.records(spec, [(1, Decimal("1.25")), (1, Decimal("2.10"))]))
    assert got.schema.field("d").type == pa.decimal128(10, 2)
    assert rt.rows(got) == [(1, Decimal("3.35"))]


def test_decimal_product_rounds_half_up(rt):
    # FieldProductAgg: BigDecimal multiply then Decimal.fromBigDecimal(scale) -> HALF_UP
    spec = agg_spec(rt, "k INT, d DECIMAL(10, 2)", d="product")
    got = rt.merge(spec, [(1, Decimal("1.25")), (1, Decimal("1.30")), (1, Decimal("1.00"))])
    assert got == [(1, Decimal("1.63"))]


def test_float_stays_float32(rt):
    spec = agg_spec(rt, "k INT, f FLOAT", f="sum")
    got = merge_arrow(spec, rt.records(spec, [(1, 1.5), (1, 2.25)]))
    assert got.schema.field("f").type == pa.float32()
    assert rt.rows(got) == [(1, 3.75)]


def test_max_on_strings_dates_timestamps(rt):
    spec = agg_spec(rt, "k INT, s STRING, d DATE, t TIMESTAMP(6)", s="max", d="min", t="max")
    d1, d2 = dt.date(2024, 1, 1), dt.date(2023, 1, 1)
    t1, t2 = dt.datetime(2024, 1, 1, 1), dt.datetime(2024, 1, 1, 2)
    assert rt.merge(spec, [(1, "b", d1, t1), (1, "a", d2, t2)]) == [(1, "b", d2, t2)]


@pytest.mark.parametrize("fn, type_", [("sum", "STRING"), ("count", "SMALLINT"), ("max", "ARRAY<INT>"),
                                       ("bool_and", "INT"), ("collect", "INT"), ("merge_map", "ARRAY<INT>")])
def test_function_on_unsupported_type(rt, fn, type_):
    with pytest.raises(PaimonConfigError, match=f"fields.v.aggregate-function"):
        agg_spec(rt, f"k INT, v {type_}", v=fn)


def test_unknown_function(rt):
    with pytest.raises(PaimonConfigError, match="Unknown aggregate function 'avg'"):
        agg_spec(rt, "k INT, v INT", v="avg")


def test_merged_kind_and_last_sequence(rt):
    spec = agg_spec(rt, "k INT, v INT", v="sum")
    out = premerge_arrow(spec, rt.records(spec, [("+U", 1, 1), (1, 2), ("+U", 2, 5)]))
    assert rt.rows(out) == [(1, 3, "+I", 2), (2, 5, "+U", 3)]
