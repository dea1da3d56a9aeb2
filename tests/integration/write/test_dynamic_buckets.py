"""Dynamic buckets ('bucket' = '-1'): keys keep their bucket, buckets fill up to the target,
HASH index files that pypaimon's own dynamic-bucket writer reads back."""
import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format.bucket import hash_codes
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.write import dynamic_index, write_primary_key_run
from write_helpers import (check_files, expected_after, key_buckets, make_table, read_back,
                           sorted_rows, state)

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
KEYS = ["dt", "id"]


def _run(rng, n, key_range, dts=("d1", "d2")):
    return pa.table({"dt": pa.array(rng.choice(list(dts), n)),
                     "id": pa.array(rng.integers(0, key_range, n), pa.int64()),
                     "v": pa.array(rng.integers(0, 10**6, n), pa.int64())})


def _indexes(location):
    table = location.open()
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return {(tuple(e.partition.values), e.bucket): (e, dynamic_index.read_hashes(table, e))
            for e in dynamic_index.hash_index_entries(table, snapshot)}


def test_keys_keep_their_bucket_and_buckets_fill_to_target(spark, tmp_path):
    location = make_table(tmp_path, "dyn", SCHEMA, KEYS, ["dt"],
                          {"bucket": "-1", "dynamic-bucket.target-row-num": "25"})
    rng = np.random.default_rng(7)
    runs, seen = [], {}
    for key_range in (60, 120, 200):
        run = _run(rng, 300, key_range)
        runs.append(run)
        write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="dyn")
        where = key_buckets(location, KEYS)
        for key, bucket in seen.items():
            assert where[key] == bucket, f"key {key} moved"
        seen = where
    assert len(list_snapshots(location.open())) == 3
    assert sorted_rows(read_back(location), KEYS) == \
        sorted_rows(expected_after(location, runs), KEYS)
    indexes = _indexes(location)
    by_bucket = {}
    for key, where in seen.items():
        by_bucket.setdefault(where, []).append(key)
    assert set(indexes) == set(by_bucket)
    for where, keys in by_bucket.items():
        entry, hashes = indexes[where]
        ids = pa.table({"id": pa.array([k[1] for k in keys], pa.int64())})
        assert sorted(set(hash_codes(ids).tolist())) == sorted(hashes.tolist())
        assert entry.index_file.row_count == len(hashes) <= 25
    check_files(location)
    # pypaimon's reader agrees
    table = location.open()
    builder = table.new_read_builder()
    theirs = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted_rows(theirs, KEYS) == sorted_rows(read_back(location), KEYS)


def test_initial_buckets_and_unpartitioned(spark, tmp_path):
    schema = pa.schema([("id", pa.int32()), ("v", pa.string())])
    location = make_table(tmp_path, "dyn", schema, ["id"], options={
        "bucket": "-1", "dynamic-bucket.initial-buckets": "3",
        "dynamic-bucket.assigner-parallelism": "3"})
    run = pa.table({"id": pa.array(range(1000), pa.int32()),
                    "v": pa.array([str(i) for i in range(1000)])})
    write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="dyn")
    where = key_buckets(location, ["id"])
    assert sorted({b for _, b in where.values()}) == [0, 1, 2]
    assert read_back(location).num_rows == 1000


def test_pypaimon_dynamic_writer_reads_our_index(spark, tmp_path):
    """pypaimon restores key -> bucket from our HASH index: its writes update in place."""
    location = make_table(tmp_path, "dyn", SCHEMA, KEYS, ["dt"],
                          {"bucket": "-1", "dynamic-bucket.target-row-num": "10"})
    rng = np.random.default_rng(3)
    first = _run(rng, 200, 50)
    write_primary_key_run(spark, spark.createDataFrame(first), location, model_name="dyn")
    before = key_buckets(location, KEYS)
    table = location.open()
    update = first.slice(0, 40)
    update = update.set_column(2, "v", pa.array([-1] * 40, pa.int64()))
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(update)
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    assert key_buckets(location, KEYS) == before
    assert sorted_rows(read_back(location), KEYS) == \
        sorted_rows(expected_after(location, [first, update]), KEYS)
    # and we keep going on top of pypaimon's commit
    third = _run(rng, 100, 80)
    write_primary_key_run(spark, spark.createDataFrame(third), location, model_name="dyn")
    after = key_buckets(location, KEYS)
    assert all(after[k] == b for k, b in before.items())
    assert sorted_rows(read_back(location), KEYS) == \
        sorted_rows(expected_after(location, [first, update, third]), KEYS)


CROSS_SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()),
                          ("op", pa.string())])


def _cross_runs():
    """Keys move between partitions, within a run and across runs; some are deleted."""
    def run(rows):
        dt, ids, v, ops = zip(*rows)
        return pa.table({"dt": list(dt), "id": pa.array(ids, pa.int64()),
                         "v": pa.array(v, pa.int64()), "op": list(ops)})
    return [
        run([("d1", 1, 10, "+I"), ("d1", 2, 20, "+I"), ("d2", 3, 30, "+I"),
             ("d1", 4, 40, "+I"), ("d2", 1, 11, "+I")]),            # 1 moves within the run
        run([("d2", 2, 21, "+I"), ("d3", 3, 31, "+I"), ("d3", 5, 50, "+I"),
             ("d1", 4, 41, "+I"), ("d3", 4, 0, "-D")]),             # 4 deleted from d3
        run([("d1", 1, 12, "+I"), ("d1", 6, 60, "+I"), ("d2", 2, 22, "+I"),
             ("d9", 3, 0, "-D")]),                                   # 3 deleted from d9
    ]


def _with_home(runs, engine):
    """Paimon's rows for partial-update / aggregation / first-row: every row of a key goes to
    the partition where the key first appeared."""
    home, out = {}, []
    for run in runs:
        rows = run.to_pylist()
        for r in rows:
            home.setdefault(r["id"], r["dt"])
            r["dt"] = home[r["id"]]
        out.append(pa.Table.from_pylist(rows, schema=run.schema))
    return out


@pytest.mark.parametrize("engine,options", [
    ("deduplicate", {}),
    ("partial-update", {"ignore-delete": "true"}),
    ("aggregation", {"fields.v.aggregate-function": "sum"}),
    ("first-row", {"ignore-delete": "true"}),
])
def test_cross_partition_update_follows_the_engine_rule(spark, tmp_path, engine, options):
    location = make_table(tmp_path, "cross", CROSS_SCHEMA.remove(3), ["id"], ["dt"],
                          {"bucket": "-1", "merge-engine": engine,
                           "dynamic-bucket.target-row-num": "2", **options})
    runs = _cross_runs()
    for run in runs:
        write_primary_key_run(spark, spark.createDataFrame(run), location,
                              row_kind_column="op", model_name="cross")
    got = read_back(location)
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), f"a key lives in two partitions: {got.to_pylist()}"
    expected_runs = runs if engine == "deduplicate" else _with_home(runs, engine)
    expected = expected_after(location, expected_runs, row_kind_column="op")
    assert sorted_rows(got, ["id"]) == sorted_rows(expected, ["id"])
    if engine == "deduplicate":
        assert sorted_rows(got, ["id"]) == [
            {"dt": "d1", "id": 1, "v": 12}, {"dt": "d2", "id": 2, "v": 22},
            {"dt": "d3", "id": 5, "v": 50}, {"dt": "d1", "id": 6, "v": 60}]
    if engine == "first-row":
        assert {r["id"]: (r["dt"], r["v"]) for r in got.to_pylist()} == {
            1: ("d1", 10), 2: ("d1", 20), 3: ("d2", 30), 4: ("d1", 40), 5: ("d3", 50),
            6: ("d1", 60)}
    check_files(location)


def test_fixed_buckets_cannot_update_across_partitions(spark, tmp_path):
    fixed = make_table(tmp_path, "fixed", SCHEMA, ["id"], ["dt"], {"bucket": "2"})
    before = state(fixed)
    run = _run(np.random.default_rng(1), 10, 5)
    with pytest.raises(ValueError, match="dynamic buckets"):
        write_primary_key_run(spark, spark.createDataFrame(run), fixed, model_name="cross")
    assert state(fixed) == before
