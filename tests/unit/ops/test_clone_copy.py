"""`dbt clone` where files cannot be shared (ops/clone.py): the decision (clone_method) and
the copy itself, through a JDBC catalog on SQLite and a filesystem warehouse, without Spark
(fixed-bucket tables: their write plan needs no Spark session)."""
import sqlite3

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from dbt.adapters.paimon.ops import clone
from dbt.adapters.paimon.ops.clone import COPY, SHARE, clone_method, clone_table, snapshot_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                    ("at", pa.timestamp("ms"))])


def jdbc(tmp_path):
    return parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}"}
                         ).pypaimon_options()


def _write(location, data):
    table = location.open()
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(data)
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


def _batch(ids, label):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{label}{i}" for i in ids],
                     "at": pa.array([1_700_000_000_123 + i for i in ids],
                                    pa.timestamp("ms"))}, schema=SCHEMA)


def _rows(location):
    table = location.open()
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    return sorted(snapshot_rows(table, current_snapshot_id(table)).to_pylist(),
                  key=lambda r: r["id"])


@pytest.fixture
def source(tmp_path):
    """A primary-key table of a filesystem warehouse, two commits (updates to merge)."""
    warehouse = str(tmp_path / "fs")
    wh.create_table(warehouse, "prod", "orders", SCHEMA, primary_keys=["id"],
                    options={"bucket": "2", "file.format": "parquet"}, comment="orders")
    location = TableRef(warehouse, "prod", "orders", {})
    _write(location, _batch(range(0, 6), "a"))
    _write(location, _batch(range(3, 9), "b"))
    return location


def test_files_are_shared_between_local_filesystem_warehouses_only(tmp_path):
    local = TableRef(str(tmp_path), "a", "t", {})
    file_uri = TableRef(f"file://{tmp_path}", "b", "t", {"metastore": "filesystem"})
    assert clone_method(local, file_uri)[0] == SHARE
    how, why = clone_method(local, TableRef(str(tmp_path), "ci", "t", jdbc(tmp_path)))
    assert how == COPY and why == "the target ci.t is registered by a JDBC catalog"
    how, why = clone_method(TableRef("s3://bucket/wh", "a", "t", {}),
                            TableRef(str(tmp_path), "ci", "t", {"metastore": "hive"}))
    assert how == COPY and why == ("the source a.t is in s3://bucket/wh, not a local folder; "
                                   "the target ci.t is registered by a Hive catalog")
    assert clone_method(local, TableRef("rest_wh", "ci", "t", {"metastore": "rest"}))[0] \
        == COPY


def test_a_copy_into_a_catalog_has_the_schema_and_merged_rows(source, tmp_path):
    target = TableRef(str(tmp_path / "ci"), "ci", "orders", jdbc(tmp_path))
    result = clone_table(source, target)
    expected = _rows(source)
    assert [r["v"] for r in expected] == ["a0", "a1", "a2"] + [f"b{i}" for i in range(3, 9)]
    assert result.rows == result.rows_affected == 9 and result.linked == result.copied == 0
    assert result.message == (
        "CLONE of prod.orders at snapshot 2 as a COPY: 9 rows written in one commit "
        "(snapshot 1); files are not shared: the target ci.orders is registered by a JDBC "
        "catalog")
    with sqlite3.connect(tmp_path / "catalog.db") as con:
        assert list(con.execute("SELECT database_name, table_name FROM paimon_tables")) == \
            [("ci", "orders")]
    copy = target.open()
    original = source.open().table_schema
    assert copy.table_schema.fields == original.fields  # TIMESTAMP(3), NOT NULL, ids
    assert (copy.primary_keys, copy.partition_keys, copy.table_schema.comment) == \
        (["id"], [], "orders")
    assert dict(copy.table_schema.options) == dict(original.options)
    assert _rows(target) == expected
    # its own files: later writes to the source do not reach it
    _write(source, _batch(range(0, 20), "c"))
    assert _rows(target) == expected


def test_a_copy_replaces_its_target_only_once_committed(source, tmp_path, monkeypatch):
    options = jdbc(tmp_path)
    target = TableRef(str(tmp_path / "ci"), "ci", "orders", options)
    wh.create_table(target.warehouse, "ci", "orders", pa.schema([("x", pa.int32())]),
                    catalog_options=options)
    _write(target, pa.table({"x": pa.array([7], pa.int32())}))

    def failing(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(clone, "_write_rows", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        clone_table(source, target)
    # the old target as it was, and no table of the failed copy
    assert wh.list_tables(target.warehouse, "ci", options) == ["orders"]
    assert _rows_any(target) == [{"x": 7}]
    monkeypatch.undo()
    clone_table(source, target)
    assert wh.list_tables(target.warehouse, "ci", options) == ["orders"]
    assert _rows(target) == _rows(source)


def test_an_append_table_is_copied_partitioned_and_in_order(tmp_path):
    warehouse = str(tmp_path / "fs")
    schema = pa.schema([("dt", pa.string()), ("n", pa.int64())])
    wh.create_table(warehouse, "prod", "events", schema, partition_keys=["dt"])
    source = TableRef(warehouse, "prod", "events", {})
    _write(source, pa.table({"dt": ["d1", "d2", "d1"], "n": [1, 2, 3]}, schema=schema))
    _write(source, pa.table({"dt": ["d2"], "n": [4]}, schema=schema))
    target = TableRef(f"{tmp_path}/ci", "ci", "events", jdbc(tmp_path))
    result = clone_table(source, target)
    assert result.rows == 4 and result.snapshot_id == 1
    assert target.open().partition_keys == ["dt"]
    key = (lambda r: (r["dt"], r["n"]))
    assert sorted(_rows_any(target), key=key) == sorted(_rows_any(source), key=key)


def test_an_empty_source_is_copied_as_an_empty_table(tmp_path):
    warehouse = str(tmp_path / "fs")
    wh.create_table(warehouse, "prod", "empty", SCHEMA, primary_keys=["id"],
                    options={"bucket": "1"})
    target = TableRef(str(tmp_path / "ci"), "ci", "empty", jdbc(tmp_path))
    result = clone_table(TableRef(warehouse, "prod", "empty", {}), target)
    assert result.rows == 0 and result.snapshot_id is None
    assert "at no snapshot yet as a COPY: 0 rows written in no commit" in result.message
    assert snapshot_rows(target.open(), None).num_rows == 0


def test_a_missing_source_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="prod.nope is not a Paimon table"):
        clone_table(TableRef(str(tmp_path), "prod", "nope", {}),
                    TableRef(str(tmp_path / "ci"), "ci", "t", jdbc(tmp_path)))


def _rows_any(location):
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    table = location.open()
    return snapshot_rows(table, current_snapshot_id(table)).to_pylist()
