"""Helpers of the ops tests: tables, runs through the real write path, reading back."""
from __future__ import annotations

import os
from typing import Dict, List, Sequence

import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef, merge_spec_of, read_merged_split
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.catalog import warehouse


def make_table(tmp_path, name: str, schema: pa.Schema, primary_keys, partition_keys=(),
               options=None) -> TableRef:
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, schema, primary_keys=list(primary_keys),
                           partition_keys=list(partition_keys), options=options or {})
    return TableRef(wh, "db", name, {})


def write_run(spark, location: TableRef, rows: pa.Table, row_kind_column=None):
    from dbt.adapters.paimon.write import write_primary_key_run

    return write_primary_key_run(spark, spark.createDataFrame(rows.to_pandas()), location,
                                 row_kind_column=row_kind_column, model_name="t")


def read_back(location: TableRef, snapshot_id=None) -> pa.Table:
    table = location.open()
    names = list(table.field_names)
    pieces = [read_merged_split(table, s, names)
              for s in splits_mod.plan_splits(table, snapshot_id)]
    if not pieces:
        return merge_spec_of(table).arrow_schema.empty_table()
    return pa.concat_tables(pieces)


def sorted_rows(table: pa.Table, keys: Sequence[str]) -> List[dict]:
    return table.sort_by([(k, "ascending") for k in keys]).to_pylist()


def live_files(location: TableRef) -> List:
    return [f for s in splits_mod.plan_splits(location.open()) for f in s.files]


def levels(location: TableRef) -> Dict[int, int]:
    out: Dict[int, int] = {}
    for f in live_files(location):
        out[f.level] = out.get(f.level, 0) + 1
    return out


def kinds(location: TableRef) -> List[str]:
    return [s.commit_kind for s in splits_mod.list_snapshots(location.open())]


def files_on_disk(location: TableRef) -> List[str]:
    root = os.path.join(location.warehouse, f"{location.database}.db", location.table)
    found = []
    for folder, _, files in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(found)


def pypaimon_rows(location: TableRef) -> pa.Table:
    """What pypaimon's own batch reader returns (it skips level 0 of first-row tables)."""
    table = location.open()
    builder = table.new_read_builder()
    return builder.new_read().to_arrow(builder.new_scan().plan().splits())
