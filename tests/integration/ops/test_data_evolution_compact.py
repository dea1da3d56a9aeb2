"""Compaction of data-evolution tables (ops/data_evolution_compact.py): pypaimon 2.1 writes the
table and updates columns by row id, dbt-paimon compacts it, and pypaimon 2.1's read and ours
give the same rows with the same ``_ROW_ID`` as before, from one file per run of adjacent
row-id ranges, in one COMPACT snapshot.

Java sources the expectations follow: DataEvolutionCompactCoordinator (ranges merged where
they overlap or touch, groups packed by weight against target-file-size, a task kept from
compaction.min.file-num files, BLOB files left out) and DataEvolutionNormalCompactTask (one
file, its first row id the task's first, sequence numbers from the inputs' smallest to their
largest, BLOB columns in files of their own not rewritten, those kept in the data files carried
as their stored descriptors and views). The planning alone, on file metadata:
tests/unit/ops/test_data_evolution_compact_planning.py."""
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypaimon import CatalogFactory, Schema

from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.splits import plan_splits
from dbt.adapters.paimon.ops.compact import compact_table
from dbt.adapters.paimon.write.column_update import update_columns
from tests.data_evolution_tables import (  # noqa: F401  (fixtures)
    EVOLUTION, catalog, create, our_rows, pypaimon_rows, warehouse, wide, write)
from ops_helpers import kinds

# every run of ranges is compacted, whatever its file count
EVERY_RUN = {"compaction.min.file-num": "1"}


def _files(warehouse, name):
    table = open_table(warehouse, "db", name)
    return [f for s in plan_splits(table) for f in s.files]


def _update(warehouse, table, ids, **columns):
    run = pa.table({"id": pa.array(ids, pa.int64()), **columns})
    update_columns(open_table(warehouse, "db", table), "m", run, "id", list(columns))


def _commit(table, messages):
    committer = table.new_batch_write_builder().new_commit()
    committer.commit(messages)
    committer.close()


def _pypaimon_update(catalog, name, row_ids, column, values: pa.Array):
    """pypaimon 2.1's own update of one column by row id (a column file)."""
    table = catalog.get_table(f"db.{name}")
    update = table.new_batch_write_builder().new_update().with_update_type([column])
    _commit(table, update.update_by_arrow_with_row_id(pa.table({
        "_ROW_ID": pa.array(row_ids, pa.int64()), column: values})))


def _state(catalog, warehouse, name):
    rows = pypaimon_rows(catalog, name)
    assert our_rows(warehouse, name) == rows
    return rows, pypaimon_rows(catalog, name, with_row_id=True)


def test_adjacent_ranges_and_their_column_files_become_one_file(spark, catalog, warehouse):
    create(catalog, "t", **EVOLUTION)
    for start in (0, 4, 8):
        write(catalog.get_table("db.t"), wide(range(start, start + 4)))
    _update(warehouse, "t", [1, 5, 9], note=["a", "b", "c"])
    _update(warehouse, "t", [2, 6], score=pa.array([20, 60], pa.int32()))
    before = _state(catalog, warehouse, "t")
    assert len(_files(warehouse, "t")) == 8
    location = TableRef(warehouse, "db", "t", {})

    result = compact_table(spark, location)

    assert result.snapshot_id == 6 and kinds(location)[-1] == "COMPACT"
    assert (result.files_before, result.files_after, result.buckets) == (8, 1, 1)
    assert result.message == ("data-evolution compaction: snapshot 6 (COMPACT), 1 run(s) of "
                              "row-id ranges rewritten into one file each, data files 8 -> 1")
    (new,) = _files(warehouse, "t")
    assert (new.first_row_id, new.row_count, new.write_cols) == (0, 12, None)
    assert (new.min_sequence_number, new.max_sequence_number) == (1, 5)
    assert (new.level, new.file_source) == (0, 1)
    assert _state(catalog, warehouse, "t") == before   # rows and _ROW_IDs as they were
    # a later update of the compacted range wins over it (a higher sequence number)
    _update(warehouse, "t", [3], name=["three"])
    rows = dict((r[0], r) for r in pypaimon_rows(catalog, "t"))
    assert rows[3][1] == "three" and rows[2][2] == 20 and rows[5][3] == "b"
    assert our_rows(warehouse, "t") == pypaimon_rows(catalog, "t")


def test_a_run_below_the_minimum_file_count_is_left_alone(spark, catalog, warehouse):
    """Paimon's default compaction.min.file-num (5): three files are nothing to compact, with
    or without ``full`` (the coordinator has one plan)."""
    create(catalog, "few", **EVOLUTION)
    for start in (0, 3):
        write(catalog.get_table("db.few"), wide(range(start, start + 3)))
    _update(warehouse, "few", [1], note=["x"])
    location = TableRef(warehouse, "db", "few", {})
    for full in (False, True):
        result = compact_table(spark, location, full=full)
        assert result.snapshot_id is None and kinds(location)[-1] == "APPEND"
        assert "no run of adjacent row-id ranges holds 'compaction.min.file-num'" in \
            result.message


def test_each_partition_is_compacted_on_its_own_and_partitions_select(spark, catalog,
                                                                      warehouse):
    create(catalog, "parts", partition_keys=["dt"], **EVOLUTION, **EVERY_RUN)
    for start, dt in ((0, "a"), (3, "b"), (6, "a")):
        write(catalog.get_table("db.parts"), wide(range(start, start + 3), dt))
    _update(warehouse, "parts", [1, 4], note=["one", "four"])
    before = _state(catalog, warehouse, "parts")
    location = TableRef(warehouse, "db", "parts", {})
    compact_table(spark, location, partitions=[{"dt": "b"}])
    by_dt = {s.partition["dt"]: s.files for s in plan_splits(location.open())}
    assert len(by_dt["b"]) == 1 and len(by_dt["a"]) == 3
    assert _state(catalog, warehouse, "parts") == before
    compact_table(spark, location)
    by_dt = {s.partition["dt"]: s.files for s in plan_splits(location.open())}
    # partition a's ranges (rows 0-2 and 6-8) lie apart: a run each
    assert sorted((f.first_row_id, f.row_count) for f in by_dt["a"]) == [(0, 3), (6, 3)]
    assert _state(catalog, warehouse, "parts") == before


def test_blob_files_are_left_as_they_are_and_read_the_same(spark, catalog, warehouse):
    schema = pa.schema([("id", pa.int64()), ("note", pa.string()),
                        ("picture", pa.large_binary())])
    catalog.create_table("db.pictures", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **EVERY_RUN, "blob-field": "picture"}), False)
    for start in (0, 2):
        ids = list(range(start, start + 2))
        write(catalog.get_table("db.pictures"), pa.table({
            "id": pa.array(ids, pa.int64()), "note": [f"n{i}" for i in ids],
            "picture": pa.array([bytes([i]) * 3 for i in ids], pa.large_binary())},
            schema=schema))
    _update(warehouse, "pictures", [3], note=["three"])
    data = _compact_keeping(spark, catalog, warehouse, "pictures", ".blob")
    assert (data.first_row_id, data.row_count, data.write_cols) == (0, 4, ["id", "note"])


def _compact_keeping(spark, catalog, warehouse, name, suffix):
    """Compact ``name``: its files of their own (``suffix``: .blob, .video) stay as they were,
    every row and _ROW_ID reads the same; returns the one data file left."""
    before = _state(catalog, warehouse, name)
    kept = sorted(f.file_name for f in _files(warehouse, name) if suffix in f.file_name)
    assert kept
    result = compact_table(spark, TableRef(warehouse, "db", name, {}))
    assert result.snapshot_id is not None
    files = _files(warehouse, name)
    assert sorted(f.file_name for f in files if suffix in f.file_name) == kept
    (data,) = [f for f in files if suffix not in f.file_name]
    assert _state(catalog, warehouse, name) == before
    return data


def test_deletion_vectors_move_to_the_new_file(spark, catalog, warehouse):
    """pypaimon 2.1 deletes rows 1 and 4, one in each of two ranges: the new file keeps every
    row (row ids stay contiguous) and the old anchors' vectors move to it, each position
    shifted by its range's first row id (Java's DataEvolutionCompactDeletionVectorRewriter);
    the partition's index holds that one vector, and the rows read as before."""
    from dbt.adapters.paimon.format.deletion_vectors import read_deletion_vectors

    create(catalog, "dv", **EVOLUTION, **EVERY_RUN, **{"deletion-vectors.enabled": "true"})
    for start in (0, 3, 6):
        write(catalog.get_table("db.dv"), wide(range(start, start + 3)))
    builder = catalog.get_table("db.dv").new_batch_write_builder()
    committer = builder.new_commit()
    committer.commit(builder.new_update().delete_by_row_id([1, 4]))
    committer.close()
    _update(warehouse, "dv", [7], note=["seven"])
    before = _state(catalog, warehouse, "dv")
    assert sorted(r[0] for r in before[0]) == [0, 2, 3, 5, 6, 7, 8]
    result = compact_table(spark, TableRef(warehouse, "db", "dv", {}))
    assert result.snapshot_id is not None and result.files_after == 1
    (split,) = plan_splits(open_table(warehouse, "db", "dv"))
    (new,) = split.files
    assert (new.first_row_id, new.row_count) == (0, 9)
    assert list(split.deletion_files) == [new.file_name]
    vectors = read_deletion_vectors(open_table(warehouse, "db", "dv").file_io,
                                    split.deletion_files)
    assert vectors[new.file_name].tolist() == [1, 4]
    assert _state(catalog, warehouse, "dv") == before


def test_threads_and_spark_tasks_compact_to_the_same_rows(spark, tmp_path):
    states = {}
    for path in ("in_process", "distributed"):
        folder = str(tmp_path / path)
        catalog = CatalogFactory.create({"warehouse": folder})
        catalog.create_database("db", True)
        create(catalog, "t", **EVOLUTION, **EVERY_RUN)
        for start in (0, 5):
            write(catalog.get_table("db.t"), wide(range(start, start + 5)))
        _update(folder, "t", [2, 7], note=["two", "seven"])
        before = _state(catalog, folder, "t")
        spark.conf.set("spark.dbt.paimon.writePath", path)
        try:
            assert compact_table(spark, TableRef(folder, "db", "t", {})).snapshot_id == 4
        finally:
            spark.conf.unset("spark.dbt.paimon.writePath")
        assert _state(catalog, folder, "t") == before
        states[path] = [(f.first_row_id, f.row_count, f.min_sequence_number,
                         f.max_sequence_number) for f in _files(folder, "t")]
    assert states["in_process"] == states["distributed"] == [(0, 10, 1, 3)]


def test_columns_are_left_out_by_their_stored_type(spark, catalog, warehouse):
    """Which columns live in files of their own is the schema's types' say, as pypaimon's writer
    and Paimon's task decide it: a VECTOR column with vector.file.format is in .vector files,
    but an ARRAY column named in 'vector-field' that pypaimon created as ARRAY is in the data
    files, and is rewritten with them. The new file's range spans the three .vector files
    of before, which pypaimon 2.1 reads through format/pypaimon_compat.py's mend."""
    schema = pa.schema([("id", pa.int64()), ("a", pa.list_(pa.float32())),
                        ("v", pa.list_(pa.float32(), 2))])
    catalog.create_table("db.vectors", Schema.from_pyarrow_schema(schema, options={
        **EVOLUTION, **EVERY_RUN, "vector-field": "a,v", "field.a.vector-dim": "2",
        "field.v.vector-dim": "2", "vector.file.format": "parquet"}), False)
    for start in (0, 2, 4):
        ids = list(range(start, start + 2))
        write(catalog.get_table("db.vectors"), pa.table({
            "id": pa.array(ids, pa.int64()),
            "a": pa.array([[i, -i] for i in ids], pa.list_(pa.float32())),
            "v": pa.array([[i, i] for i in ids], pa.list_(pa.float32(), 2))}, schema=schema))
    _pypaimon_update(catalog, "vectors", [1, 4], "a",
                     pa.array([[9, 9], [8, 8]], pa.list_(pa.float32())))
    before = _state(catalog, warehouse, "vectors")
    a = {1: [9.0, 9.0], 4: [8.0, 8.0]}
    assert before[0] == [(i, a.get(i, [float(i), float(-i)]), [float(i)] * 2) for i in range(6)]
    vectors = sorted(f.file_name for f in _files(warehouse, "vectors")
                     if ".vector." in f.file_name)
    assert len(vectors) == 3

    assert compact_table(spark, TableRef(warehouse, "db", "vectors", {})).snapshot_id

    files = _files(warehouse, "vectors")
    assert sorted(f.file_name for f in files if ".vector." in f.file_name) == vectors
    (data,) = [f for f in files if ".vector." not in f.file_name]
    assert (data.first_row_id, data.row_count, data.write_cols) == (0, 6, ["id", "a"])
    assert _state(catalog, warehouse, "vectors") == before


# --------------------------------------------------------------------------- any history

@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       updates=st.lists(st.tuples(st.sampled_from([("score",), ("note",), ("name", "note")]),
                                  st.lists(st.integers(0, 19), min_size=1, max_size=5,
                                           unique=True)),
                        max_size=3),
       min_files=st.integers(1, 4))
def test_any_history_reads_the_same_after_compaction(spark, commits, updates, min_files):
    """Tables of 1-4 pypaimon commits and 0-3 column updates, compacted with
    compaction.min.file-num 1-4: pypaimon 2.1 and dbt-paimon read the rows and _ROW_IDs of
    before, a compacted run is one file covering whole ranges, and an update after it wins."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        catalog = CatalogFactory.create({"warehouse": folder})
        catalog.create_database("db", True)
        create(catalog, "h", **EVOLUTION, **{"compaction.min.file-num": str(min_files)})
        start = 0
        for size in commits:
            write(catalog.get_table("db.h"), wide(range(start, start + size)))
            start += size
        for number, (columns, ids) in enumerate(updates):
            ids = [i for i in ids if i < start]
            if ids:
                values = {"score": pa.array([i * 10 + number for i in ids], pa.int32()),
                          "note": [f"u{number}-{i}" for i in ids],
                          "name": [f"m{number}-{i}" for i in ids]}
                _update(folder, "h", ids, **{c: values[c] for c in columns})
        before = _state(catalog, folder, "h")
        compact_table(spark, TableRef(folder, "db", "h", {}))
        assert _state(catalog, folder, "h") == before
        ranges = sorted((f.first_row_id, f.first_row_id + f.row_count)
                        for f in _files(folder, "h"))
        assert ranges[0][0] == 0 and max(end for _, end in ranges) == start
        _update(folder, "h", [0], note=["after"])
        assert dict((r[0], r[3]) for r in pypaimon_rows(catalog, "h"))[0] == "after"
        assert our_rows(folder, "h") == pypaimon_rows(catalog, "h")


# --------------------------------------------------------------------------- inline BLOB storage
# blob-descriptor-field (or its older key blob.stored-descriptor-fields) and blob-view-field
# keep a BLOB column's values in the data files, as serialized BlobDescriptor / BlobViewStruct
# bytes; video-frame-field keeps them in .video files of their own. Paimon's
# DataEvolutionNormalCompactTask rewrites an inline column as a column of the new file
# (fieldNamesInBlobFile leaves it out of the dedicated ones) and leaves the .blob/.video files.

RAW = {"blob-as-descriptor": "true", "blob-view.resolve.enabled": "false"}


def _raw_rows(catalog, name):
    """The rows with _ROW_ID and each inline BLOB value as its data file holds it (a serialized
    descriptor or view), neither fetched nor resolved."""
    table = catalog.get_table(f"db.{name}").copy(RAW)
    builder = table.new_read_builder().with_projection(table.field_names + ["_ROW_ID"])
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted(tuple(r.values()) for r in data.to_pylist())


def _stored(warehouse, meta):
    """The new data file itself, as pyarrow reads it."""
    import glob

    import pyarrow.parquet as pq

    (path,) = glob.glob(f"{warehouse}/**/{meta.file_name}", recursive=True)
    return pq.read_table(path)


@pytest.mark.parametrize("option, path", [("blob-descriptor-field", "in_process"),
                                          ("blob.stored-descriptor-fields", "distributed")])
def test_descriptor_fields_are_carried_byte_for_byte(spark, catalog, warehouse, tmp_path,
                                                     option, path):
    """The descriptors (one set by pypaimon's update of the column, one NULL) are read as
    stored and written into the new file unchanged, in this process or in Spark tasks; a read
    then fetches the same payload ranges."""
    from pypaimon.table.row.blob import BlobDescriptor

    payload = tmp_path / "payload.bin"
    payload.write_bytes(bytes(range(256)))

    def descriptor(i, shift=0):
        return BlobDescriptor(f"file://{payload}", i * 7 + shift, 3 + i % 4).serialize()

    schema = pa.schema([("id", pa.int64()), ("note", pa.string()), ("doc", pa.large_binary())])
    catalog.create_table("db.docs", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **EVERY_RUN, option: "doc"}), False)
    for start in (0, 3, 6):
        ids = list(range(start, start + 3))
        write(catalog.get_table("db.docs"), pa.table({
            "id": pa.array(ids, pa.int64()), "note": [f"n{i}" for i in ids],
            "doc": pa.array([descriptor(i) for i in ids], pa.large_binary())}, schema=schema))
    _update(warehouse, "docs", [1, 7], note=["one", "seven"])
    _pypaimon_update(catalog, "docs", [4, 5], "doc",
                     pa.array([descriptor(4, 100), None], pa.large_binary()))
    before = _state(catalog, warehouse, "docs"), _raw_rows(catalog, "docs")
    assert not [f for f in _files(warehouse, "docs") if ".blob" in f.file_name]
    assert dict((r[0], r[2]) for r in before[0][0])[4] == bytes(range(128, 131))

    spark.conf.set("spark.dbt.paimon.writePath", path)
    try:
        result = compact_table(spark, TableRef(warehouse, "db", "docs", {}))
    finally:
        spark.conf.unset("spark.dbt.paimon.writePath")

    assert result.snapshot_id is not None and result.files_after == 1
    (new,) = _files(warehouse, "docs")
    assert (new.first_row_id, new.row_count, new.write_cols) == (0, 9, None)
    assert (new.level, new.file_source) == (0, 1)
    assert (_state(catalog, warehouse, "docs"), _raw_rows(catalog, "docs")) == before
    stored = _stored(warehouse, new)
    assert stored.schema.field("doc").type == pa.large_binary()
    by_row = {row[3]: row[2] for row in before[1]}      # _ROW_ID -> descriptor bytes
    assert stored.column("doc").to_pylist() == [by_row[i] for i in range(9)]


def test_view_fields_are_carried_byte_for_byte(spark, catalog, warehouse):
    """blob-view-field values are BlobViewStruct bytes (a table, a field id, a row id) that a
    read resolves through the catalog: the compaction keeps the references, never the
    payloads they resolve to."""
    from pypaimon.table.row.blob import BlobViewStruct

    pictures = pa.schema([("id", pa.int64()), ("picture", pa.large_binary())])
    catalog.create_table("db.pictures", Schema.from_pyarrow_schema(
        pictures, options={**EVOLUTION, "blob-field": "picture"}), False)
    write(catalog.get_table("db.pictures"), pa.table({
        "id": pa.array(range(8), pa.int64()),
        "picture": pa.array([bytes([i]) * 4 for i in range(8)], pa.large_binary())},
        schema=pictures))
    field_id = catalog.get_table("db.pictures").field_dict["picture"].id

    def view(row_id):
        return BlobViewStruct("db.pictures", field_id, row_id).serialize()

    schema = pa.schema([("id", pa.int64()), ("note", pa.string()), ("ref", pa.large_binary())])
    catalog.create_table("db.refs", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **EVERY_RUN, "blob-view-field": "ref"}), False)
    for start in (0, 3):
        ids = list(range(start, start + 3))
        write(catalog.get_table("db.refs"), pa.table({
            "id": pa.array(ids, pa.int64()), "note": [f"n{i}" for i in ids],
            "ref": pa.array([view(7 - i) for i in ids], pa.large_binary())}, schema=schema))
    _update(warehouse, "refs", [2], note=["two"])
    _pypaimon_update(catalog, "refs", [0], "ref", pa.array([view(1)], pa.large_binary()))
    before = _state(catalog, warehouse, "refs"), _raw_rows(catalog, "refs")
    assert dict((r[0], r[2]) for r in before[0][0])[0] == bytes([1]) * 4

    result = compact_table(spark, TableRef(warehouse, "db", "refs", {}))

    assert result.snapshot_id is not None and result.files_after == 1
    (new,) = _files(warehouse, "refs")
    assert (new.first_row_id, new.row_count, new.write_cols) == (0, 6, None)
    assert (_state(catalog, warehouse, "refs"), _raw_rows(catalog, "refs")) == before
    by_row = {row[3]: row[2] for row in before[1]}
    assert _stored(warehouse, new).column("ref").to_pylist() == [by_row[i] for i in range(6)]


def test_video_frames_stay_in_their_video_files(spark, catalog, warehouse, tmp_path):
    """video-frame-field (pypaimon 2.1): a BLOB column whose frames live in .video files of
    their own, read as frame descriptors into them. The column is BLOB by its type alone (no
    'blob-field'); the .video files stay as they are and the data file holds the rest."""
    from pypaimon.multimodal.table import MultimodalTable

    schema = pa.schema([("id", pa.int64()), ("note", pa.string()), ("frame", pa.large_binary())])
    catalog.create_table("db.clips", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **EVERY_RUN, "video-frame-field": "frame"}), False)
    clips = MultimodalTable(catalog, "db.clips", catalog.get_table("db.clips"))
    for number, start in enumerate((0, 3)):
        video = tmp_path / f"clip{number}.mp4"
        video.write_bytes(bytes([number]) * 64)
        ids = list(range(start, start + 3))
        clips.add_video(str(video), pa.table({"id": pa.array(ids, pa.int64()),
                                              "note": [f"n{i}" for i in ids]}))
    _update(warehouse, "clips", [4], note=["four"])
    assert len([f for f in _files(warehouse, "clips") if ".video" in f.file_name]) == 2
    data = _compact_keeping(spark, catalog, warehouse, "clips", ".video")
    assert (data.first_row_id, data.row_count, data.write_cols) == (0, 6, ["id", "note"])


def test_a_column_both_in_blob_files_and_inline_is_refused(spark, catalog, warehouse,
                                                           tmp_path):
    """'blob.stored-descriptor-fields' (unlike 'blob-descriptor-field') may be set on a table
    already written: its older rows keep the column's bytes in .blob files, the newer ones
    descriptors in the data files. pypaimon 2.1 cannot read such a table, and a compaction
    would turn the .blob values into descriptors: refused, nothing written."""
    from pypaimon.schema.schema_change import SchemaChange
    from pypaimon.table.row.blob import BlobDescriptor

    schema = pa.schema([("id", pa.int64()), ("doc", pa.large_binary())])
    catalog.create_table("db.mixed", Schema.from_pyarrow_schema(
        schema, options={**EVOLUTION, **EVERY_RUN, "blob-field": "doc"}), False)
    write(catalog.get_table("db.mixed"), pa.table({
        "id": pa.array([0, 1], pa.int64()), "doc": pa.array([b"aa", b"bb"], pa.large_binary())},
        schema=schema))
    catalog.alter_table("db.mixed", [SchemaChange.set_option(
        "blob.stored-descriptor-fields", "doc")], False)
    payload = tmp_path / "payload.bin"
    payload.write_bytes(b"0123456789")
    write(catalog.get_table("db.mixed"), pa.table({
        "id": pa.array([2], pa.int64()),
        "doc": pa.array([BlobDescriptor(f"file://{payload}", 0, 3).serialize()],
                        pa.large_binary())}, schema=schema))
    location = TableRef(warehouse, "db", "mixed", {})
    files = sorted(f.file_name for f in _files(warehouse, "mixed"))

    with pytest.raises(ValueError) as refused:
        compact_table(spark, location)

    message = str(refused.value)
    assert "db.mixed" in message and "'blob.stored-descriptor-fields'" in message
    assert "'doc'" in message and "Nothing was written" in message
    assert kinds(location)[-1] == "APPEND"
    assert sorted(f.file_name for f in _files(warehouse, "mixed")) == files
