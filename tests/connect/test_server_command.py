"""`dbt-paimon server status|start` against the test process's running server."""

import subprocess
import sys
from urllib.parse import urlparse

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
    # no JVM accepts connections within a tenth of a second
    with pytest.raises(connect_server.ServerError, match="within 0 s and was stopped"):
        connect_server.start(warehouse, port, master="local[1]", timeout=0.1, warm_up=False)
    server = connect_server.server_for(warehouse, port)
    assert server.pid() is None and not server.accepts_connections()
