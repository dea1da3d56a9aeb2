"""Property tests: order independence, commit-at-a-time vs merge-on-read, changelog replay."""
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.runtime import merge_arrow, premerge_arrow

from conftest import records, rows, spec as make_spec

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCHEMA = "k INT, a INT, b INT, g INT"

SPECS = {
    "dedup": {},
    "dedup-seq": {"sequence.field": "g"},
    "first-row": {"merge-engine": "first-row", "ignore-delete": "true"},
    "agg": {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum",
            "fields.b.aggregate-function": "max", "fields.b.ignore-retract": "true"},
    "agg-lnnv": {"merge-engine": "aggregation", "fields.a.aggregate-function": "last_non_null_value",
                 "fields.b.aggregate-function": "last_value"},
    "pu": {"merge-engine": "partial-update", "ignore-delete": "true"},
    "pu-groups": {"merge-engine": "partial-update", "fields.g.sequence-group": "a",
                  "fields.b.aggregate-function": "last_non_null_value"},
    "pu-groups-sum": {"merge-engine": "partial-update", "fields.g.sequence-group": "a,b",
                      "fields.a.aggregate-function": "sum"},
}

value = st.one_of(st.none(), st.integers(-3, 3))
row = st.tuples(st.sampled_from(["+I", "+I", "+U", "-U", "-D"]), st.integers(0, 3), value, value, value)
commits = st.lists(st.lists(row, min_size=1, max_size=6), min_size=1, max_size=4)


def build(name, commit_rows):
    s = make_spec(SCHEMA, **SPECS[name])
    if name in ("pu",) or name.startswith("agg") and name == "agg-lnnv":
        pass
    return s, records(s, *commit_rows)


def safe(fn):
    """Paimon raises for some inputs (e.g. retraction of max); those examples prove nothing here."""
    from dbt.adapters.paimon.runtime import PaimonDataError

    try:
        return fn()
    except PaimonDataError:
        return "raised"


@pytest.mark.parametrize("name", sorted(SPECS))
@SETTINGS
@given(commit_rows=commits, data=st.data())
def test_result_does_not_depend_on_physical_order(name, commit_rows, data):
    s, t = build(name, commit_rows)
    perm = data.draw(st.permutations(list(range(t.num_rows))))
    assert safe(lambda: merge_arrow(s, t)) == safe(lambda: merge_arrow(s, t.take(perm)))


@pytest.mark.parametrize("name", sorted(SPECS))
@SETTINGS
@given(commit_rows=commits)
def test_commits_equal_merge_on_read_of_stored_files(name, commit_rows):
    """Writing commit by commit, then reading the stored files in one merge, is merge_arrow."""
    s, t = build(name, commit_rows)
    expected = safe(lambda: merge_arrow(s, t))
    files = []
    try:
        for c in sorted(set(t.column("_commit").to_pylist())):
            part = t.filter(pa.compute.equal(t.column("_commit"), c))
            files.append(premerge_arrow(s, part))
    except Exception as exc:  # noqa: BLE001 - the same error must come from merge_arrow
        assert expected == "raised", exc
        return
    stored = pa.concat_tables(files)
    assert safe(lambda: merge_arrow(s, stored)) == expected


@pytest.mark.parametrize("name", ["dedup", "agg", "pu"])
@SETTINGS
@given(commit_rows=st.lists(st.lists(row.filter(lambda r: r[0] in ("+I", "+U")), min_size=1, max_size=5),
                            min_size=1, max_size=4))
def test_additions_one_commit_at_a_time_equal_all_at_once(name, commit_rows):
    s, t = build(name, commit_rows)
    one = t.drop_columns(["_commit"])
    assert merge_arrow(s, t) == merge_arrow(s, one)


@pytest.mark.parametrize("name", ["dedup", "dedup-seq", "agg-lnnv", "pu-groups"])
@SETTINGS
@given(commit_rows=commits)
def test_changelog_replays_to_merged_table(name, commit_rows):
    s, t = build(name, commit_rows)
    result = safe(lambda: merge_arrow(s, t, with_changelog=True))
    if result == "raised":
        return
    merged, changes = result
    table = {}
    for r in rows(changes):
        key, kind = r[0], r[-2]
        if kind in ("+I", "+U"):
            table[key] = r[:-2]
        else:
            assert table.pop(key) == r[:-2]
    assert sorted(table.values()) == rows(merged)


@pytest.mark.parametrize("options", [{}, {"ignore-delete": "true"},
                                     {"ignore-update-before": "true"}],
                         ids=["plain", "ignore-delete", "ignore-update-before"])
@SETTINGS
@given(commit_rows=commits, data=st.data())
def test_deduplicate_shortcut_equals_the_general_merge(options, commit_rows, data):
    """merge_arrow merges deduplicate tables without sequence fields from their keys and sequence
    numbers alone (kernel._merge_last_records); the general path (the final table of a changelog
    merge) must give the same rows, whatever the physical order of the records."""
    s = make_spec(SCHEMA, **options)
    t = records(s, *commit_rows)
    t = t.take(data.draw(st.permutations(list(range(t.num_rows)))))
    assert merge_arrow(s, t) == merge_arrow(s, t, with_changelog=True)[0]


@pytest.mark.parametrize("options", [
    {}, {"ignore-delete": "true"}, {"sequence.field": "g"},
    {"sequence.field": "g,a", "sequence.field.sort-order": "descending"},
    {"sequence.field": "g", "ignore-delete": "true"},
    {"merge-engine": "first-row"}, {"merge-engine": "first-row", "ignore-delete": "true"}],
    ids=["plain", "ignore-delete", "sequence-field", "two-fields-descending",
         "sequence-field-ignore-delete", "first-row", "first-row-ignore-delete"])
@SETTINGS
@given(commit_rows=commits, data=st.data())
def test_a_deduplicate_or_first_row_merge_is_a_choice_of_records(options, commit_rows, data):
    """A native read keeps the stored records merged_record_rows names (native_read.py): they
    must be exactly merge_arrow's rows, whatever the records' physical order, from the keys,
    sequence fields, kinds and sequence numbers alone; both refuse the same records."""
    from dbt.adapters.paimon.runtime import merged_record_rows

    s = make_spec(SCHEMA, **options)
    t = records(s, *commit_rows)
    t = t.take(data.draw(st.permutations(list(range(t.num_rows)))))
    keys = t.select(["k"] + [f for f in s.sequence_fields] + ["_row_kind", "_seq", "_commit"])
    merged = safe(lambda: merge_arrow(s, t))
    rows_chosen = safe(lambda: merged_record_rows(s, keys))
    if merged == "raised":
        assert rows_chosen == "raised"
        return
    assert t.take(rows_chosen).select(list(s.names)).cast(s.arrow_schema) == merged
