"""`dbt-paimon server status|start` against the test process's running server, and a
session-mode command on that server's warehouse."""

import os
import subprocess
import sys
import time
from urllib.parse import urlparse

from tests import dbt_fork_server

CLI = [sys.executable, "-m", "dbt.adapters.paimon.cli"]


def cli(*args):
    return subprocess.run(CLI + list(args), capture_output=True, text=True, timeout=120)


def test_status_start_of_a_running_server(connect_server_url, paimon_warehouse):
    port = str(urlparse(connect_server_url.replace("sc://", "http://")).port)
    status = cli("server", "status", "--warehouse", paimon_warehouse, "--port", port)
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"running at {connect_server_url}" in status.stdout
    # start again: the running server is left as it is
    again = cli("server", "start", "--warehouse", paimon_warehouse, "--port", port)
    assert again.returncode == 0, again.stderr
    assert connect_server_url in again.stdout


def test_status_of_a_server_that_does_not_run(tmp_path):
    status = cli("server", "status", "--warehouse", str(tmp_path), "--port", "1")
    assert status.returncode == 3 and "not running" in status.stdout


def test_a_start_that_times_out_stops_the_server_it_launched(tmp_path):
    import socket

    import pytest

    from dbt.adapters.paimon.environments import connect_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    warehouse = str(tmp_path / "warehouse")
    # the server listens on another loopback address than the one start() waits on, so it never
    # accepts in time however fast the machine starts it (a quiet machine's server accepts
    # within start-connect-server.sh's own two seconds)
    unreachable = {"spark.connect.grpc.binding.address": "127.0.0.2"}
    try:
        with pytest.raises(connect_server.ServerError, match="within 0 s and was stopped"):
            connect_server.start(warehouse, port, master="local[1]", conf=unreachable,
                                 timeout=0.1, warm_up=False)
        server = connect_server.server_for(warehouse, port)
        assert server.pid() is None
        # no Spark Connect server of this warehouse runs on
        assert servers_of(warehouse, connect_server.SERVER_CLASS) == []
    finally:
        for pid in servers_of(warehouse, connect_server.SERVER_CLASS):
            os.kill(int(pid), 9)


def servers_of(warehouse, server_class):
    """The pids of running processes whose command line names ``warehouse`` and the server."""
    from dbt.adapters.paimon.server.processes import alive, command_line

    return [pid for pid in os.listdir("/proc") if pid.isdigit() and alive(int(pid))
            and server_class in command_line(pid) and warehouse in command_line(pid)]


def test_a_session_mode_command_on_the_servers_warehouse_names_the_server_at_once(
        tmp_path, connect_server_url, paimon_warehouse):
    """The server holds the warehouse's Derby metastore while it runs: a session-mode command
    there (a scheduler's, say, with the server left running) fails before starting Spark,
    naming the server and what to do, instead of waiting for the metastore
    (embedded.METASTORE_WAIT_SECONDS) and failing with Spark's error about some other process."""
    from dbt.adapters.paimon.environments.embedded import METASTORE_WAIT_SECONDS

    port = urlparse(connect_server_url.replace("sc://", "http://")).port
    project = tmp_path / "session_project"
    project.mkdir()
    (project / "dbt_project.yml").write_text(
        "name: beside_server\nversion: '1.0'\nconfig-version: 2\nprofile: beside_server\n")
    (project / "profiles.yml").write_text(
        "beside_server:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      method: session\n      schema: s\n      warehouse: {paimon_warehouse}\n"
        "      spark_master: 'local[1]'\n")
    started = time.monotonic()
    shown = dbt_fork_server.run(["show", "--inline", "select 1", "--project-dir", project,
                                 "--profiles-dir", project], project, dict(os.environ))
    assert shown.returncode != 0, shown.stdout
    assert time.monotonic() - started < METASTORE_WAIT_SECONDS, "it waited for the metastore"
    assert "Traceback" not in shown.stdout, shown.stdout  # dbt's error, not a crash
    text = " ".join(shown.stdout.split())
    assert f"runs on this warehouse at sc://127.0.0.1:{port} and holds its metastore" in text, \
        shown.stdout
    assert f"dbt-paimon server stop --warehouse {paimon_warehouse} --port {port}" in text
    # the server serves on, untouched
    status = cli("server", "status", "--warehouse", paimon_warehouse, "--port", str(port))
    assert status.returncode == 0, status.stdout + status.stderr
