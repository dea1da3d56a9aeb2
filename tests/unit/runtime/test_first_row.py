"""first-row: seed 002/003 example and FirstRowMergeFunction edge cases."""
import pytest

from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError, merge_arrow, premerge_arrow

FR = {"merge-engine": "first-row"}
SCHEMA = "k INT, v1 DOUBLE, v2 STRING"


def test_seed_first_record_wins(rt):
    spec = rt.spec(SCHEMA, **FR)
    rows = [(1, 2.0, "apple"), (1, 4.0, "banana"), (1, 8.0, "cherry")]
    assert rt.merge(spec, rows) == [(1, 2.0, "apple")]
    assert rt.merge(spec, *[[r] for r in rows]) == [(1, 2.0, "apple")]


def test_keeps_first_sequence_number(rt):
    # FirstRowMergeFunction.getResult returns the first KeyValue, with its sequence number
    spec = rt.spec(SCHEMA, **FR)
    out = premerge_arrow(spec, rt.records(spec, [(1, 2.0, "a"), (1, 4.0, "b")]))
    assert rt.rows(out) == [(1, 2.0, "a", "+I", 1)]


def test_delete_raises(rt):
    spec = rt.spec(SCHEMA, **FR)
    with pytest.raises(PaimonDataError, match="ignore-delete"):
        rt.merge(spec, [(1, 2.0, "a"), ("-D", 1, 2.0, "a")])
    with pytest.raises(PaimonDataError):
        rt.merge(spec, [(1, 2.0, "a")], [("-U", 1, 2.0, "a")])


@pytest.mark.parametrize("key", ["first-row.ignore-delete", "ignore-delete"])
def test_ignore_delete(rt, key):
    spec = rt.spec(SCHEMA, **dict(FR, **{key: "true"}))
    assert rt.merge(spec, [(1, 2.0, "a"), ("-D", 1, 2.0, "a"), (1, 3.0, "b")]) == [(1, 2.0, "a")]


def test_lone_retraction_is_stored_not_raised(rt):
    # ReducerMergeFunctionWrapper: a key's only record never reaches FirstRowMergeFunction.add
    spec = rt.spec(SCHEMA, **FR)
    out = premerge_arrow(spec, rt.records(spec, [("-D", 1, 2.0, "a")]))
    assert rt.rows(out) == [(1, 2.0, "a", "-D", 1)]
    assert rt.merge(spec, [("-D", 1, 2.0, "a")]) == []


def test_rejects_sequence_field(rt):
    with pytest.raises(PaimonConfigError, match="sequence.field"):
        rt.spec("k INT, ts BIGINT", **dict(FR, **{"sequence.field": "ts"}))


def test_rejects_full_compaction_changelog(rt):
    with pytest.raises(PaimonConfigError, match="changelog-producer"):
        rt.spec(SCHEMA, **dict(FR, **{"changelog-producer": "full-compaction"}))
