"""Python models run in the process's own Spark session (dbt-spark only submits to Databricks,
so it skips these bases for `spark_session`) and build Paimon tables (file_format 'paimon',
the default; tests/functional/paimon/test_python_models.py has the Paimon materializations)."""

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
    # the base's `merge` strategy, on the Paimon table the Python model builds
    pass


class TestPythonMetaGetPaimon(BasePythonMetaGetTests):
    pass


class TestPySparkPaimon(BasePySparkTests):
    def test_different_dataframes(self, project):
        # pandas, pyspark and pyspark.pandas frames; koalas is not installed (it became
        # pyspark.pandas in Spark 3.2), as in dbt-spark's own override.
        results = run_dbt(["run", "--exclude", "koalas_df"])
        assert len(results) == 3
