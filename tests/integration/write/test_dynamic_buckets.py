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
        "bucket": "-1", "dynamic-bucket.initial-buckets": "3"})
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


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update", "aggregation",
                                    "first-row"])
def test_cross_partition_update_is_refused_clearly(spark, tmp_path, engine):
    location = make_table(tmp_path, "cross", SCHEMA, ["id"], ["dt"],
                          {"bucket": "-1", "merge-engine": engine})
    before = state(location)
    run = _run(np.random.default_rng(1), 10, 5)
    with pytest.raises(NotImplementedError) as info:
        write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="cross")
    message = str(info.value)
    assert "db.cross" in message and engine in message and "cross-partition" in message
    assert state(location) == before
