"""Changelog (lookup / full-compaction): before vs after state of each key per commit."""
import pytest

from dbt.adapters.paimon.runtime import merge_arrow


def changelog(rt, spec, *commits):
    merged, changes = merge_arrow(spec, rt.records(spec, *commits), with_changelog=True)
    assert merged == merge_arrow(spec, rt.records(spec, *commits))
    return rt.rows(changes)


def test_insert_update_delete(rt):
    spec = rt.spec("k INT, v STRING")
    got = changelog(rt, spec, [(1, "a"), (2, "x")], [(1, "b")], [("-D", 2, "x")])
    assert got == [
        (1, "a", "+I", 1), (2, "x", "+I", 1),
        (1, "a", "-U", 2), (1, "b", "+U", 2),
        (2, "x", "-D", 3),
    ]


def test_identical_value_still_emits_update_without_row_deduplicate(rt):
    # LookupChangelogMergeFunctionWrapper: valueEqualiser is null unless row-deduplicate
    spec = rt.spec("k INT, v STRING")
    assert changelog(rt, spec, [(1, "a")], [(1, "a")]) == [(1, "a", "+I", 1), (1, "a", "-U", 2), (1, "a", "+U", 2)]


def test_row_deduplicate(rt):
    spec = rt.spec("k INT, v STRING", **{"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true"})
    assert changelog(rt, spec, [(1, "a")], [(1, "a")]) == [(1, "a", "+I", 1)]


def test_row_deduplicate_ignore_fields(rt):
    spec = rt.spec("k INT, v STRING, ts BIGINT", **{
        "changelog-producer.row-deduplicate": "true",
        "changelog-producer.row-deduplicate-ignore-fields": "ts"})
    assert changelog(rt, spec, [(1, "a", 1)], [(1, "a", 2)], [(1, "b", 3)]) == [
        (1, "a", 1, "+I", 1), (1, "a", 2, "-U", 3), (1, "b", 3, "+U", 3)]


def test_first_row_emits_only_inserts(rt):
    spec = rt.spec("k INT, v STRING", **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    assert changelog(rt, spec, [(1, "a")], [(1, "b"), (2, "c")]) == [(1, "a", "+I", 1), (2, "c", "+I", 2)]


def test_delete_of_absent_key_emits_nothing(rt):
    spec = rt.spec("k INT, v STRING")
    assert changelog(rt, spec, [("-D", 1, "a")], [(1, "b")]) == [(1, "b", "+I", 2)]


def test_partial_update_changelog(rt):
    spec = rt.spec("k INT, a INT, b INT", **{"merge-engine": "partial-update"})
    assert changelog(rt, spec, [(1, 1, None)], [(1, None, 2)]) == [
        (1, 1, None, "+I", 1), (1, 1, None, "-U", 2), (1, 1, 2, "+U", 2)]


def test_aggregation_changelog(rt):
    spec = rt.spec("k INT, v BIGINT", **{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"})
    assert changelog(rt, spec, [(1, 1), (1, 2)], [(1, 4)]) == [(1, 3, "+I", 1), (1, 3, "-U", 2), (1, 7, "+U", 2)]


def test_untouched_keys_emit_nothing(rt):
    spec = rt.spec("k INT, v STRING")
    assert changelog(rt, spec, [(1, "a"), (2, "b")], [(2, "c")])[-2:] == [(2, "b", "-U", 2), (2, "c", "+U", 2)]
    assert len(changelog(rt, spec, [(1, "a"), (2, "b")], [(2, "c")])) == 4


def test_changelog_with_single_commit_and_no_commit_column(rt):
    import pyarrow as pa

    spec = rt.spec("k INT, v STRING")
    t = rt.records(spec, [(1, "a"), (1, "b")]).drop_columns(["_commit"])
    merged, changes = merge_arrow(spec, t, with_changelog=True)
    assert rt.rows(changes) == [(1, "b", "+I", 0)]
    assert changes.schema.field("_commit").type == pa.int64()
