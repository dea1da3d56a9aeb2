"""deduplicate: seed 002/003 examples and DeduplicateMergeFunction edge cases."""
import pytest

from dbt.adapters.paimon.runtime import merge_arrow, premerge_arrow

SCHEMA = "k INT, v1 DOUBLE, v2 STRING"


def test_seed_last_record_wins(rt):
    spec = rt.spec(SCHEMA)
    rows = [(1, 2.0, "apple"), (1, 4.0, "banana"), (1, 8.0, "cherry")]
    assert rt.merge(spec, rows) == [(1, 8.0, "cherry")]
    assert rt.merge(spec, *[[r] for r in rows]) == [(1, 8.0, "cherry")]


def test_seed_delete_removes_key(rt):
    spec = rt.spec(SCHEMA, **{"merge-engine": "deduplicate"})
    rows = [(1, 2.0, "apple"), (1, 4.0, "banana"), ("-D", 1, 4.0, "banana")]
    assert rt.merge(spec, rows) == []
    assert rt.merge(spec, *[[r] for r in rows]) == []


def test_trailing_update_before_deletes(rt):
    spec = rt.spec(SCHEMA)
    assert rt.merge(spec, [(1, 1.0, "a"), ("-U", 1, 1.0, "a")]) == []
    assert rt.merge(spec, [(1, 1.0, "a"), ("-U", 1, 1.0, "a"), ("+U", 1, 2.0, "b")]) == [(1, 2.0, "b")]


def test_delete_then_insert_revives(rt):
    spec = rt.spec(SCHEMA)
    assert rt.merge(spec, [(1, 1.0, "a")], [("-D", 1, 1.0, "a")], [(1, 3.0, "c")]) == [(1, 3.0, "c")]


@pytest.mark.parametrize("key", ["ignore-delete", "deduplicate.ignore-delete", "first-row.ignore-delete"])
def test_ignore_delete_and_fallback_keys(rt, key):
    # CoreOptions.IGNORE_DELETE fallback keys; RowKindFilter drops -D and -U for every engine
    spec = rt.spec(SCHEMA, **{key: "true"})
    assert rt.merge(spec, [(1, 1.0, "a")], [("-D", 1, 1.0, "a")], [("-U", 1, 1.0, "a")]) == [(1, 1.0, "a")]


def test_ignore_update_before_keeps_deletes(rt):
    # RowKindFilter: ignore-update-before drops only -U
    spec = rt.spec(SCHEMA, **{"ignore-update-before": "true"})
    assert rt.merge(spec, [(1, 1.0, "a"), ("-U", 1, 1.0, "a")]) == [(1, 1.0, "a")]
    assert rt.merge(spec, [(1, 1.0, "a"), ("-D", 1, 1.0, "a")]) == []


def test_premerge_keeps_retraction_and_last_sequence(rt):
    spec = rt.spec(SCHEMA)
    out = premerge_arrow(spec, rt.records(spec, [(2, 1.0, "x"), (1, 1.0, "a"), ("-D", 1, 1.0, "a")]))
    assert rt.rows(out) == [(1, 1.0, "a", "-D", 3), (2, 1.0, "x", "+I", 1)]


def test_output_sorted_by_primary_key_and_typed(rt):
    spec = rt.spec("k INT, v STRING")
    out = merge_arrow(spec, rt.records(spec, [(3, "c"), (1, "a"), (2, "b")]))
    assert rt.rows(out) == [(1, "a"), (2, "b"), (3, "c")]
    assert out.schema == spec.arrow_schema


def test_physical_order_does_not_matter(rt):
    spec = rt.spec(SCHEMA)
    t = rt.records(spec, [(1, 1.0, "a"), (1, 2.0, "b"), (2, 3.0, "c")])
    assert merge_arrow(spec, t) == merge_arrow(spec, t.take([2, 1, 0]))


def test_composite_primary_key(rt):
    spec = rt.spec("dt STRING, k INT, v INT", "dt,k")
    assert rt.merge(spec, [("b", 1, 1), ("a", 1, 2), ("a", 1, 3)]) == [("a", 1, 3), ("b", 1, 1)]


def test_null_primary_key_raises(rt):
    from dbt.adapters.paimon.runtime import PaimonDataError

    spec = rt.spec(SCHEMA)
    with pytest.raises(PaimonDataError, match="NULL"):
        rt.merge(spec, [(None, 1.0, "a")])


def test_bad_row_kind_raises(rt):
    import pyarrow as pa
    from dbt.adapters.paimon.runtime import PaimonDataError

    spec = rt.spec("k INT")
    t = pa.table({"k": [1], "_row_kind": ["X"], "_seq": [1]})
    with pytest.raises(PaimonDataError, match="_row_kind"):
        merge_arrow(spec, t)
