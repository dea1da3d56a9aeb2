"""SIGKILL a `dbt run` at each point of a primary-key write (format/pause_points.py): the table
reads exactly the previous snapshot (or, once the snapshot file is written, exactly the new
one), never a mix of buckets from both; the next run succeeds; remove_orphan_files deletes the
debris the killed runs left.

One dbt project (its own profile and Spark state folder) goes through the stages in order;
each stage is one dbt process, and one of them stops at several points in turn. Every run writes all 300 keys with ``version`` = the run's
number, so a mix would show two versions. The number comes from an environment variable, not
a dbt var: a changed var makes every run parse the whole project again.
"""
from __future__ import annotations

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops.expire import References, remove_orphan_files

from reliability_helpers import DbtProcess, read_merged, run_dbt, table_files, write_project

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=2, write_path='WRITE_PATH') }}
select cast(id as bigint) as id, cast({{ env_var('CRASH_VERSION') }} as int) as version,
       concat('row-', cast(id as string)) as label
from range(0, 300)
"""
KEYS = 300


@pytest.fixture(params=["in_process", "distributed"])
def crash_project(request, process_tmp):
    """Both executors (write/path_choice.py): ``task-file-written`` pauses the dbt process
    in-process, a Spark worker on the distributed path."""
    root = process_tmp
    warehouse = str(root / "warehouse")
    project = write_project(root / "project", "crash_points", warehouse,
                            {"events": MODEL.replace("WRITE_PATH", request.param)})
    return project, TableRef(warehouse, "crash", "events", {}), root / "pauses"


def _versions(location):
    rows = read_merged(location)
    assert rows.column("id").to_pylist() == list(range(KEYS)), "a key is missing or doubled"
    return set(rows.column("version").to_pylist())


def _referenced(location):
    table = location.open()
    references = References(table)
    names = set()
    for snapshot in table.snapshot_manager().list_snapshots():
        names |= {str(p).rsplit("/", 1)[-1] for p in references.files(snapshot,
                                                                      all_entries=True)}
    return names


def _unreferenced(location):
    """Files of the table folder (data, manifests, index) no snapshot references."""
    referenced = _referenced(location)
    return sorted(f for f in table_files(location)
                  if f.split("/")[0] not in ("snapshot", "schema")
                  and f.rsplit("/", 1)[-1] not in referenced)


def _start(project, pauses, points, version):
    """A `dbt run` that pauses at each of ``points`` in turn (released one by one)."""
    pauses.mkdir(exist_ok=True)
    for marker in pauses.glob("*"):
        marker.unlink()
    return DbtProcess(project, "run", pause_at=",".join(points), pause_dir=pauses,
                      env={"CRASH_VERSION": str(version)})


def _kill_at(project, pauses, point, version):
    process = _start(project, pauses, [point], version)
    process.wait_for(point)
    process.kill()


def test_sigkill_at_every_write_point_leaves_one_whole_snapshot(crash_project):
    project, location, pauses = crash_project
    run_dbt(project, "run", env={"CRASH_VERSION": "1"})
    assert _versions(location) == {1}

    # One run stops at each point before its snapshot in turn and is killed at the last: while
    # it waits at a point, the table's files are exactly what a SIGKILL there leaves (a killed
    # process writes nothing more), so each point is checked as a kill point with one dbt
    # process instead of one each.
    points = ["task-file-written", "before-commit", "commit-manifests-written"]
    process = _start(project, pauses, points, 2)
    for point in points:
        process.wait_for(point)
        assert [s.id for s in list_snapshots(location.open())] == [1], point
        assert _versions(location) == {1}, f"killed at {point}: not the previous snapshot"
        left = set(_unreferenced(location))
        assert any(f.startswith("bucket-") for f in left), f"killed at {point}: no data file?"
        if point == "commit-manifests-written":
            assert any(f.startswith("manifest/") for f in left), "no manifest written?"
            process.kill()
        else:
            process.release(point)
    debris = set(_unreferenced(location))

    # the snapshot file is the commit: killed right after it, the run's data is whole
    _kill_at(project, pauses, "commit-snapshot-written", 5)
    assert [s.id for s in list_snapshots(location.open())] == [1, 2]
    assert _versions(location) == {5}

    output = run_dbt(project, "run", env={"CRASH_VERSION": "6"})
    assert "snapshot 3" in output
    assert _versions(location) == {6}

    assert set(_unreferenced(location)) >= debris
    # the operation behind `dbt run-operation remove_orphan_files` (test_orphans_dbt.py runs
    # it through dbt), in-process here to spare one more dbt process
    result = remove_orphan_files(location, older_than=0)
    assert set(result.deleted) >= debris
    assert _unreferenced(location) == []
    assert not debris & set(table_files(location))
    assert _versions(location) == {6}
    assert [s.id for s in list_snapshots(location.open())] == [1, 2, 3]
