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


SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def test_a_connect_server_on_the_warehouse_is_named_at_once(tmp_path):
    """A server `dbt-paimon server start` runs (its pid file in the state folder, its process a
    Spark Connect server) holds the metastore until it stops: a session-mode command fails
    before waiting for it, naming the server and both ways out."""
    import pytest

    from dbt.adapters.paimon.environments.base import MetastoreTakenError
    from dbt.adapters.paimon.environments.embedded import _refuse_a_connect_servers_metastore

    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", SERVER_CLASS])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        state = tmp_path / ".spark"
        state.mkdir()
        _refuse_a_connect_servers_metastore(str(state), "/w")  # no server: nothing to say
        # a dead server's pid file, and one whose pid another process took, are no server
        (state / f"spark-dbt-paimon-15001-{SERVER_CLASS}-1.pid").write_text("999999999\n")
        (state / f"spark-dbt-paimon-15002-{SERVER_CLASS}-1.pid").write_text(f"{other.pid}\n")
        _refuse_a_connect_servers_metastore(str(state), "/w")
        (state / f"spark-dbt-paimon-15003-{SERVER_CLASS}-1.pid").write_text(f"{server.pid}\n")
        with pytest.raises(MetastoreTakenError) as refused:
            _refuse_a_connect_servers_metastore(str(state), "/w")
        message = str(refused.value)
        assert f"pid {server.pid}" in message and "sc://127.0.0.1:15003" in message
        assert "`method: connect`" in message
        assert "dbt-paimon server stop --warehouse /w --port 15003" in message
    finally:
        for process in (server, other):
            process.kill()
            process.wait()
