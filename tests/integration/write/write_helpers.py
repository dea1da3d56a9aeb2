"""Helpers of the write-path tests: tables, runs, reading back, expected results."""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

import numpy as np
import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef, merge_spec_of, read_merged_split
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.kv_files import read_split_records
from dbt.adapters.paimon.runtime import merge_arrow


def make_table(tmp_path, name: str, schema: pa.Schema, primary_keys, partition_keys=(),
               options=None) -> TableRef:
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, schema, primary_keys=list(primary_keys),
                           partition_keys=list(partition_keys), options=options or {})
    return TableRef(wh, "db", name, {})


def read_back(location: TableRef) -> pa.Table:
    table = location.open()
    names = list(table.field_names)
    pieces = [read_merged_split(table, s, names) for s in splits_mod.plan_splits(table)]
    if not pieces:
        return merge_spec_of(table).arrow_schema.empty_table()
    return pa.concat_tables(pieces)


def expected_after(location: TableRef, runs: Sequence[pa.Table],
                   row_kind_column: Optional[str] = None) -> pa.Table:
    """What Paimon holds after one commit per run: merge_arrow over all runs' records."""
    table = location.open()
    spec = merge_spec_of(table)
    names = list(table.field_names)
    pieces, offset = [], 0
    for commit, run in enumerate(runs):
        n = run.num_rows
        kinds = run.column(row_kind_column) if row_kind_column else pa.array(["+I"] * n)
        piece = run.select(names).append_column("_row_kind", kinds.cast(pa.string()))
        piece = piece.append_column("_seq", pa.array(np.arange(offset, offset + n), pa.int64()))
        piece = piece.append_column("_commit", pa.array([commit] * n, pa.int64()))
        pieces.append(piece)
        offset += n
    records = pa.concat_tables([p.cast(pieces[0].schema) for p in pieces])
    return merge_arrow(spec, records)


def sorted_rows(table: pa.Table, keys: Sequence[str]) -> List[dict]:
    return table.sort_by([(k, "ascending") for k in keys]).to_pylist()


def files_on_disk(location: TableRef) -> List[str]:
    root = os.path.join(location.warehouse, f"{location.database}.db", location.table)
    found = []
    for folder, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(found)


def snapshot_ids(location: TableRef) -> List[int]:
    return [s.id for s in splits_mod.list_snapshots(location.open())]


def state(location: TableRef):
    return snapshot_ids(location), files_on_disk(location)


def key_buckets(location: TableRef, keys: Sequence[str]) -> dict:
    """key tuple -> (partition, bucket) of every record in the table's files."""
    table = location.open()
    result = {}
    for split in splits_mod.plan_splits(table):
        records = read_split_records(table, split)
        for row in records.select(list(keys)).to_pylist():
            key = tuple(row[k] for k in keys)
            where = (split.partition_values, split.bucket)
            assert result.setdefault(key, where) == where, f"key {key} in two buckets"
    return result


def check_files(location: TableRef) -> None:
    """Every data file sorted by key, one row per key, delete_row_count right."""
    table = location.open()
    trimmed = list(table.trimmed_primary_keys)
    for split in splits_mod.plan_splits(table):
        for meta in split.files:
            one = splits_mod.Split(split.partition, split.partition_values, split.bucket, [meta],
                                   split.snapshot_id)
            records = read_split_records(table, one)
            keys = records.select(trimmed)
            assert keys.to_pylist() == keys.sort_by(
                [(k, "ascending") for k in trimmed]).to_pylist()
            assert len({tuple(r.values()) for r in keys.to_pylist()}) == keys.num_rows
            kinds = records.column("_row_kind").to_pylist()
            assert meta.delete_row_count == sum(k in ("-U", "-D") for k in kinds)
            assert meta.level == 0


def stream_write(table, data: pa.Table, identifier: int = 1, pause: float = 0.0) -> None:
    """A streaming writer's commit (Flink's way) of ``data`` into pypaimon ``table``: into the
    postpone bucket of a bucket = -2 table. ``pause``: a wait afterwards, so that the next
    writer's files are created later (postpone files are replayed in creation order)."""
    import time

    builder = table.new_stream_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(data)
    committer.commit(writer.prepare_commit(identifier), identifier)
    writer.close()
    committer.close()
    if pause:
        time.sleep(pause)
