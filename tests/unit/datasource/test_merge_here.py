"""merge_here: a small partial-update snapshot's merged rows written by this process as the
Parquet file Spark's reader reads, and nothing written for a snapshot over either bound
(Spark's tasks merge it). The merged rows' agreement with the Python source's read, for every
column type and both ways of merging, is tests/integration/datasource/test_read_paths_agree.py's."""
import os

import pyarrow as pa
import pyarrow.parquet as pq

from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.datasource import merge_here
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.splits import plan_splits
from tests.unit.format.paimon_format_helpers import pypaimon_write

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("amount", pa.int64()),
                    ("status", pa.string())])


def commit(location, data: pa.Table) -> int:
    pypaimon_write(location.open(), data)
    return location.open().snapshot_manager().get_latest_snapshot().id


def partial_update_table(tmp_path) -> tuple:
    """Two runs, each setting one column of keys 0-3; (location, latest snapshot id)."""
    warehouse = str(tmp_path / "warehouse")
    wh.create_table(warehouse, "db", "wide", SCHEMA, primary_keys=["id"],
                    options={"bucket": "1", "merge-engine": "partial-update"})
    location = TableRef(warehouse, "db", "wide", {})
    ids = pa.array(range(4), pa.int64())
    commit(location, pa.table({"id": ids, "amount": pa.array([10, 20, 30, 40], pa.int64()),
                               "status": pa.nulls(4, pa.string())}, schema=SCHEMA))
    latest = commit(location, pa.table({"id": ids, "amount": pa.nulls(4, pa.int64()),
                                        "status": pa.array(["a", "b", "c", "d"])},
                                       schema=SCHEMA))
    return location, latest


def test_a_small_snapshot_is_merged_into_one_parquet_file(tmp_path):
    location, latest = partial_update_table(tmp_path)
    folder = str(tmp_path / "merged")
    assert merge_here.merge_here(location, latest, folder)
    assert os.listdir(folder) == [merge_here.FILE_NAME]
    rows = pq.read_table(os.path.join(folder, merge_here.FILE_NAME)).sort_by("id").to_pylist()
    assert rows == [{"id": i, "amount": 10 * (i + 1), "status": "abcd"[i]} for i in range(4)]


def test_a_snapshot_over_either_bound_is_left_to_spark(tmp_path, monkeypatch):
    location, latest = partial_update_table(tmp_path)
    size = sum(f.file_size for split in plan_splits(location.open()) for f in split.files)
    folder = str(tmp_path / "merged")
    for records, file_bytes in ((7, size), (8, size - 1)):  # the snapshot: 8 records
        monkeypatch.setattr(merge_here, "MAX_RECORDS", records)
        monkeypatch.setattr(merge_here, "MAX_FILE_BYTES", file_bytes)
        assert not merge_here.merge_here(location, latest, folder)
        assert not os.path.exists(folder)
    monkeypatch.setattr(merge_here, "MAX_FILE_BYTES", size)  # both bounds inclusive
    assert merge_here.merge_here(location, latest, folder)
