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
