"""Python models run in the process's own Spark session (dbt-spark only submits to Databricks,
so it skips these bases for `spark_session`)."""

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
)
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt


class TestPythonModelPaimon(BasePythonModelTests):
    pass


class TestPythonIncrementalPaimon(BasePythonIncrementalTests):
    # The base asks for `merge`, which dbt-spark refuses for parquet tables; its model filters
    # new ids itself, so the default (append) strategy must give the same counts.
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {}


class TestPythonMetaGetPaimon(BasePythonMetaGetTests):
    pass


class TestPySparkPaimon(BasePySparkTests):
    def test_different_dataframes(self, project):
        # pandas, pyspark and pyspark.pandas frames; koalas is not installed (it became
        # pyspark.pandas in Spark 3.2), as in dbt-spark's own override.
        results = run_dbt(["run", "--exclude", "koalas_df"])
        assert len(results) == 3
