"""The background daemon of the default profile under real dbt commands (server/daemon.py;
the protocol alone, with a stand-in server, is tests/unit/server/test_daemon.py): concurrent
commands on one warehouse start one daemon and both land (an in-process Spark's Derby admits
one), later commands reuse it, it answers only on loopback and only with its token, a command
killed mid-run leaves it serving, a Python model builds its Paimon table there, `dbt-paimon
server stop` stops it, and a broken daemon makes
a command fall back to Spark in its own process instead of failing.

The suite turns the daemon off (tests/conftest.py); these tests turn it on for their commands.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.server import daemon
from dbt.adapters.paimon.server.processes import alive
from dbt.adapters.paimon.server.daemon_process import CLIENTS_NAME, INFO_NAME, LOG_NAME

from reliability_helpers import DbtProcess, read_merged, run_dbt

ON = {"DBT_PAIMON_DAEMON": "on"}
MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast({{ env_var('RUN', '1') }} as int) as run
from range(0, 50)
"""


PY_MODEL = """
def model(dbt, session):
    dbt.config(materialized="paimon_pk", primary_key="id", buckets=1)
    return dbt.ref("a").selectExpr("id", "run * 2 as twice")
"""


def write_project(root, warehouse):
    """Default profile, local master, only runtime Spark settings: the daemon's case."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: daemon_project\nversion: '1.0'\nprofile: daemon_project\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        "daemon_project:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      schema: bg\n      warehouse: {warehouse}\n      spark_master: 'local[2]'\n"
        "      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n")
    for name in ("a", "b"):
        (root / "models" / f"{name}.sql").write_text(MODEL)
    return root


@pytest.fixture
def project(process_tmp):
    warehouse = process_tmp / "warehouse"
    state = str(warehouse / ".spark")
    yield write_project(process_tmp / "project", warehouse), warehouse, state
    daemon.stop(state)


def info(state):
    with open(os.path.join(state, INFO_NAME)) as handle:
        return json.load(handle)


def snapshots(warehouse, name):
    return sorted((warehouse / "bg.db" / name).glob("snapshot/snapshot-*"))


def rows(warehouse, name):
    return read_merged(TableRef(str(warehouse), "bg", name, {})).column("run").to_pylist()


def loopback_only(port: int) -> bool:
    """Every listening socket on ``port`` is bound to 127.0.0.1 (IPv4 or IPv4-mapped IPv6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, port_hex = local.rsplit(":", 1)
                if int(port_hex, 16) == port and state == "0A":  # LISTEN
                    found.append(address.upper())
    return bool(found) and all(a in ("0100007F", "0000000000000000FFFF00000100007F")
                               for a in found)


def test_commands_share_one_daemon_that_only_its_user_reaches(project):
    root, warehouse, state = project
    # two commands at once on one warehouse: one daemon, both land
    first, second = (DbtProcess(root, "run", "-s", name, env=ON) for name in ("a", "b"))
    assert first.finish() == 0, first.output()
    assert second.finish() == 0, second.output()
    assert rows(warehouse, "a") == [1] * 50 and rows(warehouse, "b") == [1] * 50
    with open(os.path.join(state, LOG_NAME)) as handle:
        assert handle.read().count("started the Spark Connect server") == 1
    running = info(state)
    assert "Starting a background Spark" in first.output() + second.output()

    # a later command joins it: no new server
    shown = run_dbt(root, "show", "--inline", "select count(*) as n from {{ ref('a') }}",
                    env=ON)
    assert "| 50 |" in shown and "Starting a background Spark" not in shown
    assert info(state)["server_pid"] == running["server_pid"]

    # loopback only, and the token is required
    assert loopback_only(running["port"])
    probe = subprocess.run(
        [sys.executable, "-c",
         "from pyspark.sql import SparkSession\n"
         f"SparkSession.builder.remote('sc://localhost:{running['port']}').create()"
         ".range(1).count()"],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("SPARK_CONNECT")})
    assert probe.returncode != 0
    assert "UNAUTHENTICATED" in probe.stderr or "authentication" in probe.stderr.lower(), \
        probe.stderr[-2000:]

    # a Python model builds its Paimon table in the daemon's Spark (its Python workers)
    (root / "models" / "py.py").write_text(PY_MODEL)
    run_dbt(root, "run", "-s", "py", env=ON)
    assert sorted(read_merged(TableRef(str(warehouse), "bg", "py", {}))
                  .column("twice").to_pylist()) == [2] * 50
    assert info(state)["server_pid"] == running["server_pid"]

    # a command killed mid-run (SIGKILL, after it joined) leaves the daemon serving the next
    pauses = root / "pauses"
    pauses.mkdir()
    killed = DbtProcess(root, "run", "-s", "a", env={**ON, "RUN": "2"},
                        pause_at="before-commit", pause_dir=pauses)
    killed.wait_for("before-commit")
    killed.kill()
    assert rows(warehouse, "a") == [1] * 50
    assert alive(running["server_pid"])
    with open(os.path.join(state, CLIENTS_NAME)) as handle:  # its client lock went with it
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(handle, fcntl.LOCK_UN)
    run_dbt(root, "run", "-s", "a", env={**ON, "RUN": "3"})
    assert rows(warehouse, "a") == [3] * 50
    assert info(state)["server_pid"] == running["server_pid"]

    # `dbt-paimon server stop` stops it: no JVM, no watchdog left
    stopped = subprocess.run([sys.executable, "-m", "dbt.adapters.paimon.cli",
                              "server", "stop", "--warehouse", str(warehouse)],
                             capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 0 and "stopped the background daemon" in stopped.stdout
    assert not alive(running["server_pid"]) and not alive(running["pid"])
    assert not os.path.exists(os.path.join(state, INFO_NAME))


FAKE_SERVER = ("import socket, sys\n"
               "s = socket.socket()\n"
               "s.bind(('127.0.0.1', 0))\n"
               "s.listen()\n"
               "print(s.getsockname()[1], flush=True)\n"
               "while True:\n"
               "    s.accept()[0].close()\n")


def as_watchdog(state):
    """Arguments that give a stand-in process a watchdog's command line (daemon.py signals
    only a recorded pid whose command line is a watchdog's of that state folder)."""
    return ["daemon_process.py", os.path.join(state, "daemon-spec.0.json")]


def broken_daemon(state, warehouse, server_pid, port, watchdog=None):
    """daemon.json of a live watchdog (a stand-in, unless given) with the given server."""
    os.makedirs(state, exist_ok=True)
    watchdog = watchdog or subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", *as_watchdog(state)])
    with open(os.path.join(state, INFO_NAME), "w") as out:
        json.dump({"pid": watchdog.pid, "server_pid": server_pid, "port": port, "token": "t",
                   "fingerprint": daemon.fingerprint("local[2]"), "warehouse": str(warehouse),
                   "idle_seconds": 60, "launch": "x"}, out)
    return watchdog


def stopped(process, timeout=10):
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return process.poll() is not None


def test_a_daemon_whose_server_died_is_replaced(project):
    """The server gone, its watchdog not yet aware: the command stops the watchdog and starts
    a new daemon (no fallback)."""
    root, warehouse, state = project
    dead = subprocess.Popen(["true"])
    dead.wait()
    watchdog = broken_daemon(state, warehouse, dead.pid, 1)
    output = run_dbt(root, "run", "-s", "b", env=ON)
    assert "Starting a background Spark" in output, output
    assert "not available" not in output
    assert rows(warehouse, "b") == [1] * 50
    assert stopped(watchdog), "the dead server's watchdog was not stopped"
    assert info(state)["pid"] != watchdog.pid


def test_a_daemon_that_cannot_serve_falls_back_to_spark_in_the_process(project):
    """A daemon whose processes live but whose port answers no Spark Connect (something else
    listens there): the command's joining requests are retried for seconds, not minutes, then
    it says so in one line and runs Spark in its own process."""
    root, warehouse, state = project
    impostor = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, *as_watchdog(state)],
                                stdout=subprocess.PIPE, text=True)
    try:
        port = int(impostor.stdout.readline())
        # one process as watchdog and server: stopping the "watchdog" stops its server
        watchdog = broken_daemon(state, warehouse, impostor.pid, port, watchdog=impostor)
        started = time.monotonic()
        output = run_dbt(root, "run", "-s", "b", env=ON)
        assert time.monotonic() - started < 90, output
        assert "The background Spark is not available" in output
        assert "running Spark in this dbt process" in output
        assert rows(warehouse, "b") == [1] * 50
        # the in-process Spark stopped the idle daemon (its watchdog) before opening the metastore
        assert stopped(watchdog), "the broken daemon's watchdog was not stopped"
        assert not os.path.exists(os.path.join(state, INFO_NAME))
    finally:
        impostor.kill()
        impostor.wait()


def killed_server_ends(command, server_pid, paused_at=None):
    """Kill the daemon's Spark server under ``command`` (a DbtProcess): the command ends within
    60 s with the daemon's one line. Returns its output. ``paused_at``: the pause point the
    command waits at, released once the server is dead, so that the kill lands exactly there."""
    os.kill(server_pid, 9)
    killed_at = time.monotonic()
    if paused_at:
        while alive(server_pid):
            assert time.monotonic() - killed_at < 30, "the killed server did not exit"
            time.sleep(0.1)
        command.release(paused_at)
    code = command.finish(timeout=120)
    took = time.monotonic() - killed_at
    output = command.output()
    assert code != 0, output
    assert took < 60, f"the command took {took:.0f} s to end after its daemon died:\n{output}"
    assert "The background Spark of this warehouse stopped while this command ran" in output
    assert "it starts a new background Spark" in output
    assert "Traceback" not in output and "StatusCode" not in output, output
    return output


def wait_for_log(root, texts, after, timeout=240):
    """Wait until dbt's log (logs/dbt.log of the project) has ``texts`` in this order past
    offset ``after``."""
    log = root / "logs" / "dbt.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = log.read_text(errors="replace")[after:] if log.exists() else ""
        for text in texts:
            found = found.partition(text)[2] if text in found else None
            if found is None:
                break
        else:
            return
        time.sleep(0.2)
    raise AssertionError(f"dbt's log never showed {texts!r}")


def log_size(root):
    log = root / "logs" / "dbt.log"
    return len(log.read_text(errors="replace")) if log.exists() else 0


# a distributed write whose Spark job runs for minutes unless its server dies
SLOW = """{{ config(materialized='paimon_pk', primary_key='id', buckets=4,
                    write_path='distributed') }}
select cast(id as bigint) as id, cast(id % 7 as int) as run from range(0, 400000000)
"""


def test_a_command_whose_daemon_dies_mid_write_ends_at_once_and_the_next_one_passes(project):
    """The daemon's Spark server killed (as the OOM killer would) while a command writes in
    process, before its commit and after it, while a command reads, and while a distributed
    write's Spark job runs: each command learns it from the server's pid and port within
    seconds, instead of pyspark's ten minutes of retries, and says so in one line; every table
    holds exactly the runs committed (an in-process write's commit is the dbt process's own
    file operations: with its files written it completes without the server); the next command
    starts a new daemon and passes."""
    root, warehouse, state = project
    run_dbt(root, "run", env=ON)
    first = info(state)
    pauses = root / "pauses"
    pauses.mkdir()

    def killed_while_paused(point, run):
        """Run ``run`` pauses at ``point`` of a's write (b, after a, has not started); the
        daemon's server is killed there. Returns the server's pid and the command's output."""
        for marker in pauses.glob("*"):
            marker.unlink()
        before = snapshots(warehouse, "a")
        writing = DbtProcess(root, "run", env={**ON, "RUN": str(run)}, pause_at=point,
                             pause_dir=pauses)
        writing.wait_for(point)
        committed = point == "commit-snapshot-written"
        assert len(snapshots(warehouse, "a")) == len(before) + committed, point
        server_pid = info(state)["server_pid"]
        return server_pid, killed_server_ends(writing, server_pid, paused_at=point)

    # before the commit: a's files and manifests written, its snapshot file not yet
    assert killed_while_paused("commit-manifests-written", 2)[0] == first["server_pid"]
    assert rows(warehouse, "a") == [2] * 50 and rows(warehouse, "b") == [1] * 50

    again = run_dbt(root, "run", env={**ON, "RUN": "3"})
    assert "Starting a background Spark" in again
    second = info(state)
    assert second["server_pid"] != first["server_pid"]
    assert rows(warehouse, "a") == [3] * 50 and rows(warehouse, "b") == [3] * 50

    # during a read: a query that runs for minutes, killed once its statement has been sent
    offset = log_size(root)
    reading = DbtProcess(root, "show", "--inline",
                         "select count(*) as n from {{ ref('a') }} cross join range(0, 4000000000)",
                         env=ON)
    # the compiled statement (not the command line's `ref`) has run: the rows are being fetched
    wait_for_log(root, ["from bg.a cross join range(0, 4000000000)", "SQL status"], offset)
    time.sleep(2)
    killed_server_ends(reading, second["server_pid"])

    # during a distributed write (its Spark job on the daemon's executors): the command after
    # the read starts a new daemon, and its server is killed while the job runs
    (root / "models" / "slow.sql").write_text(SLOW)
    offset = log_size(root)
    distributed = DbtProcess(root, "run", "-s", "slow", env=ON)
    wait_for_log(root, ["Began executing node model.daemon_project.slow"], offset)
    time.sleep(3)
    third = info(state)
    assert third["server_pid"] not in (first["server_pid"], second["server_pid"])
    output = killed_server_ends(distributed, third["server_pid"])
    assert "Starting a background Spark" in output
    assert snapshots(warehouse, "slow") == [], "the killed distributed write committed"
    (root / "models" / "slow.sql").unlink()

    # after the commit: a's snapshot file written, the run not finished (the command after the
    # distributed write starts a new daemon, killed once a is committed)
    fourth, output = killed_while_paused("commit-snapshot-written", 4)
    assert "Starting a background Spark" in output
    assert fourth not in (first["server_pid"], second["server_pid"], third["server_pid"])
    assert rows(warehouse, "a") == [4] * 50 and rows(warehouse, "b") == [3] * 50

    run_dbt(root, "run", env={**ON, "RUN": "5"})
    assert rows(warehouse, "a") == [5] * 50 and rows(warehouse, "b") == [5] * 50

