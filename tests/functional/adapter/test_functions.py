"""dbt's functions (`functions/`, dbt-core 1.11+) on Spark: dbt-tests-adapter's UDF suites, and
a Paimon model built with a function. SQL functions are Spark SQL functions kept in the
metastore (macros/materializations/function.sql); Python and aggregate functions, which Spark
cannot keep, fail with a message saying so."""
import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.events.types import RunResultError
from dbt.tests.adapter.functions import files
from dbt.tests.adapter.functions.test_udafs import UDAFBase
from dbt.tests.adapter.functions.test_udfs import (DeterministicUDF, PythonUDFNotSupported,
                                                   SqlUDFDefaultArgSupport, StableUDF,
                                                   UDFsBasic)
from dbt.tests.util import run_dbt
from dbt_common.events.event_catcher import EventCatcher


class TestUDFsPaimon(UDFsBasic):
    def check_function_volatility(self, sql: str):
        assert "DETERMINISTIC" not in sql  # none given: Spark's default (deterministic)


class TestDeterministicUDFPaimon(DeterministicUDF):
    def check_function_volatility(self, sql: str):
        assert "DETERMINISTIC" in sql and "NOT DETERMINISTIC" not in sql


class TestStableUDFPaimon(StableUDF):
    def check_function_volatility(self, sql: str):
        # Spark has no STABLE: NOT DETERMINISTIC, the safe one (function.sql says why)
        assert "NOT DETERMINISTIC" in sql


class TestSqlUDFDefaultArgPaimon(SqlUDFDefaultArgSupport):
    expect_default_arg_support = True


def _build_error(expected: str):
    caught = EventCatcher(RunResultError)
    results = run_dbt(["build"], expect_pass=False, callbacks=[caught.catch])
    assert [r.status for r in results.results if r.node.resource_type == "function"] == \
        [RunStatus.Error]
    assert len(caught.caught_events) == 1 and expected in caught.caught_events[0].data.msg, \
        caught.caught_events[0].data.msg


class TestPythonUDFPaimon(PythonUDFNotSupported):
    def test_udfs(self, project, sql_event_catcher):
        _build_error("Spark keeps Python functions only for the session that registers them")
        assert sql_event_catcher.caught_events == []  # nothing was sent to Spark


class TestPythonUDAFPaimon(UDAFBase):
    @pytest.fixture(scope="class")
    def functions(self):
        return {"sum_squared.py": files.SUM_SQUARED_UDAF_PYTHON,
                "sum_squared.yml": files.SUM_SQUARED_UDAF_PYTHON_YML}

    def test_udaf(self, project, sql_event_catcher):
        _build_error("Spark SQL cannot define aggregate functions")


PAIMON_MODEL = """{{ config(materialized='paimon_pk', primary_key='id') }}
select id, {{ function('price_for_xlarge') }}(cast(id as float)) as xlarge from range(3)"""


class TestFunctionInAPaimonModel:
    """A Paimon model calls a project function: dbt builds the function first, and the function
    keeps its description as its comment."""

    @pytest.fixture(scope="class")
    def functions(self):
        return {"price_for_xlarge.sql": files.MY_UDF_SQL,
                "price_for_xlarge.yml": files.MY_UDF_YML}

    @pytest.fixture(scope="class")
    def models(self):
        return {"priced.sql": PAIMON_MODEL}

    def test_the_model_reads_the_function(self, project):
        results = run_dbt(["build"])
        assert [r.node.resource_type for r in results.results] == ["function", "model"]
        rows = project.run_sql(f"select id, xlarge from {project.test_schema}.priced order by id",
                               fetch="all")
        assert [tuple(r) for r in rows] == [(0, 0.0), (1, 2.0), (2, 4.0)]
        described = project.run_sql(
            f"describe function extended {project.test_schema}.price_for_xlarge", fetch="all")
        text = "\n".join(r[0] for r in described)
        assert "Calculate the price for the xlarge version of a standard item" in text
        assert "price FLOAT" in text.replace("price float", "price FLOAT"), text
