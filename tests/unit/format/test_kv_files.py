import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dbt.adapters.paimon.format.bucket import bucket_ids
from dbt.adapters.paimon.format.commit import commit_append
from dbt.adapters.paimon.format.kv_files import (new_commit_message, next_sequence_number,
                                                 read_append_split, read_split_records,
                                                 write_kv_file)
from dbt.adapters.paimon.format.splits import bucket_split, list_snapshots, plan_splits
from dbt.adapters.paimon.catalog.warehouse import create_table
from paimon_format_helpers import (ORDERS, orders, pypaimon_read, pypaimon_write, records,
                                   sort_rows)

DAY = "2024-01-01"


def _by_bucket(data: pa.Table, num_buckets=2):
    buckets = bucket_ids(data.select(["id"]), num_buckets)
    return {b: data.filter(pa.array(buckets == b)).sort_by("id") for b in set(buckets.tolist())}


def _write_and_commit(table, data: pa.Table, kinds=None):
    """Our write path for one commit: per bucket, sorted records, sequence from the bucket."""
    messages = []
    for bucket, part in _by_bucket(data).items():
        rows = records(part, kinds=None if kinds is None else [kinds] * part.num_rows)
        base = next_sequence_number(table, {"dt": DAY}, bucket)
        files = write_kv_file(table, {"dt": DAY}, bucket, rows, sequence_base=base)
        messages.append(new_commit_message((DAY,), bucket, files))
    return commit_append(table, messages)


def test_pypaimon_written_table_reads_raw_with_seq_and_row_kind(warehouse):
    schema = pa.schema([("k", pa.int32()), ("v", pa.string()), ("op", pa.string())])
    table = create_table(warehouse, "db", "cdc", schema, primary_keys=["k"],
                         options={"bucket": "1", "rowkind.field": "op"})
    pypaimon_write(table, pa.table({"k": pa.array([1, 2, 3], pa.int32()),
                                    "v": ["a", "b", "c"], "op": ["+I", "+I", "+I"]}, schema))
    pypaimon_write(table, pa.table({"k": pa.array([2, 3], pa.int32()), "v": ["b", "c2"],
                                    "op": ["-D", "+U"]}, schema))
    (split,) = plan_splits(table)
    raw = read_split_records(table, split)
    assert raw.schema.names == ["k", "v", "op", "_seq", "_row_kind", "_level"]
    assert raw.schema.field("_seq").type == pa.int64()
    rows = [(r["k"], r["v"], r["_seq"], r["_row_kind"], r["_level"]) for r in raw.to_pylist()]
    assert rows == [(1, "a", 0, "+I", 0), (2, "b", 1, "+I", 0), (3, "c", 2, "+I", 0),
                    (2, "b", 3, "-D", 0), (3, "c2", 4, "+U", 0)]
    # projection keeps the primary key
    assert read_split_records(table, split, columns=["v"]).schema.names == \
        ["k", "v", "_seq", "_row_kind", "_level"]


def test_sequence_field_columns_are_always_read(warehouse):
    schema = pa.schema([("k", pa.int32()), ("ts", pa.int64()), ("v", pa.string())])
    table = create_table(warehouse, "db", "seq", schema, primary_keys=["k"],
                         options={"bucket": "1", "sequence.field": "ts"})
    pypaimon_write(table, pa.table({"k": pa.array([1], pa.int32()), "ts": [5], "v": ["a"]}))
    (split,) = plan_splits(table)
    assert read_split_records(table, split, ["v"]).schema.names[:3] == ["k", "ts", "v"]


def test_written_files_read_back_by_pypaimon_and_raw(pk_table):
    first = orders(DAY, list(range(50)))
    _write_and_commit(pk_table, first)
    second = orders(DAY, list(range(40, 70)), names=[f"v2-{i}" for i in range(40, 70)])
    _write_and_commit(pk_table, second)

    # pypaimon's deduplicate read merges our level-0 files: latest version wins
    expected = {r["id"]: r for r in first.to_pylist()}
    expected.update({r["id"]: r for r in second.to_pylist()})
    assert sort_rows(pypaimon_read(pk_table)) == sorted(expected.values(),
                                                        key=lambda r: r["id"])
    # raw read gives every version, with increasing sequence numbers per bucket
    for split in plan_splits(pk_table):
        raw = read_split_records(pk_table, split)
        assert raw.num_rows == sum(f.row_count for f in split.files)
        seqs = raw.column("_seq").to_pylist()
        assert sorted(seqs) == list(range(len(seqs)))  # 0.. per bucket, no gaps, no repeats
        assert [f.level for f in split.files] == [0, 0]


def test_file_metadata(pk_table):
    data = orders(DAY, [5, 1, 9, 3, 7]).sort_by("id")
    rows = records(data, kinds=["+I", "-D", "+U", "-U", "+I"], seqs=[10, 11, 12, 13, 14])
    (meta,) = write_kv_file(pk_table, {"dt": DAY}, 0, rows, level=3, check_order=True)
    assert meta.level == 3
    assert meta.row_count == 5 and meta.delete_row_count == 2  # -D and -U
    assert (meta.min_sequence_number, meta.max_sequence_number) == (10, 14)
    assert meta.min_key.values == [1] and meta.max_key.values == [9]
    assert meta.key_stats.min_values.values == [1] and meta.key_stats.null_counts == [0]
    assert meta.value_stats_cols is None  # stats on every column
    assert meta.value_stats.min_values.values == [DAY, 1, "n1", 1.0]
    assert meta.value_stats.max_values.values == [DAY, 9, "n9", 9.0]
    # the physical layout is Paimon's key-value layout
    stored = pq.ParquetFile(meta.file_path).read()
    assert stored.schema.names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND",
                                   "dt", "id", "name", "amount"]
    assert stored.column("_VALUE_KIND").to_pylist() == [0, 3, 2, 1, 0]
    # and the raw reader inverts it
    split = bucket_split(pk_table, {"dt": DAY}, 0)
    assert split.files == []  # not committed yet
    commit_append(pk_table, [new_commit_message((DAY,), 0, [meta])])
    raw = read_split_records(pk_table, bucket_split(pk_table, {"dt": DAY}, 0))
    assert raw.column("id").to_pylist() == [1, 3, 5, 7, 9]
    assert raw.column("_row_kind").to_pylist() == ["+I", "-D", "+U", "-U", "+I"]
    assert raw.column("_seq").to_pylist() == [10, 11, 12, 13, 14]
    assert raw.column("_level").to_pylist() == [3] * 5


def test_sequence_numbers_continue_across_commits(pk_table):
    pypaimon_write(pk_table, orders(DAY, [1, 2, 3, 4]))
    splits = {s.bucket: s for s in plan_splits(pk_table)}
    for bucket, split in splits.items():
        assert next_sequence_number(pk_table, split) == split.row_count  # pypaimon: 0..n-1
    _write_and_commit(pk_table, orders(DAY, [1, 2, 3, 4], names=["x"] * 4))
    for split in plan_splits(pk_table):
        old, new = split.files
        assert new.min_sequence_number == old.max_sequence_number + 1
    # pypaimon's own writer continues after ours
    pypaimon_write(pk_table, orders(DAY, [1, 2, 3, 4], names=["y"] * 4))
    for split in plan_splits(pk_table):
        assert split.files[2].min_sequence_number == split.files[1].max_sequence_number + 1
    assert set(pypaimon_read(pk_table).column("name").to_pylist()) == {"y"}


def test_rolls_files_at_target_file_size(warehouse):
    table = create_table(warehouse, "db", "roll", ORDERS, primary_keys=["dt", "id"],
                         partition_keys=["dt"],
                         options={"bucket": "1", "target-file-size": "4 kb"})
    data = orders(DAY, list(range(2000)))
    metas = write_kv_file(table, {"dt": DAY}, 0, records(data), level=5)
    assert len(metas) > 3
    assert sum(m.row_count for m in metas) == 2000
    for before, after in zip(metas, metas[1:]):  # disjoint, ordered key ranges at one level
        assert before.max_key.values[0] < after.min_key.values[0]
        assert before.max_sequence_number < after.min_sequence_number
    assert all(m.level == 5 and m.delete_row_count == 0 for m in metas)
    commit_append(table, [new_commit_message((DAY,), 0, metas)])
    assert pypaimon_read(table).num_rows == 2000


def test_rejects_unsorted_duplicate_or_bad_records(pk_table):
    data = orders(DAY, [3, 1, 2])
    with pytest.raises(ValueError, match="sorted by the primary key"):
        write_kv_file(pk_table, {"dt": DAY}, 0, records(data))
    with pytest.raises(ValueError, match="appears more than once"):
        write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, [1, 2, 2])))
    with pytest.raises(ValueError, match="_row_kind must be one of"):
        write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, [1]), kinds=["U"]))
    with pytest.raises(ValueError, match="lack columns"):
        write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, [1]).drop(["name"])))
    with pytest.raises(ValueError, match="exactly the partition keys"):
        write_kv_file(pk_table, {}, 0, records(orders(DAY, [1])))
    assert write_kv_file(pk_table, {"dt": DAY}, 0, records(orders(DAY, []))) == []


def test_changelog_files_are_committed_to_the_changelog_manifest(pk_table):
    rows = records(orders(DAY, [1, 2]), kinds=["+I", "+I"])
    data = write_kv_file(pk_table, {"dt": DAY}, 0, rows, sequence_base=0)
    log = write_kv_file(pk_table, {"dt": DAY}, 0, rows, sequence_base=0, changelog=True)
    assert log[0].file_name.startswith("changelog-")
    commit_append(pk_table, [new_commit_message({"dt": DAY}, 0, data, changelog_files=log)])
    snapshot = pk_table.snapshot_manager().get_latest_snapshot()
    assert snapshot.changelog_manifest_list is not None
    assert snapshot.changelog_record_count == 2
    assert [s.commit_kind for s in list_snapshots(pk_table)] == ["APPEND"]


def test_append_split_reads_in_write_order(warehouse):
    schema = pa.schema([("dt", pa.string()), ("n", pa.int64()), ("s", pa.string())])
    table = create_table(warehouse, "db", "log", schema, partition_keys=["dt"],
                         options={"bucket": "2", "bucket-key": "n"})
    for start in (0, 100, 200):
        pypaimon_write(table, pa.table({"dt": [DAY] * 50, "n": list(range(start, start + 50)),
                                        "s": [f"s{start}"] * 50}, schema))
    splits = plan_splits(table)
    assert len(splits) == 2 and not splits[0].primary_key_table
    for split in splits:
        rows = read_append_split(table, split)
        n = rows.column("n").to_pylist()
        assert n == sorted(n)  # later writes come after earlier ones within the bucket
        assert set(bucket_ids(rows.select(["n"]), 2).tolist()) == {split.bucket}
        assert read_append_split(table, split, columns=["s"]).schema.names == ["s"]
    total = sum(read_append_split(table, s).num_rows for s in splits)
    assert total == pypaimon_read(table).num_rows == 150
    with pytest.raises(ValueError, match="read_split_records"):
        read_append_split(create_table(warehouse, "db", "pk", ORDERS, primary_keys=["id"],
                                       options={"bucket": "1"}), splits[0])


def test_raw_reads_follow_schema_evolution(warehouse):
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    from dbt.adapters.paimon.catalog.warehouse import open_catalog, open_table

    schema = pa.schema([("k", pa.int32()), ("v", pa.string())])
    table = create_table(warehouse, "db", "evo", schema, primary_keys=["k"],
                         options={"bucket": "1"})
    pypaimon_write(table, pa.table({"k": pa.array([1], pa.int32()), "v": ["old"]}))
    open_catalog(warehouse).alter_table("db.evo", [
        SchemaChange.rename_column("v", "value"),
        SchemaChange.add_column("extra", AtomicType("BIGINT"))])
    table = open_table(warehouse, "db", "evo")
    pypaimon_write(table, pa.table({"k": pa.array([2], pa.int32()), "value": ["new"],
                                    "extra": pa.array([7], pa.int64())}))
    (split,) = plan_splits(table)
    raw = read_split_records(table, split)
    assert [(r["k"], r["value"], r["extra"]) for r in raw.to_pylist()] == \
        [(1, "old", None), (2, "new", 7)]


def test_delete_row_count_makes_pypaimon_merge_a_lone_delete(pk_table):
    # pypaimon's writer records delete_row_count=0, so a file holding a -D is read "raw
    # convertible" and the deleted key comes back; ours records the real count
    rows = records(orders(DAY, [1, 2]), kinds=["+I", "-D"])
    files = write_kv_file(pk_table, {"dt": DAY}, 0, rows, sequence_base=0)
    commit_append(pk_table, [new_commit_message((DAY,), 0, files)])
    assert files[0].delete_row_count == 1
    assert pypaimon_read(pk_table).column("id").to_pylist() == [1]


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_file_formats(warehouse, file_format):
    table = create_table(warehouse, "db", f"t_{file_format}", ORDERS,
                         primary_keys=["dt", "id"], partition_keys=["dt"],
                         options={"bucket": "1", "file.format": file_format})
    files = write_kv_file(table, {"dt": DAY}, 0, records(orders(DAY, [1, 2])), sequence_base=0)
    assert files[0].file_name.endswith("." + file_format)
    commit_append(table, [new_commit_message((DAY,), 0, files)])
    raw = read_split_records(table, plan_splits(table)[0])
    assert raw.column("id").to_pylist() == [1, 2] and raw.column("_seq").to_pylist() == [0, 1]
    assert sort_rows(pypaimon_read(table)) == orders(DAY, [1, 2]).to_pylist()


def test_min_max_key_of_chunked_records(pk_table):
    chunked = pa.concat_tables([records(orders(DAY, [1, 2])), records(orders(DAY, [3, 4]))])
    assert chunked.column("id").num_chunks == 2
    (meta,) = write_kv_file(pk_table, {"dt": DAY}, 0, chunked)
    assert (meta.min_key.values, meta.max_key.values) == ([1], [4])
