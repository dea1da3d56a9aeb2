"""Paimon's system tables (format/system_tables.py, datasource/system_reads.py) on tables written
by the real write path: columns as Paimon Java 1.0 has them, values from the table's metadata
and data. One history is built once for the module (three runs, a full compaction, a tag, a
consumer, a branch); tests/interop/test_system_tables_java.py compares the same tables with
Paimon Java's own values."""
import datetime
import json

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.spark_types import spark_schema
from dbt.adapters.paimon.datasource.system_reads import read_system_table
from dbt.adapters.paimon.format import system_tables as st
from dbt.adapters.paimon.format.consumers import write_consumer
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops import compact_table
from ops_helpers import live_files, make_table, read_back, sorted_rows, write_run

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()),
                    ("s", pa.string())])
# the columns (and NOT NULL) PaimonPeer's `system` command prints for Paimon Java 1.0's tables
JAVA_COLUMNS = {
    "snapshots": ["snapshot_id!", "schema_id!", "commit_user!", "commit_identifier!",
                  "commit_kind!", "commit_time!", "base_manifest_list!", "delta_manifest_list!",
                  "changelog_manifest_list", "total_record_count", "delta_record_count",
                  "changelog_record_count", "watermark"],
    "schemas": ["schema_id!", "fields!", "partition_keys!", "primary_keys!", "options!",
                "comment", "update_time!"],
    "options": ["key!", "value!"],
    "tags": ["tag_name!", "snapshot_id!", "schema_id!", "commit_time!", "record_count",
             "create_time", "time_retained"],
    "branches": ["branch_name!", "created_from_tag", "created_from_snapshot", "create_time!"],
    "consumers": ["consumer_id!", "next_snapshot_id!"],
    "files": ["partition", "bucket!", "file_path!", "file_format!", "schema_id!", "level!",
              "record_count!", "file_size_in_bytes!", "min_key", "max_key",
              "null_value_counts!", "min_value_stats!", "max_value_stats!",
              "min_sequence_number", "max_sequence_number", "creation_time"],
    "manifests": ["file_name!", "file_size!", "num_added_files!", "num_deleted_files!",
                  "schema_id!"],
    "partitions": ["partition", "record_count!", "file_size_in_bytes!", "file_count!",
                   "last_update_time"],
    "buckets": ["partition", "bucket!", "record_count!", "file_size_in_bytes!", "file_count!",
                "last_update_time"],
    "aggregation_fields": ["field_name!", "field_type!", "function", "function_options",
                           "comment"],
    "statistics": ["snapshot_id!", "schema_id!", "mergedRecordCount", "mergedRecordSize",
                   "colstat"],
}


def _run(ids, dt, v, kinds=None):
    return pa.table({"dt": pa.array([dt] * len(ids)), "id": pa.array(ids, pa.int64()),
                     "v": pa.array(v, pa.int64()), "s": pa.array([f"s{i}" for i in ids]),
                     "op": pa.array(kinds or ["+I"] * len(ids))})


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory):
    """orders: snapshot 1, 2 (APPEND), 3 (COMPACT), 4 (APPEND: id 2 updated as +U, id 3
    deleted, left at level 0); tag 'month_end' on 2, tag 'kept' on 3 with a retention;
    consumer 'reader' at 3; branch 'audit' from the tag 'kept'."""
    from pypaimon.branch.filesystem_branch_manager import FileSystemBranchManager
    from pypaimon.tag.tag_manager import TagManager

    tmp = tmp_path_factory.mktemp("system_tables")
    location = make_table(tmp, "orders", SCHEMA, ["dt", "id"], ["dt"], {"bucket": "2"})
    write_run(spark, location, _run([1, 2, 3, 4], "a", [10, 20, 30, 40]), "op")
    write_run(spark, location, _run([5, 6], "b", [50, 60]), "op")
    compact_table(spark, location, full=True)
    write_run(spark, location, _run([2, 3], "a", [21, 0], ["+U", "-D"]), "op")
    table = location.open()
    snapshots = table.snapshot_manager()
    tags = TagManager(table.file_io, table.table_path)
    tags.create_tag(snapshots.get_snapshot_by_id(2), "month_end")
    tags.create_tag(snapshots.get_snapshot_by_id(3), "kept", time_retained="1 d")
    write_consumer(table, "reader", 3)
    FileSystemBranchManager(table.file_io, table.table_path, snapshots, tags,
                            table.schema_manager).create_branch("audit", "kept")
    return location


def _columns(arrow: pa.Table):
    return [f.name + ("" if f.nullable else "!") for f in arrow.schema]


def test_metadata_tables_have_java_columns(history):
    table = history.open()
    assert set(st.METADATA_TABLES) == set(JAVA_COLUMNS)
    for name, columns in JAVA_COLUMNS.items():
        assert _columns(st.metadata_table(table, name)) == columns, name


def test_snapshots_schemas_options(history):
    table = history.open()
    snaps = st.snapshots(table).to_pylist()
    assert [(s["snapshot_id"], s["commit_kind"], s["total_record_count"])
            for s in snaps] == [(1, "APPEND", 4), (2, "APPEND", 6), (3, "COMPACT", 6),
                                (4, "APPEND", 8)]
    stored = {s.id: s for s in list_snapshots(table)}
    for row in snaps:
        millis = stored[row["snapshot_id"]].time_millis
        assert row["commit_time"] == datetime.datetime.fromtimestamp(millis / 1000) \
            .replace(microsecond=millis % 1000 * 1000)
        assert row["commit_user"] == stored[row["snapshot_id"]].commit_user
        assert row["base_manifest_list"].startswith("manifest-list-")

    (schema,) = st.schemas(table).to_pylist()
    assert schema["schema_id"] == 0 and schema["comment"] is None
    assert [f["name"] for f in json.loads(schema["fields"])] == ["dt", "id", "v", "s"]
    assert json.loads(schema["partition_keys"]) == ["dt"]
    assert json.loads(schema["primary_keys"]) == ["dt", "id"]
    assert json.loads(schema["options"]) == {"bucket": "2"}
    assert st.options(table).to_pylist() == [{"key": "bucket", "value": "2"}]


def test_tags_consumers_branches(history):
    table = history.open()
    tags = st.tags(table).to_pylist()
    assert [(t["tag_name"], t["snapshot_id"], t["record_count"], t["time_retained"])
            for t in tags] == [("kept", 3, 6, "PT24H"), ("month_end", 2, 6, None)]
    assert tags[0]["create_time"] is not None and tags[1]["create_time"] is None
    assert st.consumers(table).to_pylist() == [{"consumer_id": "reader", "next_snapshot_id": 3}]
    (branch,) = st.branches(table).to_pylist()
    assert (branch["branch_name"], branch["created_from_tag"],
            branch["created_from_snapshot"]) == ("audit", "kept", 3)


def test_files_manifests_partitions_buckets(history):
    table = history.open()
    files = st.files(table).to_pylist()
    live = {f.file_name: f for f in live_files(history)}
    assert sorted(f["file_path"] for f in files) == sorted(live)
    for row in files:
        meta = live[row["file_path"]]
        assert (row["level"], row["record_count"], row["file_size_in_bytes"],
                row["min_sequence_number"], row["file_format"]) == \
            (meta.level, meta.row_count, meta.file_size, meta.min_sequence_number, "parquet")
    level0 = sorted((f for f in files if f["level"] == 0), key=lambda f: f["min_key"])
    # the last run's files: keys 2 and 3 of partition a, in two buckets; the key text leaves
    # out the partition column (Paimon's trimmed primary key)
    assert [(f["partition"], f["min_key"], f["max_key"], f["record_count"])
            for f in level0] == [("[a]", "[2]", "[2]", 1), ("[a]", "[3]", "[3]", 1)]
    assert level0[1]["min_value_stats"] == "{dt=a, id=3, s=s3, v=0}"
    assert level0[1]["null_value_counts"] == "{dt=0, id=0, s=0, v=0}"
    assert {f["level"] for f in files} == {0, 5}

    manifests = st.manifests(table).to_pylist()
    assert sum(m["num_added_files"] - m["num_deleted_files"] for m in manifests) == len(files)

    partitions = st.partitions(table).to_pylist()
    assert [p["partition"] for p in partitions] == ["[a]", "[b]"]
    for p in partitions:
        mine = [f for f in files if f["partition"] == p["partition"]]
        assert (p["record_count"], p["file_count"], p["file_size_in_bytes"]) == \
            (sum(f["record_count"] for f in mine), len(mine),
             sum(f["file_size_in_bytes"] for f in mine))
        assert p["last_update_time"] == max(f["creation_time"] for f in mine)
    buckets = st.buckets(table).to_pylist()
    assert [(b["partition"], b["bucket"]) for b in buckets] == sorted(
        {(f["partition"], f["bucket"]) for f in files})
    assert sum(b["record_count"] for b in buckets) == sum(f["record_count"] for f in files)


def test_aggregation_fields_and_statistics(history, tmp_path):
    location = make_table(tmp_path, "totals", SCHEMA, ["dt", "id"], ["dt"], {
        "merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
        "fields.v.ignore-retract": "true", "fields.s.aggregate-function": "listagg"})
    rows = {r["field_name"]: r for r in st.aggregation_fields(location.open()).to_pylist()}
    assert rows["v"]["function"] == "[sum, true]"
    assert rows["v"]["function_options"] == \
        "[fields.v.aggregate-function, fields.v.ignore-retract]"
    assert rows["s"]["function"] == "[listagg]" and rows["id"]["function"] == "[]"
    assert rows["id"]["field_type"] == "BIGINT NOT NULL"
    # no ANALYZE has written statistics: no row, as Java
    assert st.statistics(history.open()).num_rows == 0


def test_audit_log_binlog_ro(history):
    table = history.open()
    merged = sorted_rows(read_back(history), ["dt", "id"])
    audit = read_system_table(table, "audit_log")
    assert audit.column_names == ["rowkind", "dt", "id", "v", "s"]
    kinds = {(r["dt"], r["id"]): r.pop("rowkind") for r in audit.to_pylist()}
    assert sorted_rows(audit.drop_columns(["rowkind"]), ["dt", "id"]) == merged
    # deduplicate keeps the record itself: id 2's last record was written as +U; id 3 is gone
    assert kinds == {("a", 1): "+I", ("a", 2): "+U", ("a", 4): "+I", ("b", 5): "+I",
                     ("b", 6): "+I"}

    binlog = read_system_table(table, "binlog")
    assert pa.types.is_list(binlog.schema.field("v").type)
    assert sorted(
        (r["rowkind"], r["dt"], r["id"], r["v"]) for r in binlog.to_pylist()) == sorted(
        (kinds[(m["dt"], m["id"])], [m["dt"]], [m["id"]], [m["v"]]) for m in merged)

    # read-optimized: only the compaction's top-level files, without the later update/delete
    ro = read_system_table(table, "ro")
    assert sorted_rows(ro, ["dt", "id"]) == sorted_rows(read_back(history, 3), ["dt", "id"])
    assert {"id": 3, "v": 30} in [{"id": r["id"], "v": r["v"]} for r in ro.to_pylist()]


def test_spark_reads_them(spark, history):
    table = history.open()
    rows = st.files(table)
    df = spark.createDataFrame(rows, schema=spark_schema(rows.schema))
    assert dict(df.dtypes)["creation_time"] == "timestamp_ntz"
    assert df.count() == len(live_files(history))
    options = {"warehouse": history.warehouse, "table": history.name}
    read = spark.read.format("paimon").options(**options, system_table="audit_log").load()
    expected = read_system_table(table, "audit_log")
    assert read.columns == expected.column_names
    assert sorted(map(tuple, read.collect())) == sorted(
        tuple(r.values()) for r in expected.to_pylist())
    binlog = spark.read.format("paimon").options(**options, system_table="binlog").load()
    assert dict(binlog.dtypes)["v"] == "array<bigint>"


def test_unknown_system_table_lists_the_supported_ones(history):
    with pytest.raises(ValueError, match="unknown Paimon system table 'snapshot'; supported: "
                                         "snapshots, schemas, options"):
        st.metadata_table(history.open(), "snapshot")
    assert st.check_system_table("RO") == "ro"
