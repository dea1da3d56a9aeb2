"""Several processes writing one Paimon primary-key table at once (each its own Spark session,
the real write path, one shared warehouse): every commit lands whole or fails with a
CommitConflictError naming the retry; after the retries no row is lost or duplicated.

Writer 0 is held after writing its files (pause point ``before-commit``) while the others run
and commit at the same time, so it surely loses the race once: its first commit must be refused (its files
overlap the buckets the others wrote since it read the table), its retry must land.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.format.pause_points import PAUSE_AT, PAUSE_DIR
from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits

from reliability_helpers import read_merged

DRIVER = str(Path(__file__).with_name("write_driver.py"))
SHARED = 50          # keys every writer writes
OWN = 50             # keys only writer i writes: 1000 * (i + 1) + [0, OWN)
WRITERS = 3


def _start(location, writer: int, log: Path, env: dict) -> subprocess.Popen:
    own = 1000 * (writer + 1)
    ranges = f"0-{SHARED},{own}-{own + OWN}"
    with open(log, "w") as out:
        return subprocess.Popen([sys.executable, DRIVER, location.warehouse, location.database,
                                 location.table, f"w{writer}", ranges],
                                stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)


def test_concurrent_writers_commit_whole_and_lose_nothing(process_tmp):
    tmp_path = process_tmp
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "shared", pa.schema([("id", pa.int64()),
                                                         ("v", pa.string())]),
                           primary_keys=["id"], partition_keys=[], options={"bucket": "2"})
    location = TableRef(wh, "db", "shared", {})
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    base_env = {k: v for k, v in os.environ.items() if k != PAUSE_AT}
    held_env = dict(base_env, **{PAUSE_AT: "before-commit", PAUSE_DIR: str(pauses)})
    logs = [tmp_path / f"writer{i}.log" for i in range(WRITERS)]
    processes = [_start(location, 0, logs[0], held_env)]
    try:
        # the others start once writer 0 has read the table and written its files
        deadline = time.monotonic() + 600
        while not (pauses / "before-commit.reached").exists():
            assert processes[0].poll() is None, logs[0].read_text()
            assert time.monotonic() < deadline, "writer 0 never reached its commit"
            time.sleep(0.2)
        processes += [_start(location, i, logs[i], base_env) for i in range(1, WRITERS)]
        for process, log in zip(processes[1:], logs[1:]):
            assert process.wait(timeout=600) == 0, log.read_text()
        (pauses / "before-commit.release").touch()
        assert processes[0].wait(timeout=600) == 0, logs[0].read_text()
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, 9)
                process.wait()

    outputs = [log.read_text() for log in logs]
    held = [line for line in outputs[0].splitlines() if line.startswith("CONFLICT")]
    assert held, f"writer 0 committed on top of a stale read:\n{outputs[0]}"
    assert "sequence number" in held[0] and "Retry the run" in held[0]
    for output in outputs:
        for line in output.splitlines():
            if line.startswith("CONFLICT"):
                assert "Retry the run" in line, line
    committed = {i: int(line.split()[1]) for i, output in enumerate(outputs)
                 for line in output.splitlines() if line.startswith("SNAPSHOT")}
    assert sorted(committed) == list(range(WRITERS))

    table = location.open()
    snapshots = list_snapshots(table)
    assert [s.commit_kind for s in snapshots] == ["APPEND"] * WRITERS
    assert sorted(committed.values()) == [s.id for s in snapshots]
    rows = read_merged(location).to_pylist()
    last = max(committed, key=committed.get)
    expected = [{"id": i, "v": f"w{last}"} for i in range(SHARED)]
    for writer in range(WRITERS):
        own = 1000 * (writer + 1)
        expected += [{"id": own + i, "v": f"w{writer}"} for i in range(OWN)]
    assert rows == expected
    # every bucket's files hold disjoint sequence-number ranges (one writer per bucket and
    # commit, each above what the bucket held)
    for split in plan_splits(table):
        ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in split.files)
        assert all(high < low for (_, high), (low, _) in zip(ranges, ranges[1:])), ranges
