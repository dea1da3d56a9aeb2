"""Deletion-vector tables written by Paimon 1.0 Java, read by dbt-paimon exactly as Java reads them.

Paimon Java creates each table (``deletion-vectors.enabled``), writes batches (its batch writer
commits each as an APPEND snapshot of level-0 files plus a COMPACT snapshot whose lookup
compaction lifts them and records superseded rows in deletion vectors) and compacts fully.
At every snapshot our read must equal Java's: only files above level 0, each without the rows
its deletion vector deletes. Append tables get their deletion vectors from PaimonPeer
``dvdelete`` (what Paimon Spark's DELETE on such a table commits).

Paimon 1.0 refuses first-row tables with deletion vectors (``First row merge engine does not
need deletion vectors``), and writes only the 32-bit bitmap (``deletion-vectors.bitmap64``
arrived in Paimon 1.1; its encoding is covered by
tests/unit/format/test_deletion_vector_encoding.py, our runs writing it by
tests/functional/paimon/test_deletion_vector_model.py).
"""
from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pyarrow as pa
import pytest

from test_java_reads_our_tables import ordered, ours, render

from dbt.adapters.paimon.datasource.changes import ChangeRange, read_changes
from dbt.adapters.paimon.datasource.source import TableRef, read_merged_split
from dbt.adapters.paimon.format import splits as splits_mod
from dbt.adapters.paimon.format.kv_files import iter_append_file, read_append_split
from dbt.adapters.paimon.ops.compact import compact_table
from dbt.adapters.paimon.ops.expire import expire_snapshots, remove_orphan_files
from dbt.adapters.paimon.ops.after_run import after_run
from dbt.adapters.paimon.ops.rescale import rescale_buckets
from dbt.adapters.paimon.write import write_primary_key_run
from pypaimon.manifest.index_manifest_file import IndexManifestFile

from tests.integration.table_files import mark_deleted

FIELDS = [("dt", "STRING NOT NULL"), ("id", "BIGINT NOT NULL"), ("name", "STRING"),
          ("amount", "INT")]


class JavaScript:
    """PaimonPeer commands on one table, run in one JVM per ``run()`` (JVM start-up dominates)."""

    def __init__(self, paimon_java, tmp_path, name):
        self.java = paimon_java
        self.tmp_path = tmp_path
        self.location = TableRef(str(tmp_path / "warehouse"), "db", name, {})
        self.commands = []

    def _add(self, command, *args):
        self.commands.append([command, self.location.warehouse, self.location.name, *args])
        return self

    def create(self, primary_keys=("dt", "id"), partitions=("dt",), **options):
        spec = {"fields": [list(f) for f in FIELDS], "primaryKeys": list(primary_keys),
                "partitionKeys": list(partitions),
                "options": {"deletion-vectors.enabled": "true", **options}}
        return self._add("create", json.dumps(spec))

    def write(self, rows):
        path = self.tmp_path / f"batch-{len(list(self.tmp_path.glob('batch-*')))}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return self._add("write", str(path))

    def read(self, snapshot=None):
        return self._add("read", *([] if snapshot is None else [snapshot]))

    def run(self):
        """Each command's output: for reads, the rows rendered and ordered by (dt, id)."""
        path = self.tmp_path / f"commands-{len(list(self.tmp_path.glob('commands-*')))}.txt"
        outputs = self.java.batch(self.commands, path)
        results = []
        for command, out in zip(self.commands, outputs):
            rows = [json.loads(line) for line in out.splitlines() if line.strip()]
            results.append(ordered(rows, ["dt", "id"]) if command[0] == "read" else rows)
        self.commands = []
        return results


def _rows(ids, dt=lambda i: f"d{i % 2}", name=lambda i: f"n{i}", amount=lambda i: i, kind="+I"):
    return [{"dt": dt(i), "id": i, "name": name(i), "amount": amount(i), "_row_kind": kind}
            for i in ids]


def _snapshot_kinds(location):
    return [s.commit_kind for s in splits_mod.list_snapshots(location.open())]


def _ours(location, snapshot=None):
    return ordered(ours(location, snapshot), ["dt", "id"])


def _merged_without_shortcut(location, snapshot=None):
    """Our read with every split forced through the merge (files' delete counts unknown):
    the deletion vectors must still be applied, the merge must not resurrect old versions."""
    table = location.open()
    rows = []
    for split in splits_mod.plan_splits(table, snapshot):
        files = [dataclasses.replace(f, delete_row_count=None) for f in split.files]
        forced = dataclasses.replace(split, files=files)
        rows += [{k: render(v) for k, v in r.items()}
                 for r in read_merged_split(table, forced, list(table.field_names)).to_pylist()]
    return ordered(rows, ["dt", "id"])


ENGINE_OPTIONS = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.amount.aggregate-function": "sum",
                    "fields.name.aggregate-function": "last_non_null_value"},
}


@pytest.mark.parametrize("engine", sorted(ENGINE_OPTIONS))
def test_java_written_primary_key_tables(tmp_path, paimon_java, engine):
    java = JavaScript(paimon_java, tmp_path, engine.replace("-", "_"))
    deletes = engine == "deduplicate"
    java.create(bucket="2", **ENGINE_OPTIONS[engine]).write(_rows(range(40)))
    java.write(_rows(range(20, 60), name=lambda i: None if i % 3 else f"u{i}",
                     amount=lambda i: 100 + i, kind="+U"))
    java.write(_rows(range(0, 60, 7), kind="-D" if deletes else "+I", amount=lambda i: 1000))
    java.read().read(5).read(4)
    *_, latest, at_append, at_compact = java.run()
    location = java.location
    # each Java batch write: APPEND (level 0) + COMPACT (lookup compaction, deletion vectors)
    assert _snapshot_kinds(location) == ["APPEND", "COMPACT"] * 3
    assert any(s.deletion_files for s in splits_mod.plan_splits(location.open()))
    assert _ours(location) == latest
    assert len(latest) == (60 - 9 if deletes else 60)
    assert _merged_without_shortcut(location) == latest
    # an APPEND snapshot's level-0 files are invisible to batch reads until compacted
    assert _ours(location, 5) == at_append == at_compact == _ours(location, 4)
    compacted, = java._add("compact").read().run()[1:]
    assert _ours(location) == compacted == latest


def test_dynamic_bucket_table_with_deletes(tmp_path, paimon_java):
    java = JavaScript(paimon_java, tmp_path, "dynamic")
    java.create(bucket="-1", **{"dynamic-bucket.target-row-num": "16"}).write(_rows(range(50)))
    java.write(_rows(range(10, 30), kind="-D") + _rows(range(40, 70), amount=lambda i: -i))
    rows = java.read().run()[-1]
    location = java.location
    assert len({s.bucket for s in splits_mod.plan_splits(location.open())}) > 2
    assert _ours(location) == rows
    assert sorted(r["id"] for r in rows) == list(range(10)) + list(range(30, 70))
    assert _merged_without_shortcut(location) == rows
    # expiry and orphan removal keep exactly the index files (HASH and deletion vectors) the
    # retained snapshot lists, and the table reads the same
    index_dir = tmp_path / "warehouse" / "db.db" / "dynamic" / "index"
    assert expire_snapshots(location, retain_last=1, older_than="0 s").expired_snapshots
    remove_orphan_files(location, older_than="0 s")
    table = location.open()
    listed = {e.index_file.file_name for e in IndexManifestFile(table).read(
        table.snapshot_manager().get_latest_snapshot().index_manifest)}
    assert {p.name for p in index_dir.iterdir()} == listed
    assert {e.index_file.index_type for e in IndexManifestFile(table).read(
        table.snapshot_manager().get_latest_snapshot().index_manifest)} == \
        {"HASH", "DELETION_VECTORS"}
    assert _ours(location) == rows


def test_spark_source_time_travel_and_changes(spark, tmp_path, paimon_java):
    """The ``paimon`` data source (what ref()/source() read), time travel (paimon_snapshot)
    and the change read (paimon_changes) of a deletion-vector table."""
    java = JavaScript(paimon_java, tmp_path, "events")
    java.create(bucket="2").write(_rows(range(12)))
    java.write(_rows([1, 2, 3], kind="-D") + _rows([4, 5, 20], amount=lambda i: 50 + i,
                                                   kind="+U"))
    java.read().read(2).read(3)._add("stream", 3, 4)
    *_, latest, at_2, at_3, stream = java.run()
    location = java.location

    def spark_rows(snapshot=None):
        reader = spark.read.format("paimon").options(**location.source_options())
        if snapshot is not None:
            reader = reader.option("snapshot_id", str(snapshot))
        rows = [{k: render(v) for k, v in r.asDict().items()} for r in reader.load().collect()]
        return ordered(rows, ["dt", "id"])

    assert spark_rows() == latest
    assert spark_rows(2) == at_2 and spark_rows(3) == at_3
    # delta changes: the rows APPEND snapshots wrote, as Java's streaming read returns them
    java_changes = Counter((r["_row_kind"], r["id"], r["amount"]) for r in stream)
    ours_changes = Counter((r["_row_kind"], r["id"], r["amount"]) for r in read_changes(
        location.open(), ChangeRange(2, 4, "delta")).to_pylist())
    assert ours_changes == java_changes == Counter(
        [("-D", i, i) for i in (1, 2, 3)] + [("+U", 4, 54), ("+U", 5, 55), ("+U", 20, 70)])
    full = read_changes(location.open(), ChangeRange(None, 4, "delta"))
    assert sorted(full.column("id").to_pylist()) == [0] + list(range(4, 12)) + [20]


@pytest.mark.parametrize("bucket", ["-1", "2"])
def test_append_table_deletes(spark, tmp_path, paimon_java, bucket):
    options = {"bucket": bucket} if bucket == "-1" else {"bucket": bucket, "bucket-key": "id"}
    java = JavaScript(paimon_java, tmp_path, "logs")
    java.create(primary_keys=(), **options).write(_rows(range(30))).write(_rows(range(30, 45)))
    java._add("dvdelete", "id", 3, 4, 31, 44)._add("dvdelete", "id", 5, 32)  # merges the old
    theirs = java.read().run()[-1]
    location = java.location
    table = location.open()
    splits = splits_mod.plan_splits(table)
    assert any(s.deletion_files for s in splits)
    assert sorted(r["id"] for r in theirs) == \
        [i for i in range(45) if i not in (3, 4, 5, 31, 32, 44)]
    mine = ordered([{k: render(v) for k, v in r.items()} for s in splits
                    for r in read_append_split(table, s).to_pylist()], ["dt", "id"])
    assert mine == theirs
    via_spark = spark.read.format("paimon").options(**location.source_options()).load()
    assert sorted(r.id for r in via_spark.select("id").collect()) == \
        sorted(r["id"] for r in theirs)


# Java's Parquet row groups of a few kilobytes, and a split size a few of them fill
# (read_tasks.py): a file is read by a task per range of its row groups
ROW_GROUP_OPTIONS = {"parquet.block.size": "4096", "source.split.target-size": "24 kb",
                     "source.split.open-file-cost": "1 b"}


def _spark_rows(spark, location, parallelism=2):
    frame = (spark.read.format("paimon").options(**location.source_options())
             .option("parallelism", str(parallelism)).load())
    return ordered([{k: render(v) for k, v in r.asDict().items()} for r in frame.collect()],
                   ["dt", "id"])


def _row_group_tasks(location, parallelism=2):
    """The read's tasks that read a range of a file's row groups, by file."""
    from dbt.adapters.paimon.datasource.source import PaimonReader

    tasks = PaimonReader(location, None, None, parallelism).partitions()
    ranges = {}
    for task in tasks:
        if task.row_groups is not None:
            ranges.setdefault(task.split.files[0].file_name, []).append(task.row_groups)
    return ranges


def _row_groups_of(location, file_name):
    import pyarrow.parquet as pq

    split, = splits_mod.plan_splits(location.open())
    meta, = [f for f in split.files if f.file_name == file_name]
    return pq.ParquetFile(meta.physical_path()).metadata.num_row_groups


@pytest.mark.parametrize("kind", ["append", "primary key"])
def test_files_of_many_row_groups_are_read_by_several_tasks(spark, tmp_path, paimon_java,
                                                            kind):
    """A Java file of many row groups, larger than the split size, is read by a task per range
    of its row groups; each task applies its part of the file's deletion vector (positions
    count from the file's first row, not the range's). An append table whose deleted rows are
    spread over the file; a primary-key table compacted fully, then updated: the compacted
    file's superseded rows are in its vector. Our reads equal Java's."""
    java = JavaScript(paimon_java, tmp_path, kind.replace(" ", "_"))
    name = lambda i: f"row {i} " + "x" * 40  # noqa: E731
    if kind == "append":
        java.create(primary_keys=(), partitions=(), bucket="-1", **ROW_GROUP_OPTIONS)
        java.write(_rows(range(6000), name=name))
        java._add("dvdelete", "id", 0, 1, 2999, 3000, 4321, 5999)
    else:
        java.create(primary_keys=("id",), partitions=(), bucket="1", **ROW_GROUP_OPTIONS)
        java.write(_rows(range(6000), name=name))._add("compact")
        java.write(_rows(range(0, 6000, 37), name=lambda i: f"new {i}"))
    theirs = java.read().run()[-1]
    location = java.location
    ranges = _row_group_tasks(location)
    (file_name, parts), = [(f, r) for f, r in ranges.items() if len(r) > 1]
    # the ranges cover the file's row groups in order, each after the one before
    assert [r.start for r in parts][1:] == [r.stop for r in parts][:-1]
    assert parts[0].start == 0 and parts[-1].stop == _row_groups_of(location, file_name)
    assert [r.first_row for r in parts][1:] == [r.first_row + r.rows for r in parts][:-1]
    split, = splits_mod.plan_splits(location.open())
    assert split.deletion_files.get(file_name) is not None
    table = location.open()
    whole = _ours(location) if kind != "append" else ordered(
        [{k: render(v) for k, v in r.items()} for s in splits_mod.plan_splits(table)
         for r in read_append_split(table, s).to_pylist()], ["dt", "id"])
    assert _spark_rows(spark, location) == theirs == whole
    assert len(theirs) == (5994 if kind == "append" else 6000)
    # a filter the row groups' statistics answer: only the groups that can hold its ids are
    # read (each applying the vector's positions from its own first row), and Spark's rows
    # are still Java's
    conditions = [("greater_or_equal", "id", 2990), ("less_than", "id", 3010)]
    big, = [f for f in split.files if f.file_name == file_name]
    every = pa.concat_tables(iter_append_file(table, split, big, ["id"]))
    some = pa.concat_tables(iter_append_file(table, split, big, ["id"], conditions=conditions))
    assert 0 < some.num_rows < every.num_rows // 4
    wanted = [i for i in every.column("id").to_pylist() if 2990 <= i < 3010]
    assert [i for i in some.column("id").to_pylist() if 2990 <= i < 3010] == wanted
    filtered = (spark.read.format("paimon").options(**location.source_options()).load()
                .where("id >= 2990 and id < 3010").collect())
    assert ordered([{k: render(v) for k, v in r.asDict().items()} for r in filtered],
                   ["dt", "id"]) == [r for r in theirs if 2990 <= r["id"] < 3010]


# --------------------------------------------------------------------------- our writes

def _run_table(ids, amount=lambda i: i, kind="+I", name=lambda i: f"w{i}"):
    ids = list(ids)
    return pa.table({"dt": pa.array([f"d{i % 2}" for i in ids], pa.string()),
                     "id": pa.array(ids, pa.int64()),
                     "name": pa.array([name(i) for i in ids], pa.string()),
                     "amount": pa.array([amount(i) for i in ids], pa.int32()),
                     "op": pa.array([kind] * len(ids), pa.string())})


@pytest.mark.parametrize("engine", ["aggregation", "deduplicate", "partial-update"])
def test_our_runs_on_java_tables(spark, tmp_path, paimon_java, engine):
    """Java writes, our runs (a commit, then the run's maintenance: lookup compaction writing
    deletion vectors) on top, Java writes again, our full compaction: Java reads what we read
    after every step, and every row of our runs right after them."""
    java = JavaScript(paimon_java, tmp_path, "w_" + engine.replace("-", "_"))
    java.create(bucket="2", **ENGINE_OPTIONS[engine]).write(_rows(range(30))).run()
    location = java.location
    deletes = engine == "deduplicate"
    for run in (_run_table(range(20, 40), amount=lambda i: 200 + i, kind="+U"),
                _run_table([1, 2, 25, 41], kind="-D" if deletes else "+I", amount=lambda i: 7)):
        write_primary_key_run(spark, spark.createDataFrame(run), location, row_kind_column="op",
                              model_name=location.table)
        result = after_run(spark, location, expire=False)
        assert result.compaction is not None and result.compaction.snapshot_id is not None
    table = location.open()
    splits = splits_mod.plan_splits(table)
    assert all(f.level > 0 for s in splits for f in s.files)  # the runs' rows are visible
    assert any(s.deletion_files for s in splits)
    mine = _ours(location)
    assert len(mine) == (37 if deletes else 41)  # dedup: 1, 2, 25 deleted, 41 never live
    java.read().write(_rows([3, 41, 50], amount=lambda i: 1000 + i, kind="+U")).read()
    after_ours, _, after_java = java.run()
    assert after_ours == mine
    assert _ours(location) == after_java
    # both rewrite every file to the top level and drop the deletion vectors from the index
    if engine == "deduplicate":
        rescale_buckets(spark, location, 3)
    else:
        compact_table(spark, location, full=True)
    table = location.open()
    assert not any(s.deletion_files or s.deletion_index_files
                   for s in splits_mod.plan_splits(table))
    assert not [e for e in IndexManifestFile(table).read(
        table.snapshot_manager().get_latest_snapshot().index_manifest)
        if e.index_file.index_type == "DELETION_VECTORS"]
    assert _ours(location) == java.read().run()[0] == after_java


def test_our_compaction_rewrites_a_java_file_mostly_deleted(spark, tmp_path, paimon_java):
    """Java writes 200 keys (its compaction lifts them to the top level); our run updates 30% of
    them, and its lookup compaction, finding that the top-level file's vector would delete more
    than compaction.delete-ratio-threshold (0.2) of its rows, rewrites the file at its level
    without them. Java reads what we read, writes on top (a key of the rewritten file among
    them: its sequence number still loses to Java's new one) and reads again."""
    java = JavaScript(paimon_java, tmp_path, "purged")
    java.create(primary_keys=("id",), partitions=(), bucket="1").write(_rows(range(200))).run()
    location = java.location
    [split] = splits_mod.plan_splits(location.open())
    [(top, stored)] = [(f.level, f.row_count) for f in split.files]
    assert stored == 200
    write_primary_key_run(spark, spark.createDataFrame(
        _run_table(range(0, 200, 3), amount=lambda i: 500 + i, kind="+U")), location,
        row_kind_column="op", model_name=location.table)
    after_run(spark, location, expire=False)
    [split] = splits_mod.plan_splits(location.open())
    assert [(f.level, f.row_count) for f in split.files if f.level == top] == [(top, 133)]
    assert not split.deletion_files and not split.deletion_index_files
    mine = _ours(location)
    assert len(mine) == 200 and sum(r["amount"] == 500 + r["id"] for r in mine) == 67
    java.read().write(_rows([1, 3, 201], amount=lambda i: 900 + i, kind="+U")).read()
    after_ours, _, after_java = java.run()
    assert after_ours == mine
    assert _ours(location) == after_java
    assert {r["id"]: r["amount"] for r in after_java if r["id"] in (1, 3, 201)} == \
        {1: 901, 3: 903, 201: 1101}


# --------------------------------------------------------------------------- changelog producers

def _as_run(rows):
    """PaimonPeer batch rows as the Arrow table of one of our runs (``op`` = the row kind)."""
    return pa.table({"dt": pa.array([r["dt"] for r in rows], pa.string()),
                     "id": pa.array([r["id"] for r in rows], pa.int64()),
                     "name": pa.array([r["name"] for r in rows], pa.string()),
                     "amount": pa.array([r["amount"] for r in rows], pa.int32()),
                     "op": pa.array([r["_row_kind"] for r in rows], pa.string())})


def _changes(rows):
    return Counter((r["_row_kind"], r["dt"], r["id"], r["name"], r["amount"]) for r in rows)


@pytest.mark.parametrize("engine,producer", [("deduplicate", "lookup"), ("aggregation", "lookup"),
                                             ("deduplicate", "input")])
def test_changelog_producers_as_java_produces_them(spark, tmp_path, paimon_java, engine,
                                                   producer):
    """The same batches written to twin deletion-vector tables, one by Paimon Java, one by our
    runs (commit + the run's lookup compaction), then one more Java batch on both: a Java
    streaming consumer reads the same changes from both tables, batch by batch, and so does
    our change reader. 'lookup': Java's LookupMergeTreeCompactRewriter with a deletion-vector
    maintainer and LookupChangelogMergeFunctionWrapper writes the changelog in the COMPACT
    snapshot of each batch; 'input': the batch's records in its APPEND snapshot.
    ('full-compaction' with deletion vectors is refused, as Paimon's SchemaValidation does:
    tests/unit/config/test_model_config.py.)"""
    options = {"bucket": "2", "changelog-producer": producer, **ENGINE_OPTIONS[engine]}
    deletes = engine == "deduplicate"
    batches = [
        _rows(range(12)),
        _rows([2, 3, 4, 13], amount=lambda i: 100 + i, kind="+U",
              name=lambda i: None if i % 2 else f"u{i}")
        + (_rows([5, 6], kind="-D") if deletes else []),
        _rows([3, 5, 14], amount=lambda i: 7, kind="+U") + (_rows([13, 1000], kind="-D")
                                                            if deletes else []),
    ]
    last = _rows([4, 5, 20], amount=lambda i: 900 + i, kind="+U")
    java = JavaScript(paimon_java, tmp_path, "j_" + producer)
    ours_ = JavaScript(paimon_java, tmp_path, "o_" + producer)
    java.create(**options)
    ours_.create(**options).run()
    for batch in batches:
        java.write(batch)
    java.run()
    location = ours_.location
    for batch in batches:
        write_primary_key_run(spark, spark.createDataFrame(_as_run(batch)), location,
                              row_kind_column="op", model_name=location.table)
        after_run(spark, location, expire=False)
    count = len(batches) + 1
    for peer in (java, ours_):
        peer.write(last)
        for k in range(1, count + 1):
            peer._add("stream", 2 * k - 1, 2 * k)
        peer.read()
    *_, read_java = theirs = java.run()
    *_, read_ours = mine = ours_.run()
    # each batch: APPEND (level 0, 'input' changelog) + COMPACT (lookup compaction, 'lookup'
    # changelog), from Java and from our runs alike
    assert _snapshot_kinds(location) == _snapshot_kinds(java.location) == \
        ["APPEND", "COMPACT"] * count
    java_streams = [_changes(rows) for rows in theirs[1:1 + count]]
    our_streams = [_changes(rows) for rows in mine[1:1 + count]]
    assert our_streams == java_streams
    for k in range(count):
        assert _changes(read_changes(location.open(), ChangeRange(
            2 * k, 2 * k + 2, "changelog")).to_pylist()) == our_streams[k]
        assert _changes(read_changes(java.location.open(), ChangeRange(
            2 * k, 2 * k + 2, "changelog")).to_pylist()) == java_streams[k]
    assert read_ours == read_java == _ours(location)
    if engine == "deduplicate" and producer == "lookup":
        # batch 3, by hand: 3 changes, 5 revives, 14 is new, 13 goes, 1000 never existed
        assert java_streams[2] == Counter([
            ("-U", "d1", 3, None, 103), ("+U", "d1", 3, "n3", 7), ("+I", "d1", 5, "n5", 7),
            ("+I", "d0", 14, "n14", 7), ("-D", "d1", 13, None, 113)])


# --------------------------------------------------------------------------- row operations


def _vectors(location):
    """data file name -> deleted positions, from the latest snapshot's index manifest (every
    entry, live file or not)."""
    from dbt.adapters.paimon.format.deletion_vectors import (DeletionFile, index_entries,
                                                            index_file_path,
                                                            read_deletion_vectors)

    table = location.open()
    located = {}
    for entry in index_entries(table, table.snapshot_manager().get_latest_snapshot()):
        path = index_file_path(table, tuple(entry.partition.values), entry.bucket,
                               entry.index_file)
        for name, meta in (entry.index_file.dv_ranges or {}).items():
            located[name] = DeletionFile(path, int(meta.offset), int(meta.length))
    return {n: v.tolist() for n, v in read_deletion_vectors(table.file_io, located).items()}


def test_row_operations_on_row_tracking_table_with_deletion_vectors(spark, tmp_path,
                                                                    paimon_java):
    """update_rows / delete_rows / merge_rows on a row-tracking table whose files carry
    deletion vectors (Paimon Spark's DELETE): deleted rows stay deleted, the rewritten files'
    vectors leave the index with them (no entry names a file that is gone), the untouched
    files keep theirs, row ids survive, and Paimon Java reads what we read."""
    from dbt.adapters.paimon.catalog import warehouse
    from dbt.adapters.paimon.ops.row_ops import delete_rows, merge_rows, tracked_rows, update_rows

    schema = pa.schema([("id", pa.int32()), ("data", pa.string()), ("dt", pa.string())])
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "tracked", schema, partition_keys=["dt"],
                           options={"row-tracking.enabled": "true",
                                    "deletion-vectors.enabled": "true"})
    location = TableRef(wh, "db", "tracked", {})
    ddl = "id int, data string, dt string"
    for ids in (range(20), range(20, 30)):
        (spark.createDataFrame([(i, f"v{i}", f"d{i % 2}") for i in ids], ddl).coalesce(1)
         .write.format("paimon").options(**location.source_options()).mode("append").save())

    def tracked():
        return {r["id"]: (r["data"], r["dt"], r["_ROW_ID"]) for r in tracked_rows(
            spark, location).select("id", "data", "dt", "_ROW_ID").collect()}

    row_ids = {i: v[2] for i, v in tracked().items()}
    mark_deleted(location, "id", [3, 4, 21, 22])
    marked = _vectors(location)
    assert sum(len(v) for v in marked.values()) == 4 and len(marked) == 4
    assert set(tracked()) == set(range(30)) - {3, 4, 21, 22}

    update_rows(spark, location, "id = 5", {"data": "u"})      # rewrites the file of 3
    delete_rows(spark, location, "id = 24")                     # ... of 22
    merge_rows(spark, location, spark.createDataFrame([(8, "m", "d0"), (40, "new", "d1")], ddl),
               "t.id = s.id")                                   # ... of 4
    rows = tracked()
    gone = {3, 4, 21, 22, 24}
    assert set(rows) == (set(range(30)) - gone) | {40}
    assert rows[5][0] == "u" and rows[8][0] == "m" and rows[40] == ("new", "d1", 30)
    assert {i: v[2] for i, v in rows.items() if i != 40} == \
        {i: r for i, r in row_ids.items() if i not in gone}
    live = {f.file_name for s in splits_mod.plan_splits(location.open()) for f in s.files}
    vectors = _vectors(location)
    # no index entry for a rewritten file; the one file no operation touched (21's) kept its
    # vector unchanged
    assert set(vectors) <= live
    assert vectors == {n: v for n, v in marked.items() if n in live} and len(vectors) == 1
    theirs = paimon_java.read(location.warehouse, location.name)
    assert sorted((r["id"], r["data"], r["dt"]) for r in theirs) == \
        sorted((i, d, dt) for i, (d, dt, _) in rows.items())
    # expiry and orphan removal keep exactly the index files the latest snapshot lists
    expire_snapshots(location, retain_last=1, older_than="0 s")
    remove_orphan_files(location, older_than="0 s")
    table = location.open()
    listed = {e.index_file.file_name for e in IndexManifestFile(table).read(
        table.snapshot_manager().get_latest_snapshot().index_manifest)}
    assert {p.name for p in (tmp_path / "warehouse" / "db.db" / "tracked" / "index").iterdir()} \
        == listed
    assert tracked() == rows


# --------------------------------------------------------------------------- dynamic buckets

def test_our_runs_on_dynamic_bucket_tables(spark, tmp_path, paimon_java):
    """bucket = -1 with deletion vectors (Paimon writes such tables; test_dynamic_bucket_table_
    with_deletes reads Java's): our runs keep the HASH index and write deletion vectors, Java
    reads every step and writes on top with its own bucket assigner; the cross-partition kind
    (primary key without the partition column) moves keys between partitions, then Java
    compacts it fully and we read Java's result."""
    # threshold 1: no file is rewritten for its deleted rows (buckets of 10 rows would be),
    # so Java reads our vectors
    kept = {"compaction.delete-ratio-threshold": "1"}
    dynamic = JavaScript(paimon_java, tmp_path, "dyn")
    dynamic.create(bucket="-1", **{"dynamic-bucket.target-row-num": "10"}, **kept).write(
        _rows(range(40))).run()
    cross = JavaScript(paimon_java, tmp_path, "cross")
    cross.create(primary_keys=("id",), bucket="-1", **kept).run()
    runs = {
        dynamic: [_run_table(range(30, 60), amount=lambda i: 500 + i, kind="+U"),
                  _run_table([1, 2, 35, 70], kind="-D", amount=lambda i: 0)],
        cross: [_run_table(range(30)),
                # 0..9 move to the other partition, 10..14 change in place, 20 goes
                pa.concat_tables([
                    _run_table(range(10), amount=lambda i: 100 + i, kind="+U").set_column(
                        0, "dt", pa.array([f"d{(i + 1) % 2}" for i in range(10)])),
                    _run_table(range(10, 15), amount=lambda i: 200 + i, kind="+U"),
                    _run_table([20], kind="-D")])],
    }
    snapshots = {}
    for peer, batches in runs.items():
        for run in batches:
            write_primary_key_run(spark, spark.createDataFrame(run), peer.location,
                                  row_kind_column="op", model_name=peer.location.table)
            after_run(spark, peer.location, expire=False)
            snapshots.setdefault(peer, []).append(
                splits_mod.current_snapshot_id(peer.location.open()))
    for peer in runs:
        for snapshot in snapshots[peer]:
            peer.read(snapshot)
    dynamic.write(_rows([3, 35, 80], amount=lambda i: 900 + i, kind="+U")).read()
    # Java's full compaction of a table only our runs wrote (our files, our vectors)
    cross._add("compact").read()
    java_dynamic = dynamic.run()
    java_cross = cross.run()
    for peer, theirs in ((dynamic, java_dynamic[:2]), (cross, java_cross[:2])):
        table = peer.location.open()
        assert [_ours(peer.location, s) for s in snapshots[peer]] == theirs
        ours_last = table.snapshot_manager().get_snapshot_by_id(snapshots[peer][-1])
        assert "DELETION_VECTORS" in {e.index_file.index_type for e in IndexManifestFile(
            table).read(ours_last.index_manifest)}
    assert _ours(dynamic.location) == java_dynamic[-1]
    assert len(java_dynamic[-1]) == 60 - 3 + 2  # 1, 2, 35 deleted; 35 back and 80 from Java
    assert _snapshot_kinds(cross.location)[-1] == "COMPACT"
    assert len(splits_mod.list_snapshots(cross.location.open())) > snapshots[cross][-1]
    assert _ours(cross.location) == java_cross[-1] == java_cross[1]
    moved = {r["id"]: r["dt"] for r in java_cross[-1]}
    assert len(moved) == 29 and 20 not in moved
    assert all(moved[i] == f"d{(i + 1) % 2}" for i in range(10))
