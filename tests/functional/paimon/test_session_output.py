"""What a dbt command prints: dbt's lines only. Spark's and the JVM's output (start-up lines,
executors' ERROR logs of failures dbt-paimon reports itself, Python worker tracebacks, the
warm-up job cancelled at exit) goes to <spark_state_dir>/logs/spark.log."""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.console_output import (CORRUPTED_MODELS, assert_dbt_lines_only,
                                             assert_failing_run_reported,
                                             assert_failing_test_reported,
                                             assert_unexpected_error_reported,
                                             corrupt_data_files, run_dbt_executable,
                                             run_dbt_process, write_project)

bad_sql_model = "select no_such_column from (select 1 as id) t"
good_sql_model = "select id, id * 2 as twice from range(1000)"


class TestSparkStaysQuietPaimon:
    @pytest.fixture(scope="class")
    def models(self):
        return {"fine.sql": good_sql_model, "broken.sql": bad_sql_model, **CORRUPTED_MODELS,
                "damaged.sql": ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
                                "select id, 'x' as v from range(5)"),
                "reads_damaged.sql": ("{{ config(materialized='paimon_pk', primary_key='id') }}"
                                      "\nselect * from {{ ref('damaged') }}")}

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

    def test_an_unexpected_error_names_its_type_message_and_trace(self, project, capfd):
        from dbt.adapters.paimon.environments import spark_logs

        run_dbt(["run", "--select", "corrupted"])
        corrupt_data_files(project.adapter.config.credentials.warehouse, project.test_schema,
                           "corrupted")
        capfd.readouterr()
        results = run_dbt(["run", "--select", "reads_corrupted"], expect_pass=False)
        assert_unexpected_error_reported(results.results[0].message, "reads_corrupted",
                                         spark_logs.current_log_path())
        assert "Traceback" not in "".join(capfd.readouterr())

    def test_a_damaged_file_under_spark_own_reader_names_file_table_and_reason(self, project):
        """A deduplicate table is read by Spark's own Parquet reader (docs/reads.md): its
        failure on a damaged file is no unexpected error but says which file of which table,
        why, and what to do."""
        run_dbt(["run", "--select", "damaged"])
        corrupt_data_files(project.adapter.config.credentials.warehouse, project.test_schema,
                           "damaged")
        results = run_dbt(["run", "--select", "reads_damaged"], expect_pass=False)
        message = " ".join(results.results[0].message.split())
        assert f"of Paimon table {project.test_schema}.damaged cannot be read" in message, message
        assert "is not a Parquet file" in message and "unexpected error" not in message


# --------------------------------------------------------------------------- real dbt processes

@pytest.fixture(scope="module")
def dbt_project_dir(tmp_path_factory) -> Path:
    return write_project(tmp_path_factory.mktemp("console"), "console",
                         "warehouse: paimon_warehouse\nspark_master: 'local[2]'\nspark_conf:\n"
                         "  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")


USERS_WARM_UP = {"DBT_PAIMON_WARM_UP_WORKERS": "on"}


def dbt(project: Path, *args: str, executable: bool = False):
    """A fresh dbt process as a user's: with the background warm-up the suite turns off, whose
    job a short command cancels at its exit. ``executable``: the `dbt` executable itself, whose
    new interpreter's imports could print something too; one command of this module is run so,
    the others forked from the test process's dbt server (tests/dbt_fork_server.py), 3.5 CPU-s
    less each."""
    run = run_dbt_executable if executable else run_dbt_process
    return run(project, *args, env=USERS_WARM_UP)


def spark_log(project: Path) -> str:
    return (project / "paimon_warehouse" / ".spark" / "logs" / "spark.log").read_text()


@pytest.fixture(scope="module")
def failing_run(dbt_project_dir):
    """`dbt run` of the project (the other tests read the tables it builds)."""
    return dbt(dbt_project_dir, "run")


def test_a_failing_run_prints_dbt_lines_only(dbt_project_dir, failing_run):
    result = failing_run
    # each error reaches the user once, as dbt's error for its model
    assert_failing_run_reported(result)
    log = spark_log(dbt_project_dir)
    assert "WARNING: Using incubator modules" in log  # the JVM's start-up lines
    assert "ERROR Executor" in log and "NULL in a primary key" in log  # the task's failure


def test_a_failing_test_and_a_show_print_dbt_lines_only(dbt_project_dir, failing_run):
    starts = spark_log(dbt_project_dir).count("dbt-paimon: Spark starts")
    assert_failing_test_reported(dbt(dbt_project_dir, "test"))
    # a command that ends at once, while the background warm-up still runs
    shown = dbt(dbt_project_dir, "show", "--inline", "select 41 + 1 as answer", executable=True)
    assert shown.returncode == 0, shown.stdout
    assert_dbt_lines_only(shown)
    assert "| answer |" in shown.stdout and "42" in shown.stdout
    log = spark_log(dbt_project_dir)
    assert log.count("dbt-paimon: Spark starts") == starts + 2  # one section per process


def test_debug_names_the_log_file(dbt_project_dir):
    shown = dbt(dbt_project_dir, "--debug", "show", "--inline", "select 1 as one")
    assert shown.returncode == 0, shown.stdout
    log = dbt_project_dir / "paimon_warehouse" / ".spark" / "logs" / "spark.log"
    assert f"Spark's own output (and pyspark's log) goes to {log}" in shown.stdout
