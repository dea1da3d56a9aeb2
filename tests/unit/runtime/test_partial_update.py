"""partial-update: seed 001 / 003 examples (one INSERT = one commit) and Paimon edge cases."""
import pytest

from dbt.adapters.paimon.runtime import PaimonDataError, merge_arrow, premerge_arrow

PU = {"merge-engine": "partial-update"}


def test_seed_basic_non_null_overwrite(rt):
    spec = rt.spec("k INT, v1 DOUBLE, v2 BIGINT, v3 STRING", **PU)
    got = rt.merge(spec, [(1, 23.0, 10, None)], [(1, None, None, "This is a book")], [(1, 25.2, None, None)])
    assert got == [(1, 25.2, 10, "This is a book")]


def test_seed_basic_in_one_commit(rt):
    spec = rt.spec("k INT, v1 DOUBLE, v2 BIGINT, v3 STRING", **PU)
    got = rt.merge(spec, [(1, 23.0, 10, None), (1, None, None, "This is a book"), (1, 25.2, None, None)])
    assert got == [(1, 25.2, 10, "This is a book")]


SG_OPTS = dict(PU, **{"fields.g_1.sequence-group": "a,b", "fields.g_2.sequence-group": "c,d"})
SG_SCHEMA = "k INT, a INT, b INT, g_1 INT, c INT, d INT, g_2 INT"


def test_seed_sequence_group(rt):
    spec = rt.spec(SG_SCHEMA, **SG_OPTS)
    c1, c2, c3 = [(1, 1, 1, 1, 1, 1, 1)], [(1, 2, 2, 2, 2, 2, None)], [(1, 3, 3, 1, 3, 3, 3)]
    assert rt.merge(spec, c1, c2) == [(1, 2, 2, 2, 1, 1, 1)]
    assert rt.merge(spec, c1, c2, c3) == [(1, 2, 2, 2, 3, 3, 3)]


def test_seed_multi_field_sequence_group(rt):
    spec = rt.spec(
        "k INT, a INT, b INT, g_1 INT, c INT, d INT, g_2 INT, g_3 INT",
        **dict(PU, **{"fields.g_1.sequence-group": "a,b", "fields.g_2,g_3.sequence-group": "c,d"}),
    )
    c1, c2, c3 = [(1, 1, 1, 1, 1, 1, 1, 1)], [(1, 2, 2, 2, 2, 2, 1, None)], [(1, 3, 3, 1, 3, 3, 3, 1)]
    assert rt.merge(spec, c1, c2) == [(1, 2, 2, 2, 1, 1, 1, 1)]
    assert rt.merge(spec, c1, c2, c3) == [(1, 2, 2, 2, 3, 3, 3, 1)]


def test_seed_aggregation_in_sequence_groups(rt):
    spec = rt.spec(
        "k INT, a INT, b INT, c INT, d INT",
        **dict(PU, **{
            "fields.a.sequence-group": "b", "fields.b.aggregate-function": "first_value",
            "fields.c.sequence-group": "d", "fields.d.aggregate-function": "sum",
        }),
    )
    commits = [[(1, 1, 1, None, None)], [(1, None, None, 1, 1)], [(1, 2, 2, None, None)], [(1, None, None, 2, 2)]]
    assert rt.merge(spec, *commits) == [(1, 2, 1, 2, 3)]


def test_seed_aggregation_with_multi_field_group(rt):
    spec = rt.spec(
        "k INT, a INT, b INT, g_1 INT, c STRING, g_2 INT, g_3 INT",
        **dict(PU, **{
            "fields.a.aggregate-function": "sum", "fields.g_1,g_3.sequence-group": "a",
            "fields.g_2.sequence-group": "c",
        }),
    )
    c1, c2, c3 = [(1, 1, 1, 1, "1", 1, 1)], [(1, 2, 2, 2, "2", None, 2)], [(1, 3, 3, 2, "3", 3, 1)]
    assert rt.merge(spec, c1, c2) == [(1, 3, 2, 2, "1", 1, 2)]
    assert rt.merge(spec, c1, c2, c3) == [(1, 6, 3, 2, "3", 3, 2)]


def test_seed_default_aggregate_function(rt):
    spec = rt.spec(
        "k INT, a INT, b INT, c INT, d INT",
        **dict(PU, **{
            "fields.a.sequence-group": "b", "fields.c.sequence-group": "d",
            "fields.default-aggregate-function": "last_non_null_value", "fields.d.aggregate-function": "sum",
        }),
    )
    commits = [[(1, 1, 1, None, None)], [(1, None, None, 1, 1)], [(1, 2, 2, None, None)], [(1, None, None, 2, 2)]]
    assert rt.merge(spec, *commits) == [(1, 2, 2, 2, 3)]


def test_seed_003_sequence_groups_with_max_and_sum(rt):
    spec = rt.spec(
        "k INT, a STRING, b INT, g_1 INT, c STRING, d INT, g_2 INT",
        **dict(PU, **{
            "fields.g_1.sequence-group": "a,b", "fields.b.aggregate-function": "max",
            "fields.g_2.sequence-group": "c,d", "fields.d.aggregate-function": "sum",
        }),
    )
    got = rt.merge(spec, [(1, "x", 5, 2, "p", 1, 1)], [(1, "y", 3, 1, "q", 2, 2)], [(1, None, 9, 3, None, 4, 0)])
    # a: g_1 2 > 1 keeps 'x', then g_1=3 wins with NULL; b: max over every record; d: sum of all
    assert got == [(1, None, 9, 3, "q", 7, 2)]


def test_equal_group_sequence_counts_as_newer(rt):
    spec = rt.spec("k INT, a INT, g INT", **dict(PU, **{"fields.g.sequence-group": "a"}))
    assert rt.merge(spec, [(1, 1, 5)], [(1, 2, 5)]) == [(1, 2, 5)]


def test_group_update_overwrites_with_null(rt):
    # PartialUpdateMergeFunction.updateWithSequenceGroup: protected fields take the value even if NULL
    spec = rt.spec("k INT, a INT, b INT, g INT", **dict(PU, **{"fields.g.sequence-group": "a"}))
    assert rt.merge(spec, [(1, 1, 1, 1)], [(1, None, None, 2)]) == [(1, None, 1, 2)]


def test_null_group_sequence_skips_group_but_lone_record_is_stored_as_is(rt):
    # ReducerMergeFunctionWrapper: a key's only record bypasses the merge function
    spec = rt.spec("k INT, a INT, g INT", **dict(PU, **{"fields.g.sequence-group": "a"}))
    assert rt.merge(spec, [(1, 7, None)]) == [(1, 7, None)]
    assert rt.merge(spec, [(1, 7, None), (1, 8, None)]) == [(1, None, None)]


def test_delete_without_option_raises(rt):
    spec = rt.spec("k INT, a INT", **PU)
    with pytest.raises(PaimonDataError, match="partial-update.remove-record-on-delete"):
        rt.merge(spec, [(1, 1), ("-D", 1, 1)])


def test_lone_delete_is_stored_then_raises_when_merged(rt):
    # ReducerMergeFunctionWrapper: a lone -D is stored without calling the merge function
    spec = rt.spec("k INT, a INT", **PU)
    stored = premerge_arrow(spec, rt.records(spec, [("-D", 1, 1)]))
    assert rt.rows(stored) == [(1, 1, "-D", 1)]
    with pytest.raises(PaimonDataError):
        rt.merge(spec, [(1, 1)], [("-D", 1, 1)])


@pytest.mark.parametrize("key", ["ignore-delete", "partial-update.ignore-delete"])
def test_ignore_delete(rt, key):
    spec = rt.spec("k INT, a INT", **dict(PU, **{key: "true"}))
    assert rt.merge(spec, [(1, 1)], [("-D", 1, 1), ("-U", 1, 1)]) == [(1, 1)]


def test_remove_record_on_delete(rt):
    spec = rt.spec("k INT, a INT, b INT", **dict(PU, **{"partial-update.remove-record-on-delete": "true"}))
    assert rt.merge(spec, [(1, 1, 1)], [("-D", 1, 1, 1)]) == []
    assert rt.merge(spec, [(1, 1, 1), ("-D", 1, 1, 1)]) == []
    # -U is ignored by remove-record-on-delete
    assert rt.merge(spec, [(1, 1, 1), ("-U", 1, 1, 1)]) == [(1, 1, 1)]


def test_remove_record_on_delete_then_insert_restarts_from_delete_values(rt):
    # PartialUpdateMergeFunction.add: the -D re-initialises the row with its own values (initRow)
    spec = rt.spec("k INT, a INT, b INT", **dict(PU, **{"partial-update.remove-record-on-delete": "true"}))
    assert rt.merge(spec, [(1, 1, 1), ("-D", 1, None, 5), (1, None, 2)]) == [(1, None, 2)]
    assert rt.merge(spec, [(1, 1, 1), ("-D", 1, 4, 5), (1, None, 2)]) == [(1, 4, 2)]


def test_retract_sequence_group(rt):
    spec = rt.spec("k INT, a INT, b INT, g_1 INT, c INT, g_2 INT", **dict(PU, **{
        "fields.g_1.sequence-group": "a,b", "fields.g_2.sequence-group": "c"}))
    # the -D wins g_1 (2 >= 1): a, b become NULL; g_2 is NULL in the -D so c stays
    got = rt.merge(spec, [(1, 1, 1, 1, 1, 1)], [("-D", 1, 1, 1, 2, None, None)])
    assert got == [(1, None, None, 2, 1, 1)]
    # an older -D does nothing to plain fields
    got = rt.merge(spec, [(1, 1, 1, 5, 1, 1)], [("-D", 1, 1, 1, 2, None, None)])
    assert got == [(1, 1, 1, 5, 1, 1)]


def test_retract_sequence_group_with_sum(rt):
    spec = rt.spec("k INT, a INT, g INT", **dict(PU, **{
        "fields.g.sequence-group": "a", "fields.a.aggregate-function": "sum"}))
    assert rt.merge(spec, [(1, 5, 1)], [(1, 3, 2)], [("-U", 1, 5, 1)]) == [(1, 3, 2)]


def test_remove_record_on_sequence_group(rt):
    spec = rt.spec("k INT, a INT, g_1 INT, b INT, g_2 INT", **dict(PU, **{
        "fields.g_1.sequence-group": "a", "fields.g_2.sequence-group": "b",
        "partial-update.remove-record-on-sequence-group": "g_1"}))
    assert rt.merge(spec, [(1, 1, 1, 1, 1)], [("-D", 1, None, 2, None, None)]) == []
    # a -D that only touches g_2 retracts b, the row stays
    assert rt.merge(spec, [(1, 1, 1, 1, 1)], [("-D", 1, None, None, 9, 2)]) == [(1, 1, 1, None, 2)]
    # a -D older than the stored g_1 does not remove the row
    assert rt.merge(spec, [(1, 1, 5, 1, 1)], [("-D", 1, None, 2, None, None)]) == [(1, 1, 5, 1, 1)]


def test_merged_record_keeps_last_sequence_number(rt):
    # PartialUpdateMergeFunction.getResult: latestSequenceNumber is the last record's
    spec = rt.spec("k INT, a INT, b INT", **PU)
    out = premerge_arrow(spec, rt.records(spec, [(1, 1, None), (1, None, 2), (2, 5, 5)]))
    assert rt.rows(out) == [(1, 1, 2, "+I", 2), (2, 5, 5, "+I", 3)]


def test_only_retractions_merge_to_delete(rt):
    # PartialUpdateMergeFunction.getResult: no +I/+U seen -> DELETE
    spec = rt.spec("k INT, a INT, g INT", **dict(PU, **{"fields.g.sequence-group": "a"}))
    out = premerge_arrow(spec, rt.records(spec, [("-U", 1, 1, 1), ("-D", 1, 1, 2)]))
    assert rt.rows(out)[0][-2] == "-D"
    assert rt.merge(spec, [("-U", 1, 1, 1), ("-D", 1, 1, 2)]) == []


def test_group_last_non_null_value_older_record_fills_null_only(rt):
    # FieldAggregator.aggReversed = agg(input, acc): an older record only fills a NULL accumulator
    spec = rt.spec("k INT, a INT, g INT", **dict(PU, **{
        "fields.g.sequence-group": "a", "fields.a.aggregate-function": "last_non_null_value"}))
    assert rt.merge(spec, [(1, None, 2)], [(1, 5, 1)]) == [(1, 5, 2)]
    assert rt.merge(spec, [(1, 3, 2)], [(1, 5, 1)]) == [(1, 3, 2)]
    assert rt.merge(spec, [(1, 5, 1)], [(1, None, 2)], [(1, 7, 1)]) == [(1, 5, 2)]


def test_group_listagg_prepends_older(rt):
    spec = rt.spec("k INT, s STRING, g INT", **dict(PU, **{
        "fields.g.sequence-group": "s", "fields.s.aggregate-function": "listagg"}))
    assert rt.merge(spec, [(1, "b", 2)], [(1, "a", 1)], [(1, "c", 3)]) == [(1, "a,b,c", 3)]


def test_sequence_field_orders_partial_update(rt):
    spec = rt.spec("k INT, a INT, ts BIGINT", **dict(PU, **{"sequence.field": "ts"}))
    assert rt.merge(spec, [(1, 2, 20)], [(1, 1, 10)]) == [(1, 2, 20)]


def test_merge_on_read_of_stored_files_with_sorted_sequence(rt):
    # two stored files (two Arrow chunks) whose group sequence is already sorted
    import pyarrow as pa

    spec = rt.spec("k INT, a INT, b INT, g INT", **dict(PU, **{"fields.g.sequence-group": "a"}))
    t = rt.records(spec, [(1, None, None, 0)], [(1, None, None, 1)])
    stored = pa.concat_tables([premerge_arrow(spec, t.slice(0, 1)), premerge_arrow(spec, t.slice(1, 1))])
    assert rt.rows(merge_arrow(spec, stored)) == rt.rows(merge_arrow(spec, t)) == [(1, None, None, 1)]
