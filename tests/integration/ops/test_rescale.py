"""rescale_buckets: new bucket count, one OVERWRITE snapshot, same rows, keys in the buckets
Paimon's hash gives them."""
import numpy as np
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.kv_files import read_split_records
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops import rescale_buckets
from ops_helpers import kinds, levels, make_table, pypaimon_rows, read_back, sorted_rows, write_run

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])


def _run(seed, n=200, with_deletes=False):
    rng = np.random.default_rng(seed)
    ops = rng.choice(["+I", "+I", "-D"] if with_deletes else ["+I"], n)
    return pa.table({"dt": pa.array(rng.choice(["a", "b"], n), pa.string()),
                     "id": pa.array(rng.integers(0, 150, n), pa.int64()),
                     "v": pa.array(rng.integers(0, 100, n), pa.int64()),
                     "op": pa.array(ops, pa.string())})


def _buckets_right(location, n):
    table = location.open()
    for split in plan_splits(table):
        ids = read_split_records(table, split).select(["id"])
        assert set(bucket_ids(ids, n).tolist()) == {split.bucket}
        assert split.total_buckets == n


def test_rescale_whole_table(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["dt", "id"], ["dt"], {"bucket": "2"})
    for seed in range(3):
        write_run(spark, location, _run(seed, with_deletes=seed > 0), "op")
    before = read_back(location)
    result = rescale_buckets(spark, location, 5)
    assert result.snapshot_id == 4 and result.old_buckets == 2 and result.new_buckets == 5
    assert kinds(location) == ["APPEND"] * 3 + ["OVERWRITE"]
    assert location.open().table_schema.options["bucket"] == "5"
    assert sorted_rows(read_back(location), ["dt", "id"]) == sorted_rows(before, ["dt", "id"])
    assert set(levels(location)) == {5}
    _buckets_right(location, 5)
    # later runs write into the new buckets and merge with the rescaled rows
    write_run(spark, location, _run(9, with_deletes=True), "op")
    _buckets_right(location, 5)
    assert sorted_rows(pypaimon_rows(location), ["dt", "id"]) == \
        sorted_rows(read_back(location), ["dt", "id"])


def test_rescale_selected_partitions(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["dt", "id"], ["dt"], {"bucket": "2"})
    write_run(spark, location, _run(1), "op")
    before = read_back(location)
    result = rescale_buckets(spark, location, 3, partitions=[{"dt": "b"}])
    assert result.partitions == [{"dt": "b"}]
    totals = {(s.partition["dt"], s.total_buckets) for s in plan_splits(location.open())}
    assert totals == {("a", 2), ("b", 3)}
    assert sorted_rows(read_back(location), ["dt", "id"]) == sorted_rows(before, ["dt", "id"])


def test_rescale_refuses_dynamic_buckets(spark, tmp_path):
    location = make_table(tmp_path, "d", SCHEMA, ["dt", "id"], ["dt"], {"bucket": "-1"})
    with pytest.raises(ValueError, match="dynamic bucket mode.*HASH index"):
        rescale_buckets(spark, location, 4)


def test_rescale_checks_arguments(spark, tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["dt", "id"], ["dt"], {"bucket": "2"})
    with pytest.raises(ValueError, match="positive integer"):
        rescale_buckets(spark, location, 0)
    unpartitioned = make_table(tmp_path, "u", SCHEMA, ["id"], [], {"bucket": "2"})
    with pytest.raises(ValueError, match="not partitioned"):
        rescale_buckets(spark, unpartitioned, 3, partitions=[{"dt": "a"}])


def test_in_process_and_spark_tasks_rescale_to_the_same_files(spark, tmp_path):
    """A small table is rescaled in the dbt process; the same rescale in Spark tasks
    (writePath 'distributed') writes files with the same rows, levels and statistics."""
    from tests.integration.table_files import live_file_metadata

    tables = {}
    for path in ("in_process", "distributed"):
        location = make_table(tmp_path, path, SCHEMA, ["dt", "id"], ["dt"], {"bucket": "2"})
        for seed in range(2):
            write_run(spark, location, _run(seed, with_deletes=seed > 0), "op")
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            assert rescale_buckets(spark, location, 3).snapshot_id == 3
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
        tables[path] = location
    assert live_file_metadata(tables["in_process"]) == live_file_metadata(tables["distributed"])
    _buckets_right(tables["in_process"], 3)


# --------------------------------------------------------------------------- append tables

def _append_rows(location, ids):
    from dbt.adapters.paimon.datasource.source import commit_append_files, write_append_files

    rows = pa.table({"dt": pa.array([f"d{i % 2}" for i in ids], pa.string()),
                     "id": pa.array(list(ids), pa.int64()),
                     "v": pa.array([i * 10 for i in ids], pa.int64())})
    table = location.open()
    commit_append_files(table, write_append_files(table, [rows]))


def _bucket_order(location):
    """(partition, bucket) -> ids in read order (files by sequence number, rows by position)."""
    from dbt.adapters.paimon.format.kv_files import read_append_split

    table = location.open()
    return {(s.partition_values, s.bucket): read_append_split(table, s).column("id").to_pylist()
            for s in plan_splits(table)}


@pytest.mark.parametrize("bucket_key", ["id", None], ids=["bucket-key", "whole-row"])
def test_rescale_bucketed_append_table(spark, tmp_path, bucket_key):
    """As Paimon's ALTER 'bucket' + INSERT OVERWRITE ... SELECT: every row in the bucket the
    hash of its bucket key (all columns without 'bucket-key') gives for the new count, each
    new bucket's rows in the order the table read them (old buckets in order), sequence
    numbers from 0; one OVERWRITE snapshot."""
    options = {"bucket": "2", **({"bucket-key": bucket_key} if bucket_key else {})}
    location = make_table(tmp_path, "q", SCHEMA, [], ["dt"], options)
    for n in range(3):
        _append_rows(location, range(20 * n, 20 * n + 20))
    before = _bucket_order(location)
    result = rescale_buckets(spark, location, 3)
    assert result.snapshot_id == 4 and kinds(location) == ["APPEND"] * 3 + ["OVERWRITE"]
    after = _bucket_order(location)
    keys = ["id"] if bucket_key else ["dt", "id", "v"]
    for (partition, bucket), ids in after.items():
        rows = pa.table({"dt": pa.array([partition[0]] * len(ids)),
                         "id": pa.array(ids, pa.int64()),
                         "v": pa.array([i * 10 for i in ids], pa.int64())})
        assert set(bucket_ids(rows.select(keys), 3).tolist()) == {bucket}
        expected = [i for (p, b), old in sorted(before.items()) if p == partition
                    for i in old if i in set(ids)]
        assert ids == expected
    assert sorted(i for ids in after.values() for i in ids) == list(range(60))
    for split in plan_splits(location.open()):
        assert split.total_buckets == 3 and split.files[0].min_sequence_number == 0
        assert split.files[-1].max_sequence_number == split.row_count - 1
    # later appends go to the new buckets after the rescaled rows
    _append_rows(location, [100, 101])
    assert sorted(i for ids in _bucket_order(location).values() for i in ids) == \
        list(range(60)) + [100, 101]


def test_rescale_refuses_unbucketed_append_tables(spark, tmp_path):
    location = make_table(tmp_path, "a", SCHEMA, [], ["dt"], {})
    with pytest.raises(ValueError, match="cannot change 'bucket' when it is -1"):
        rescale_buckets(spark, location, 4)


def test_in_process_and_spark_tasks_rescale_append_tables_to_the_same_files(spark, tmp_path):
    from tests.integration.table_files import live_file_metadata

    tables = {}
    for path in ("in_process", "distributed"):
        location = make_table(tmp_path, path, SCHEMA, [], ["dt"],
                              {"bucket": "2", "bucket-key": "id"})
        for n in range(3):
            _append_rows(location, range(20 * n, 20 * n + 20))
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            assert rescale_buckets(spark, location, 3).snapshot_id == 4
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
        tables[path] = location
    assert live_file_metadata(tables["in_process"]) == live_file_metadata(tables["distributed"])
    assert _bucket_order(tables["in_process"]) == _bucket_order(tables["distributed"])
