"""Column updates of data-evolution tables (write/column_update.py): pypaimon 2.1 writes the
table, our update writes two of its columns keyed by a unique column or by ``_ROW_ID``, and
pypaimon 2.1's read and ours (format/data_evolution.py; Spark's read through the catalog entry
is tests/functional/paimon/test_data_evolution_update.py) give exactly the expected rows: the
updated columns changed, every other column as it was, row ids kept, one snapshot, column files
holding only the owned columns. Errors come before anything is written; concurrent updates
meet Paimon's per-column row-id check."""
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pypaimon import CatalogFactory, Schema

from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError
from dbt.adapters.paimon.write.column_update import update_columns
from tests.data_evolution_tables import (  # noqa: F401  (fixtures)
    EVOLUTION, WIDE, catalog, create, our_rows, pypaimon_rows, warehouse, wide, write)


def expected(ids_by_dt, changes):
    rows = {}
    for dt, ids in ids_by_dt:
        for r in wide(ids, dt).to_pylist():
            rows[r["id"]] = r
    for i, values in changes.items():
        rows[i].update(values)
    return sorted((tuple(r.values()) for r in rows.values()), key=repr)


def test_a_model_writing_two_columns_by_key_leaves_the_others_as_they_were(
        catalog, warehouse):
    table = create(catalog, "facts", partition_keys=["dt"], **EVOLUTION)
    write(table, wide(range(0, 6), "a"))
    write(catalog.get_table("db.facts"), wide(range(6, 10), "b"))
    before_ids = pypaimon_rows(catalog, "facts", with_row_id=True)
    ours = open_table(warehouse, "db", "facts")
    before = ours.snapshot_manager().get_latest_snapshot().id
    # rows of both partitions and both row-id ranges, in no particular order
    run = pa.table({"id": pa.array([7, 1, 3], pa.int64()),
                    "score": pa.array([700, 100, 300], pa.int64()),  # widened by the query
                    "note": ["seven", None, "three"]})
    result = update_columns(ours, "facts_scores", run, "id", ["score", "note"])
    assert result.rows == 3 and result.snapshot_id == before + 1
    want = expected([("a", range(0, 6)), ("b", range(6, 10))],
                    {7: {"score": 700, "note": "seven"}, 1: {"score": 100, "note": None},
                     3: {"score": 300, "note": "three"}})
    assert pypaimon_rows(catalog, "facts") == want
    assert our_rows(warehouse, "facts") == want
    assert pypaimon_rows(catalog, "facts", with_row_id=True) == before_ids  # row ids kept
    # the new files hold only the owned columns, for existing row-id ranges
    table = open_table(warehouse, "db", "facts")
    files = [f for s in splits_mod.plan_splits(table) for f in s.files]
    column_files = [f for f in files if f.write_cols]
    assert column_files and all(sorted(f.write_cols) == ["note", "score"] for f in column_files)
    assert {f.first_row_id for f in column_files} <= {f.first_row_id for f in files
                                                      if not f.write_cols}
    # a second run by _ROW_ID: the newest file of each range wins, per field
    ids = dict(pypaimon_rows(catalog, "facts", with_row_id=True))
    update_columns(table, "facts_names", pa.table({
        "_ROW_ID": pa.array([ids[3], ids[8]], pa.int64()), "name": ["three", "eight"],
        "score": pa.array([301, 801], pa.int32())}), "_ROW_ID", ["name", "score"])
    want = expected([("a", range(0, 6)), ("b", range(6, 10))],
                    {7: {"score": 700, "note": "seven"}, 1: {"score": 100, "note": None},
                     3: {"score": 301, "note": "three", "name": "three"},
                     8: {"score": 801, "name": "eight"}})
    assert pypaimon_rows(catalog, "facts") == want
    assert our_rows(warehouse, "facts") == want


def _snapshot(warehouse, name):
    return open_table(warehouse, "db", name).snapshot_manager().get_latest_snapshot().id


@pytest.mark.parametrize("key, columns, run, match", [
    ("id", ["score", "missing"], {"id": [1], "score": [1], "missing": [1]},
     r"update_columns` names \['missing'\], which are not columns"),
    ("nope", ["score"], {"nope": [1], "score": [1]}, "update_key` 'nope' is not a column"),
    ("id", ["score", "dt"], {"id": [1], "score": [1], "dt": ["x"]}, "partition columns"),
    ("id", ["score"], {"id": [1]}, "which the model's query does not return"),
])
def test_config_errors_before_anything_is_written(catalog, warehouse, key, columns, run, match):
    write(create(catalog, "t", partition_keys=["dt"], **EVOLUTION), wide(range(3)))
    before = _snapshot(warehouse, "t")
    with pytest.raises(PaimonConfigError, match=match) as error:
        update_columns(open_table(warehouse, "db", "t"), "m", pa.table(run), key, columns)
    assert "Model 'm'" in str(error.value) and "Nothing was written" in str(error.value)
    assert _snapshot(warehouse, "t") == before


@pytest.mark.parametrize("options, match", [
    ({"row-tracking.enabled": "true"}, "is not a data-evolution table"),
    ({**EVOLUTION, "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"},
     "has 64-bit deletion vectors"),
])
def test_tables_it_cannot_update_are_refused(catalog, warehouse, options, match):
    write(create(catalog, "plain", **options), wide(range(3)))
    with pytest.raises(PaimonConfigError, match=match):
        update_columns(open_table(warehouse, "db", "plain"), "m",
                       pa.table({"id": [1], "score": [1]}), "id", ["score"])


@pytest.mark.parametrize("stored, run, match", [
    (list(range(3)) + [1], {"id": [1], "score": [5]}, r"holds several rows with key\(s\) \[1\]"),
    (range(3), {"id": [1, 1], "score": [5, 6]}, r"several rows for key\(s\) \[1\]"),
    (range(3), {"id": [1, 9], "score": [5, 6]}, r"1 of the model's rows match no row .*\[9\]"),
    (range(3), {"id": [1, None], "score": [5, 6]}, "NULL in the key"),
])
def test_data_errors_before_anything_is_written(catalog, warehouse, stored, run, match):
    write(create(catalog, "d", **EVOLUTION), wide(list(stored)))
    before = _snapshot(warehouse, "d")
    with pytest.raises(PaimonDataError, match=match):
        update_columns(open_table(warehouse, "db", "d"), "m",
                       pa.table({"id": pa.array(run["id"], pa.int64()),
                                 "score": pa.array(run["score"], pa.int32())}), "id", ["score"])
    assert _snapshot(warehouse, "d") == before
    assert pypaimon_rows(catalog, "d") == sorted(
        (tuple(r.values()) for r in wide(list(stored)).to_pylist()), key=repr)


def test_rows_are_matched_by_the_tables_key_type_and_null_keys_never_match(catalog, warehouse):
    """An INT key from the model matches the table's BIGINT one; stored rows with a NULL key
    (several) are neither ambiguous nor matched."""
    table = create(catalog, "k", **EVOLUTION)
    stored = wide(range(3))
    nulls = pa.table({"id": pa.array([None, None], pa.int64()), "name": ["x", "y"],
                      "score": pa.array([0, 0], pa.int32()), "note": [None, None],
                      "dt": ["a", "a"]}, schema=WIDE)
    write(table, pa.concat_tables([stored, nulls]))
    update_columns(open_table(warehouse, "db", "k"), "m", pa.table({
        "id": pa.array([2], pa.int32()), "score": pa.array([9], pa.int32()),
        "note": ["nine"]}), "id", ["score", "note"])
    assert pypaimon_rows(catalog, "k") == sorted(
        [(0, "n0", 0, "note0", "a"), (1, "n1", 1, "note1", "a"), (2, "n2", 9, "nine", "a")]
        + [(None, "x", 0, None, "a"), (None, "y", 0, None, "a")], key=repr)


PICTURES = pa.schema([("id", pa.int64()), ("picture", pa.large_binary()), ("note", pa.string())])


def pictures(catalog, rows=True, **options):
    catalog.create_table("db.pictures", Schema.from_pyarrow_schema(
        PICTURES, options={**EVOLUTION, "blob-field": "picture", **options}), False)
    if rows:
        write(catalog.get_table("db.pictures"), pa.table({
            "id": pa.array([1, 2, 3], pa.int64()),
            "picture": pa.array([b"a", b"bb", None], pa.large_binary()),
            "note": ["x", "y", "z"]}, schema=PICTURES))


def test_blob_columns_are_updated_into_blob_files_of_their_own(catalog, warehouse):
    """pypaimon's update writer writes the new values into a .blob file anchored at the
    range's first row id; a new row's bytes go to a .blob file of the appended rows."""
    pictures(catalog)
    result = update_columns(open_table(warehouse, "db", "pictures"), "m", pa.table({
        "id": pa.array([2, 3, 9], pa.int64()),
        "picture": pa.array([b"NEW", None, b"nine"], pa.binary())}), "id", ["picture"],
        when_not_matched="insert")
    assert (result.rows, result.inserted) == (2, 1)
    want = [(1, b"a", "x"), (2, b"NEW", "y"), (3, None, "z"), (9, b"nine", None)]
    assert pypaimon_rows(catalog, "pictures") == want
    assert our_rows(warehouse, "pictures") == want


def test_blob_columns_kept_as_descriptors_are_refused(catalog, warehouse):
    pictures(catalog, rows=False, **{"blob-descriptor-field": "picture"})  # checked before a read
    with pytest.raises(PaimonConfigError, match=r"\['picture'\] are BLOB columns of db.pictures "
                                                r"kept as descriptors, views or video frames"):
        update_columns(open_table(warehouse, "db", "pictures"), "m", pa.table({
            "id": pa.array([1], pa.int64()), "picture": pa.array([b"y"], pa.large_binary())}),
            "id", ["picture"])


VECTORS = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32(), 2)),
                     ("note", pa.string())])


@pytest.mark.parametrize("vector_file_format", [None, "parquet"])
def test_vector_columns_are_updated_in_data_files_and_in_vector_files(catalog, warehouse,
                                                                    vector_file_format):
    """A VECTOR column in the data files is a column file's column like any other; in vector
    files (`vector.file.format`) pypaimon's update writer writes a vector file for the range.
    Either way the model's lists (Spark's ARRAY) become vectors, a NULL among them included,
    and a new row holds its own vector."""
    options = {**EVOLUTION, "vector-field": "emb", "field.emb.vector-dim": "2",
               **({"vector.file.format": vector_file_format} if vector_file_format else {})}
    catalog.create_table("db.vectors", Schema.from_pyarrow_schema(VECTORS, options=options),
                         False)
    write(catalog.get_table("db.vectors"), pa.table({
        "id": pa.array([0, 1, 2], pa.int64()),
        "emb": pa.array([[0, 0], [1, 1], [2, 2]], VECTORS.field("emb").type),
        "note": ["a", "b", "c"]}, schema=VECTORS))
    run = pa.table({"id": pa.array([1, 2, 9], pa.int64()),
                    "emb": pa.array([[5, None], None, [9, 9]], pa.list_(pa.float64()))})
    table = open_table(warehouse, "db", "vectors")
    result = update_columns(table, "m", run, "id", ["emb"], when_not_matched="insert")
    assert (result.rows, result.inserted) == (2, 1)
    want = [(0, [0.0, 0.0], "a"), (1, [5.0, None], "b"), (2, None, "c"), (9, [9.0, 9.0], None)]
    assert pypaimon_rows(catalog, "vectors") == sorted(want, key=repr)
    assert our_rows(warehouse, "vectors") == sorted(want, key=repr)


def test_an_array_column_named_in_vector_field_lives_in_the_data_files(catalog, warehouse):
    """Paimon stores a column in vector files by its type (VECTOR), not by the option naming
    it: an ARRAY column the table's schema holds is updated like any other column."""
    schema = pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.int32()))])
    catalog.create_table("db.arrays", Schema.from_pyarrow_schema(schema, options={
        **EVOLUTION, "vector-field": "tags", "field.tags.vector-dim": "2",
        "vector.file.format": "parquet"}), False)
    write(catalog.get_table("db.arrays"), pa.table({
        "id": pa.array([1, 2], pa.int64()), "tags": pa.array([[1], [2, 2]], pa.list_(pa.int32()))},
        schema=schema))
    update_columns(open_table(warehouse, "db", "arrays"), "m", pa.table({
        "id": pa.array([2], pa.int64()), "tags": pa.array([[7, 8, 9]], pa.list_(pa.int64()))}),
        "id", ["tags"])
    assert pypaimon_rows(catalog, "arrays") == [(1, [1]), (2, [7, 8, 9])]


def test_rows_matching_no_row_become_new_rows_in_the_same_commit_when_asked(
        catalog, warehouse):
    """when_not_matched='insert': MERGE INTO ... WHEN NOT MATCHED THEN INSERT (id, score, note,
    dt) VALUES (...) on a data-evolution table. The matched rows get column files, the others
    are appended whole (name NULL: the model does not own it) in the same snapshot, with row
    ids after the table's last; pypaimon and dbt-paimon read the same rows, and a later run
    matches the new rows by key."""
    table = create(catalog, "grow", partition_keys=["dt"], **EVOLUTION)
    write(table, wide(range(0, 4), "a"))
    before = _snapshot(warehouse, "grow")
    before_ids = dict(pypaimon_rows(catalog, "grow", with_row_id=True))
    run = pa.table({"id": pa.array([2, 10, 11], pa.int64()),
                    "score": pa.array([20, 100, 110], pa.int32()),
                    "note": ["two", "ten", None], "dt": ["a", "b", "a"]})
    result = update_columns(open_table(warehouse, "db", "grow"), "m", run, "id",
                            ["score", "note"], when_not_matched="insert")
    assert (result.rows, result.inserted, result.snapshot_id) == (1, 2, before + 1)
    want = expected([("a", range(0, 4))], {2: {"score": 20, "note": "two"}}) + [
        (10, None, 100, "ten", "b"), (11, None, 110, None, "a")]
    want = sorted(want, key=repr)
    assert pypaimon_rows(catalog, "grow") == want
    assert our_rows(warehouse, "grow") == want
    ids = dict(pypaimon_rows(catalog, "grow", with_row_id=True))
    assert {i: ids[i] for i in before_ids} == before_ids  # the old rows keep their ids
    assert sorted(ids[i] for i in (10, 11)) == [4, 5]     # the new ones follow the last
    # the new rows are rows of the table like any other: a later run updates one by key
    update_columns(open_table(warehouse, "db", "grow"), "m2",
                   pa.table({"id": pa.array([10], pa.int64()), "name": ["ten"]}), "id",
                   ["name"])
    assert [r for r in pypaimon_rows(catalog, "grow") if r[0] == 10] == [
        (10, "ten", 100, "ten", "b")]


@pytest.mark.parametrize("key, run, match", [
    ("_ROW_ID", {"_ROW_ID": [99], "score": [1], "dt": ["a"]}, "needs a key column"),
    ("id", {"id": [99], "score": [1]}, r"needs the partition columns \['dt'\]"),
])
def test_new_rows_need_a_key_column_and_the_partition_columns(catalog, warehouse, key, run,
                                                                match):
    write(create(catalog, "g", partition_keys=["dt"], **EVOLUTION), wide(range(3)))
    before = _snapshot(warehouse, "g")
    with pytest.raises(PaimonConfigError, match=match):
        update_columns(open_table(warehouse, "db", "g"), "m",
                       pa.table({k: pa.array(v, pa.int64() if k != "dt" else pa.string())
                                 for k, v in run.items()}),
                       key, ["score"], when_not_matched="insert")
    assert _snapshot(warehouse, "g") == before


def test_a_new_row_holding_null_in_a_not_null_column_is_refused(catalog, warehouse):
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string(), False),
                        pa.field("score", pa.int32())])
    catalog.create_table("db.strict", Schema.from_pyarrow_schema(schema, options=EVOLUTION),
                         False)
    write(catalog.get_table("db.strict"), pa.table({
        "id": pa.array([1], pa.int64()), "name": ["one"], "score": pa.array([1], pa.int32())},
        schema=schema))
    before = _snapshot(warehouse, "strict")
    for run, owned in (({"score": pa.array([5, 6], pa.int32())}, ["score"]),   # not written
                       ({"name": pa.array(["uno", None])}, ["name"])):          # NULL
        with pytest.raises(PaimonDataError, match=r"NOT NULL column\(s\) \['name'\]"):
            update_columns(open_table(warehouse, "db", "strict"), "m", pa.table({
                "id": pa.array([1, 2], pa.int64()), **run}), "id", owned,
                when_not_matched="insert")
    assert _snapshot(warehouse, "strict") == before


def test_rows_are_never_rewritten_into_files_of_their_own(catalog, warehouse):
    """The writer of the row operations' and compactions' rewrites of row-tracking tables
    stores _ROW_ID in files without a first_row_id, which would leave a data-evolution table
    unreadable by Paimon, pypaimon and dbt-paimon (each matches its files to rows by
    first_row_id): it refuses such a table, before and after a column update. (The operations
    change it by row id: tests/integration/ops/test_data_evolution_row_ops.py; compaction
    rewrites whole row-id ranges: tests/integration/ops/test_data_evolution_compact.py.)"""
    from dbt.adapters.paimon.format.errors import PaimonFormatError
    from dbt.adapters.paimon.format.row_tracking import TrackedRowsWriter

    create(catalog, "evolving", **EVOLUTION)
    for ids in (range(0, 3), range(3, 6)):
        write(catalog.get_table("db.evolving"), wide(ids))
    for updated in (False, True):
        if updated:
            update_columns(open_table(warehouse, "db", "evolving"), "m",
                           pa.table({"id": pa.array([4], pa.int64()), "note": ["four"]}),
                           "id", ["note"])
        with pytest.raises(PaimonFormatError, match="rewriting rows of db.evolving is refused"):
            TrackedRowsWriter(open_table(warehouse, "db", "evolving"))


@pytest.mark.parametrize("column, value, conflicts", [
    ("score", pa.array([7], pa.int32()), True), ("name", pa.array(["other"]), False)])
def test_a_concurrent_update_of_the_same_columns_fails_the_commit(
        catalog, warehouse, monkeypatch, column, value, conflicts):
    """Another writer updates row 1 between this run's match (of row 2, same row-id range) and
    its commit. The commit's row-id check, from the snapshot the rows were matched at, is
    Paimon's: per column. The same column fails the commit and nothing of the run is visible;
    another column is no conflict, and both updates stand (this run's file holds only its
    own column)."""
    from dbt.adapters.paimon.format.errors import CommitConflictError
    from dbt.adapters.paimon.write import column_update

    write(create(catalog, "r", **EVOLUTION), wide(range(4)))
    matched = column_update.matched_rows

    def racing(*args, **kwargs):
        result = matched(*args, **kwargs)
        table = catalog.get_table("db.r")
        builder = table.new_batch_write_builder()
        messages = builder.new_update().with_update_type([column]).update_by_arrow_with_row_id(
            pa.table({"_ROW_ID": pa.array([1], pa.int64()), column: value}))
        committer = builder.new_commit()
        committer.commit(messages)
        committer.close()
        return result

    monkeypatch.setattr(column_update, "matched_rows", racing)
    run = pa.table({"id": pa.array([2], pa.int64()), "score": pa.array([9], pa.int32())})
    theirs = {1: {column: value[0].as_py()}}
    if conflicts:
        with pytest.raises(CommitConflictError, match="MERGE INTO"):
            update_columns(open_table(warehouse, "db", "r"), "m", run, "id", ["score"])
        assert pypaimon_rows(catalog, "r") == expected([("a", range(4))], theirs)
    else:
        update_columns(open_table(warehouse, "db", "r"), "m", run, "id", ["score"])
        assert pypaimon_rows(catalog, "r") == expected([("a", range(4))],
                                                       {**theirs, 2: {"score": 9}})
    assert our_rows(warehouse, "r") == pypaimon_rows(catalog, "r")


def test_rows_a_deletion_vector_deletes_are_not_matched(catalog, warehouse):
    """pypaimon 2.1 deletes row 1 (a deletion vector on its range): a key naming it matches no
    row, and an update of its range's other rows keeps it deleted."""
    table = create(catalog, "dv", **EVOLUTION, **{"deletion-vectors.enabled": "true"})
    write(table, wide(range(3)))
    builder = catalog.get_table("db.dv").new_batch_write_builder()
    committer = builder.new_commit()
    committer.commit(builder.new_update().delete_by_row_id([1]))
    committer.close()
    run = pa.table({"id": pa.array([1], pa.int64()), "note": ["x"]})
    with pytest.raises(PaimonDataError, match=r"match no row .*\[1\]"):
        update_columns(open_table(warehouse, "db", "dv"), "m", run, "id", ["note"])
    update_columns(open_table(warehouse, "db", "dv"), "m", pa.table({
        "id": pa.array([2], pa.int64()), "note": ["two"]}), "id", ["note"])
    want = [(0, "n0", 0, "note0", "a"), (2, "n2", 2, "two", "a")]
    assert pypaimon_rows(catalog, "dv") == want and our_rows(warehouse, "dv") == want


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       updates=st.lists(st.tuples(st.sampled_from([("score",), ("note",), ("score", "note"),
                                                   ("name", "score")]),
                                  st.lists(st.integers(0, 17), min_size=1, max_size=6,
                                           unique=True),
                                  st.booleans()),
                        min_size=1, max_size=3))
def test_any_sequence_of_column_updates_reads_as_the_model_says(commits, updates):
    """Tables of 1-3 pypaimon commits, then 1-3 runs each writing some columns of some rows
    (by key or by _ROW_ID): pypaimon 2.1 and format/data_evolution.py read exactly the rows a
    dictionary model of the updates gives."""
    import tempfile

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        catalog = CatalogFactory.create({"warehouse": folder})
        catalog.create_database("db", True)
        create(catalog, "h", **EVOLUTION)
        start, model = 0, {}
        for size in commits:
            write(catalog.get_table("db.h"), wide(range(start, start + size)))
            model.update({r["id"]: r for r in wide(range(start, start + size)).to_pylist()})
            start += size
        row_ids = dict(pypaimon_rows(catalog, "h", with_row_id=True))
        for number, (columns, ids, by_row_id) in enumerate(updates):
            ids = [i for i in ids if i < start]
            if not ids:
                continue
            values = {"score": pa.array([i * 10 + number for i in ids], pa.int32()),
                      "note": [f"u{number}-{i}" for i in ids],
                      "name": [f"m{number}-{i}" for i in ids]}
            key = "_ROW_ID" if by_row_id else "id"
            keys = [row_ids[i] for i in ids] if by_row_id else ids
            run = pa.table({key: pa.array(keys, pa.int64()),
                            **{c: values[c] for c in columns}})
            update_columns(open_table(folder, "db", "h"), "m", run, key, list(columns))
            for i, row in zip(ids, run.select(list(columns)).to_pylist()):
                model[i].update(row)
        want = sorted((tuple(r.values()) for r in model.values()), key=repr)
        assert pypaimon_rows(catalog, "h") == want
        assert our_rows(folder, "h") == want
