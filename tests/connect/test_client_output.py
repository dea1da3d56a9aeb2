"""A dbt process over Spark Connect prints dbt's lines only: its client's own log (pyspark's
Spark Connect logger, here made chatty with SPARK_CONNECT_LOG_LEVEL) goes to the log file under
the warehouse's .spark folder, which `dbt --debug` names."""

from pathlib import Path

from tests.connect.connect_project import write_connect_project
from tests.functional.console_output import run_dbt_executable


def test_the_connect_clients_log_goes_to_the_log_file(tmp_path, connect_server_url,
                                                      paimon_warehouse):
    project = write_connect_project(tmp_path / "client_output", "client_output",
                                    connect_server_url, paimon_warehouse, {})
    result = run_dbt_executable(project, "--debug", "show", "--inline", "select 41 + 1 as answer",
                             env={"SPARK_CONNECT_LOG_LEVEL": "info"})
    assert result.returncode == 0, result.stdout
    assert "42" in result.stdout
    assert "Spark Connect RPC deadlines" not in result.stdout, result.stdout
    log = Path(paimon_warehouse) / ".spark" / "logs" / "spark.log"
    assert f"Spark's own output (and pyspark's log) goes to {log}" in result.stdout
    assert "Spark Connect RPC deadlines" in log.read_text()
