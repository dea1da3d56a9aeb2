"""A dbt process over Spark Connect prints dbt's lines only: its client's own log (pyspark's
Spark Connect logger, here made chatty with SPARK_CONNECT_LOG_LEVEL) goes to the log file under
the warehouse's .spark folder, which `dbt --debug` names."""

import os
import subprocess
import sys
from pathlib import Path

DBT = [sys.executable, "-m", "dbt.cli.main"]


def test_the_connect_clients_log_goes_to_the_log_file(tmp_path, connect_server_url,
                                                      paimon_warehouse):
    project = tmp_path / "client_output"
    project.mkdir()
    (project / "dbt_project.yml").write_text(
        "name: client_output\nversion: '1.0'\nprofile: client_output\nconfig-version: 2\n")
    (project / "profiles.yml").write_text(
        "client_output:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      method: connect\n      host: '{connect_server_url}'\n      schema: client_output\n"
        f"      warehouse: {paimon_warehouse}\n")
    result = subprocess.run(
        DBT + ["--debug", "show", "--inline", "select 41 + 1 as answer", "--project-dir",
               str(project), "--profiles-dir", str(project)],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600,
        env={**os.environ, "SPARK_CONNECT_LOG_LEVEL": "info"})
    assert result.returncode == 0, result.stdout
    assert "42" in result.stdout
    assert "Spark Connect RPC deadlines" not in result.stdout, result.stdout
    log = Path(paimon_warehouse) / ".spark" / "logs" / "spark.log"
    assert f"Spark's own output (and pyspark's log) goes to {log}" in result.stdout
    assert "Spark Connect RPC deadlines" in log.read_text()
