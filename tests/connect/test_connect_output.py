"""Over Spark Connect a dbt command prints dbt's lines only, as in session mode
(tests/functional/paimon/test_session_output.py runs the same project there): bad input written
in the dbt process and in the server's Spark tasks, a model that cannot compile, `dbt test` with a
failing test and `dbt show` each report their errors once, as dbt's, without gRPC's, Spark's or a
Python worker's text. The details are in the logs: a Spark task's failure in the server's log
(its executors log there), the full trace of an unexpected error in the client's
<warehouse>/.spark/logs/spark.log, whose path the error names.

`dbt show` runs as the `dbt` executable itself, whose new interpreter's imports could print
something too; the other commands are forked from the test process's dbt server
(tests/dbt_fork_server.py), 3.5 CPU-s less each."""

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from dbt.adapters.paimon.environments import connect_server, spark_logs
from dbt.adapters.paimon.credentials import SPARK_STATE_DIRNAME
from tests.functional.console_output import (CORRUPTED_MODELS, NULL_KEY,
                                             assert_dbt_lines_only,
                                             assert_failing_run_reported,
                                             assert_failing_test_reported,
                                             assert_unexpected_error_reported,
                                             corrupt_data_files, run_dbt_executable,
                                             run_dbt_process, write_project)

SCHEMA = "connect_console"


@pytest.fixture(scope="module")
def project(tmp_path_factory, connect_server_url, paimon_warehouse) -> Path:
    return write_project(tmp_path_factory.mktemp("connect_console"), SCHEMA,
                         f"method: connect\nhost: '{connect_server_url}'\n"
                         f"warehouse: {paimon_warehouse}")


def server_log(warehouse: str, url: str) -> str:
    server = connect_server.server_for(warehouse, urlparse("http://" + url[len("sc://"):]).port)
    assert server.log_file, f"no server log in {server.state_dir}"
    return Path(server.log_file).read_text()


@pytest.fixture(scope="module")
def failing_run(project, connect_server_url, paimon_warehouse):
    """`dbt run` of the project as written (the other tests build on its tables, or add models
    to the project): (its result, what the server logged meanwhile)."""
    server_before = len(server_log(paimon_warehouse, connect_server_url))
    result = run_dbt_process(project, "run")
    return result, server_log(paimon_warehouse, connect_server_url)[server_before:]


def test_a_failing_run_prints_dbt_lines_only(failing_run):
    result, server = failing_run
    assert_failing_run_reported(result)
    # the distributed write's failing task: logged by the server's executor, with the error
    assert "ERROR Executor" in server and NULL_KEY in server, server[-5000:]


def test_a_failing_test_and_a_show_print_dbt_lines_only(project, failing_run):
    assert_failing_test_reported(run_dbt_process(project, "test"))
    shown = run_dbt_executable(project, "show", "--select", "passing", "--limit", "3")
    assert shown.returncode == 0, shown.stdout
    assert_dbt_lines_only(shown)
    assert re.search(r"\| +id \| +twice \|", shown.stdout), shown.stdout


def test_an_unexpected_error_names_its_type_message_and_trace(project, failing_run,
                                                             paimon_warehouse):
    """dbt's error names the type, its message and the client's log file holding the full
    trace (the server's task's traceback too)."""
    for name, text in CORRUPTED_MODELS.items():
        (project / "models" / name).write_text(text)
    built = run_dbt_process(project, "run", "--select", "corrupted")
    assert built.returncode == 0, built.stdout
    corrupt_data_files(paimon_warehouse, SCHEMA, "corrupted")
    result = run_dbt_process(project, "run", "--select", "reads_corrupted")
    assert result.returncode == 1, result.stdout
    assert_dbt_lines_only(result)
    log_file = spark_logs.log_path(str(Path(paimon_warehouse) / SPARK_STATE_DIRNAME))
    assert_unexpected_error_reported(result.stdout, "reads_corrupted", log_file)
