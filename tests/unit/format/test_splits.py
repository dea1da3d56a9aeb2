import pickle

import pyarrow as pa
import pytest

from dbt.adapters.paimon.format import kv_files
from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.errors import PaimonFormatError
from dbt.adapters.paimon.format.kv_files import read_split_records
from dbt.adapters.paimon.format.splits import (bucket_split, current_snapshot_id, list_snapshots,
                                               plan_splits)
from dbt.adapters.paimon.catalog.warehouse import create_table
from paimon_format_helpers import orders, pypaimon_write


def _write_days(table, days=("2024-01-01", "2024-01-02", "2024-01-03"), ids=range(20)):
    for dt in days:
        pypaimon_write(table, orders(dt, list(ids)))


def test_one_split_per_partition_and_bucket(pk_table):
    assert plan_splits(pk_table) == [] and current_snapshot_id(pk_table) is None
    _write_days(pk_table)
    _write_days(pk_table, days=("2024-01-01",), ids=range(10, 30))
    splits = plan_splits(pk_table)
    assert [(s.partition["dt"], s.bucket) for s in splits] == [
        (d, b) for d in ("2024-01-01", "2024-01-02", "2024-01-03") for b in (0, 1)]
    first = [s for s in splits if s.partition == {"dt": "2024-01-01"}]
    assert [len(s.files) for s in first] == [2, 2]  # two commits, level 0 each
    assert all(s.snapshot_id == 4 and s.primary_key_table for s in splits)
    # each split's rows really live in that bucket (bucket key = id: PK minus partition)
    for split in splits:
        rows = read_split_records(pk_table, split)
        expected = bucket_ids(rows.select(["id"]), 2)
        assert set(expected.tolist()) == {split.bucket}
    # splits and their file metas cross to Spark tasks by pickling
    again = pickle.loads(pickle.dumps(splits))
    assert [f.file_name for s in again for f in s.files] == \
        [f.file_name for s in splits for f in s.files]
    assert read_split_records(pk_table, again[0]).num_rows == \
        read_split_records(pk_table, splits[0]).num_rows


def test_partition_filter_prunes_before_opening_files(pk_table, monkeypatch):
    _write_days(pk_table)
    opened = []
    real_read = kv_files._read_file
    monkeypatch.setattr(kv_files, "_read_file",
                        lambda table, meta, cols: opened.append(meta.file_name)
                        or real_read(table, meta, cols))

    one_day = plan_splits(pk_table, partition_filter={"dt": "2024-01-02"})
    assert {s.partition["dt"] for s in one_day} == {"2024-01-02"}
    for split in one_day:
        read_split_records(pk_table, split)
    assert len(opened) == sum(len(s.files) for s in one_day) == 2

    both = plan_splits(pk_table, partition_filter=[{"dt": "2024-01-01"}, {"dt": "2024-01-03"}])
    assert {s.partition["dt"] for s in both} == {"2024-01-01", "2024-01-03"}
    in_list = plan_splits(pk_table, partition_filter={"dt": ["2024-01-01", "2024-01-03"]})
    assert [(s.partition_values, s.bucket) for s in in_list] == \
        [(s.partition_values, s.bucket) for s in both]
    assert plan_splits(pk_table, partition_filter={"dt": "1999-01-01"}) == []
    with pytest.raises(ValueError, match="not partition columns"):
        plan_splits(pk_table, partition_filter={"id": 3})


def test_time_travel_and_snapshot_list(pk_table):
    pypaimon_write(pk_table, orders("2024-01-01", [1, 2]))
    pypaimon_write(pk_table, orders("2024-01-02", [3]))
    assert current_snapshot_id(pk_table) == 2
    snapshots = list_snapshots(pk_table)
    assert [(s.id, s.commit_kind) for s in snapshots] == [(1, "APPEND"), (2, "APPEND")]
    assert {s.partition["dt"] for s in plan_splits(pk_table, snapshot_id=1)} == {"2024-01-01"}
    with pytest.raises(PaimonFormatError, match="snapshot 7 .* does not exist"):
        plan_splits(pk_table, snapshot_id=7)


def test_level0_files_are_planned_for_first_row_tables(warehouse):
    # pypaimon's batch scan skips level 0 for first-row tables and reads them empty
    table = create_table(warehouse, "db", "first", pa.schema([("k", pa.int32()),
                                                              ("v", pa.string())]),
                         primary_keys=["k"], options={"bucket": "1",
                                                      "merge-engine": "first-row"})
    pypaimon_write(table, pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
    splits = plan_splits(table)
    assert len(splits) == 1 and splits[0].levels == [0]
    assert read_split_records(table, splits[0]).column("k").to_pylist() == [1, 2]


def test_bucket_split_of_an_empty_bucket(pk_table):
    pypaimon_write(pk_table, orders("2024-01-01", [1]))
    empty = bucket_split(pk_table, {"dt": "2030-01-01"}, 0)
    assert empty.files == [] and empty.max_sequence_number == -1
    with pytest.raises(ValueError, match="exactly the partition keys"):
        bucket_split(pk_table, {}, 0)
