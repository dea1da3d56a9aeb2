"""Over Spark Connect a dbt command prints dbt's lines only, as in session mode
(tests/functional/paimon/test_session_output.py runs the same project there): bad input written
in the dbt process and in the server's Spark tasks, a model that cannot compile, `dbt test` with a
failing test and `dbt show` each report their errors once, as dbt's, without gRPC's, Spark's or a
Python worker's text. The details are in the logs: a Spark task's failure in the server's log
(its executors log there), the full trace of an unexpected error in the client's
<warehouse>/.spark/logs/spark.log, whose path the error names."""

import glob
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from dbt.adapters.paimon import connect_server, spark_logs
from dbt.adapters.paimon.credentials import SPARK_STATE_DIRNAME
from tests.functional.console_output import (NULL_KEY, assert_dbt_lines_only,
                                             assert_failing_run_reported,
                                             assert_failing_test_reported, run_dbt_process,
                                             write_project)

SCHEMA = "connect_console"


@pytest.fixture(scope="module")
def project(tmp_path_factory, connect_server_url, paimon_warehouse) -> Path:
    return write_project(tmp_path_factory.mktemp("connect_console"), SCHEMA,
                         f"method: connect\nhost: '{connect_server_url}'\n"
                         f"warehouse: {paimon_warehouse}")


def client_log(warehouse: str) -> str:
    path = spark_logs.log_path(str(Path(warehouse) / SPARK_STATE_DIRNAME))
    return Path(path).read_text()


def server_log(warehouse: str, url: str) -> str:
    server = connect_server.server_for(warehouse, urlparse("http://" + url[len("sc://"):]).port)
    assert server.log_file, f"no server log in {server.state_dir}"
    return Path(server.log_file).read_text()


def test_a_failing_run_prints_dbt_lines_only(project, connect_server_url, paimon_warehouse):
    server_before = len(server_log(paimon_warehouse, connect_server_url))
    result = run_dbt_process(project, "run")
    assert_failing_run_reported(result)
    # the distributed write's failing task: logged by the server's executor, with the error
    server = server_log(paimon_warehouse, connect_server_url)[server_before:]
    assert "ERROR Executor" in server and NULL_KEY in server, server[-5000:]


def test_a_failing_test_and_a_show_print_dbt_lines_only(project):
    assert_failing_test_reported(run_dbt_process(project, "test"))
    shown = run_dbt_process(project, "show", "--select", "passing", "--limit", "3")
    assert shown.returncode == 0, shown.stdout
    assert_dbt_lines_only(shown)
    assert re.search(r"\| +id \| +twice \|", shown.stdout), shown.stdout


def test_an_unexpected_error_names_its_type_message_and_trace(project, paimon_warehouse):
    """A data file of a table overwritten with garbage: reading it fails in a Spark task with
    pyarrow's ArrowInvalid, which dbt-paimon does not anticipate. dbt's error names the type,
    its message and the client's log file holding the full trace (the task's traceback too)."""
    (project / "models" / "corrupted.sql").write_text(
        "{{ config(materialized='paimon_pk', primary_key='id') }}\n"
        "select id, 'x' as v from range(5)")
    (project / "models" / "reads_corrupted.sql").write_text(
        "{{ config(materialized='paimon_pk', primary_key='id') }}\n"
        "select * from {{ ref('corrupted') }}")
    built = run_dbt_process(project, "run", "--select", "corrupted")
    assert built.returncode == 0, built.stdout
    files = glob.glob(str(Path(paimon_warehouse) / f"{SCHEMA}.db" / "corrupted" / "bucket-*"
                          / "*.parquet"))
    assert files
    for name in files:
        Path(name).write_bytes(b"not a parquet file")
    log_file = spark_logs.log_path(str(Path(paimon_warehouse) / SPARK_STATE_DIRNAME))
    result = run_dbt_process(project, "run", "--select", "reads_corrupted")
    assert result.returncode == 1, result.stdout
    assert_dbt_lines_only(result)
    error = re.search(r"Model 'reads_corrupted': unexpected error (.*?)\(please include it",
                      result.stdout, re.DOTALL)
    assert error and result.stdout.count("unexpected error") == 1, result.stdout
    assert "ArrowInvalid" in error.group(1), error.group(1)
    assert f"its full trace is in {log_file}" in " ".join(error.group(1).split())
    trace = client_log(paimon_warehouse).rsplit("model 'reads_corrupted' failed", 1)[-1]
    assert "Traceback" in trace and "ArrowInvalid" in trace, trace[-5000:]
