"""What a real dbt process may print: dbt's lines only. The project, the runner and the checks
shared by the console tests of session mode (tests/functional/paimon/test_session_output.py) and
of Spark Connect (tests/connect/test_connect_output.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Mapping, Optional

from tests import dbt_fork_server

# Nothing of Spark, the JVM, py4j, gRPC or a Python worker may reach the terminal.
FORBIDDEN = ("ERROR Executor", "at org.apache", "Traceback", "@@dbt-paimon", "crashed",
             "WARNING: Using incubator", "Setting default log level", "sc.setLogLevel",
             "SQLSTATE: 38000", "py4j", "Unhandled error", "Exception in thread",
             "JVM stacktrace", "grpc", "StatusCode.", "RETRIES_EXCEEDED")
LOG4J_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (ERROR|WARN|INFO) ", re.MULTILINE)
# a Python warning as warnings.showwarning prints it ("<file>:<line>: UserWarning: ...")
PYTHON_WARNING = re.compile(r"^\S+:\d+: \w*Warning: ", re.MULTILINE)
DBT = os.path.join(os.path.dirname(sys.executable), "dbt")
NULL_KEY = "column 'id': NULL in a primary key"

_NULL_KEY_MODEL = ("{{{{ config(materialized='paimon_pk', primary_key='id', "
                   "write_path='{path}') }}}}\n"
                   "select cast(null as int) as id, 'x' as v union all select 1, 'y'")
MODELS = {
    # bad input found while the dbt process writes the run itself ...
    "null_key_in_process.sql": _NULL_KEY_MODEL.format(path="in_process"),
    # ... and by Spark tasks: the failing task is what Spark logs as an executor's ERROR
    "null_key_distributed.sql": _NULL_KEY_MODEL.format(path="distributed"),
    "not_compiling.sql": ("{% if execute %}{{ exceptions.raise_compiler_error("
                          "'not_compiling: this model cannot compile') }}{% endif %}\n"
                          "select 1 as x"),
    "passing.sql": ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
                    "select id, id * 2 as twice from range(10)"),
    "schema.yml": ("version: 2\nmodels:\n  - name: passing\n    columns:\n      - name: twice\n"
                   "        tests:\n          - accepted_values:\n              arguments:\n"
                   "                values: [0]\n"),
}


def write_project(root: Path, name: str, output: str,
                  models: Mapping[str, str] = MODELS) -> Path:
    """A dbt project of ``models`` (file name -> text) at ``root`` whose profile's one output is
    ``output`` (YAML of the output's keys, each on its own line, unindented)."""
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '1.0'\nprofile: {name}\nconfig-version: 2\n")
    keys = "".join(f"      {line}\n" for line in output.strip().splitlines())
    (root / "profiles.yml").write_text(
        f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      schema: {name}\n      threads: 1\n{keys}")
    for file_name, text in models.items():
        (root / "models" / file_name).write_text(text)
    return root


def run_dbt_process(project: Path, *args: str,
                    env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    """dbt ``args`` in a new process (tests/dbt_fork_server.py), its stderr merged into its
    stdout (the terminal)."""
    return dbt_fork_server.run(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project)], project,
        {**os.environ, **(env or {})})


def run_dbt_executable(project: Path, *args: str,
                       env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    """``run_dbt_process`` as the ``dbt`` executable itself, for the console tests: what a new
    interpreter prints while it imports reaches the terminal too."""
    return subprocess.run(
        [DBT, *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200,
        env={**os.environ, **(env or {})})


def assert_dbt_lines_only(result: subprocess.CompletedProcess) -> None:
    output = result.stdout
    for text in FORBIDDEN:
        assert text not in output, f"{text!r} reached the terminal:\n{output}"
    assert not LOG4J_LINE.search(output), f"a Spark log line reached the terminal:\n{output}"
    assert not PYTHON_WARNING.search(output), f"a Python warning reached the terminal:\n{output}"


def assert_failing_run_reported(result: subprocess.CompletedProcess) -> None:
    """`dbt run` of MODELS: dbt's lines only, each handled error once, as its model's error."""
    assert result.returncode == 1, result.stdout
    assert_dbt_lines_only(result)
    output = result.stdout
    assert output.count(NULL_KEY) == 2, output
    for model in ("null_key_in_process", "null_key_distributed"):
        assert output.count(f"Model '{model}'") == 1, output
        assert re.search(rf"ERROR creating sql paimon_pk model \w+\.{model} ", output), output
    assert output.count("not_compiling: this model cannot compile") == 1, output
    assert re.search(r"OK created sql paimon_pk model \w+\.passing ", output), output
    assert "Completed with 3 errors" in output, output


def assert_failing_test_reported(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 1, result.stdout
    assert_dbt_lines_only(result)
    assert "FAIL 9 accepted_values_passing_twice__0" in result.stdout, result.stdout


# An error dbt-paimon does not anticipate: a table whose data files were overwritten with
# garbage fails the model reading it in a Spark task, with pyarrow's ArrowInvalid.
CORRUPTED_MODELS = {
    # partial-update: read through the Python source, whose task fails (a deduplicate table
    # is read by Spark's own reader: error_messages.unreadable_file_message)
    "corrupted.sql": ("{{ config(materialized='paimon_pk', primary_key='id', "
                      "merge_engine='partial-update') }}\n"
                      "select id, 'x' as v from range(5)"),
    "reads_corrupted.sql": ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
                            "select * from {{ ref('corrupted') }}"),
}


def corrupt_data_files(warehouse: str, schema: str, table: str) -> None:
    files = list((Path(warehouse) / f"{schema}.db" / table).glob("bucket-*/*.parquet"))
    assert files, f"{table} has no data file in {warehouse}"
    for path in files:
        path.write_bytes(b"not a parquet file")


def assert_unexpected_error_reported(text: str, model: str, log_file: str) -> None:
    """dbt's error for ``model`` (in ``text``, wrapped or not) names the exception's type, its
    message and ``log_file``, which holds the full trace (the Spark task's traceback too)."""
    error = re.search(rf"Model '{model}': unexpected error (.*?)\(please include it", text,
                      re.DOTALL)
    assert error and text.count("unexpected error") == 1, text
    message = " ".join(error.group(1).split())
    assert "ArrowInvalid: Parquet magic bytes not found" in message, message
    assert "SQLSTATE" not in message, message
    assert f"its full trace is in {log_file}" in message, message
    trace = Path(log_file).read_text().rsplit(f"model '{model}' failed", 1)[-1]
    assert "Traceback" in trace and "ArrowInvalid" in trace, trace[-5000:]
