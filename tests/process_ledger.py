"""What the tests start besides their own process, and for how long: one JSON line per dbt
process a test ran (tests/dbt_fork_server.py) and per server a fixture started (a Spark Connect
server, PostgreSQL, a Hive Metastore, the standalone Spark cluster), appended to the file
``DBT_PAIMON_TEST_LEDGER`` names (`make test` gives each pytest process
``<target>.processes.jsonl`` beside its JUnit file; unset, nothing is written).
scripts/test_report.py sums each process's lines: how many dbt processes it started, their wall
time and the tests that spend most of it so, and the servers it started and their start time.

A line: ``{"kind": "dbt", "seconds": 12.3, "test": "<pytest node id>", "detail": "run"}``;
``seconds`` runs from the start until the test collected the exit. A server's line:
``{"kind": "server", "seconds": 5.1, "test": ..., "detail": "hive-metastore"}``, ``seconds``
from its start until it answered."""
from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager

LEDGER = "DBT_PAIMON_TEST_LEDGER"
_lock = threading.Lock()


def current_test() -> str:
    """The running test's node id (pytest sets PYTEST_CURRENT_TEST: "<id> (<phase>)")."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]


def record(kind: str, seconds: float, detail: str = "") -> None:
    path = os.environ.get(LEDGER)
    if not path:
        return
    line = json.dumps({"kind": kind, "seconds": round(seconds, 2), "test": current_test(),
                       "detail": detail})
    with _lock, open(path, "a") as out:
        out.write(line + "\n")


@contextmanager
def server_start(name: str):
    """Records the block (a server's start, until it answers) as a server named ``name``,
    if the block succeeds."""
    started = time.monotonic()
    yield
    record("server", time.monotonic() - started, name)
