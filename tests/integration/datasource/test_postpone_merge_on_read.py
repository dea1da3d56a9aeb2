"""``postpone.merge-on-read`` on postpone-bucket tables (``bucket`` = -2) written by pypaimon 2.1:
a batch read returns the rows still in the postpone bucket merged with the real buckets' rows,
the rows dbt-paimon's ``compact`` then leaves.

What Paimon does (Java, apache/paimon):
- ``PostponeMergeOnRead.scala`` (Spark) / ``PostponeMergeReadBuilder.createSnapshotBound``:
  the option applies to a primary-key table with ``bucket`` = -2 unless ``scan.mode`` is
  ``compacted-full``; ``validateReadMode`` refuses ``query-auth.enabled`` and the scan modes
  ``incremental``, ``from-file-creation-time``, ``from-creation-timestamp``;
- ``PostponeMergeReadBuilder.plan``: the real buckets of the snapshot plus its postpone files,
  replayed writer by writer, each writer's files by creation time
  (``PostponeUtils.groupPostponeFiles``), each record routed to its real bucket
  (``PostponeBucketRouter``; a partition without real buckets gets the compaction's count);
- ``MergeFileSplitRead.createPostponeMergeReader``: the routed records are numbered
  ``maxSequenceNumber(real files) + 1 + relative order``, sorted and reduced as one run (a
  write buffer), and merged with the real splits by the merge function: the pending record
  wins for the same key (unless ``sequence.field`` says older); a pending -D deletes the key
  (``DropDeleteReader``).
- PostponeBucketTableTest.scala "Spark merge on read": base (1, base-1), (2, base-2); pending
  (1, new-1), (1, newest-1), (3, new-3) and a delete of 2 -> (1, newest-1), (3, new-3); with
  the option off the pending rows are invisible.
dbt-paimon's compaction (ops/postpone.py) writes the same: the pending records merged as a
write buffer, numbered above the bucket's largest sequence number, so a read before
``compact`` equals a read after it.
"""
import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.schema.schema_change import SchemaChange

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import postpone_merge
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.format.kv_files import read_split_records
from dbt.adapters.paimon.ops.compact import compact_table
from tests.integration.write import write_helpers

MOR = "postpone.merge-on-read"
ROWS = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                  ("op", pa.string())])


def rows(ids, tag, op="+I"):
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids],
                     "op": [op] * len(ids)}, schema=ROWS)


def stream_write(catalog, name, data, identifier):
    """A streaming writer's commit into table ``name``; ``op`` is the table's ``rowkind.field``,
    so '-D' rows are deletes."""
    write_helpers.stream_write(catalog.get_table(f"db.{name}"), data, identifier, pause=0.005)


def set_option(catalog, name, key, value):
    catalog.alter_table(f"db.{name}", [SchemaChange.set_option(key, value)])


def entry_rows(spark, registry, name):
    registry.sync()
    return sorted(tuple(r) for r in spark.table(f"db.{name}").collect())


def source_rows(spark, warehouse, name):
    df = spark.read.format("paimon").option("warehouse", warehouse) \
        .option("table", f"db.{name}").load()
    return sorted(tuple(r) for r in df.collect())


def read_way(spark, name):
    return {r.key: r.value for r in spark.sql(f"show tblproperties db.{name}").collect()}[
        "paimon.read"]


def test_merge_on_read_returns_what_compact_then_yields(spark, warehouse, registry, catalog):
    """Real rows 1..4 (moved into 2 real buckets by our compaction); then pending in the
    postpone bucket: writer 1 updates 2 and adds 5, writer 2 updates 2 again, deletes 3 and
    updates 4 twice in one commit. Without the option the pending rows are invisible; with it
    the read is base + pending, the later pending record winning and the delete removing 3,
    exactly what a read after ``compact`` returns."""
    name = "events"
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id"], options={"bucket": "-2", "rowkind.field": "op",
                                            "postpone.default-bucket-num": "2"}), False)
    location = TableRef(warehouse, "db", name, {})
    stream_write(catalog, name, rows(range(1, 5), "base"), 1)
    compact_table(spark, location)
    base = [(i, f"base{i}", "+I") for i in range(1, 5)]
    assert entry_rows(spark, registry, name) == base

    stream_write(catalog, name, rows([2, 5], "first"), 2)
    stream_write(catalog, name, pa.concat_tables([
        rows([2], "second"), rows([3], "gone", "-D"), rows([4], "old"), rows([4], "new")]), 3)
    assert len(postpone_merge.postpone_files(location.open())) == 2
    # option off: as Paimon's batch reads, the pending rows are not read
    assert entry_rows(spark, registry, name) == base
    assert source_rows(spark, warehouse, name) == base

    set_option(catalog, name, MOR, "true")
    merged = [(1, "base1", "+I"), (2, "second2", "+I"), (4, "new4", "+I"),
              (5, "first5", "+I")]
    assert entry_rows(spark, registry, name) == merged
    assert read_way(spark, name) == "python"
    assert source_rows(spark, warehouse, name) == merged
    assert sorted(tuple(r) for r in spark.table(f"db.{name}").where("id >= 4").collect()) \
        == merged[2:]
    # a task per real bucket: each keeps the pending records whose key hashes to its bucket,
    # the bucket the compaction put that key's real row in
    table = location.open()
    plan = postpone_merge.plan_merge_on_read(table, splits_mod.plan_splits(table), None)
    assert [(m.bucket, m.total_buckets) for m in plan.merges] == [(0, 2), (1, 2)]
    assert postpone_merge.pending_rows(plan) == 6
    by_bucket = {m.bucket: postpone_merge.read_postpone_merge(table, m, ["id", "v"])
                 for m in plan.merges}
    real_ids = {s.bucket: set(read_split_records(table, s).column("id").to_pylist())
                for s in splits_mod.plan_splits(table, plan.snapshot_id)}
    for bucket, read in by_bucket.items():
        ids = set(read.column("id").to_pylist())
        assert ids & {1, 2, 3, 4} <= real_ids.get(bucket, set())
    assert sorted(i for r in by_bucket.values() for i in r.column("id").to_pylist()) \
        == [1, 2, 4, 5]

    compact_table(spark, location)
    assert postpone_merge.postpone_files(location.open()) == []
    assert entry_rows(spark, registry, name) == merged      # read before == read after
    assert source_rows(spark, warehouse, name) == merged
    set_option(catalog, name, MOR, "false")
    assert entry_rows(spark, registry, name) == merged      # everything compacted now


def test_sequence_field_and_partitions_decide_as_paimon(spark, warehouse, registry, catalog):
    """``sequence.field``: a pending record with a smaller sequence value loses to the real one
    (PostponeBucketTableTest "Spark merge on read sequence field"); a partition without real
    buckets reads its pending rows alone, and partitions stay isolated ("keeps partitions
    isolated"). The read equals the read after our compaction."""
    name = "scored"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("pt", pa.string(), nullable=False), ("v", pa.string()),
                        ("seq", pa.int32())])

    def data(ids, pt, tag, seq):
        return pa.table({"id": pa.array(ids, pa.int64()), "pt": [pt] * len(ids),
                         "v": [f"{tag}{i}" for i in ids], "seq": pa.array(
                             [seq] * len(ids), pa.int32())}, schema=schema)

    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        schema, primary_keys=["id", "pt"], partition_keys=["pt"],
        options={"bucket": "-2", "sequence.field": "seq", MOR: "true"}), False)
    location = TableRef(warehouse, "db", name, {})
    builder = catalog.get_table(f"db.{name}").new_stream_write_builder()
    for identifier, piece in enumerate([data([1, 2], "a", "base", 10),
                                        data([1], "b", "base", 10)], start=1):
        writer, committer = builder.new_write(), builder.new_commit()
        writer.write_arrow(piece)
        committer.commit(writer.prepare_commit(identifier), identifier)
        writer.close()
        committer.close()
    compact_table(spark, location)
    for identifier, piece in enumerate([data([1], "a", "older", 5), data([2], "a", "newer", 20),
                                        data([7], "c", "only", 1)], start=3):
        writer, committer = builder.new_write(), builder.new_commit()
        writer.write_arrow(piece)
        committer.commit(writer.prepare_commit(identifier), identifier)
        writer.close()
        committer.close()
    want = [(1, "a", "base1", 10), (1, "b", "base1", 10), (2, "a", "newer2", 20),
            (7, "c", "only7", 1)]
    assert entry_rows(spark, registry, name) == want
    assert source_rows(spark, warehouse, name) == want
    assert sorted(tuple(r) for r in spark.table(f"db.{name}").where("pt = 'b'").collect()) \
        == [want[1]]
    # partition c has no real bucket: its pending rows go to the buckets the compaction would
    # give it (one: no postpone.default-bucket-num, and far below the 1 gb target size)
    table = location.open()
    plan = postpone_merge.plan_merge_on_read(table, splits_mod.plan_splits(table), None)
    assert [(m.bucket, m.total_buckets, len(m.real_splits)) for m in plan.merges
            if m.partition_values == ("c",)] == [(0, 1, 0)]
    compact_table(spark, location)
    assert postpone_merge.postpone_files(location.open()) == []
    assert entry_rows(spark, registry, name) == want


def test_settings_paimon_refuses_with_the_option_fail_before_reading(
        spark, warehouse, registry, catalog):
    """PostponeMergeReadBuilder.validateReadMode: no query authorization, only full snapshot
    scans."""
    name = "guarded"
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id"], options={"bucket": "-2", MOR: "true",
                                            "scan.mode": "from-creation-timestamp",
                                            "scan.creation-time-millis": "0"}), False)
    stream_write(catalog, name, rows([1], "x"), 1)
    with pytest.raises(Exception) as refused:
        source_rows(spark, warehouse, name)
    message = str(refused.value)
    assert "db.guarded" in message and MOR in message and "scan.mode" in message
    assert "PaimonConfigError" in message  # a table's setting to fix: dbt shows it as such


def test_the_sessions_setting_reads_as_the_table_option_does(spark, warehouse, registry,
                                                             catalog):
    """Paimon's Spark connector takes table options from the session too
    (OptionUtils.mergeSQLConfWithIdentifier): ``spark.paimon.postpone.merge-on-read`` for every
    table, ``spark.paimon.<catalog>.<db>.<table>.postpone.merge-on-read`` for one (segments may
    be ``*``), the table's own winning. A command reads them as it starts (sync_once); the
    entry, the Python source and time travel then read as with the table option."""
    from dbt.adapters.paimon.datasource import views

    name = "flinky"
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id"], options={"bucket": "-2", "rowkind.field": "op",
                                            "postpone.default-bucket-num": "2"}), False)
    location = TableRef(warehouse, "db", name, {})
    stream_write(catalog, name, rows([1, 2], "base"), 1)
    compact_table(spark, location)
    stream_write(catalog, name, pa.concat_tables([rows([2], "new"), rows([3], "new")]), 2)
    base = [(1, "base1", "+I"), (2, "base2", "+I")]
    merged = [(1, "base1", "+I"), (2, "new2", "+I"), (3, "new3", "+I")]

    def command_rows(key):  # a new command: reads the settings, syncs, reads the entry
        registry.sync_once(key)
        return sorted(tuple(r) for r in spark.table(f"db.{name}").collect())

    everywhere = f"spark.paimon.{MOR}"
    this_table = f"spark.paimon.spark_catalog.db.{name}.{MOR}"
    try:
        assert command_rows("off") == base
        spark.conf.set(everywhere, "TRUE")
        assert command_rows("global") == merged
        assert read_way(spark, name) == "python"
        travelled = views.snapshot_view(registry, "db", name, name, snapshot_id=3)
        assert sorted(tuple(r) for r in spark.table(travelled).collect()) == merged
        spark.conf.set(this_table, "false")                  # the table's own setting wins
        assert command_rows("table-off") == base
        spark.conf.set(f"spark.paimon.*.db.*.{MOR}", "true")  # wildcards; the exact key wins
        assert command_rows("wildcard") == base
        spark.conf.unset(this_table)
        assert command_rows("wildcard-only") == merged
        spark.conf.set(f"spark.paimon.*.db.*.{MOR}", "maybe")
        with pytest.raises(ValueError, match=rf"'{MOR}' to 'maybe' for reads of db\."):
            registry.sync_once("bad")
    finally:
        for key in (everywhere, this_table, f"spark.paimon.*.db.*.{MOR}"):
            spark.conf.unset(key)
    assert command_rows("unset") == base
    assert location.open().table_schema.options.get(MOR) is None  # the table is unchanged


def test_a_bucket_task_with_no_records_reads_nothing(warehouse, catalog):
    """A new partition's pending rows spread over the compaction's count
    (postpone.default-bucket-num = 4): one key leaves three bucket tasks without a record, and
    with no real file; they read no row, the fourth reads the key's last record."""
    name = "sparse"
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        ROWS, primary_keys=["id"], options={"bucket": "-2", MOR: "true",
                                            "postpone.default-bucket-num": "4"}), False)
    stream_write(catalog, name, pa.concat_tables([rows([7], "a"), rows([7], "b")]), 1)
    table = TableRef(warehouse, "db", name, {}).open()
    plan = postpone_merge.plan_merge_on_read(table, splits_mod.plan_splits(table), None)
    assert [(m.bucket, m.total_buckets) for m in plan.merges] == [(b, 4) for b in range(4)]
    reads = [postpone_merge.read_postpone_merge(table, m, ["id", "v"]) for m in plan.merges]
    assert sorted(r.num_rows for r in reads) == [0, 0, 0, 1]
    assert [r.to_pylist() for r in reads if r.num_rows] == [[{"id": 7, "v": "b7"}]]
