"""Corner cases where the runtime follows Apache Paimon's Java merge code exactly; each test
names the Java source (paimon-core/src/main/java/org/apache/paimon/mergetree/compact/...)."""
import pytest

from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

AGG = {"merge-engine": "aggregation"}


# ---- options on primary keys -------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["deduplicate", "first-row", "aggregation", "partial-update"])
def test_options_on_primary_keys_are_ignored_in_every_engine(rt, engine):
    """AggregateMergeFunction.getAggFuncName / PartialUpdateMergeFunction.getAggFuncName return
    ``primary-key`` for a key before they read its options: a key never aggregates."""
    s = rt.spec("k STRING, j INT, v INT", "k,j", **{
        "merge-engine": engine, "fields.k.aggregate-function": "sum", "fields.j.aggregate-function": "listagg",
        "fields.k.ignore-retract": "true", "fields.k.distinct": "true", "fields.j.nested-key": "x",
        "fields.k.list-agg-delimiter": ";",
    })
    assert rt.merge(s, [("a", 1, 5), ("a", 1, 7), ("b", 2, 1)]) in (
        [("a", 1, 5), ("b", 2, 1)],  # first-row
        [("a", 1, 7), ("b", 2, 1)],
    )


def test_default_aggregate_function_does_not_reach_keys(rt):
    s = rt.spec("k STRING, v INT", **dict(AGG, **{"fields.default-aggregate-function": "sum"}))
    assert rt.merge(s, [("a", 1), ("a", 2), ("a", None)]) == [("a", 3)]


def test_unknown_function_on_a_key_is_still_an_error(rt):
    """SchemaValidation.validateMergeFunctionFactory discovers every field's function by name."""
    with pytest.raises(PaimonConfigError, match="Unknown aggregate function 'summ'"):
        rt.spec("k INT, v INT", **dict(AGG, **{"fields.k.aggregate-function": "summ"}))


def test_key_ignore_retract_still_conflicts_with_remove_record_on_delete(rt):
    """FieldAggregatorFactory.create checks the conflict for every field, keys included."""
    with pytest.raises(PaimonConfigError, match="conflicting"):
        rt.spec("k INT, v INT", **dict(AGG, **{"fields.k.ignore-retract": "true",
                                                "aggregation.remove-record-on-delete": "true"}))


def test_primary_key_function_on_a_value_field(rt):
    """FieldPrimaryKeyAgg: agg and retract both return the input (NULL included)."""
    s = rt.spec("k INT, v INT", **dict(AGG, **{"fields.v.aggregate-function": "primary-key"}))
    assert rt.merge(s, [(1, 1), (1, None)], [(2, 1), ("-U", 2, 9)]) == [(1, None), (2, 9)]


def test_ignore_retract_on_an_aggregation_sequence_field(rt):
    """AggregateMergeFunction gives sequence fields last_value, which FieldAggregatorFactory wraps in
    FieldIgnoreRetractAgg when the field has ignore-retract: a retraction keeps the value."""
    options = dict(AGG, **{"sequence.field": "t", "fields.v.aggregate-function": "sum"})
    plain = rt.spec("k INT, t INT, v INT", **options)
    kept = rt.spec("k INT, t INT, v INT", **dict(options, **{"fields.t.ignore-retract": "true"}))
    commit = [(1, 1, 5), ("-U", 1, 2, 1)]
    assert rt.merge(plain, commit) == [(1, None, 4)]
    assert rt.merge(kept, commit) == [(1, 1, 4)]


# ---- max / min on BOOLEAN ----------------------------------------------------------------------
def test_max_min_on_boolean(rt):
    """FieldMaxAgg/FieldMinAgg compare with InternalRowUtils.compare: Boolean.compare (false < true);
    a NULL input or accumulator is skipped."""
    s = rt.spec("k INT, hi BOOLEAN, lo BOOLEAN", **dict(AGG, **{
        "fields.hi.aggregate-function": "max", "fields.lo.aggregate-function": "min"}))
    commit = [(1, False, True), (1, None, None), (1, True, False), (2, None, True), (2, False, None),
              (3, None, None), (3, None, None)]
    assert rt.merge(s, commit) == [(1, True, False), (2, False, True), (3, None, None)]


# ---- product retraction ------------------------------------------------------------------------
def _product(rt, type_):
    return rt.spec(f"k INT, v {type_}", **dict(AGG, **{"fields.v.aggregate-function": "product"}))


def test_product_retraction_on_a_null_accumulator_stays_null(rt):
    """FieldProductAgg.retract: ``accumulator == null`` returns the accumulator (sum would negate)."""
    s = _product(rt, "INT")
    assert rt.merge(s, [(1, 2), ("-D", 1, 5)], [("-D", 2, 5), (2, 3)], [(3, 4), ("-U", 3, None)]) == [
        (1, 0), (2, 3), (3, 4)]


def test_integer_product_retraction_divides_step_by_step(rt):
    """FieldProductAgg.retract truncates at every step (Java integer division): 6 / 4 = 1, then * 4."""
    s = _product(rt, "INT")
    assert rt.merge(s, [(1, 6), ("-U", 1, 4), (1, 4), (2, -7), ("-D", 2, 2), (3, 7), ("-U", 3, 2), (3, 3)]) == [
        (1, 4), (2, -3), (3, 9)]
    double = _product(rt, "DOUBLE")
    assert rt.merge(double, [(1, 6.0), ("-U", 1, 4.0), (1, 4.0)]) == [(1, 6.0)]


@pytest.mark.parametrize("type_, commit, message", [
    ("INT", [(1, 5), ("-U", 1, 0)], "Division by zero"),
    ("TINYINT", [(1, 100), ("-U", 1, 1), (1, 2)], "tinyint overflow"),
    ("INT", [(1, -(2**31)), ("-U", 1, -1)], "int overflow"),
    ("BIGINT", [(1, 2**62), ("-U", 1, 1), (1, 2)], "bigint overflow"),
])
def test_product_retraction_raises_where_java_does(rt, type_, commit, message):
    """FieldProductAgg: multiplyExact*/divideExact* raise ArithmeticException, as does x / 0."""
    with pytest.raises(PaimonDataError, match=message):
        rt.merge(_product(rt, type_), commit)


def test_product_retraction_inside_a_sequence_group(rt):
    s = rt.spec("k INT, g INT, v INT", **{"merge-engine": "partial-update", "fields.g.sequence-group": "v",
                                          "fields.v.aggregate-function": "product"})
    assert rt.merge(s, [(1, 1, 6), ("-U", 1, 2, 4), (1, 3, 4)]) == [(1, 3, 4)]
