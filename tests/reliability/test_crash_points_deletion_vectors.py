"""SIGKILL a `dbt run` of a deletion-vector model (format/pause_points.py) at each point of its
two commits: the APPEND of the run's level-0 files and the COMPACT of its lookup compaction
(data files, the bucket's new deletion-vector index file). Whatever was written, the table reads
exactly the rows of the last whole run, for us and for Paimon Java (a committed APPEND whose
compaction was killed holds only level-0 files, which batch reads skip until compacted); the
next run succeeds and lifts them; remove_orphan_files deletes the killed runs' debris (data,
manifests, index files) and keeps every index file a snapshot lists.

One dbt project goes through the stages in order, as test_crash_points.py does. Run 1 writes
2000 keys, run 2 the first 400, each later run the first 20, all with ``version`` = the run's
number (a mix within a run would show two versions). Runs smaller than what lies below them
are compacted by marking the older rows in deletion vectors, not by rewriting everything, so
each killed compaction has written an index file.
"""
from __future__ import annotations

import json

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.deletion_vectors import index_entries
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops.expire import remove_orphan_files

from reliability_helpers import run_dbt, table_files, write_project
from reliability_helpers import read_merged
from test_crash_points import _start, _unreferenced

# Paimon Java's fixture (tests/interop/conftest.py, imported by its package path: pytest
# loads each folder's conftest as `conftest`)
from tests.interop.conftest import paimon_java  # noqa: F401

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=2, deletion_vectors=true,
          write_path='in_process') }}
select cast(id as bigint) as id, cast({{ env_var('CRASH_VERSION') }} as int) as version,
       concat('row-', cast(id as string)) as label
from range(0, {{ {'1': 2000, '2': 400}.get(env_var('CRASH_VERSION'), 20) }})
"""
KEYS, SECOND_KEYS, RUN_KEYS = 2000, 400, 20


def _listed_index_files(location):
    """Deletion-vector index files (relative paths) listed by any snapshot."""
    table = location.open()
    return {f"index/{e.index_file.file_name}" for s in table.snapshot_manager().list_snapshots()
            for e in index_entries(table, s)}


def _run_version(rows):
    """The version of the last run the rows show whole (keys beyond the runs' keys keep 1)."""
    assert sorted(r["id"] for r in rows) == list(range(KEYS)), "a key is missing or doubled"
    assert {r["version"] for r in rows if r["id"] >= SECOND_KEYS} == {1}
    assert {r["version"] for r in rows if RUN_KEYS <= r["id"] < SECOND_KEYS} == {2}
    versions = {r["version"] for r in rows if r["id"] < RUN_KEYS}
    assert len(versions) == 1, f"a mix of runs: {versions}"
    return versions.pop()


def _versions(location):
    return _run_version(read_merged(location).to_pylist())


def _java_versions(paimon_java, location):
    out = paimon_java.run("read", location.warehouse, location.name)
    return _run_version([json.loads(line) for line in out.splitlines() if line.strip()])


def test_sigkill_during_a_deletion_vector_run(process_tmp, paimon_java):
    warehouse = str(process_tmp / "warehouse")
    project = write_project(process_tmp / "project", "crash_dv", warehouse, {"events": MODEL})
    location = TableRef(warehouse, "crash", "events", {})
    pauses = process_tmp / "pauses"
    run_dbt(project, "run", env={"CRASH_VERSION": "1"})
    run_dbt(project, "run", env={"CRASH_VERSION": "2"})  # marks rows of run 1 deleted
    assert _versions(location) == 2
    live_index = _listed_index_files(location)
    assert live_index, "the second run wrote no deletion vectors"
    kinds = ["APPEND", "COMPACT"] * 2

    # (the points before the APPEND commit are the same code as test_crash_points.py's)
    # one run stops at each point in turn, killed at the last: while it waits at a point, the
    # files are what a SIGKILL there leaves (test_crash_points.py)
    points = ["commit-manifests-written", "compact-index-written", "compact-manifests-written"]
    process = _start(project, pauses, points, 3)
    for point in points:
        process.wait_for(point)
        if point == "compact-index-written":
            kinds.append("APPEND")  # the run's rows are committed, at level 0
        assert [s.commit_kind for s in list_snapshots(location.open())] == kinds, point
        assert _versions(location) == 2, f"killed at {point}: not the last whole run's rows"
        left = set(_unreferenced(location))
        assert left, f"killed at {point}: nothing written?"
        if point == "compact-index-written":
            assert any(f.startswith("index/") for f in left), f"{point}: no index file?"
        if point.endswith("manifests-written"):
            assert any(f.startswith("manifest/") for f in left), f"{point}: no manifest?"
        if point == points[-1]:
            process.kill()
        else:
            process.release(point)
    debris = set(_unreferenced(location))
    assert _java_versions(paimon_java, location) == 2

    result = remove_orphan_files(location, older_than=0)
    assert set(result.deleted) >= debris
    assert _unreferenced(location) == []
    on_disk = set(table_files(location))
    assert not debris & on_disk
    assert _listed_index_files(location) <= on_disk and live_index <= on_disk
    assert _versions(location) == 2

    # the next run compacts the killed runs' level-0 files with its own: its rows win
    run_dbt(project, "run", env={"CRASH_VERSION": "9"})
    assert [s.commit_kind for s in list_snapshots(location.open())] == kinds + ["APPEND",
                                                                                "COMPACT"]
    assert _versions(location) == 9
    assert _java_versions(paimon_java, location) == 9
