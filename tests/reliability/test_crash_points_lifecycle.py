"""SIGKILL a rollback or a fast-forward at each of its pause points (format/pause_points.py):
the table stays readable at one whole snapshot (never a mix of two), a second call finishes the
job, and remove_orphan_files collects what the killed call left.

Every commit writes all keys with ``version`` = the commit's number, so a mix would show two
versions. Rollback and fast-forward touch metadata only: the process is a plain Python one
(no Spark), and the tables are written with pypaimon's own writer.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.pause_points import PAUSE_AT, PAUSE_DIR
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops.branches import branch_table_name, create_branch
from dbt.adapters.paimon.ops.expire import remove_orphan_files
from dbt.adapters.paimon.ops.tags import create_tag

from reliability_helpers import read_merged

KEYS = 50
DRIVER = """
import sys
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.ops.branches import fast_forward
from dbt.adapters.paimon.ops.rollback import rollback

warehouse, operation, argument = sys.argv[1:4]
location = TableRef(warehouse, "db", "t", {})
if operation == "rollback":
    rollback(location, snapshot_id=int(argument))
else:
    fast_forward(location, argument, force=True)  # main moved on since the branch started
"""


def _commit(location: TableRef, version: int, extra: bool = False) -> None:
    table = location.open()
    columns = {"id": pa.array(range(KEYS), pa.int64()),
               "version": pa.array([version] * KEYS, pa.int64())}
    if extra:
        columns["note"] = pa.array([f"v{version}"] * KEYS, pa.string())
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.table(columns))
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


@pytest.fixture
def history(process_tmp):
    """Main: commits 1-4. Branch 'b' from tag 'two' (snapshot 2), then a column added on the
    branch and commits 10 and 11 there."""
    wh = str(process_tmp / "warehouse")
    warehouse.create_table(wh, "db", "t", pa.schema([("id", pa.int64()),
                                                     ("version", pa.int64())]),
                           primary_keys=["id"], options={"bucket": "2"})
    location = TableRef(wh, "db", "t", {})
    for version in range(1, 5):
        _commit(location, version)
    create_tag(location, "two", snapshot_id=2)
    create_branch(location, "b", tag="two")
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange

    warehouse.open_catalog(wh).alter_table(
        f"db.{branch_table_name('t', 'b')}", [SchemaChange.add_column("note",
                                                                      AtomicType("STRING"))])
    branch = TableRef(wh, "db", branch_table_name("t", "b"), {})
    _commit(branch, 10, extra=True)
    _commit(branch, 11, extra=True)
    return location, process_tmp / "pauses"


def _killed_at(location: TableRef, pauses, point: str, operation: str, argument: str):
    pauses.mkdir(exist_ok=True)
    env = {**os.environ, PAUSE_AT: point, PAUSE_DIR: str(pauses)}
    process = subprocess.Popen([sys.executable, "-c", DRIVER, location.warehouse, operation,
                                argument], env=env, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    marker = pauses / f"{point}.reached"
    deadline = time.monotonic() + 120
    while not marker.exists():
        if process.poll() is not None:
            raise AssertionError(f"{operation} ended before {point}: "
                                 f"{process.stdout.read().decode()[-3000:]}")
        assert time.monotonic() < deadline, f"{operation} did not reach {point}"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    marker.unlink()


def _versions(location: TableRef) -> set:
    rows = read_merged(location)
    assert rows.column("id").to_pylist() == list(range(KEYS)), "a key is missing or doubled"
    return set(rows.column("version").to_pylist())


@pytest.mark.parametrize("point", ["rollback-first-snapshot-removed",
                                   "rollback-snapshots-removed"])
def test_a_killed_rollback_leaves_a_whole_snapshot_and_a_second_one_finishes(history, point):
    location, pauses = history
    _killed_at(location, pauses, point, "rollback", "2")
    versions = _versions(location)
    assert len(versions) == 1 and versions <= {2, 3}, versions
    subprocess.run([sys.executable, "-c", DRIVER, location.warehouse, "rollback", "2"],
                   check=True)
    assert _versions(location) == {2}
    assert [s.id for s in list_snapshots(location.open())] == [1, 2]
    remove_orphan_files(location, older_than=0)  # what the killed call left
    assert _versions(location) == {2}
    assert remove_orphan_files(location, older_than=0, dry_run=True).deleted == []


@pytest.mark.parametrize("point", ["fast-forward-main-cut", "fast-forward-schemas-copied"])
def test_a_killed_fast_forward_leaves_main_readable_and_a_second_one_finishes(history, point):
    location, pauses = history
    _killed_at(location, pauses, point, "fast_forward", "b")
    assert _versions(location) == {1}  # main cut back to before the branch's start
    subprocess.run([sys.executable, "-c", DRIVER, location.warehouse, "fast_forward", "b"],
                   check=True)
    assert _versions(location) == {11}
    assert [s.id for s in list_snapshots(location.open())] == [1, 2, 3, 4]  # 1: before
    assert "note" in location.open().field_names
    assert read_merged(location).column("note").to_pylist() == ["v11"] * KEYS
