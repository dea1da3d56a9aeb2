"""The background daemon's protocol (server/daemon.py, daemon_process.py) with a stand-in
server: the daemon's Spark Connect server (environments/daemon_environment.py) with its command
line replaced by a Python process listening on the port it is given, so the locks, the idle
stop, the restart of another installation's daemon and the parent-death signal are tested in
seconds without Spark. tests/reliability/test_daemon_dbt.py runs the real server under dbt
commands."""

import dataclasses
import json
import os
import signal
import socket
import stat
import sys
import threading
import time

import pytest

from dbt.adapters.paimon.credentials import PaimonCredentials
from dbt.adapters.paimon.environments.daemon_environment import ConnectDaemonServer
from dbt.adapters.paimon.server import daemon, daemon_policy, processes
from dbt.adapters.paimon.server.daemon_process import INFO_NAME, LOG_NAME
from dbt.adapters.paimon.server.processes import alive

FAKE_SERVER = ("import socket, sys, time\n"
               "s = socket.socket()\n"
               "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
               "s.listen()\n"
               "time.sleep(3600)\n")


class StandInServer(ConnectDaemonServer):
    """The daemon's Spark Connect server, its command line replaced by ``command``."""

    def __init__(self, command=None):
        self.stand_in = command or (lambda port: [sys.executable, "-c", FAKE_SERVER, str(port)])

    def command(self, plan, port):
        return self.stand_in(port)


@pytest.fixture
def plan(tmp_path, monkeypatch):
    monkeypatch.setenv("DBT_PAIMON_DAEMON_POLL_SECONDS", "0.1")
    monkeypatch.setattr(daemon, "_client_lock", None)
    monkeypatch.setattr(daemon, "_started_here", False)
    state = tmp_path / ".spark"
    made = daemon.DaemonPlan(str(tmp_path), str(state), "local[2]", idle_seconds=3600,
                             server=StandInServer())
    yield made
    daemon.release()
    daemon.stop(str(state))


def wait_until(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def info(plan):
    with open(plan.path(INFO_NAME)) as handle:
        return json.load(handle)


def starts(plan):
    with open(plan.path(LOG_NAME)) as handle:
        return handle.read().count("started the Spark Connect server")


def test_the_first_command_starts_it_and_later_ones_join(plan):
    url = daemon.acquire(plan, lambda line: None)
    first = info(plan)
    assert url.host == "localhost" and url.port == first["port"]
    assert url.param("token") == first["token"] and len(first["token"]) >= 32
    # the token is readable by its owner only
    assert stat.S_IMODE(os.stat(plan.path(INFO_NAME)).st_mode) == 0o600
    assert daemon.started_here()
    daemon.release()
    again = daemon.acquire(plan, lambda line: None)
    assert again == url and info(plan)["server_pid"] == first["server_pid"]
    assert starts(plan) == 1


def test_commands_starting_together_start_one_daemon(plan):
    urls, errors = [], []

    def command():
        try:
            urls.append(daemon.acquire(plan, lambda line: None))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=command) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(urls)) == 1
    assert starts(plan) == 1


def test_idle_stop_waits_for_the_commands_using_it(plan):
    plan = dataclasses.replace(plan, idle_seconds=0.5)
    daemon.acquire(plan, lambda line: None)
    server = info(plan)["server_pid"]
    time.sleep(1.5)  # idle time is over, but this process holds the clients lock
    assert alive(server) and os.path.exists(plan.path(INFO_NAME))
    daemon.release()  # the command exits
    # the watchdog stops the server, then removes daemon.json (daemon_process.py)
    wait_until(lambda: not alive(server) and not os.path.exists(plan.path(INFO_NAME)))
    with open(plan.path(LOG_NAME)) as handle:
        assert "idle: stopping" in handle.read()


def test_a_daemon_of_another_installation_is_restarted(plan):
    daemon.acquire(plan, lambda line: None)
    old = info(plan)
    old["fingerprint"] = "another-version"
    daemon_process_json = plan.path(INFO_NAME)
    with open(daemon_process_json, "w") as out:
        json.dump(old, out)
    daemon.release()
    said = []
    daemon.acquire(plan, said.append)
    new = info(plan)
    assert new["server_pid"] != old["server_pid"] and not alive(old["server_pid"])
    assert not alive(old["pid"])
    assert any("another dbt-paimon or pyspark installation" in line for line in said)


def test_killing_the_watchdog_takes_its_server_down(plan):
    """No orphan server without a watchdog to stop it: the parent-death signal (Linux)."""
    daemon.acquire(plan, lambda line: None)
    running = info(plan)
    os.kill(running["pid"], signal.SIGKILL)
    wait_until(lambda: not alive(running["server_pid"]))
    daemon.release()
    # the next command finds the stale file and starts a new daemon
    daemon.acquire(plan, lambda line: None)
    assert info(plan)["server_pid"] != running["server_pid"]


def test_a_server_left_without_its_watchdog_is_stopped_by_the_next_command(plan):
    """Where no parent-death signal exists (macOS), a SIGKILLed watchdog leaves its server
    running: the next command to look for the daemon stops it. A process that merely took a
    recorded pid (its command line does not name the server's port) is left alone."""
    import subprocess

    os.makedirs(plan.state_dir, exist_ok=True)
    watchdog = subprocess.Popen([sys.executable, "-c", "pass"])
    watchdog.wait()  # a pid that no longer runs
    port = daemon._free_port()
    orphan = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, str(port)])
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        for server, stays in ((stranger, True), (orphan, False)):
            with open(plan.path(INFO_NAME), "w") as out:
                json.dump({"pid": watchdog.pid, "server_pid": server.pid, "port": port}, out)
            assert daemon.running(plan.state_dir) is None
            assert not os.path.exists(plan.path(INFO_NAME))
            if stays:
                assert server.poll() is None
            else:
                assert server.wait(timeout=20) is not None
    finally:
        for process in (orphan, stranger):
            process.kill()
            process.wait()


def test_a_server_that_dies_while_starting_is_reported(plan):
    plan = dataclasses.replace(plan, server=StandInServer(
        lambda port: [sys.executable, "-c", "import sys; sys.exit(3)"]))
    with pytest.raises(daemon.DaemonUnavailable, match="exited while starting"):
        daemon.acquire(plan, lambda line: None)


def test_an_idle_daemon_gives_way_to_an_in_process_spark_a_busy_one_does_not(plan):
    daemon.acquire(plan, lambda line: None)
    busy = daemon.stop_if_idle(plan.state_dir)
    assert busy is not None and alive(busy["server_pid"])  # this process uses it
    daemon.release()
    assert daemon.stop_if_idle(plan.state_dir) is None
    assert not alive(busy["server_pid"]) and daemon.running(plan.state_dir) is None


POLICY_DEFAULTS = dict(daemon=None, master="local[*]", warehouse_is_local=True,
                       spark_conf={}, environ={}, interactive=True)


@pytest.mark.parametrize("change, use, reason", [
    ({}, True, "interactive"),
    ({"interactive": False}, False, "not run from a terminal"),
    ({"environ": {"CI": "true"}}, False, "CI is set"),
    ({"environ": {"CI": "true", "DBT_PAIMON_DAEMON": "on"}}, True, "DBT_PAIMON_DAEMON=on"),
    ({"interactive": False, "daemon": True}, True, "daemon: true"),
    ({"environ": {"DBT_PAIMON_DAEMON": "off"}}, False, "DBT_PAIMON_DAEMON=off"),
    ({"daemon": False}, False, "method: session or daemon: false"),
    ({"master": "spark://host:7077"}, False, "not local"),
    ({"master": "local-cluster[2,1,1024]"}, False, "not local"),
    ({"warehouse_is_local": False}, False, "not a local folder"),
    ({"spark_conf": {"spark.sql.shuffle.partitions": "4"}}, True, "interactive"),
    ({"spark_conf": {"spark.paimon.postpone.merge-on-read": "true"}}, True, "interactive"),
    ({"spark_conf": {"spark.driver.memory": "4g", "spark.sql.extensions": "x"}}, False,
     "spark.driver.memory, spark.sql.extensions only applies to a fresh Spark"),
    ({"spark_conf": {"spark.executor.memory": "1g"}, "daemon": True}, False, "fresh Spark"),
])
def test_when_the_daemon_is_used(change, use, reason):
    decision = daemon_policy.decide(**{**POLICY_DEFAULTS, **change})
    assert decision.use is use and reason in decision.reason


def test_the_profile_switches():
    def creds(**profile):
        return PaimonCredentials.from_dict({"schema": "analytics", **profile})

    assert creds().daemon is None  # the default profile: decided by daemon_policy
    assert creds(method="session").daemon is False  # an explicit session never uses it
    assert creds(daemon=True).daemon is True
    with pytest.raises(Exception, match="method: session and daemon: true"):
        creds(method="session", daemon=True)
    with pytest.raises(Exception, match="daemon_idle_minutes must be"):
        creds(daemon_idle_minutes=0)
    assert daemon_policy.idle_seconds(None, {}) == 3600
    assert daemon_policy.idle_seconds(5, {}) == 300
    assert daemon_policy.idle_seconds(5, {"DBT_PAIMON_DAEMON_IDLE_MINUTES": "0.5"}) == 30
    with pytest.raises(ValueError, match="not a number of minutes"):
        daemon_policy.idle_seconds(None, {"DBT_PAIMON_DAEMON_IDLE_MINUTES": "soon"})


def test_a_server_killed_while_idle_is_replaced_by_the_next_command(plan, monkeypatch):
    """The server killed (out of memory, SIGKILL) between commands, before its watchdog looks
    again: the next command stops the watchdog and starts a new daemon, rather than joining a
    dead server or falling back to Spark in its own process."""
    monkeypatch.setenv("DBT_PAIMON_DAEMON_POLL_SECONDS", "30")  # the watchdog looks late
    daemon.acquire(plan, lambda line: None)
    daemon.release()
    first = info(plan)
    os.kill(first["server_pid"], signal.SIGKILL)
    wait_until(lambda: not alive(first["server_pid"]))
    started = time.monotonic()
    url = daemon.acquire(plan, lambda line: None)
    assert time.monotonic() - started < 60
    assert not alive(first["pid"])
    assert info(plan)["server_pid"] != first["server_pid"] and url.port == info(plan)["port"]


@pytest.mark.parametrize("content", ["{not json", ""], ids=["corrupt", "empty"])
def test_a_corrupt_daemon_json_starts_a_new_daemon(plan, content):
    os.makedirs(plan.state_dir, exist_ok=True)
    with open(plan.path(INFO_NAME), "w") as out:
        out.write(content)
    url = daemon.acquire(plan, lambda line: None)
    assert url.port == info(plan)["port"] and alive(info(plan)["server_pid"])


def test_a_port_another_process_takes_first_starts_the_server_on_another(plan, monkeypatch):
    """The port is chosen free and bound by the server a moment later: a process that binds it
    meanwhile is neither joined as the daemon (it listens, but is not the server) nor fatal."""
    impostor = socket.socket()
    impostor.bind(("127.0.0.1", 0))
    impostor.listen()
    taken = impostor.getsockname()[1]
    ports = iter([taken])
    free = daemon._free_port
    monkeypatch.setattr(daemon, "_free_port", lambda: next(ports, None) or free())
    try:
        url = daemon.acquire(plan, lambda line: None)
    finally:
        impostor.close()
    running = info(plan)
    assert url.port == running["port"] != taken
    assert processes.listens_on(running["server_pid"], running["port"])
    assert starts(plan) == 2


def test_a_port_taken_at_every_attempt_gives_up_with_the_reason(plan, monkeypatch):
    impostor = socket.socket()
    impostor.bind(("127.0.0.1", 0))
    impostor.listen()
    taken = impostor.getsockname()[1]
    monkeypatch.setattr(daemon, "_free_port", lambda: taken)
    try:
        with pytest.raises(daemon.PortTaken, match=f"another process took port {taken}"):
            daemon.acquire(plan, lambda line: None)
    finally:
        impostor.close()
    assert starts(plan) == daemon.PORT_ATTEMPTS
    assert not os.path.exists(plan.path(INFO_NAME))
