"""The two executors of an append-table run (write/append_run.py) write the same table: the same
runs (APPEND, OVERWRITE of the table, OVERWRITE of partitions) written once in-process and once
by the ``paimon`` data source's Spark tasks give the same snapshots and the same rows, in the
same order per bucket for a queue table, with the same types; and ``auto`` sizes a query that
reads a Paimon table from that table's metadata.
"""
from __future__ import annotations

import pyarrow as pa
import pytest

from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.write.append_run import write_append_run

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("name", pa.string()),
                    ("amount", pa.decimal128(12, 2)), ("at", pa.timestamp("us")),
                    ("day", pa.date32()), ("tags", pa.list_(pa.string()))])
LAYOUTS = {
    "unpartitioned": ([], {}),
    "partitioned": (["dt"], {}),
    "queue": ([], {"bucket": "2", "bucket-key": "id"}),
}
QUERY = """
select id, concat('d', cast(id % 3 as string)) as dt,
       case when id % 5 = 0 then null else concat('név-', cast(id as string)) end as name,
       cast(id * 1.25 as decimal(12, 2)) as amount,
       timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) as at,
       date_add(date'2024-01-01', cast(id as int)) as day,
       array(cast(id as string), 'x') as tags
from range({start}, {stop}, 1, 3)
"""


def _table(tmp_path, name, layout) -> TableRef:
    partitions, options = LAYOUTS[layout]
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", name, SCHEMA, primary_keys=[], partition_keys=partitions,
                           options=options)
    return TableRef(wh, "db", name, {})


def _ids_by_bucket(location):
    """(partition, bucket) -> the bucket's ids in read order (its files in write order)."""
    import pyarrow.parquet as pq

    from dbt.adapters.paimon.format.bucketed_append import order_splits

    table = location.open()
    return {(split.partition_values, split.bucket):
            [i for f in split.files for i in pq.read_table(f.file_path, columns=["id"])
             .column("id").to_pylist()]
            for split in order_splits(table, plan_splits(table))}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_both_executors_write_the_same_table(spark, tmp_path, layout):
    runs = [(QUERY.format(start=0, stop=40), None, ()),
            (QUERY.format(start=40, stop=70), None, ()),
            (QUERY.format(start=100, stop=130), "table", ())]
    if layout == "partitioned":
        # d0 and d1 rewritten, d2 emptied: it is named though the run writes no row of it
        runs.append((QUERY.format(start=0, stop=60) + " where id % 3 < 2", "partitions",
                     [("d2",)]))
    tables = {}
    for path in ("distributed", "in_process"):
        location = _table(tmp_path, f"t_{path}", layout)
        for query, overwrite, extra in runs:
            result = write_append_run(spark, spark.sql(query), location, "m", overwrite,
                                      extra, write_path=path)
            assert result.choice.path == path and result.snapshot_id is not None
        tables[path] = location
    a, b = tables["distributed"], tables["in_process"]
    assert [s.commit_kind for s in list_snapshots(a.open())] == \
        [s.commit_kind for s in list_snapshots(b.open())]
    read = {p: spark.read.format("paimon").options(**loc.source_options()).load()
            for p, loc in tables.items()}
    assert read["in_process"].schema == read["distributed"].schema
    expected = sorted(map(tuple, read["distributed"].collect()))
    assert sorted(map(tuple, read["in_process"].collect())) == expected
    assert len(expected) == (30 if layout != "partitioned" else 40)
    if layout == "queue":
        # a queue table is read in write order per bucket: both executors keep the query's
        # order within each bucket
        assert _ids_by_bucket(b) == _ids_by_bucket(a)


def test_an_empty_overwrite_empties_the_table_on_both_executors(spark, tmp_path):
    for path in ("distributed", "in_process"):
        location = _table(tmp_path, f"e_{path}", "unpartitioned")
        write_append_run(spark, spark.sql(QUERY.format(start=0, stop=10)), location, "m",
                         write_path=path)
        result = write_append_run(spark, spark.sql(QUERY.format(start=0, stop=0)), location,
                                  "m", "table", write_path=path)
        assert result.snapshot_id == 2
        assert sum(s.row_count for s in plan_splits(location.open())) == 0


def test_auto_sizes_a_paimon_read_from_its_metadata(spark, tmp_path):
    from dbt.adapters.paimon.materialize.standard_writes import read_table
    from dbt.adapters.paimon.format.splits import data_file_bytes

    source = _table(tmp_path, "source", "unpartitioned")
    write_append_run(spark, spark.sql(QUERY.format(start=0, stop=50)), source, "m")
    target = _table(tmp_path, "target", "partitioned")
    result = write_append_run(spark, read_table(spark, source), target, "m")
    assert result.choice.path == "in_process"
    assert result.choice.estimated_bytes == data_file_bytes(source.open()) > 0
    assert "Paimon metadata of db.source" in result.choice.reason
    # over the budget: Spark tasks write it
    result = write_append_run(spark, read_table(spark, source), target, "m",
                              in_process_max_bytes=10)
    assert result.choice.path == "distributed" and result.snapshot_id == 2
