"""Tables in the modes Paimon added after 1.0, written by pypaimon 2.1, read through dbt-paimon's
catalog entries (what a dbt ``source()`` reads) and the ``paimon`` data source, and compared
exactly with pypaimon 2.1's own read of the same snapshot: data evolution (a column updated by
row id), BLOB columns, VARIANT (plain and shredded), VECTOR, postpone buckets (with and
without ``postpone.merge-on-read``), external data paths, and deletion vectors in 64-bit
bitmaps on a data-evolution table."""
import json
import os

import numpy as np
import pyarrow as pa
import pytest
from pypaimon import Schema
from pypaimon.data.generic_variant import GenericVariant
from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, VariantType
from tests.integration.write.write_helpers import stream_write


EVOLUTION = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
VARIANT = pa.struct([pa.field("value", pa.binary(), nullable=False),
                     pa.field("metadata", pa.binary(), nullable=False)])


def create(catalog, name, schema, primary_keys=(), partition_keys=(), **options):
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(
        schema, primary_keys=list(primary_keys), partition_keys=list(partition_keys),
        options=options), False)
    return catalog.get_table(f"db.{name}")


def write(table, data, builder=None):
    """One commit of ``data`` through pypaimon's batch writer (or ``builder``'s)."""
    builder = builder or table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(data)
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()


def update_by_row_id(catalog, name, columns, data):
    """pypaimon's update of ``columns`` by ``_ROW_ID``: a file holding only those columns."""
    table = catalog.get_table(f"db.{name}")
    builder = table.new_batch_write_builder()
    messages = builder.new_update().with_update_type(columns).update_by_arrow_with_row_id(data)
    committer = builder.new_commit()
    committer.commit(messages)
    committer.close()


def pypaimon_rows(catalog, name):
    table = catalog.get_table(f"db.{name}")
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted((tuple(row.values()) for row in data.to_pylist()), key=repr)


def entry_rows(spark, name):
    return sorted(map(tuple, spark.table(f"db.{name}").collect()), key=repr)


def source_rows(spark, warehouse, name):
    df = spark.read.format("paimon").option("warehouse", warehouse) \
        .option("table", f"db.{name}").load()
    return sorted(map(tuple, df.collect()), key=repr)


def read_way(spark, name):
    return {r.key: r.value for r in spark.sql(f"show tblproperties db.{name}").collect()}[
        "paimon.read"]


def reads_exactly(spark, warehouse, registry, catalog, name, way=None):
    """The entry and the data source both give pypaimon's rows; returns them."""
    registry.sync()
    expected = pypaimon_rows(catalog, name)
    assert entry_rows(spark, name) == expected
    assert source_rows(spark, warehouse, name) == expected
    if way is not None:
        assert read_way(spark, name) == way
    return expected


SCORES = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.int32())])


def scores(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "score": pa.array(ids, pa.int32())}, schema=SCORES)


def test_data_evolution_reads_each_field_from_the_newest_file_that_wrote_it(
        spark, warehouse, registry, catalog):
    table = create(catalog, "evolved", SCORES, **EVOLUTION)
    write(table, scores(range(0, 6)))
    write(catalog.get_table("db.evolved"), scores(range(6, 10)))
    # one column of rows in both row-id ranges, then again (the newest wins), then another
    update_by_row_id(catalog, "evolved", ["score"], pa.table({
        "_ROW_ID": pa.array([1, 3, 7], pa.int64()),
        "score": pa.array([100, 300, 700], pa.int32())}))
    update_by_row_id(catalog, "evolved", ["score"], pa.table({
        "_ROW_ID": pa.array([3, 4], pa.int64()), "score": pa.array([301, 401], pa.int32())}))
    update_by_row_id(catalog, "evolved", ["name"], pa.table({
        "_ROW_ID": pa.array([8], pa.int64()), "name": pa.array(["eight"])}))
    rows = reads_exactly(spark, warehouse, registry, catalog, "evolved", way="python")
    assert rows[1] == (1, "n1", 100) and rows[3] == (3, "n3", 301) and rows[4] == (4, "n4", 401)
    assert rows[8] == (8, "eight", 8) and rows[9] == (9, "n9", 9) and len(rows) == 10
    # a projection and a filter read the same rows
    assert sorted(map(tuple, spark.table("db.evolved").where("score > 200")
                      .select("id", "score").collect())) == [(3, 301), (4, 401), (7, 700)]
    # its rows with _ROW_ID and _SEQUENCE_NUMBER (`paimon_row_tracking`) as pypaimon reads
    # them: a range's ids from its first_row_id, its sequence number the newest file's
    from dbt.adapters.paimon.datasource import row_tracking_source
    from dbt.adapters.paimon.format import splits as splits_mod
    from dbt.adapters.paimon.format.errors import PaimonFormatError
    from dbt.adapters.paimon.format.row_tracking import SOURCE_FILE, read_tracked_split
    from dbt.adapters.paimon.catalog.warehouse import open_table

    tracked = ["id", "name", "score", "_ROW_ID", "_SEQUENCE_NUMBER"]
    builder = catalog.get_table("db.evolved").new_read_builder().with_projection(tracked)
    want = sorted(tuple(r.values()) for r in builder.new_read().to_arrow(
        builder.new_scan().plan().splits()).to_pylist())
    assert [r[:3] for r in want] == rows and [r[3] for r in want] == list(range(10))
    row_tracking_source.register(spark)
    read = spark.read.format(row_tracking_source.NAME).option("warehouse", warehouse) \
        .option("table", "db.evolved").load()
    assert sorted(map(tuple, read.select(*tracked).collect())) == want
    # the reads that would rewrite its files (row operations) are refused, not
    # read wrong: a row of it lives in no one file
    ours = open_table(warehouse, "db", "evolved")
    split = splits_mod.plan_splits(ours)[0]
    for columns, assemble in ((["id", "_ROW_ID"], False), (["id", SOURCE_FILE], True)):
        with pytest.raises(PaimonFormatError, match="db.evolved is a data-evolution table"):
            read_tracked_split(ours, split, columns, assemble_rows=assemble)


def test_data_evolution_without_column_files_is_read_natively(
        spark, warehouse, registry, catalog):
    table = create(catalog, "evolved_whole", SCORES, **EVOLUTION)
    write(table, scores(range(0, 4)))
    reads_exactly(spark, warehouse, registry, catalog, "evolved_whole", way="native")


def test_data_evolution_deletion_vectors_in_64_bit_bitmaps(spark, warehouse, registry, catalog):
    """Deletion vectors of a data-evolution table belong to each row-id range's anchor file;
    ``deletion-vectors.bitmap64`` writes them as 64-bit bitmaps, which pypaimon 2.1 cannot
    decode: the expected rows are pypaimon's read before the delete, less the deleted ids."""
    from dbt.adapters.paimon.format import splits as splits_mod
    from dbt.adapters.paimon.format.commit import commit_compact
    from dbt.adapters.paimon.format.deletion_vectors import replace_bucket_index
    from dbt.adapters.paimon.format.kv_files import new_commit_message
    from dbt.adapters.paimon.catalog.warehouse import open_table

    table = create(catalog, "evolved_deletes", SCORES, **EVOLUTION,
                   **{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"})
    write(table, scores(range(0, 6)))
    update_by_row_id(catalog, "evolved_deletes", ["score"], pa.table({
        "_ROW_ID": pa.array([2, 5], pa.int64()), "score": pa.array([200, 500], pa.int32())}))
    before = pypaimon_rows(catalog, "evolved_deletes")
    ours = open_table(warehouse, "db", "evolved_deletes")
    split, = splits_mod.plan_splits(ours)
    anchor, = [f for f in split.files if not f.write_cols]
    message = new_commit_message(split.partition_values, split.bucket)
    message.index_adds, message.index_deletes = replace_bucket_index(
        ours, split, {anchor.file_name: np.array([1, 5])})   # row ids 1 and 5
    assert commit_compact(ours, [message]) is not None
    registry.sync()
    expected = [row for row in before if row[0] not in (1, 5)]
    assert entry_rows(spark, "evolved_deletes") == expected
    assert source_rows(spark, warehouse, "evolved_deletes") == expected
    assert read_way(spark, "evolved_deletes") == "python"


def test_blob_columns_read_as_binary(spark, warehouse, registry, catalog):
    schema = pa.schema([("id", pa.int64()), ("picture", pa.large_binary())])
    table = create(catalog, "pictures", schema, **EVOLUTION, **{"blob-field": "picture"})
    write(table, pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                           "picture": pa.array([b"\x89PNG", None, bytes(range(256))],
                                               pa.large_binary())}, schema=schema))
    rows = reads_exactly(spark, warehouse, registry, catalog, "pictures", way="python")
    assert rows[2] == (3, bytearray(range(256)))
    assert spark.table("db.pictures").schema["picture"].dataType == BinaryType()


# Paimon 2.x's multimodal BLOB columns: a list or a map of BLOBs, each value in the .blob files
BLOB_COLLECTIONS = {
    "array": (pa.list_(pa.large_binary()), [[b"\x89PNG", b"x"], None, [bytes(range(256))], []],
              ArrayType(BinaryType())),
    "map": (pa.map_(pa.string(), pa.large_binary()),
            [[("front", b"\x89PNG"), ("back", b"x")], None, [("side", bytes(range(256)))], []],
            MapType(StringType(), BinaryType())),
}


@pytest.mark.parametrize("kind", sorted(BLOB_COLLECTIONS))
def test_blob_collections_read_as_binary_collections(spark, warehouse, registry, catalog, kind):
    arrow_type, values, spark_type = BLOB_COLLECTIONS[kind]
    schema = pa.schema([("id", pa.int64()), ("pictures", arrow_type)])
    table = create(catalog, f"album_{kind}", schema, **EVOLUTION, **{"blob-field": "pictures"})
    assert type(table.fields[1].type).__name__ == f"{kind.capitalize()}Type"  # of BLOB
    write(table, pa.table({"id": pa.array(range(len(values)), pa.int64()),
                           "pictures": pa.array(values, arrow_type)}, schema=schema))
    registry.sync()
    # Arrow gives a map as (key, value) pairs, Spark as a dict
    as_dicts = (lambda v: None if v is None else dict(v)) if kind == "map" else (lambda v: v)
    expected = [(i, as_dicts(v)) for i, v in pypaimon_rows(catalog, f"album_{kind}")]
    assert expected == [(i, as_dicts(v)) for i, v in enumerate(values)]
    assert entry_rows(spark, f"album_{kind}") == expected
    assert source_rows(spark, warehouse, f"album_{kind}") == expected
    assert read_way(spark, f"album_{kind}") == "python"
    assert spark.table(f"db.album_{kind}").schema["pictures"].dataType == spark_type


def variants(values):
    return GenericVariant.to_arrow_array([None if v is None else GenericVariant.from_python(v)
                                          for v in values])


@pytest.mark.parametrize("shredded", [False, True], ids=["plain", "shredded"])
def test_variant_columns_read_as_spark_variant(spark, warehouse, registry, catalog, shredded):
    name = "events_shredded" if shredded else "events"
    schema = pa.schema([("id", pa.int64()), ("payload", VARIANT)])
    options = {"variant.shreddingSchema": json.dumps({"type": "ROW", "fields": [
        {"id": 0, "name": "payload", "type": {"type": "ROW", "fields": [
            {"id": 0, "name": "age", "type": "BIGINT"}]}}]})} if shredded else {}
    table = create(catalog, name, schema, **options)
    values = [{"age": 5, "tags": ["a", 1]}, {"age": 7}, None, {"age": 9, "nested": {"x": 1.5}}]
    write(table, pa.table({"id": pa.array(range(4), pa.int64()), "payload": variants(values)},
                          schema=schema))
    registry.sync()
    assert read_way(spark, name) == "native"
    assert spark.table(f"db.{name}").schema["payload"].dataType == VariantType()
    expected = [json.dumps(v, separators=(",", ":"), sort_keys=True) if v is not None else None
                for v in values]
    pypaimon_values = [None if p is None else GenericVariant(p["value"], p["metadata"]).to_python()
                       for _, p in pypaimon_rows(catalog, name)]
    assert pypaimon_values == values
    for df in (spark.table(f"db.{name}"),
               spark.read.format("paimon").option("warehouse", warehouse)
               .option("table", f"db.{name}").load()):
        got = [r.j for r in df.selectExpr("id", "to_json(payload) as j").orderBy("id").collect()]
        assert [None if j is None else json.dumps(json.loads(j), separators=(",", ":"),
                                                  sort_keys=True) for j in got] == expected
    ages = spark.table(f"db.{name}").selectExpr("id", "variant_get(payload, '$.age', 'int') a")
    assert [r.a for r in ages.orderBy("id").collect()] == [5, 7, None, 9]


def test_vector_columns_read_as_arrays(spark, warehouse, registry, catalog):
    schema = pa.schema([("id", pa.int64()), ("embedding", pa.list_(pa.float32(), 3))])
    table = create(catalog, "embeddings", schema)
    write(table, pa.table({"id": pa.array([1, 2], pa.int64()),
                           "embedding": pa.array([[1, 2, 3], [0.5, None, -1]],
                                                 pa.list_(pa.float32(), 3))}, schema=schema))
    reads_exactly(spark, warehouse, registry, catalog, "embeddings")


KEYED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def keyed(ids, value):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{value}{i}" for i in ids]},
                    schema=KEYED)


def test_postpone_bucket_rows_are_invisible_until_compacted(spark, warehouse, registry, catalog):
    table = create(catalog, "postponed", KEYED, primary_keys=["id"], bucket="-2")
    stream_write(table, keyed([1, 2], "flink"))
    assert reads_exactly(spark, warehouse, registry, catalog, "postponed") == []
    # Paimon 1.4's batch write of a postpone table: straight into fixed buckets, visible
    fixed = catalog.get_table("db.postponed").new_postpone_fixed_bucket_write_builder()
    write(catalog.get_table("db.postponed"), keyed([2, 3, 4], "batch"), builder=fixed)
    stream_write(catalog.get_table("db.postponed"), keyed([4, 5], "later"), identifier=2)
    rows = reads_exactly(spark, warehouse, registry, catalog, "postponed")
    assert rows == [(2, "batch2"), (3, "batch3"), (4, "batch4")]


def test_postpone_merge_on_read_reads_pending_rows(spark, warehouse, registry, catalog):
    """With ``postpone.merge-on-read`` the postpone bucket's rows are read (Paimon's
    PostponeMergeReadBuilder; tests/integration/datasource/test_postpone_merge_on_read.py):
    through the Python path while any are pending."""
    table = create(catalog, "postponed_mor", KEYED, primary_keys=["id"], bucket="-2",
                   **{"postpone.merge-on-read": "true"})
    stream_write(table, keyed([1, 2], "flink"))
    registry.sync()
    assert read_way(spark, "postponed_mor") == "python"
    want = [(1, "flink1"), (2, "flink2")]
    assert entry_rows(spark, "postponed_mor") == want
    assert source_rows(spark, warehouse, "postponed_mor") == want


@pytest.mark.parametrize("keys", [(), ("id",)], ids=["append", "primary_key"])
def test_external_data_paths(spark, warehouse, registry, catalog, keys):
    name = "external_" + ("keyed" if keys else "append")
    folder = os.path.join(os.path.dirname(warehouse), f"{name}_files")
    os.makedirs(folder)
    options = {"data-file.external-paths": f"file://{folder}",
               "data-file.external-paths.strategy": "round-robin"}
    if keys:
        options["bucket"] = "2"
    table = create(catalog, name, KEYED, primary_keys=keys, **options)
    write(table, keyed(range(6), "a"))
    write(catalog.get_table(f"db.{name}"), keyed([1, 7], "b"))
    reads_exactly(spark, warehouse, registry, catalog, name)
    stored = [n for _, _, names in os.walk(folder) for n in names if n.endswith(".parquet")]
    assert stored  # the data files are in the external folder, not under the table's
