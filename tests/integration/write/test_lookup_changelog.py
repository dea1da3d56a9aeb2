"""changelog-producer 'lookup': every run's snapshot carries the changelog of that commit (each
written key's state before vs after), read back through the change reader."""
import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.datasource.changes import ChangeRange, read_changes
from dbt.adapters.paimon.datasource.source import merge_spec_of
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.runtime import merge_arrow
from dbt.adapters.paimon.write import write_primary_key_run
from write_helpers import make_table

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int32())])


def _run(rows, kinds=None):
    ids, names, amounts = zip(*rows)
    data = {"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string()),
            "amount": pa.array(amounts, pa.int32())}
    if kinds is not None:
        data["op"] = pa.array(kinds, pa.string())
    return pa.table(data)


def _write(spark, location, run, kinds=False):
    return write_primary_key_run(spark, spark.createDataFrame(run), location,
                                 row_kind_column="op" if kinds else None, model_name="orders")


def _changelog(location, run):
    """(row kind, id, name, amount) of one run's changelog, sorted by key then kind order (run
    n commits snapshots 2n-1, APPEND, and 2n, COMPACT with the changelog)."""
    changes = read_changes(location.open(), ChangeRange(2 * run - 2, 2 * run, "changelog"))
    order = {"-D": 0, "-U": 0, "+I": 1, "+U": 1}
    rows = [(r["_row_kind"], r["id"], r["name"], r["amount"]) for r in changes.to_pylist()]
    return sorted(rows, key=lambda r: (r[1], order[r[0]]))


def test_lookup_changelog_of_each_run(spark, tmp_path):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"],
                          options={"bucket": "2", "changelog-producer": "lookup"})
    _write(spark, location, _run([(1, "a", 10), (2, "b", 20), (3, "c", 30), (1, "a", 11)]))
    assert _changelog(location, 1) == [("+I", 1, "a", 11), ("+I", 2, "b", 20),
                                       ("+I", 3, "c", 30)]
    # update 1, rewrite 2 unchanged, delete 3, insert 4, delete 9 that never existed
    _write(spark, location, _run([(1, "a", 12), (2, "b", 20), (3, "c", 30), (4, "d", 40),
                                  (9, "z", 0)], ["+U", "+I", "-D", "+I", "-D"]), kinds=True)
    assert _changelog(location, 2) == [
        ("-U", 1, "a", 11), ("+U", 1, "a", 12), ("-U", 2, "b", 20), ("+U", 2, "b", 20),
        ("-D", 3, "c", 30), ("+I", 4, "d", 40)]
    _write(spark, location, _run([(3, "c", 31)]))  # a deleted key comes back: +I
    assert _changelog(location, 3) == [("+I", 3, "c", 31)]
    # as Java's lookup producer: each run's data in an APPEND snapshot, its changelog in the
    # COMPACT snapshot right after it (the only place Paimon 1.0's streaming readers look)
    snapshots = list_snapshots(location.open())
    assert [s.commit_kind for s in snapshots] == ["APPEND", "COMPACT"] * 3
    table = location.open()
    for s in table.snapshot_manager().list_snapshots():
        assert (s.changelog_manifest_list is not None) == (s.commit_kind == "COMPACT")


def test_row_deduplicate_and_ignore_fields(spark, tmp_path):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={
        "bucket": "1", "changelog-producer": "lookup",
        "changelog-producer.row-deduplicate": "true",
        "changelog-producer.row-deduplicate-ignore-fields": "name"})
    _write(spark, location, _run([(1, "a", 10), (2, "b", 20), (3, "c", 30)]))
    # 1 unchanged, 2 changes only the ignored field, 3 changes amount
    _write(spark, location, _run([(1, "a", 10), (2, "B", 20), (3, "c", 31)]))
    assert _changelog(location, 2) == [("-U", 3, "c", 30), ("+U", 3, "c", 31)]
    table = location.open()
    assert table.snapshot_manager().get_latest_snapshot().changelog_record_count == 2


def test_first_row_emits_only_new_keys(spark, tmp_path):
    location = make_table(tmp_path, "firsts", SCHEMA, ["id"], options={
        "bucket": "2", "merge-engine": "first-row", "changelog-producer": "lookup"})
    _write(spark, location, _run([(1, "a", 10), (2, "b", 20)]))
    _write(spark, location, _run([(1, "x", 99), (3, "c", 30), (3, "y", 98)]))
    assert _changelog(location, 1) == [("+I", 1, "a", 10), ("+I", 2, "b", 20)]
    assert _changelog(location, 2) == [("+I", 3, "c", 30)]


def test_partitioned_aggregation_matches_the_runtime_over_all_commits(spark, tmp_path):
    """Random runs: each snapshot's changelog equals the runtime's changelog of that commit
    computed from all runs' records at once (the bucket's before-state comes from its files)."""
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("total", pa.int64()),
                        ("top", pa.int32())])
    location = make_table(tmp_path, "agg", schema, ["dt", "id"], ["dt"], options={
        "bucket": "2", "changelog-producer": "lookup", "merge-engine": "aggregation",
        "fields.total.aggregate-function": "sum", "fields.top.aggregate-function": "max"})
    rng = np.random.default_rng(7)
    runs = []
    for _ in range(3):
        n = 40
        runs.append(pa.table({
            "dt": pa.array(rng.choice(["d1", "d2"], n).tolist(), pa.string()),
            "id": pa.array(rng.integers(0, 15, n), pa.int64()),
            "total": pa.array(rng.integers(-5, 10, n), pa.int64()),
            "top": pa.array(rng.integers(0, 100, n), pa.int32())}))
    for run in runs:
        _write(spark, location, run)
    records = []
    for commit, run in enumerate(runs, start=1):
        records.append(run.append_column("_row_kind", pa.array(["+I"] * run.num_rows))
                       .append_column("_seq", pa.array(np.arange(run.num_rows), pa.int64()))
                       .append_column("_commit", pa.array([commit] * run.num_rows, pa.int64())))
    _, expected = merge_arrow(merge_spec_of(location.open()), pa.concat_tables(records),
                              with_changelog=True)
    table = location.open()
    for commit in (1, 2, 3):
        want = expected.filter(pa.compute.equal(expected.column("_commit"), commit))
        got = read_changes(table, ChangeRange(2 * commit - 2, 2 * commit, "changelog"))

        def key(rows):
            return sorted((r["dt"], r["id"], r["_row_kind"], r["total"], r["top"])
                          for r in rows.to_pylist())
        assert key(got) == key(want.drop_columns(["_commit"])), commit
