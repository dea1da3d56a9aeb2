"""The `paimon` Spark data source on tables written by pypaimon: time travel, projection,
partition pruning, merged primary-key reads, and writes that commit once or not at all."""

import glob
import os

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import (PaimonPushdownReader, PaimonReader,
                                                   TableRef)
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])


def commit(table, rows):
    builder = table.new_batch_write_builder()
    write, committer = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.Table.from_pylist(
        [dict(zip(SCHEMA.names, r)) for r in rows], schema=SCHEMA))
    committer.commit(write.prepare_commit())
    write.close()
    committer.close()


def read(spark, warehouse, table, **options):
    reader = spark.read.format("paimon").option("warehouse", warehouse).option("table", table)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path)


def test_time_travel_and_projection(spark, warehouse):
    table = wh.create_table(warehouse, "db", "events", SCHEMA, partition_keys=["dt"])
    commit(table, [(1, "a", "d1"), (2, "b", "d2")])
    commit(wh.open_table(warehouse, "db", "events"), [(3, "c", "d2")])
    latest = read(spark, warehouse, "db.events")
    assert sorted(map(tuple, latest.collect())) == [(1, "a", "d1"), (2, "b", "d2"), (3, "c", "d2")]
    first = read(spark, warehouse, "db.events", snapshot_id=1)
    assert sorted(map(tuple, first.collect())) == [(1, "a", "d1"), (2, "b", "d2")]
    projected = read(spark, warehouse, "db.events", columns="name,id")
    assert projected.columns == ["name", "id"]
    assert sorted(map(tuple, projected.collect())) == [("a", 1), ("b", 2), ("c", 3)]


def test_partition_filters_prune_splits(spark, warehouse):
    table = wh.create_table(warehouse, "db", "parts", SCHEMA, partition_keys=["dt"])
    commit(table, [(i, "x", f"d{i % 3}") for i in range(9)])
    df = read(spark, warehouse, "db.parts").where("dt = 'd1' and id > 3")
    assert sorted(r.id for r in df.collect()) == [4, 7]
    # the reader Spark plans for this filter opens one partition's split only
    reader = PaimonPushdownReader(TableRef(warehouse, "db", "parts", {}), schema=None,
                          snapshot_id=None)
    from pyspark.sql.datasource import EqualTo, GreaterThan
    remaining = list(reader.pushFilters([EqualTo(("dt",), "d1"), GreaterThan(("id",), 3)]))
    assert [type(f).__name__ for f in remaining] == ["GreaterThan"]
    planned = [p.split for p in reader.partitions()]
    assert [s.partition for s in planned] == [{"dt": "d1"}]


def test_primary_key_table_reads_merged(spark, warehouse):
    table = wh.create_table(warehouse, "db", "users", SCHEMA, primary_keys=["id", "dt"],
                            partition_keys=["dt"], options={"bucket": "2"})
    commit(table, [(1, "a", "d1"), (2, "b", "d1")])
    commit(wh.open_table(warehouse, "db", "users"), [(1, "a2", "d1")])
    rows = sorted(map(tuple, read(spark, warehouse, "db.users").collect()))
    assert rows == [(1, "a2", "d1"), (2, "b", "d1")]


def test_append_write_is_one_commit(spark, warehouse):
    wh.create_table(warehouse, "db", "log", SCHEMA, partition_keys=["dt"])
    df = spark.createDataFrame([(i, "n", f"d{i % 2}") for i in range(20)], "id bigint, name string, dt string")
    df.repartition(4).write.format("paimon").option("warehouse", warehouse) \
        .option("table", "db.log").mode("append").save()
    table = wh.open_table(warehouse, "db", "log")
    assert [s.commit_kind for s in splits.list_snapshots(table)] == ["APPEND"]
    assert read(spark, warehouse, "db.log").count() == 20


def test_failed_write_commits_nothing_and_leaves_no_files(spark, warehouse):
    wh.create_table(warehouse, "db", "strict", SCHEMA, partition_keys=["dt"])
    # `id` is NOT NULL in the table: a NULL fails in the writing tasks
    df = spark.createDataFrame([(1, "a", "d1"), (None, "b", "d2")], "id bigint, name string, dt string")
    with pytest.raises(Exception):
        df.repartition(2).write.format("paimon").option("warehouse", warehouse) \
            .option("table", "db.strict").mode("append").save()
    table = wh.open_table(warehouse, "db", "strict")
    assert splits.list_snapshots(table) == []
    data_files = glob.glob(os.path.join(warehouse, "db.db", "strict", "dt=*", "bucket-*", "*"))
    assert data_files == []


def test_reads_in_a_session_without_python_filter_pushdown(spark, warehouse):
    """A PySpark session of the user's own leaves spark.sql.python.filterPushdown.enabled off
    (Spark's default): the data source reads there, without partition pruning."""
    table = wh.create_table(warehouse, "db", "plain", SCHEMA, partition_keys=["dt"])
    commit(table, [(1, "a", "d1"), (2, "b", "d2")])
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "false")
    try:
        rows = read(spark, warehouse, "db.plain").where("dt = 'd2'").collect()
        assert [tuple(r) for r in rows] == [(2, "b", "d2")]
        # the adapter's own option asks for pushdown, which Spark then refuses by name
        with pytest.raises(Exception, match="DATA_SOURCE_PUSHDOWN_DISABLED"):
            read(spark, warehouse, "db.plain", filter_pushdown="true").where(
                "dt = 'd2'").collect()
    finally:
        spark.conf.set(key, "true")


def test_an_append_tables_files_are_packed_into_tasks_in_order(spark, warehouse):
    """An unbucketed append table is one split per partition; its files are packed into tasks
    of a split size (read_tasks.py): each file counts at least source.split.open-file-cost
    (4 mb), so 6 tiny files over 3 task slots are 3 tasks of 2 files, over 1 slot one task,
    over 6 slots 6 tasks. Rows still come in Paimon's order (queue reads)."""
    wh.create_table(warehouse, "db", "many", SCHEMA)
    for i in range(6):
        commit(wh.open_table(warehouse, "db", "many"), [(i * 10 + j, "x", "d") for j in range(3)])
    for parallelism, tasks in ((3, 3), (1, 1), (6, 6)):
        frame = read(spark, warehouse, "db.many", parallelism=parallelism)
        assert frame.rdd.getNumPartitions() == tasks
        assert [r.id for r in frame.collect()] == [i * 10 + j for i in range(6) for j in range(3)]
    with pytest.raises(Exception, match="option 'parallelism' of the paimon data source must "
                                        "be a positive number of task slots, got '0'"):
        read(spark, warehouse, "db.many", parallelism=0).collect()


def test_a_primary_key_bucket_is_merged_by_a_task_per_key_section(spark, warehouse):
    """A bucket's files whose key ranges do not overlap are sections (pypaimon's
    IntervalPartition, as Java's MergeTreeSplitGenerator): no key is in two of them, so each
    is merged by a task of its own (here every section fills a split size). A run over both
    key ranges makes the bucket one section again. The rows are the whole bucket's merge."""
    table = wh.create_table(warehouse, "db", "sections", SCHEMA, primary_keys=["id"],
                            options={"bucket": "1", "source.split.target-size": "1 b",
                                     "source.split.open-file-cost": "1 b"})
    commit(table, [(i, "a", "d") for i in range(100)])
    commit(table, [(i, "b", "d") for i in range(200, 300)])
    commit(table, [(i, "c", "d") for i in range(50, 61)])
    location = TableRef(warehouse, "db", "sections", {})

    def tasks():
        return [sorted(f.file_name for f in p.split.files)
                for p in PaimonReader(location, None, None, 2).partitions()]

    def expected(names):
        return [(i, names(i), "d") for i in [*range(100), *range(200, 300)]]

    split, = splits.plan_splits(location.open())
    first, second, update = sorted(split.files, key=lambda f: f.min_sequence_number)
    assert tasks() == [sorted([first.file_name, update.file_name]), [second.file_name]]
    rows = sorted(map(tuple, read(spark, warehouse, "db.sections", parallelism=2).collect()))
    assert rows == expected(lambda i: "c" if 50 <= i <= 60 else "a" if i < 100 else "b")
    commit(table, [(i, "z", "d") for i in (99, 200)])
    assert len(tasks()) == 1
    rows = sorted(map(tuple, read(spark, warehouse, "db.sections").collect()))
    assert rows == expected(lambda i: "z" if i in (99, 200) else
                            "c" if 50 <= i <= 60 else "a" if i < 100 else "b")


def test_a_compacted_primary_key_split_streams_file_by_file_in_key_order(spark, warehouse):
    """A raw-convertible split's files hold the merged rows: the reader streams them a batch
    at a time, one sorted run's files in key order, instead of holding the split."""
    from dbt.adapters.paimon.datasource.source import iter_merged_split, read_merged_split
    from dbt.adapters.paimon.ops import compact_table
    from dbt.adapters.paimon.write import write_primary_key_run

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    wh.create_table(warehouse, "db", "runs", schema, primary_keys=["id"],
                    options={"bucket": "1", "target-file-size": "16 kb"})
    location = TableRef(warehouse, "db", "runs", {})
    for run in range(3):
        rows = pa.table({"id": pa.array(range(run * 3000, run * 3000 + 4000), pa.int64()),
                         "v": [f"run{run}-{'x' * 20}"] * 4000})
        write_primary_key_run(spark, spark.createDataFrame(rows.to_pandas()), location,
                              model_name="t")
    compact_table(spark, location, full=True)
    table = location.open()
    split, = splits.plan_splits(table)
    assert len(split.files) > 2 and {f.level for f in split.files} == {5}
    pieces = list(iter_merged_split(table, split, ["id", "v"]))
    assert len(pieces) >= len(split.files)
    streamed = pa.concat_tables(pieces)
    assert streamed.equals(read_merged_split(table, split, ["id", "v"]))
    assert streamed.column("id").to_pylist() == list(range(10000))
    assert streamed.column("v").to_pylist()[-1].startswith("run2")
    rows = sorted(map(tuple, read(spark, warehouse, "db.runs").where("id >= 9998").collect()))
    assert rows == [(9998, "run2-" + "x" * 20), (9999, "run2-" + "x" * 20)]


def test_a_split_to_merge_streams_by_key_range(spark, warehouse):
    """A split whose runs overlap is merged a key range at a time: each piece holds every
    record of its keys (so merging it alone is exact) and at most a batch per sorted run; the
    pieces come in key order, and merged one by one they give the whole split's merged rows.
    An aggregation table with a composite key (string, then integer), a compacted run of several
    files under two overlapping level-0 runs, one with a deletion."""
    from dbt.adapters.paimon.datasource.source import (iter_merged_split, merge_spec_of,
                                                       read_merged_split)
    from dbt.adapters.paimon.format.kv_files import iter_split_records
    from dbt.adapters.paimon.format.sorted_runs import sorted_runs
    from dbt.adapters.paimon.ops import compact_table
    from dbt.adapters.paimon.runtime import merge_arrow
    from dbt.adapters.paimon.write import write_primary_key_run

    schema = pa.schema([pa.field("region", pa.string(), nullable=False),
                        pa.field("id", pa.int64(), nullable=False),
                        ("total", pa.int64()), ("note", pa.string())])
    wh.create_table(warehouse, "db", "agg", schema, primary_keys=["region", "id"],
                    options={"bucket": "1", "target-file-size": "16 kb",
                             "merge-engine": "aggregation",
                             "fields.total.aggregate-function": "sum",
                             "fields.note.aggregate-function": "last_non_null_value"})
    location = TableRef(warehouse, "db", "agg", {})

    def run(ids, total, note, kinds=None):
        rows = {"region": [f"r{i % 3}" for i in ids], "id": list(ids),
                "total": [total] * len(ids), "note": [note] * len(ids)}
        if kinds is not None:
            rows["_kind"] = kinds
        frame = spark.createDataFrame(pa.table(rows).to_pandas())
        write_primary_key_run(spark, frame, location, model_name="agg",
                              row_kind_column="_kind" if kinds is not None else None)

    run(range(0, 6000), 1, "base")
    compact_table(spark, location, full=True)
    run(range(2000, 4000), 10, None)
    run(range(3000, 7000), 100, "late", kinds=["-D" if i == 3500 else "+I"
                                              for i in range(3000, 7000)])
    table = location.open()
    split, = splits.plan_splits(table)
    runs = sorted_runs(split.files)
    # each level-0 file (the runs roll at 16 kb), then the compacted run of several files
    assert runs[-1].level == 5 and len(runs[-1].files) > 2 and len(runs) > 3

    batch = 700
    pieces = list(iter_split_records(table, split, batch_rows=batch))
    assert len(pieces) > 10
    assert max(p.num_rows for p in pieces) <= len(runs) * batch
    keys = [list(zip(p.column("region").to_pylist(), p.column("id").to_pylist()))
            for p in pieces]
    for before, after in zip(keys, keys[1:]):
        assert max(before) < min(after)  # ascending key ranges: no key in two pieces
    spec = merge_spec_of(table)
    names = ["region", "id", "total", "note"]
    merged = pa.concat_tables([merge_arrow(spec, p.drop_columns(["_level"])).select(names)
                               for p in pieces])
    whole = read_merged_split(table, split, names)
    assert merged.equals(whole)
    assert pa.concat_tables(iter_merged_split(table, split, names)).equals(whole)
    row = {r["id"]: r for r in whole.to_pylist()}
    assert row[2500]["total"] == 11 and row[2500]["note"] == "base"
    assert row[3100]["total"] == 111 and row[3100]["note"] == "late"
    assert row[6500]["total"] == 100
    # the aggregation retracts the deleted record's value: sum 1 + 10 - 100
    assert row[3500]["total"] == -89
    frame = read(spark, warehouse, "db.agg").where("id in (2500, 3100, 3500)")
    assert sorted((r.id, r.total) for r in frame.collect()) == [(2500, 11), (3100, 111),
                                                               (3500, -89)]


def test_a_data_file_gone_under_a_read_names_the_table_and_the_retry(spark, warehouse):
    """Another process expired the snapshot a read planned from (its data files are gone):
    the Python read fails naming the file, the table and what to do, never with fewer rows."""
    table = wh.create_table(warehouse, "db", "gone", SCHEMA)
    commit(table, [(1, "a", "d")])
    commit(wh.open_table(warehouse, "db", "gone"), [(2, "b", "d")])
    split, = splits.plan_splits(wh.open_table(warehouse, "db", "gone"))
    os.remove(split.files[0].file_path)
    with pytest.raises(Exception) as failure:
        read(spark, warehouse, "db.gone").collect()
    message = str(failure.value)
    assert f"data file {split.files[0].file_path} of Paimon table db.gone is gone" in message
    assert "Run the command again: it reads the table's current snapshot." in message
