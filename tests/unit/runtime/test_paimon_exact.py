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


# ---- listagg -----------------------------------------------------------------------------------
def test_listagg_skips_blank_inputs_and_all_blank_stays_null(rt):
    """FieldListaggAgg.agg: a NULL or blank input returns the accumulator; a NULL or blank
    accumulator takes the input."""
    s = rt.spec("k INT, v STRING", **dict(AGG, **{"fields.v.aggregate-function": "listagg"}))
    assert rt.merge(s, [(1, ""), (1, "a"), (1, " "), (1, None), (1, "b"), (2, " "), (2, ""), (3, "")]) == [
        (1, "a,b"), (2, None), (3, "")]  # key 3's only record is stored as written


def test_listagg_distinct_with_a_custom_delimiter(rt):
    """FieldListaggAgg with distinct: the accumulator is kept whole (its own repeats stay), an
    input adds only its non-blank tokens not seen yet (splitByWholeSeparatorPreserveAllTokens)."""
    s = rt.spec("k INT, v STRING", **dict(AGG, **{
        "fields.v.aggregate-function": "listagg", "fields.v.distinct": "true", "fields.v.list-agg-delimiter": "||"}))
    assert rt.merge(s, [(1, "a||a"), (1, "b|| ||a"), (1, "c||b||d"), (1, "  "), (2, "x"), (2, "x")]) == [
        (1, "a||a||b||c||d"), (2, "x")]


def test_listagg_distinct_inside_a_sequence_group(rt):
    """aggReversed = agg(x, acc): an older input becomes the head and the accumulator's tokens follow."""
    s = rt.spec("k INT, g INT, v STRING", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "listagg", "fields.v.distinct": "true"})
    assert rt.merge(s, [(1, 5, "a,b"), (1, 3, "c,a"), (1, 6, "d,b")]) == [(1, 6, "c,a,b,d")]


# ---- collect / merge_map / nested_update retraction --------------------------------------------
def test_collect_retraction_removes_one_occurrence_per_element(rt):
    """FieldCollectAgg.retract: each retracted element removes the first equal element still in
    the accumulator; a NULL accumulator stays NULL; every other element keeps its place."""
    s = rt.spec("k INT, v ARRAY<INT>", **dict(AGG, **{"fields.v.aggregate-function": "collect"}))
    assert rt.merge(s, [(1, [1, 2, 1, 3]), ("-U", 1, [1, 4]), (1, [1]), ("-D", 1, [1, 1]),
                        ("-D", 2, [1]), (2, [5]), (3, [7]), ("-U", 3, [7])]) == [
        (1, [2, 3]), (2, [5]), (3, [])]


def test_distinct_collect_retraction(rt):
    s = rt.spec("k INT, v ARRAY<STRING>", **dict(AGG, **{
        "fields.v.aggregate-function": "collect", "fields.v.distinct": "true"}))
    [(k, v)] = rt.merge(s, [(1, ["a", "b", "a"]), ("-U", 1, ["a"]), (1, ["c", "b"]), ("-U", 1, ["c"]), (1, ["a"])])
    assert sorted(v) == ["a", "b"]  # a HashSet in Paimon: the order is unspecified


def test_merge_map_retraction_removes_the_keys(rt):
    """FieldMergeMapAgg.retract removes every retracted key, whatever its value."""
    s = rt.spec("k INT, v MAP<STRING, INT>", **dict(AGG, **{"fields.v.aggregate-function": "merge_map"}))
    [(k, v)] = rt.merge(s, [(1, [("a", 1), ("b", 2)]), ("-D", 1, [("a", 9)]), (1, [("c", 3), ("b", 4)])])
    assert sorted(v) == [("b", 4), ("c", 3)]


def test_nested_update_retraction_by_nested_key_and_by_whole_row(rt):
    """FieldNestedUpdateAgg.retract: with a nested key the retracted keys go; without one every row
    equal to a retracted row goes (removeIf)."""
    options = dict(AGG, **{"fields.keyed.aggregate-function": "nested_update", "fields.keyed.nested-key": "id",
                           "fields.rows.aggregate-function": "nested_update"})
    s = rt.spec("k INT, keyed ARRAY<ROW<id INT, x STRING>>, rows ARRAY<ROW<id INT, x STRING>>", **options)
    a1, a2, b1 = {"id": 1, "x": "a"}, {"id": 1, "x": "z"}, {"id": 2, "x": "b"}
    [(k, keyed, rows)] = rt.merge(s, [(1, [a1, b1], [a1, b1, a1]), ("-U", 1, [a2], [a1]), (1, None, [a1])])
    assert keyed == [b1] and rows == [b1, a1]


def test_nested_partial_update_retraction_raises(rt):
    """FieldNestedPartialUpdateAgg does not override FieldAggregator.retract, which throws."""
    s = rt.spec("k INT, v ARRAY<ROW<id INT, x INT>>", **dict(AGG, **{
        "fields.v.aggregate-function": "nested_partial_update", "fields.v.nested-key": "id"}))
    with pytest.raises(PaimonDataError, match="ignore-retract"):
        rt.merge(s, [(1, [{"id": 1, "x": 1}]), ("-U", 1, [{"id": 1, "x": 1}])])


# ---- nested_update options ---------------------------------------------------------------------
def _nested(rt, **options):
    return rt.spec("k INT, v ARRAY<ROW<id INT, s INT, x STRING>>", **dict(AGG, **{
        "fields.v.aggregate-function": "nested_update", **options}))


def test_nested_sequence_field_keeps_the_greatest_sequence(rt):
    """FieldNestedUpdateAgg.addNestedRows: an existing nested row is replaced only when
    compareSequence(row, existing) >= 0 (NULL first)."""
    s = _nested(rt, **{"fields.v.nested-key": "id", "fields.v.nested-sequence-field": "s"})
    [(k, v)] = rt.merge(s, [(1, [{"id": 1, "s": 5, "x": "a"}, {"id": 2, "s": None, "x": "b"}]),
                            (1, [{"id": 1, "s": 4, "x": "old"}, {"id": 2, "s": 1, "x": "c"}]),
                            (1, [{"id": 1, "s": 5, "x": "tie"}])])
    assert sorted(v, key=lambda r: r["id"]) == [{"id": 1, "s": 5, "x": "tie"}, {"id": 2, "s": 1, "x": "c"}]


@pytest.mark.parametrize("strategy, expected", [
    ("merge", [{"id": 1, "s": 1, "x": "a"}, {"id": None, "s": 3, "x": "c"}]),
    ("ignore", [{"id": 1, "s": 1, "x": "a"}]),
])
def test_nested_key_null_strategy(rt, strategy, expected):
    """applyNestedKeyNullStrategy: MERGE keeps rows with a NULL key (one per key), IGNORE drops them."""
    s = _nested(rt, **{"fields.v.nested-key": "id", "fields.v.nested-key-null-strategy": strategy})
    [(k, v)] = rt.merge(s, [(1, [{"id": 1, "s": 1, "x": "a"}, {"id": None, "s": 2, "x": "b"}]),
                            (1, [{"id": None, "s": 3, "x": "c"}])])
    assert sorted(v, key=lambda r: (r["id"] is None, r["id"] or 0)) == expected


def test_nested_key_null_strategy_error(rt):
    s = _nested(rt, **{"fields.v.nested-key": "id", "fields.v.nested-key-null-strategy": "error"})
    with pytest.raises(PaimonDataError, match="Nested key"):
        rt.merge(s, [(1, [{"id": None, "s": 1, "x": "a"}]), (1, [{"id": 2, "s": 1, "x": "b"}])])


def test_nested_key_null_strategy_needs_a_nested_key(rt):
    with pytest.raises(PaimonConfigError, match="requires 'fields.v.nested-key'"):
        _nested(rt, **{"fields.v.nested-key-null-strategy": "ignore"})


def test_count_limit(rt):
    """count-limit: without a key the first rows up to the limit; with a key, a new key enters
    only while fewer keys than the limit are stored (existing keys still update)."""
    rows = [{"id": i, "s": i, "x": str(i)} for i in range(4)]
    plain = _nested(rt, **{"fields.v.count-limit": "3"})
    assert rt.merge(plain, [(1, rows[:2]), (1, rows[2:])]) == [(1, rows[:3])]
    keyed = _nested(rt, **{"fields.v.nested-key": "id", "fields.v.count-limit": "2"})
    update = {"id": 0, "s": 9, "x": "new"}
    [(k, v)] = rt.merge(keyed, [(1, rows[:1]), (1, rows[1:]), (1, [update])])
    assert sorted(v, key=lambda r: r["id"]) == [update, rows[1]]


# ---- first_non_null_value in a sequence group --------------------------------------------------
def test_first_non_null_value_inside_a_sequence_group(rt):
    """FieldFirstNonNullValueAgg keeps an ``initialized`` flag; aggReversed = agg(x, acc): once
    initialized, an older record's value replaces the accumulator -- NULL included."""
    s = rt.spec("k INT, g INT, v INT", **{"merge-engine": "partial-update", "fields.g.sequence-group": "v",
                                          "fields.v.aggregate-function": "first_non_null_value"})
    assert rt.merge(s, [(1, 5, None), (1, 6, 7), (1, 8, 9), (2, 5, 1), (2, 3, 2), (2, 2, None), (3, 5, None),
                        (3, 4, 2), (3, 3, 3)]) == [(1, 8, 7), (2, 5, None), (3, 5, 2)]


# ---- merge_map_with_keytime --------------------------------------------------------------------
def test_merge_map_with_keytime(rt):
    """FieldAggregatorTest.testFieldMergeMapWithKeyTimeAgg, then FieldMergeMapWithKeyTimeAgg's
    other rules: a NULL row removes its key, a NULL timestamp is skipped, the first input is taken
    as it is (agg(null, x) = x)."""
    s = rt.spec("k INT, v MAP<STRING, ROW<actual_value STRING, dbsync_ts STRING>>", **dict(AGG, **{
        "fields.v.aggregate-function": "merge_map_with_keytime"}))

    def entry(key, value, ts):
        return key, {"actual_value": value, "dbsync_ts": ts}

    m1 = [entry("key1", "A", "17682882903686900100"), entry("key2", "B", "17682882903686900100")]
    m2 = [entry("key1", "A1", "17682882903686900200"), entry("key3", "C", "17682882903686900200")]
    m3 = [entry("key2", "B2", "17682882903686900050")]
    m4 = [("key1", None), entry("key2", "Z", None), entry("key4", "D", "1")]
    raw = [entry("a", "x", None), ("b", None)]
    merged = {k: sorted(v) for k, v in rt.merge(s, [(1, m1), (1, m2), (1, m3), (2, m1), (2, m4),
                                                    (3, raw), (3, [entry("c", "y", "5")])])}
    assert merged == {1: sorted([m2[0], m1[1], m2[1]]), 2: sorted([m1[1], m4[2]]),
                      3: sorted(raw + [entry("c", "y", "5")], key=lambda e: e[0])}


def test_merge_map_with_keytime_retraction_raises(rt):
    s = rt.spec("k INT, v MAP<STRING, ROW<x STRING, ts STRING>>", **dict(AGG, **{
        "fields.v.aggregate-function": "merge_map_with_keytime", "fields.v.ts-field": "ts"}))
    with pytest.raises(PaimonDataError, match="ignore-retract"):
        rt.merge(s, [(1, [("a", {"x": "1", "ts": "1"})]), ("-D", 1, [("a", {"x": "1", "ts": "1"})])])


def test_merge_map_with_keytime_inside_a_sequence_group(rt):
    """FieldAggregator.aggReversed(acc, x) = agg(x, acc): an older record's map is the base and the
    stored entries merge into it by timestamp; the first input is taken as written."""
    s = rt.spec("k INT, g INT, v MAP<STRING, ROW<x STRING, ts STRING>>", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "merge_map_with_keytime"})

    def entry(key, value, ts):
        return key, {"x": value, "ts": ts}

    merged = rt.merge(s, [(1, 5, [entry("a", "new", "t2")]), (1, 3, [entry("a", "old", "t3"), entry("b", "o", "t1")]),
                          (2, 5, [entry("a", "new", "t5")]), (2, 3, [entry("a", "old", "t3")]),
                          (3, 3, [entry("a", "x", None)]), (3, 1, [("a", None)]), (3, 4, [entry("b", "y", "1")])])
    assert {k: (g, sorted(v)) for k, g, v in merged} == {
        1: (5, [entry("a", "old", "t3"), entry("b", "o", "t1")]),
        2: (5, [entry("a", "new", "t5")]),
        3: (4, [("a", None), entry("b", "y", "1")]),  # the older NULL row is the base; a NULL ts is skipped
    }


# ---- DECIMAL product retraction ----------------------------------------------------------------
def _decimal_product(rt, type_text="DECIMAL(10, 2)"):
    return rt.spec(f"k INT, d {type_text}", **dict(AGG, **{"fields.d.aggregate-function": "product"}))


def test_decimal_product_retraction_divides_exactly_then_rounds_half_up(rt):
    """FieldProductAgg.retract on DECIMAL: BigDecimal.divide (exact), then Decimal.fromBigDecimal
    rounds HALF_UP to the scale; a NULL accumulator stays NULL and the next input starts again."""
    from decimal import Decimal as D

    s = _decimal_product(rt)
    assert rt.merge(s, [(1, D("2.00")), (1, D("3.00")), ("-D", 1, D("2.00"))],
                    [(2, D("0.01")), ("-U", 2, D("0.08"))],
                    [(3, None), ("-D", 3, D("2.00")), (3, D("5.00"))]) == [
        (1, D("3.00")), (2, D("0.13")), (3, D("5.00"))]


def test_decimal_product_overflow_gives_null_and_restarts(rt):
    """Decimal.fromBigDecimal returns NULL past the precision; agg(null, x) = x afterwards."""
    from decimal import Decimal as D

    s = _decimal_product(rt, "DECIMAL(4, 2)")
    assert rt.merge(s, [(1, D("50.00")), (1, D("30.00")), ("-D", 1, D("2.00")), (1, D("3.00"))]) == [
        (1, D("3.00"))]


def test_decimal_product_retraction_without_exact_quotient_raises(rt):
    """BigDecimal.divide raises ArithmeticException for a non-terminating quotient or a 0 divisor."""
    from decimal import Decimal as D

    s = _decimal_product(rt)
    with pytest.raises(PaimonDataError, match="Non-terminating decimal expansion"):
        rt.merge(s, [(1, D("3.00")), ("-D", 1, D("7.00"))])
    with pytest.raises(PaimonDataError, match="Division by zero"):
        rt.merge(s, [(1, D("3.00")), ("-D", 1, D("0.00"))])


# ---- count-limit, step by step ---------------------------------------------------------------------
def test_count_limit_with_retraction(rt):
    """FieldNestedUpdateAgg: retract shrinks the array, so a later agg has room again (agg checks
    acc.size() against the limit; with a key, rows.size() < countLimit admits a new key)."""
    rows = [{"id": i, "s": i, "x": str(i)} for i in range(4)]
    plain = _nested(rt, **{"fields.v.count-limit": "2"})
    assert rt.merge(plain, [(1, rows[:2]), ("-D", 1, rows[:1]), (1, rows[2:])]) == [(1, [rows[1], rows[2]])]
    keyed = _nested(rt, **{"fields.v.nested-key": "id", "fields.v.count-limit": "2"})
    [(_, v)] = rt.merge(keyed, [(1, rows[:2]), ("-D", 1, rows[:1]), (1, rows[2:])])
    assert sorted(v, key=lambda r: r["id"]) == [rows[1], rows[2]]


def test_count_limit_with_an_older_record_of_a_sequence_group(rt):
    """aggReversed(acc, x) = agg(x, acc): the older array is the accumulator, so when it already
    holds count-limit rows the stored rows are dropped; else they fill the remaining room."""
    rows = [{"id": i, "s": i, "x": str(i)} for i in range(4)]
    s = rt.spec("k INT, g INT, v ARRAY<ROW<id INT, s INT, x STRING>>", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "nested_update", "fields.v.count-limit": "2"})
    assert rt.merge(s, [(1, 5, rows[:1]), (1, 3, rows[1:3])], [(2, 5, rows[:1]), (2, 3, rows[1:2])]) == [
        (1, 5, rows[1:3]), (2, 5, [rows[1], rows[0]])]


# ---- restarts of the row (remove-record-on-delete / -on-sequence-group) -----------------------------
def test_first_value_flags_survive_a_restarting_delete(rt):
    """AggregateMergeFunction.add: a -D with aggregation.remove-record-on-delete only does
    initRow(row, -D); the aggregators are reset per key, not per -D, so FieldFirstValueAgg /
    FieldFirstNonNullValueAgg keep their ``initialized`` flag. Not initialised (the -D came first,
    or only NULLs reached first_non_null_value): the next input replaces the -D's value."""
    s = rt.spec("k INT, v INT, w INT", **dict(AGG, **{
        "aggregation.remove-record-on-delete": "true", "fields.v.aggregate-function": "first_value",
        "fields.w.aggregate-function": "first_non_null_value"}))
    assert rt.merge(s, [("-D", 1, 5, 6), (1, 7, None), (1, 8, 9),
                        (2, 1, 1), ("-D", 2, 5, None), (2, 7, 8),
                        (3, 1, None), ("-D", 3, 5, 6), (3, 7, 8)]) == [(1, 7, 9), (2, 5, None), (3, 5, 8)]


def test_first_value_in_a_group_stays_initialised_after_a_removal(rt):
    """PartialUpdateMergeFunction.retractWithSequenceGroup restarts the row (initRow) without
    resetting the group's aggregators: first_value, initialised by the record before, keeps the
    -D's value against a newer input."""
    s = rt.spec("k INT, g INT, v INT", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.v.aggregate-function": "first_value",
        "partial-update.remove-record-on-sequence-group": "g"})
    assert rt.merge(s, [(1, 1, 10), ("-D", 1, 2, 20), (1, 3, 30), (2, 2, 20), (2, 3, 30)]) == [(1, 3, 20), (2, 3, 20)]


def test_removals_through_different_groups_compare_against_the_restarted_row(rt):
    """After a removing -D the row holds that -D's values (initRow), so a later -D of another
    removing group wins when its sequence is >= the restarted row's, whatever came before."""
    s = rt.spec("k INT, a INT, g1 INT, b INT, g2 INT", **{
        "merge-engine": "partial-update", "fields.g1.sequence-group": "a", "fields.g2.sequence-group": "b",
        "partial-update.remove-record-on-sequence-group": "g1,g2"})
    assert rt.merge(s, [(1, 1, 1, 1, 10), ("-D", 1, 2, 2, None, None), ("-D", 1, None, None, 3, 5),
                        (1, None, None, 4, 6)]) == [(1, None, None, 4, 6)]
    # without the second restart the record before it would still count: the -D alone removes the row
    assert rt.merge(s, [(1, 1, 1, 1, 10), ("-D", 1, 2, 2, None, None), ("-D", 1, None, None, 3, 5)]) == []


def test_first_non_null_value_in_a_group_keeps_its_flag_across_a_removal(rt):
    """FieldFirstNonNullValueAgg keeps ``initialized`` across PartialUpdateMergeFunction's initRow
    (aggregators are reset per key, not per restart). A newer input sets it when non-null; an older
    one (aggReversed = agg(x, acc)) when the value it meets is non-null. Once set, a newer input
    keeps the -D's value and an older one replaces it."""
    s = rt.spec("k INT, g INT, v INT", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "first_non_null_value", "partial-update.remove-record-on-sequence-group": "g"})
    assert rt.merge(s, [
        (1, 1, 10), ("-D", 1, 2, 20), (1, 3, 30),          # set by a newer non-null input: -D's 20 stays
        (2, 1, None), ("-D", 2, 2, 20), (2, 3, 30),        # a NULL input leaves it unset: 30 initialises
        (3, 5, None), (3, 4, 40), (3, 3, 30), ("-D", 3, 6, 60), (3, 7, 70),  # older 30 met 40: set
        (4, 5, None), (4, 4, 40), ("-D", 4, 6, None), (4, 7, 70),  # older 40 met NULL: unset, 70 fills
        (5, 1, 10), ("-D", 5, 2, None), (5, 3, 30),        # set before: the -D's NULL stays
        (6, 1, 10), ("-D", 6, 5, 20), (6, 3, 30),          # set: an older input replaces the value
    ]) == [(1, 3, 20), (2, 3, 30), (3, 7, 60), (4, 7, 70), (5, 3, None), (6, 5, 30)]


def test_first_non_null_value_flag_through_a_chain_of_removals(rt):
    """Each removing -D restarts the row from its own values: an older input after the first -D
    meets that -D's value, which decides whether the flag is set before the second -D."""
    s = rt.spec("k INT, g INT, v INT", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "first_non_null_value", "partial-update.remove-record-on-sequence-group": "g"})
    assert rt.merge(s, [
        ("-D", 1, 5, 50), (1, 4, None), ("-D", 1, 6, 60), (1, 7, 70),   # older NULL met 50 (seed): set
        ("-D", 2, 5, None), (2, 4, None), ("-D", 2, 6, 60), (2, 7, 70),  # met NULL: unset, 70 wins
    ]) == [(1, 7, 60), (2, 7, 70)]


def test_retraction_before_a_removal_reaches_functions_without_retraction(rt):
    """PartialUpdateMergeFunction.retractWithSequenceGroup runs for every retraction of the merge,
    before a later -D restarts the row: FieldAggregator.retract of first_value raises there."""
    s = rt.spec("k INT, g INT, v INT", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.v.aggregate-function": "first_value",
        "partial-update.remove-record-on-sequence-group": "g"})
    with pytest.raises(PaimonDataError, match="'first_value' does not support retraction"):
        rt.merge(s, [(1, 3, 10), ("-U", 1, 1, 10), ("-D", 1, 4, 20), (1, 5, 30)])
    ignoring = rt.spec("k INT, g INT, v INT", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.v.aggregate-function": "first_value",
        "fields.v.ignore-retract": "true", "partial-update.remove-record-on-sequence-group": "g"})
    assert rt.merge(ignoring, [(1, 3, 10), ("-U", 1, 1, 10), ("-D", 1, 4, 20), (1, 5, 30)]) == [(1, 5, 20)]


def test_a_removing_delete_retracts_the_fields_before_its_sequence_field(rt):
    """retractWithSequenceGroup walks the fields in column order and restarts the row (initRow,
    return) at the removing group's sequence field: a field without retraction placed before it
    is retracted first and raises, one placed after it is never reached."""
    options = {"merge-engine": "partial-update", "fields.g.sequence-group": "v",
               "fields.v.aggregate-function": "first_value", "partial-update.remove-record-on-sequence-group": "g"}
    before = rt.spec("k INT, v INT, g INT", **options)
    with pytest.raises(PaimonDataError, match="'first_value' does not support retraction"):
        rt.merge(before, [(1, 10, 1), ("-D", 1, 20, 2)])
    after = rt.spec("k INT, g INT, v INT", **options)
    assert rt.merge(after, [(1, 1, 10), ("-D", 1, 2, 20)]) == []
    assert rt.merge(after, [(1, 1, 10), ("-D", 1, 2, 20), (1, 3, 30)]) == [(1, 3, 20)]


# ---- NOT NULL columns ------------------------------------------------------------------------------
def test_partial_update_refuses_null_in_a_not_null_column_while_merging(rt):
    """PartialUpdateMergeFunction.updateNonNullFields (no sequence groups) raises
    IllegalArgumentException("Field i can not be null") for a merged record with NULL in a NOT NULL
    column; a key's only record is stored as-is (ReducerMergeFunctionWrapper never calls it)."""
    s = rt.spec("k INT, a INT, b INT NOT NULL", **{"merge-engine": "partial-update"})
    with pytest.raises(PaimonDataError, match="Field 2 can not be null: column 'b' is NOT NULL"):
        rt.merge(s, [(1, 1, 5), (1, 2, None)])
    with pytest.raises(PaimonDataError, match="Field 2 can not be null"):
        rt.merge(s, [(1, 1, 5)], [(1, None, None)])
    assert rt.merge(s, [(1, 1, None), (2, 1, 5), (2, None, 6)]) == [(1, 1, None), (2, 1, 6)]


def test_partial_update_sequence_groups_do_not_check_not_null_additions(rt):
    """updateWithSequenceGroup sets fields without the NOT NULL check; only initRow checks (a
    merge starting with a retraction, a removing -D)."""
    s = rt.spec("k INT, g INT, a INT NOT NULL", **{"merge-engine": "partial-update", "fields.g.sequence-group": "a",
                                                    "partial-update.remove-record-on-sequence-group": "g"})
    assert rt.merge(s, [(1, 1, 5), (1, 2, None)]) == [(1, 2, None)]
    with pytest.raises(PaimonDataError, match="Field 2 can not be null"):
        rt.merge(s, [("-U", 1, 1, None), (1, 2, 5)])
    with pytest.raises(PaimonDataError, match="Field 2 can not be null"):
        rt.merge(s, [(1, 1, 5), ("-D", 1, 2, None), (1, 3, 7)])


def test_remove_record_on_delete_checks_not_null_in_every_restarting_delete(rt):
    """PartialUpdateMergeFunction / AggregateMergeFunction.initRow on each -D of
    remove-record-on-delete: a NOT NULL column holding NULL raises, even when a later -D restarts
    the row again."""
    pu = rt.spec("k INT, a INT NOT NULL", **{"merge-engine": "partial-update",
                                              "partial-update.remove-record-on-delete": "true"})
    agg = rt.spec("k INT, a INT NOT NULL", **dict(AGG, **{"aggregation.remove-record-on-delete": "true",
                                                           "fields.a.aggregate-function": "sum"}))
    for s in (pu, agg):
        with pytest.raises(PaimonDataError, match="Field 1 can not be null"):
            rt.merge(s, [(1, 5), ("-D", 1, None), ("-D", 1, 3), (1, 7)])
        assert rt.merge(s, [(1, 5), ("-D", 1, 3), (1, 7)]) == [(1, 7 if s is pu else 10)]
    # AggregateMergeFunction.add does not check additions
    assert rt.merge(agg, [(1, 5), (1, None)]) == [(1, 5)]


# ---- an input meeting a NULL accumulator ---------------------------------------------------------
def test_merge_map_input_meeting_a_null_accumulator_is_kept_as_written(rt):
    """FieldMergeMapAgg.agg(null, x) returns x itself: a repeated key stays until a later input
    rebuilds the map (putToMap into a HashMap: the last value of a key wins). retract(null, x) is
    NULL, and aggReversed(null, x) = agg(x, null) = x too."""
    s = rt.spec("k INT, m MAP<INT, STRING>", **dict(AGG, **{"fields.m.aggregate-function": "merge_map"}))
    twice = [(1, "a"), (1, "b")]
    assert rt.merge(s, [(1, None), (1, twice), (1, None)]) == [(1, twice)]
    assert rt.merge(s, [(1, None), (1, twice), (1, [])]) == [(1, [(1, "b")])]  # agg(acc, {}) rebuilds
    assert rt.merge(s, [("-D", 1, [(1, "x")]), (1, twice), ("-U", 1, [])]) == [(1, twice)]
    assert rt.merge(s, [(1, twice), (1, [(2, "c")])]) == [(1, [(1, "b"), (2, "c")])]
    group = rt.spec("k INT, g INT, m MAP<INT, STRING>", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "m", "fields.m.aggregate-function": "merge_map"})
    assert rt.merge(group, [(1, 5, None), (1, 3, twice)]) == [(1, 5, twice)]


def test_nested_update_input_meeting_a_null_accumulator(rt):
    """FieldNestedUpdateAgg.agg(null, x) drops NULL rows (addNonNullRows) and, with a nested key,
    puts the rows into a HashMap (one row per key, the last one wins). An older record of a
    sequence group is kept as written: aggReversed(null, x) = agg(x, null) returns x; after that,
    an older NULL input rebuilds it (agg(null, acc) takes the accumulator as its input)."""
    keyed = rt.spec("k INT, v ARRAY<ROW<id INT, x STRING>>", **dict(AGG, **{
        "fields.v.aggregate-function": "nested_update", "fields.v.nested-key": "id"}))
    rows = [{"id": 1, "x": "a"}, None, {"id": 1, "x": "b"}]
    assert rt.merge(keyed, [(1, None), (1, rows)]) == [(1, [{"id": 1, "x": "b"}])]
    plain = rt.spec("k INT, v ARRAY<ROW<id INT, x STRING>>", **dict(AGG, **{
        "fields.v.aggregate-function": "nested_update"}))
    assert rt.merge(plain, [(1, None), (1, rows)]) == [(1, [rows[0], rows[2]])]
    group = rt.spec("k INT, g INT, v ARRAY<ROW<id INT, x STRING>>", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v",
        "fields.v.aggregate-function": "nested_update", "fields.v.nested-key": "id"})
    assert rt.merge(group, [(1, 5, None), (1, 3, rows)]) == [(1, 5, rows)]
    assert rt.merge(group, [(1, 5, None), (1, 3, rows), (1, 2, None)]) == [(1, 5, [rows[2]])]
