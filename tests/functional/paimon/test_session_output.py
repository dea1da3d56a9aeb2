"""What a dbt command prints: dbt's lines only. Spark's and the JVM's output (start-up lines,
executors' ERROR logs of failures dbt-paimon reports itself, Python worker tracebacks, the
warm-up job cancelled at exit) goes to <spark_state_dir>/logs/spark.log."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

bad_sql_model = "select no_such_column from (select 1 as id) t"
good_sql_model = "select id, id * 2 as twice from range(1000)"


class TestSparkStaysQuietPaimon:
    @pytest.fixture(scope="class")
    def models(self):
        return {"fine.sql": good_sql_model, "broken.sql": bad_sql_model}

    def test_successful_run_prints_nothing_from_spark(self, project, capfd):
        capfd.readouterr()
        run_dbt(["run", "--select", "fine"])
        err = capfd.readouterr().err
        assert "WARN" not in err
        assert "[Stage" not in err

    def test_failed_query_is_reported_once_by_dbt(self, project, capfd):
        capfd.readouterr()
        results = run_dbt(["run", "--select", "broken"], expect_pass=False)
        message = results.results[0].message
        assert "UNRESOLVED_COLUMN" in message
        assert "'Project" not in message, "the query plan belongs in the log, not dbt's error"
        err = capfd.readouterr().err
        assert "SQLQueryContextLogger" not in err, (
            "PySpark's own error logger printed the failure (JSON with the Java stack trace) "
            "to stderr, besides dbt's error message")


# --------------------------------------------------------------------------- real dbt processes

DBT = os.path.join(os.path.dirname(sys.executable), "dbt")
# Nothing of Spark, the JVM, py4j or a Python worker may reach the terminal.
FORBIDDEN = ("ERROR Executor", "at org.apache", "Traceback", "@@dbt-paimon", "crashed",
             "WARNING: Using incubator", "Setting default log level", "sc.setLogLevel",
             "SQLSTATE: 38000", "py4j", "Unhandled error", "Exception in thread")
LOG4J_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (ERROR|WARN|INFO) ", re.MULTILINE)

MODELS = {
    # written by Spark tasks (a small run is written in-process by default): the failing task
    # is what Spark logged to the terminal
    "null_key.sql": ("{{ config(materialized='paimon_pk', primary_key='id', "
                     "write_path='distributed') }}\n"
                     "select cast(null as int) as id, 'x' as v union all select 1, 'y'"),
    "not_compiling.sql": ("{% if execute %}{{ exceptions.raise_compiler_error("
                          "'not_compiling: this model cannot compile') }}{% endif %}\n"
                          "select 1 as x"),
    "passing.sql": ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
                    "select id, id * 2 as twice from range(10)"),
    "schema.yml": ("version: 2\nmodels:\n  - name: passing\n    columns:\n      - name: twice\n"
                   "        tests:\n          - accepted_values:\n              arguments:\n"
                   "                values: [0]\n"),
}


@pytest.fixture(scope="module")
def dbt_project_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("console")
    (root / "models").mkdir()
    (root / "dbt_project.yml").write_text(
        "name: console\nversion: '1.0'\nprofile: console\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        "console:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        "      schema: console\n      threads: 1\n      warehouse: paimon_warehouse\n"
        "      spark_master: 'local[2]'\n      spark_conf:\n"
        "        spark.sql.shuffle.partitions: '2'\n        spark.driver.memory: '512m'\n")
    for name, text in MODELS.items():
        (root / "models" / name).write_text(text)
    return root


def dbt(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DBT, *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)


def assert_dbt_lines_only(result: subprocess.CompletedProcess) -> None:
    output = result.stdout
    for text in FORBIDDEN:
        assert text not in output, f"{text!r} reached the terminal:\n{output}"
    assert not LOG4J_LINE.search(output), f"a Spark log line reached the terminal:\n{output}"


def spark_log(project: Path) -> str:
    return (project / "paimon_warehouse" / ".spark" / "logs" / "spark.log").read_text()


def test_a_failing_run_prints_dbt_lines_only(dbt_project_dir):
    result = dbt(dbt_project_dir, "run")
    assert result.returncode == 1, result.stdout
    assert_dbt_lines_only(result)
    output = result.stdout
    # each error reaches the user once, as dbt's error for its model
    assert output.count("column 'id': NULL in a primary key") == 1, output
    assert output.count("Model 'null_key'") == 1, output
    assert output.count("not_compiling: this model cannot compile") == 1, output
    assert "OK created sql paimon_pk model console.passing" in output, output
    log = spark_log(dbt_project_dir)
    assert "WARNING: Using incubator modules" in log  # the JVM's start-up lines
    assert "ERROR Executor" in log and "NULL in a primary key" in log  # the task's failure


def test_a_failing_test_and_a_show_print_dbt_lines_only(dbt_project_dir):
    tested = dbt(dbt_project_dir, "test")
    assert tested.returncode == 1, tested.stdout
    assert_dbt_lines_only(tested)
    assert "FAIL 9 accepted_values_passing_twice__0" in tested.stdout, tested.stdout
    # a command that ends at once, while the background warm-up still runs
    shown = dbt(dbt_project_dir, "show", "--inline", "select 41 + 1 as answer")
    assert shown.returncode == 0, shown.stdout
    assert_dbt_lines_only(shown)
    assert "| answer |" in shown.stdout and "42" in shown.stdout
    log = spark_log(dbt_project_dir)
    assert log.count("dbt-paimon: Spark starts") == 3  # one section per process


def test_debug_names_the_log_file(dbt_project_dir):
    shown = dbt(dbt_project_dir, "--debug", "show", "--inline", "select 1 as one")
    assert shown.returncode == 0, shown.stdout
    log = dbt_project_dir / "paimon_warehouse" / ".spark" / "logs" / "spark.log"
    assert f"Spark's own output (and pyspark's log) goes to {log}" in shown.stdout
