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


def test_data_evolution_changes_are_whole_rows_or_a_clear_error(tmp_path):
    """A data-evolution table (pypaimon 2.1 writes it, column updates by row id): a full read is
    the assembled rows (deletion vectors applied); a range's appended rows are read with the
    column updates made to them in the range (their final values); an update of rows written
    before the range is no row of its own, so the read is refused, naming the table, the
    snapshot and the columns, instead of returning rows holding only the updated columns."""
    from pypaimon import CatalogFactory

    from dbt.adapters.paimon.catalog.warehouse import open_table
    from dbt.adapters.paimon.format.errors import PaimonFormatError
    from dbt.adapters.paimon.write.column_update import update_columns
    from tests.data_evolution_tables import EVOLUTION, create, wide, write

    warehouse = str(tmp_path / "warehouse")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    create(catalog, "t", **EVOLUTION, **{"deletion-vectors.enabled": "true"})

    def update(ids, note):
        update_columns(open_table(warehouse, "db", "t"), "m", pa.table({
            "id": pa.array(ids, pa.int64()), "note": [note] * len(ids)}), "id", ["note"])

    def changes(start, end):
        rows = read_changes(open_table(warehouse, "db", "t"), ChangeRange(start, end, "delta"))
        return sorted((r["id"], r["note"], r["_row_kind"]) for r in rows.to_pylist())

    write(catalog.get_table("db.t"), wide(range(0, 3)))             # snapshot 1
    write(catalog.get_table("db.t"), wide(range(3, 5)))             # snapshot 2
    update([3], "three")                                            # 3: rows of snapshot 2
    builder = catalog.get_table("db.t").new_batch_write_builder()
    committer = builder.new_commit()
    committer.commit(builder.new_update().delete_by_row_id([0]))    # 4: a deletion vector
    committer.close()
    update([1], "one")                                              # 5: a row of snapshot 1
    write(catalog.get_table("db.t"), wide(range(5, 6)))             # 6
    assert changes(None, 6) == [(1, "one", "+I"), (2, "note2", "+I"), (3, "three", "+I"),
                                (4, "note4", "+I"), (5, "note5", "+I")]
    # rows 3 and 4 are new in (1, 3]: read with their update
    assert changes(1, 3) == [(3, "three", "+I"), (4, "note4", "+I")]
    assert changes(5, 6) == [(5, "note5", "+I")]
    for start in (4, 1):
        with pytest.raises(PaimonFormatError, match=r"the changes of Paimon table db.t after "
                                                    r"snapshot \d up to 6 include updates of "
                                                    r"columns \['note'\] of rows written "
                                                    r"before them, by row id \(snapshot\(s\) "
                                                    r"\[5\]"):
            changes(start, 6)
