"""sequence.field, sequence.field.sort-order; sequence.auto-padding is ignored."""
import pytest

from dbt.adapters.paimon.runtime import merge_arrow


def test_sequence_field_orders_records(rt):
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{"sequence.field": "ts"})
    assert rt.merge(spec, [(1, "new", 20), (1, "old", 10)]) == [(1, "new", 20)]
    assert rt.merge(spec, [(1, "new", 20)], [(1, "old", 10)]) == [(1, "new", 20)]


def test_sequence_field_null_is_smallest(rt):
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{"sequence.field": "ts"})
    assert rt.merge(spec, [(1, "a", 5)], [(1, "b", None)]) == [(1, "a", 5)]


def test_sequence_field_ties_by_arrival(rt):
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{"sequence.field": "ts"})
    assert rt.merge(spec, [(1, "a", 5), (1, "b", 5)]) == [(1, "b", 5)]


def test_several_sequence_fields(rt):
    spec = rt.spec("k INT, v STRING, s1 INT, s2 INT", **{"sequence.field": "s1,s2"})
    assert rt.merge(spec, [(1, "a", 2, 1), (1, "b", 1, 9), (1, "c", 2, 0)]) == [(1, "a", 2, 1)]


def test_descending_sort_order(rt):
    # UserDefinedSeqComparator with ascending=false; NULL still sorts first (nullIsLast=false)
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{"sequence.field": "ts", "sequence.field.sort-order": "descending"})
    assert rt.merge(spec, [(1, "small", 1), (1, "big", 9)]) == [(1, "small", 1)]
    assert rt.merge(spec, [(1, "small", 1), (1, "null", None)]) == [(1, "small", 1)]


def test_timestamp_sequence_field(rt):
    import datetime as dt

    spec = rt.spec("k INT, v STRING, ts TIMESTAMP(3)", **{"sequence.field": "ts"})
    t1, t2 = dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)
    assert rt.merge(spec, [(1, "late", t2), (1, "early", t1)]) == [(1, "late", t2)]


@pytest.mark.parametrize("padding", ["row-kind-flag", "second-to-micro", "millis-to-micro,row-kind-flag"])
def test_sequence_auto_padding_is_ignored(rt, padding):
    """Paimon removed sequence.auto-padding in 0.8 (commit 1502e83bfc, "Redefine user defined
    sequence fields"): SortBufferWriteBuffer sorts by key, sequence.field, then the sequence number
    only, so equal sequence values keep arrival order whatever the option says."""
    opts = {"sequence.field": "ts"}
    plain = rt.spec("k INT, v STRING, ts BIGINT", **opts)
    padded = rt.spec("k INT, v STRING, ts BIGINT", **dict(opts, **{"sequence.auto-padding": padding}))
    rows = [(1, "a", 1), ("+U", 1, "b", 2), ("-U", 1, "a", 2)]
    assert rt.merge(plain, rows) == rt.merge(padded, rows) == []


def test_aggregation_sequence_field_keeps_last_value(rt):
    # AggregateMergeFunction.getAggFuncName: sequence fields use last_value
    spec = rt.spec("k INT, s BIGINT, ts BIGINT", **{"merge-engine": "aggregation", "sequence.field": "ts",
                                                    "fields.s.aggregate-function": "sum"})
    assert rt.merge(spec, [(1, 1, 5), (1, 2, 3)]) == [(1, 3, 5)]


def test_sequence_field_across_commits_uses_values_first(rt):
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{"sequence.field": "ts"})
    t = rt.records(spec, [(1, "a", 9)], [(1, "b", 3)])
    assert rt.rows(merge_arrow(spec, t)) == [(1, "a", 9)]


def test_all_empty_nested_values_survive_arrows_ipc(rt):
    """A merged map<int, array<string>> column whose surviving maps are all empty or NULL:
    polars exports its empty child arrays with an offset past their buffer, and Arrow's IPC
    writer (the Python data source's way to Spark) then shifted every later column of the
    batch. The merge's output must stream as it reads."""
    import pyarrow as pa

    spec = rt.spec("k INT, m MAP<INT, ARRAY<STRING>>, after DECIMAL(10, 3), ts BIGINT",
                   **{"sequence.field": "ts"})
    merged = merge_arrow(spec, rt.records(spec, [(1, [(3, ["x"])], None, 1), (1, [], 1, 2),
                                                 (2, None, 2, 5)]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, merged.schema) as writer:
        writer.write_table(merged)
    streamed = pa.ipc.open_stream(sink.getvalue()).read_all()
    assert rt.rows(streamed) == rt.rows(merged) == [(1, [], 1, 2), (2, None, 2, 5)]
    for column in merged.columns:  # every buffer holds what its arrays claim
        pa.concat_arrays(column.chunks + [pa.array([], column.type)])
