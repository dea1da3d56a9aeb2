"""Change reads of the paimon data source (changes_from / changes_to / changes_mode): which
snapshots contribute (Paimon's delta and changelog scans), rows with _row_kind, full reads."""
import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.changes import ChangeRange, read_changes
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops import compact_table, expire_snapshots, rescale_buckets
from dbt.adapters.paimon.write import write_primary_key_run
from write_helpers import make_table

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _write(spark, location, rows, kinds=None):
    data = {"id": pa.array([r[0] for r in rows], pa.int64()),
            "name": pa.array([r[1] for r in rows], pa.string())}
    if kinds:
        data["op"] = pa.array(kinds, pa.string())
    return write_primary_key_run(spark, spark.createDataFrame(pa.table(data)), location,
                                 row_kind_column="op" if kinds else None, model_name="t")


def _spark_changes(spark, location, **options):
    reader = spark.read.format("paimon").option("warehouse", location.warehouse) \
        .option("table", location.name)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return sorted(tuple(r) for r in reader.load().collect())


def test_delta_mode_reads_append_snapshots_only(spark, tmp_path):
    location = make_table(tmp_path, "plain", SCHEMA, ["id"], options={"bucket": "1"})
    _write(spark, location, [(1, "a"), (2, "b"), (1, "a2")])              # snapshot 1
    _write(spark, location, [(2, "b"), (3, "c")], ["-D", "+I"])           # snapshot 2
    assert compact_table(spark, location, full=True).snapshot_id == 3     # COMPACT: skipped
    _write(spark, location, [(3, "c2")])                                  # snapshot 4
    kinds = [s.commit_kind for s in list_snapshots(location.open())]
    assert kinds == ["APPEND", "APPEND", "COMPACT", "APPEND"]
    # each APPEND snapshot's stored (pre-merged) records, deletes included, no merge across
    assert _spark_changes(spark, location, changes_from=0, changes_to=4) == [
        (1, "a2", "+I"), (2, "b", "+I"), (2, "b", "-D"), (3, "c", "+I"), (3, "c2", "+I")]
    assert _spark_changes(spark, location, changes_from=2, changes_to=4) == [(3, "c2", "+I")]
    assert _spark_changes(spark, location, changes_from=4, changes_to=4) == []
    # no start: the merged rows of the end snapshot, all +I
    assert _spark_changes(spark, location, changes_to=2) == [(1, "a2", "+I"), (3, "c", "+I")]
    # the column list of a change read
    frame = spark.read.format("paimon").option("warehouse", location.warehouse) \
        .option("table", location.name).option("changes_to", "4").load()
    assert frame.columns == ["id", "name", "_row_kind"]


def test_changelog_mode_skips_snapshots_without_changelog_and_overwrites(spark, tmp_path):
    location = make_table(tmp_path, "logged", SCHEMA, ["id"],
                          options={"bucket": "1", "changelog-producer": "lookup"})
    _write(spark, location, [(1, "a"), (2, "b")])               # 1 APPEND, 2 COMPACT: changelog
    assert compact_table(spark, location, full=True).snapshot_id == 3     # COMPACT, no changelog
    _write(spark, location, [(1, "a2"), (2, "b")], ["+U", "-D"])          # 4, 5
    rescale_buckets(spark, location, 2)                                   # 6: OVERWRITE
    _write(spark, location, [(3, "c")])                                   # 7, 8
    kinds = [s.commit_kind for s in list_snapshots(location.open())]
    assert kinds == ["APPEND", "COMPACT", "COMPACT", "APPEND", "COMPACT", "OVERWRITE", "APPEND",
                     "COMPACT"]
    assert _spark_changes(spark, location, changes_from=0, changes_to=8) == [
        (1, "a", "+I"), (1, "a", "-U"), (1, "a2", "+U"), (2, "b", "+I"), (2, "b", "-D"),
        (3, "c", "+I")]
    # delta mode can be asked for explicitly: APPEND snapshots' data files
    assert _spark_changes(spark, location, changes_from=3, changes_to=8,
                          changes_mode="delta") == [(1, "a2", "+U"), (2, "b", "-D"),
                                                    (3, "c", "+I")]


def test_append_table_changes_are_inserts(spark, tmp_path):
    from dbt.adapters.paimon.catalog import warehouse

    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "events", SCHEMA, primary_keys=[], partition_keys=[],
                           options={})
    table = warehouse.open_table(wh, "db", "events")
    for rows in ([(1, "a"), (2, "b")], [(3, "c")]):
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                                    "name": [r[1] for r in rows]}))
        commit.commit(write.prepare_commit())
        write.close()
    changes = read_changes(warehouse.open_table(wh, "db", "events"), ChangeRange(1, 2, "delta"))
    assert changes.to_pylist() == [{"id": 3, "name": "c", "_row_kind": "+I"}]


def test_expired_start_is_a_clear_error(spark, tmp_path):
    location = make_table(tmp_path, "short", SCHEMA, ["id"], options={"bucket": "1"})
    for i in range(3):
        _write(spark, location, [(i, "x")])
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    with pytest.raises(Exception, match="have expired"):
        _spark_changes(spark, location, changes_from=0, changes_to=3)
    with pytest.raises(Exception, match="has no snapshot 7"):
        _spark_changes(spark, location, changes_from=2, changes_to=7)
