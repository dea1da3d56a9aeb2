"""Writes of the table modes Paimon added after 1.0, with pypaimon 2.1 as the oracle on both
sides: postpone-bucket tables (``bucket`` = -2) whose postpone rows a streaming writer left
become visible after ``compact``, and primary-key runs into such tables write straight into
fixed buckets; pypaimon reads what we wrote, and its own fixed-bucket writes land in the same
buckets as ours (one row per key after them)."""
import datetime
import decimal

import pyarrow as pa
import pytest
from pypaimon import CatalogFactory, Schema
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import postpone_merge
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.ops.compact import compact_table
from dbt.adapters.paimon.runtime import PaimonConfigError
from dbt.adapters.paimon.write import write_primary_key_run
import write_helpers
from write_helpers import read_back

ROWS = pa.schema([pa.field("id", pa.int64(), nullable=False),
                  pa.field("dt", pa.string(), nullable=False), ("v", pa.string()),
                  ("ts", pa.timestamp("us")), ("amount", pa.decimal128(10, 2))])


@pytest.fixture
def catalog(tmp_path):
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "warehouse")})
    catalog.create_database("db", True)
    return catalog


def create(catalog, name, **options):
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id", "dt"], partition_keys=["dt"],
        options={"bucket": "-2", **options}), False)


def location_of(tmp_path, name):
    return TableRef(str(tmp_path / "warehouse"), "db", name, {})


def rows(ids, dts, tag):
    ids = list(ids)
    dts = dts if isinstance(dts, list) else [dts] * len(ids)
    return pa.table({"id": ids, "dt": dts, "v": [f"{tag}{i}" for i in ids],
                     "ts": [datetime.datetime(2024, 1, 1, 0, 0, i % 60) for i in ids],
                     "amount": [decimal.Decimal(f"{i}.25") for i in ids]}, schema=ROWS)


def stream_write(catalog, name, data, identifier=1):
    """A streaming writer's commit (Flink's way) into table ``name``'s postpone bucket."""
    write_helpers.stream_write(catalog.get_table(f"db.{name}"), data, identifier, pause=0.005)


def fixed_write(catalog, name, data):
    """Paimon 1.4's batch write of a postpone table: straight into fixed buckets."""
    table = catalog.get_table(f"db.{name}")
    builder = table.new_postpone_fixed_bucket_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(data)
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()


def pypaimon_rows(catalog, name):
    table = catalog.get_table(f"db.{name}")
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted(data.to_pylist(), key=lambda r: (r["dt"], r["id"]))


def ours(location):
    return sorted(read_back(location).to_pylist(), key=lambda r: (r["dt"], r["id"]))


def expected(*runs):
    """The last record of each key over the runs, in order."""
    latest = {}
    for run in runs:
        for row in run.to_pylist():
            latest[(row["dt"], row["id"])] = row
    return [latest[k] for k in sorted(latest)]


def bucket_counts(location):
    """partition -> the total_buckets of its real buckets' files (one value each)."""
    counts = {}
    for split in splits_mod.plan_splits(location.open()):
        counts.setdefault(split.partition["dt"], set()).add(split.total_buckets)
    return counts


def test_compact_moves_streaming_rows_into_real_buckets(spark, catalog, tmp_path):
    name = "events"
    create(catalog, name, **{"postpone.default-bucket-num": "3"})
    location = location_of(tmp_path, name)
    # a batch writer's rows in fixed buckets (partition a: 3 buckets), then two streaming
    # writers' rows (keys repeated within and across writers) in the postpone bucket
    batch = rows(range(0, 20), "a", "batch")
    fixed_write(catalog, name, batch)
    first = rows([1, 2, 1, 5, 30, 31, 30], ["a"] * 5 + ["b"] * 2, "first")
    second = rows([2, 31, 40], ["a", "b", "c"], "second")
    stream_write(catalog, name, first, 1)
    stream_write(catalog, name, second, 2)
    assert pypaimon_rows(catalog, name) == expected(batch)
    # a new partition's count is the table's default, or estimated (not here)
    catalog.alter_table("db.events", [SchemaChange.set_option("postpone.default-bucket-num",
                                                                "2")])

    result = compact_table(spark, location)
    assert result.postpone_rows == 10 and "10 postpone-bucket rows moved" in result.message
    want = expected(batch, first, second)
    assert pypaimon_rows(catalog, name) == want
    assert ours(location) == want
    assert postpone_merge.postpone_files(location.open()) == []
    # partition a keeps its 3 buckets, b and c get the default (now 2)
    assert bucket_counts(location) == {"a": {3}, "b": {2}, "c": {2}}
    kinds = [s.commit_kind for s in splits_mod.list_snapshots(location.open())]
    assert kinds[:3] == ["APPEND"] * 3 and kinds[3] == "COMPACT" and set(kinds[3:]) == {"COMPACT"}
    # pypaimon's fixed-bucket write finds each key in the bucket we put it in
    again = rows([1, 2, 30, 31, 40, 41], ["a", "a", "b", "b", "c", "c"], "again")
    fixed_write(catalog, name, again)
    want = expected(batch, first, second, again)
    assert pypaimon_rows(catalog, name) == want and ours(location) == want
    # nothing pending: compact does the size-tiered compaction only
    assert compact_table(spark, location).postpone_snapshot_id is None


def test_threads_and_spark_tasks_move_postpone_rows_alike(spark, catalog, tmp_path):
    """A partition per unit, run in threads of the dbt process or one Spark task each: the
    same rows land in the same buckets, in one COMPACT snapshot."""
    first = rows([1, 2, 1, 5, 30, 31, 30], ["a"] * 5 + ["b"] * 2, "first")
    second = rows([2, 31, 40], ["a", "b", "c"], "second")
    layouts = {}
    for path in ("in_process", "distributed"):
        create(catalog, path, **{"postpone.default-bucket-num": "2"})
        stream_write(catalog, path, first, 1)
        stream_write(catalog, path, second, 2)
        location = location_of(tmp_path, path)
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            result = compact_table(spark, location)
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
        assert result.postpone_rows == 10 and result.postpone_snapshot_id == 3
        assert ours(location) == pypaimon_rows(catalog, path) == expected(first, second)
        layouts[path] = sorted((s.partition["dt"], s.bucket, s.row_count)
                               for s in splits_mod.plan_splits(location.open()))
    assert layouts["in_process"] == layouts["distributed"]


def test_compact_estimates_bucket_counts_as_paimon(spark, catalog, tmp_path):
    """Without postpone.default-bucket-num: ceil(postpone rows /
    postpone.target-row-num-per-bucket) per new partition."""
    name = "estimated"
    create(catalog, name, **{"postpone.target-row-num-per-bucket": "4"})
    location = location_of(tmp_path, name)
    data = rows(list(range(10)) + [100, 101], ["a"] * 10 + ["b"] * 2, "s")
    stream_write(catalog, name, data)
    compact_table(spark, location, full=True)
    assert bucket_counts(location) == {"a": {3}, "b": {1}}
    assert pypaimon_rows(catalog, name) == expected(data) == ours(location)


@pytest.mark.parametrize("write_path", ["in_process", "distributed"])
def test_model_runs_write_postpone_tables_into_fixed_buckets(spark, catalog, tmp_path,
                                                            write_path):
    name = f"orders_{write_path}"
    create(catalog, name, **{"postpone.default-bucket-num": "3"})
    location = location_of(tmp_path, name)
    batch = rows(range(0, 12), "a", "batch")
    fixed_write(catalog, name, batch)                     # partition a: 3 buckets
    pending = rows([3, 50], ["a", "b"], "flink")
    stream_write(catalog, name, pending)
    catalog.alter_table(f"db.{name}", [SchemaChange.set_option(
        "postpone.default-bucket-num", "2")])
    run = rows([3, 4, 50, 51, 60], ["a", "a", "b", "b", "c"], "model")
    result = write_primary_key_run(spark, spark.createDataFrame(run), location,
                                   model_name="orders", write_path=write_path)
    assert result.snapshot_id is not None and result.records == 5
    assert result.path == write_path
    # visible at once, the streaming rows still pending
    want = expected(batch, run)
    assert pypaimon_rows(catalog, name) == want and ours(location) == want
    assert bucket_counts(location) == {"a": {3}, "b": {2}, "c": {2}}
    assert len(postpone_merge.postpone_files(location.open())) == 2
    # pypaimon's batch write after ours: same buckets; then the pending rows, moved last, win
    again = rows([4, 51, 60, 61], ["a", "b", "c", "c"], "again")
    fixed_write(catalog, name, again)
    compact_table(spark, location)
    want = expected(batch, run, again, pending)
    assert pypaimon_rows(catalog, name) == want and ours(location) == want


def test_postpone_write_settings_dbt_paimon_does_not_follow_are_refused(spark, catalog,
                                                                       tmp_path):
    create(catalog, "staged", **{"postpone.batch-write-fixed-bucket": "false"})
    create(catalog, "by_rows", **{"postpone.target-row-num-per-bucket": "100"})
    run = spark.createDataFrame(rows([1], "a", "x"))
    with pytest.raises(PaimonConfigError, match="Model 'm'.*batch-write-fixed-bucket"):
        write_primary_key_run(spark, run, location_of(tmp_path, "staged"), model_name="m")
    with pytest.raises(PaimonConfigError, match="postpone.default-bucket-num"):
        write_primary_key_run(spark, run, location_of(tmp_path, "by_rows"), model_name="m")
    assert splits_mod.current_snapshot_id(open_table(str(tmp_path / "warehouse"), "db",
                                                     "staged")) is None
    with pytest.raises(ValueError, match="leave out 'partitions'"):
        compact_table(spark, location_of(tmp_path, "staged"), partitions=[{"dt": "a"}])


def test_postpone_model_configs_are_checked_before_anything_is_written():
    from dbt.adapters.paimon.config import table_definition

    columns = [("id", "BIGINT"), ("dt", "STRING"), ("v", "STRING")]
    defined = table_definition("orders", "paimon_pk", {
        "primary_key": ["id", "dt"], "partition_by": "dt", "buckets": -2,
        "table_options": {"postpone.default-bucket-num": "4"}}, columns)
    assert defined.options["bucket"] == "-2"

    def problems(materialization, config):
        with pytest.raises(PaimonConfigError) as info:
            table_definition("orders", materialization, config, columns)
        return str(info.value)

    assert "only for primary-key tables" in problems("paimon_append", {"buckets": -2})
    assert "with postpone buckets Paimon cannot update across partitions" in problems(
        "paimon_pk", {"primary_key": "id", "partition_by": "dt", "buckets": -2})
    message = problems("paimon_pk", {"primary_key": "id", "buckets": -2, "table_options": {
        "postpone.batch-write-fixed-bucket": "false",
        "postpone.target-row-num-per-bucket": "1000"}})
    assert "Model 'orders'" in message and "'postpone.batch-write-fixed-bucket'" in message
    assert "Set 'postpone.default-bucket-num'" in message
    assert "Remove deletion_vectors" in problems("paimon_pk", {
        "primary_key": "id", "buckets": -2, "deletion_vectors": True})
    assert "or -2 for postpone buckets" in problems("paimon_pk", {"primary_key": "id",
                                                                  "buckets": -3})
