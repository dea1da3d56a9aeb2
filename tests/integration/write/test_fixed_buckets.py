"""Fixed buckets: several runs, each one commit, read back merged and by pypaimon."""
import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.write import WriteResult, write_primary_key_run
from write_helpers import (check_files, expected_after, key_buckets, make_table, read_back,
                           sorted_rows)

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int32())])


def _run(ids, names=None, amounts=None, kinds=None):
    n = len(ids)
    data = {"id": pa.array(ids, pa.int64()),
            "name": pa.array(names or [f"n{i}" for i in ids], pa.string()),
            "amount": pa.array(amounts or [int(i) for i in range(n)], pa.int32())}
    if kinds is not None:
        data["op"] = pa.array(kinds, pa.string())
    return pa.table(data)


def test_unpartitioned_runs_merge_like_paimon(spark, tmp_path):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={"bucket": "3"})
    rng = np.random.default_rng(1)
    runs = []
    for run in range(3):
        ids = rng.integers(0, 60, 150).tolist()
        runs.append(_run(ids, amounts=rng.integers(0, 1000, 150).tolist()))
    for i, run in enumerate(runs):
        result = write_primary_key_run(spark, spark.createDataFrame(run), location,
                                       model_name="orders")
        assert isinstance(result, WriteResult)
        assert result.snapshot_id == i + 1 and result.records == 150
    assert [s.commit_kind for s in list_snapshots(location.open())] == ["APPEND"] * 3
    got = read_back(location)
    assert sorted_rows(got, ["id"]) == sorted_rows(expected_after(location, runs), ["id"])
    # pypaimon's own reader agrees (deduplicate, no deletes)
    table = location.open()
    builder = table.new_read_builder()
    theirs = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted_rows(theirs, ["id"]) == sorted_rows(got, ["id"])
    # every key in the bucket Paimon's hash gives it
    where = key_buckets(location, ["id"])
    keys = pa.table({"id": pa.array([k[0] for k in where], pa.int64())})
    assert [b for _, b in where.values()] == bucket_ids(keys, 3).tolist()
    check_files(location)


def test_deletes_and_updates_through_row_kind_column(spark, tmp_path):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={"bucket": "2"})
    runs = [
        _run([1, 2, 3, 4, 5, 1], kinds=["+I"] * 6),
        _run([2, 3, 3, 6, 4], kinds=["-D", "-U", "+U", "+I", "-D"]),
        _run([4, 7, 5], kinds=["+I", "-D", "-D"]),  # 7: a delete of a key never inserted
    ]
    for run in runs:
        write_primary_key_run(spark, spark.createDataFrame(run), location,
                              row_kind_column="op", model_name="orders")
    got = read_back(location)
    expected = expected_after(location, runs, row_kind_column="op")
    assert sorted_rows(got, ["id"]) == sorted_rows(expected, ["id"])
    assert sorted(r["id"] for r in got.to_pylist()) == [1, 3, 4, 6]
    check_files(location)


def test_partitioned_with_bucket_key(spark, tmp_path):
    schema = pa.schema([("dt", pa.string()), ("id", pa.int32()), ("sub", pa.string()),
                        ("v", pa.float64())])
    location = make_table(tmp_path, "events", schema, ["dt", "id", "sub"], ["dt"],
                          {"bucket": "4", "bucket-key": "id"})
    rng = np.random.default_rng(2)
    runs = []
    for _ in range(2):
        n = 300
        runs.append(pa.table({
            "dt": pa.array(rng.choice(["2024-01-01", "2024-01-02", "2024-01-03"], n)),
            "id": pa.array(rng.integers(0, 40, n), pa.int32()),
            "sub": pa.array(rng.choice(["a", "bb", "a-long-sub-key"], n)),
            "v": pa.array(rng.random(n))}))
    for run in runs:
        write_primary_key_run(spark, spark.createDataFrame(run), location, model_name="events")
    keys = ["dt", "id", "sub"]
    assert sorted_rows(read_back(location), keys) == \
        sorted_rows(expected_after(location, runs), keys)
    where = key_buckets(location, keys)
    ids = pa.table({"id": pa.array([k[1] for k in where], pa.int32())})
    assert [b for _, b in where.values()] == bucket_ids(ids, 4).tolist()
    assert all(p == (k[0],) for k, (p, _) in where.items())
    check_files(location)


def test_aggregation_and_sequence_field(spark, tmp_path):
    schema = pa.schema([("k", pa.int32()), ("total", pa.int64()), ("top", pa.int32())])
    agg = make_table(tmp_path, "agg", schema, ["k"], options={
        "bucket": "2", "merge-engine": "aggregation",
        "fields.total.aggregate-function": "sum", "fields.top.aggregate-function": "max"})
    runs = [pa.table({"k": pa.array([1, 2, 1, 3], pa.int32()),
                      "total": pa.array([10, 20, 5, 1], pa.int64()),
                      "top": pa.array([1, 9, 4, 2], pa.int32())}),
            pa.table({"k": pa.array([1, 3], pa.int32()), "total": pa.array([100, 1], pa.int64()),
                      "top": pa.array([2, 7], pa.int32())})]
    for run in runs:
        write_primary_key_run(spark, spark.createDataFrame(run), agg, model_name="agg")
    assert sorted_rows(read_back(agg), ["k"]) == [
        {"k": 1, "total": 115, "top": 4}, {"k": 2, "total": 20, "top": 9},
        {"k": 3, "total": 2, "top": 7}]

    schema = pa.schema([("k", pa.int32()), ("ts", pa.int64()), ("v", pa.string())])
    seq = make_table(tmp_path, "seq", schema, ["k"], options={"bucket": "2",
                                                              "sequence.field": "ts"})
    runs = [pa.table({"k": pa.array([1, 1, 2], pa.int32()), "ts": pa.array([5, 3, 1]),
                      "v": ["new", "old", "x"]}),
            pa.table({"k": pa.array([1, 2], pa.int32()), "ts": pa.array([4, 2]),
                      "v": ["older-run-but-later", "y"]})]
    for run in runs:
        write_primary_key_run(spark, spark.createDataFrame(run), seq, model_name="seq")
    got = sorted_rows(read_back(seq), ["k"])
    assert got == sorted_rows(expected_after(seq, runs), ["k"])
    assert [r["v"] for r in got] == ["new", "y"]


def test_arrival_order_across_spark_partitions(spark, tmp_path):
    """The last row the query returns wins, also when the rows span several Spark partitions."""
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={"bucket": "2"})
    n = 4000
    df = spark.range(0, n, numPartitions=4).selectExpr(
        "id % 10 as id", "cast(id as string) as name", "cast(id as int) as amount")
    write_primary_key_run(spark, df, location, model_name="orders")
    got = sorted_rows(read_back(location), ["id"])
    assert [r["amount"] for r in got] == [n - 10 + i for i in range(10)]
    # an explicit order by decides it too
    df = spark.range(0, n, numPartitions=4).selectExpr(
        "id % 10 as id", "cast(id as string) as name", "cast(-id as int) as amount"
    ).orderBy("amount")
    write_primary_key_run(spark, df, location, model_name="orders")
    got = sorted_rows(read_back(location), ["id"])
    assert [r["amount"] for r in got] == [-i for i in range(10)]


def test_empty_input_commits_nothing(spark, tmp_path):
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={"bucket": "2"})
    result = write_primary_key_run(spark, spark.createDataFrame(_run([1])).limit(0), location)
    assert result.snapshot_id is None and result.records == 0 and result.files == 0
    assert list_snapshots(location.open()) == []


def test_bucket_hash_on_200k_rows(spark, tmp_path):
    """The vectorized bucket path on a larger input: every key where Paimon's hash puts it."""
    schema = pa.schema([("k", pa.string()), ("n", pa.int64()), ("v", pa.int64())])
    location = make_table(tmp_path, "big", schema, ["k", "n"], options={"bucket": "5"})
    df = spark.range(0, 200_000, numPartitions=4).selectExpr(
        "concat('key-', cast(id % 150000 as string)) as k", "id % 7 as n", "id as v")
    result = write_primary_key_run(spark, df, location, model_name="big")
    assert result.records == 200_000
    got = read_back(location)
    assert got.num_rows == len({(f"key-{i % 150000}", i % 7) for i in range(200_000)})
    table = location.open()
    from dbt.adapters.paimon.format.splits import plan_splits
    from dbt.adapters.paimon.format.kv_files import read_split_records
    for split in plan_splits(table):
        keys = read_split_records(table, split).select(["k", "n"])
        assert set(bucket_ids(keys, 5).tolist()) == {split.bucket}
    # last value wins: v is the largest id with that key
    sample = {(r["k"], r["n"]): r["v"] for r in got.slice(0, 2000).to_pylist()}
    for (k, n), v in sample.items():
        i = int(k.split("-")[1])
        candidates = [x for x in range(i, 200_000, 150000) if x % 7 == n]
        assert v == max(candidates)


def test_interleaved_with_pypaimon_writes(spark, tmp_path):
    """Sequence numbers continue across writers: ours, pypaimon's, ours again."""
    location = make_table(tmp_path, "orders", SCHEMA, ["id"], options={"bucket": "2"})
    runs = [_run([1, 2, 3, 4], amounts=[1, 2, 3, 4]), _run([2, 3, 5], amounts=[20, 30, 50]),
            _run([3, 5, 6], amounts=[300, 500, 600])]
    write_primary_key_run(spark, spark.createDataFrame(runs[0]), location, model_name="orders")
    table = location.open()
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(runs[1])
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    write_primary_key_run(spark, spark.createDataFrame(runs[2]), location, model_name="orders")
    got = sorted_rows(read_back(location), ["id"])
    assert got == sorted_rows(expected_after(location, runs), ["id"])
    assert {r["id"]: r["amount"] for r in got} == {1: 1, 2: 20, 3: 300, 4: 4, 5: 500, 6: 600}
    table = location.open()
    builder = table.new_read_builder()
    theirs = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted_rows(theirs, ["id"]) == got


def test_input_changelog_holds_every_record_as_it_arrived(spark, tmp_path):
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager
    from pypaimon.utils.file_store_path_factory import canonical_data_file_path

    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.format.splits import Split

    location = make_table(tmp_path, "orders", SCHEMA, ["id"],
                          options={"bucket": "2", "changelog-producer": "input"})
    run = _run([1, 2, 1, 3, 1], amounts=[1, 2, 3, 4, 5], kinds=["+I", "+I", "-U", "+I", "+U"])
    write_primary_key_run(spark, spark.createDataFrame(run), location, row_kind_column="op",
                          model_name="orders")
    table = location.open()
    snapshot = table.snapshot_manager().get_latest_snapshot()
    assert snapshot.changelog_record_count == 5
    logged, changelog_max = [], {}
    for manifest in ManifestListManager(table).read_changelog(snapshot):
        for entry in ManifestFileManager(table).read(manifest.file_name, drop_stats=False):
            changelog_max[entry.bucket] = max(changelog_max.get(entry.bucket, -1),
                                              entry.file.max_sequence_number)
            entry.file.file_path = canonical_data_file_path(table, (), entry.bucket,
                                                            entry.file.file_name)
            split = Split({}, (), entry.bucket, [entry.file], snapshot.id)
            records = read_split_records(table, split)
            logged += list(zip(records.column("id").to_pylist(),
                               records.column("amount").to_pylist(),
                               records.column("_row_kind").to_pylist()))
    # per bucket in arrival order; every record, retractions included
    assert sorted(logged) == sorted(zip([1, 2, 1, 3, 1], [1, 2, 3, 4, 5],
                                        ["+I", "+I", "-U", "+I", "+U"]))
    ones = [r for r in logged if r[0] == 1]
    assert ones == [(1, 1, "+I"), (1, 3, "-U"), (1, 5, "+U")]
    # records are numbered by arrival as Java's write buffer does, the stored row keeping its
    # record's number: no changelog record is above its bucket's data, so the next run's
    # numbers (data max + 1) never repeat a changelog's
    from dbt.adapters.paimon.format.splits import plan_splits

    data_max = {s.bucket: s.max_sequence_number for s in plan_splits(table)}
    assert changelog_max == data_max
    assert sorted_rows(read_back(location), ["id"]) == [
        {"id": 1, "name": "n1", "amount": 5}, {"id": 2, "name": "n2", "amount": 2},
        {"id": 3, "name": "n3", "amount": 4}]
