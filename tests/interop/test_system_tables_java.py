"""Our system tables against Paimon Java 1.0's (PaimonPeer `system`: the catalog loads
``<table>$<name>`` through SystemTableLoader) on the same tables, written by our write path.

Columns are equal (names, order, Paimon types, NOT NULL). Values are equal except:
- ``schemas.comment``: pypaimon writes ``"comment": null`` into the schema file and Java 1.0's
  schema parser reads JSON null as the text ``"null"``; we show NULL (the table has no comment).
Nothing else differs: times are local date-times of one time zone on both sides (the same
machine), file names and sizes come from the same manifests. ``branches`` (no branch here;
tests/integration/ops/test_system_tables.py) and ``binlog`` (not in this 1.0 jar) are not
compared.
"""
from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.datasource.system_reads import read_system_table
from dbt.adapters.paimon.format import system_tables as st
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.consumers import write_consumer
from dbt.adapters.paimon.ops.compact import compact_table
from dbt.adapters.paimon.write import write_primary_key_run

METADATA = ["snapshots", "schemas", "options", "tags", "consumers", "files", "manifests",
            "partitions", "buckets", "aggregation_fields", "statistics"]
DATA = ["audit_log", "ro"]
# values Java 1.0 shows differently, and why (module docstring)
INHERENTLY_DIFFERENT = {("schemas", "comment")}


def paimon_type(field: pa.Field) -> str:
    """The Paimon SQL type PaimonPeer prints for a column of ours."""
    t = field.type
    if pa.types.is_list(t):
        text = f"ARRAY<{paimon_type(t.value_field)}>"
    else:
        text = {pa.int64(): "BIGINT", pa.int32(): "INT", pa.string(): "STRING"}.get(t)
        if text is None and pa.types.is_timestamp(t):
            text = "TIMESTAMP(3)"
    return text + ("" if field.nullable else " NOT NULL")


def rendered(row: dict) -> dict:
    return {k: v.strftime("%Y-%m-%dT%H:%M:%S.%f") if isinstance(v, datetime.datetime) else v
            for k, v in row.items()}


def _run(ids, dt, v):
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": pa.array([dt] * len(ids)),
                     "v": pa.array(v, pa.int64()), "s": pa.array([f"s{i}" for i in ids])})


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """pk: aggregation (sum of v), partitioned, 2 buckets; 2 runs, a full compaction, a run;
    tags on snapshots 2 and 3 (one with a retention), a consumer. ap: an append table."""
    from pypaimon.tag.tag_manager import TagManager

    wh = str(tmp_path_factory.mktemp("system_java") / "warehouse")
    warehouse.create_table(wh, "db", "pk", pa.schema([("id", pa.int64()), ("dt", pa.string()),
                                                      ("v", pa.int64()), ("s", pa.string())]),
                           primary_keys=["id", "dt"], partition_keys=["dt"],
                           options={"bucket": "2", "merge-engine": "aggregation",
                                    "fields.v.aggregate-function": "sum"})
    pk = TableRef(wh, "db", "pk", {})
    for run, path in ((_run([1, 2, 3, 4], "a", [1, 2, 3, 4]), "in_process"),
                      (_run([1, 5], "b", [10, 50]), "distributed")):
        write_primary_key_run(spark, spark.createDataFrame(run), pk, model_name="pk",
                              write_path=path)
    compact_table(spark, pk, full=True)
    write_primary_key_run(spark, spark.createDataFrame(_run([2], "a", [100])), pk,
                          model_name="pk", write_path="in_process")
    table = pk.open()
    tags = TagManager(table.file_io, table.table_path)
    tags.create_tag(table.snapshot_manager().get_snapshot_by_id(2), "t2")
    tags.create_tag(table.snapshot_manager().get_snapshot_by_id(3), "t3", time_retained="12h")
    write_consumer(table, "c1", 3)

    warehouse.create_table(wh, "db", "ap", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    (spark.createDataFrame(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", None]}))
     .write.format("paimon").option("warehouse", wh).option("table", "db.ap")
     .mode("append").save())
    return wh


def test_system_tables_equal_java(paimon_java, tables, tmp_path):
    wh = tables
    asked = [(t, n) for t in ("pk", "ap") for n in METADATA + DATA]
    outputs = paimon_java.batch([["system", wh, f"db.{t}", n] for t, n in asked],
                                tmp_path / "commands.jsonl")
    compared = 0
    for (name, system), output in zip(asked, outputs):
        lines = [json.loads(line) for line in output.splitlines() if line.strip()]
        java_fields, java_rows = lines[0]["_fields"], lines[1:]
        table = warehouse.open_table(wh, "db", name)
        ours = st.metadata_table(table, system) if system in METADATA else \
            read_system_table(table, system)
        assert [[f.name, paimon_type(f)] for f in ours.schema] == java_fields, (name, system)
        different = [c for s, c in INHERENTLY_DIFFERENT if s == system]
        for row in java_rows:
            for column in different:
                row.pop(column)
        mine = [rendered(r) for r in ours.drop_columns(different).to_pylist()]
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        assert sorted(map(key, mine)) == sorted(map(key, java_rows)), (name, system)
        compared += len(java_rows)
    assert compared > 40  # the tables are not empty: rows were compared
    # the inherent difference, as Java shows it
    schemas = outputs[asked.index(("pk", "schemas"))].splitlines()
    assert json.loads(schemas[1])["comment"] == "null"
