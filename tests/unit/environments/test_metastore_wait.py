"""An embedded session waits for the JVM of the dbt command before it to let go of the
warehouse's Derby metastore (embedded._wait_for_the_metastore): Derby holds an exclusive
fcntl lock on metastore_db/dbex.lck while a JVM has the database open."""

import os
import subprocess
import sys
import time

from dbt.adapters.paimon.environments.embedded import _wait_for_the_metastore

HOLD = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.lockf(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def hold(path, seconds):
    process = subprocess.Popen([sys.executable, "-c", HOLD, path, str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def lock_file(tmp_path):
    os.makedirs(tmp_path / "metastore_db")
    path = tmp_path / "metastore_db" / "dbex.lck"
    path.write_text("")
    return str(path)


def test_waits_while_another_process_holds_the_metastore(tmp_path):
    process = hold(lock_file(tmp_path), 1.5)
    try:
        started = time.monotonic()
        _wait_for_the_metastore(str(tmp_path), seconds=30)
        # it returned once the holder had let go, 1.5 s after taking the lock
        assert time.monotonic() - started >= 1.0
    finally:
        process.kill()


def test_gives_up_after_its_time_and_returns_at_once_when_free(tmp_path):
    path = lock_file(tmp_path)
    process = hold(path, 30)
    try:
        _wait_for_the_metastore(str(tmp_path), seconds=0.5)
        assert process.poll() is None  # still held: Spark then tries and names the folder
    finally:
        process.kill()
        process.wait()
    started = time.monotonic()
    _wait_for_the_metastore(str(tmp_path), seconds=30)
    assert time.monotonic() - started < 5
    _wait_for_the_metastore(str(tmp_path / "no-metastore-yet"), seconds=30)
