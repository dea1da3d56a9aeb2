"""What Spark prints while dbt runs: dbt owns the console, Spark stays quiet."""

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
        assert "UNRESOLVED_COLUMN" in results.results[0].message
        err = capfd.readouterr().err
        assert "SQLQueryContextLogger" not in err, (
            "PySpark's own error logger printed the failure (JSON with the Java stack trace) "
            "to stderr, besides dbt's error message")
