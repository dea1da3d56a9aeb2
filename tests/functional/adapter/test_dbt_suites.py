"""dbt-tests-adapter suites of dbt's general behaviour, run on Paimon tables (file_format='paimon',
the default): sample mode (`dbt run --sample`), aliases, store_failures tables."""

import pytest

from dbt.tests.adapter.aliases import fixtures as alias_fixtures
from dbt.tests.adapter.aliases.test_aliases import BaseAliases
from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    TEST_AUDIT_SCHEMA_SUFFIX,
    StoreTestFailuresBase,
)


class TestSampleModePaimon(BaseSampleModeTest):
    pass


class TestAliasesPaimon(BaseAliases):
    @pytest.fixture(scope="class")
    def macros(self):
        # the suite's string_literal casts with Postgres' `::text`; Spark names the type string
        spark_literal = ("{% macro paimon__string_literal(s) %}cast('{{ s }}' as string)"
                         "{% endmacro %}")
        return {"cast.sql": alias_fixtures.MACROS__CAST_SQL + spark_literal,
                "expect_value.sql": alias_fixtures.MACROS__EXPECT_VALUE_SQL}


class TestStoreTestFailuresPaimon(StoreTestFailuresBase):
    @pytest.fixture(scope="function", autouse=True)
    def teardown_method(self, project):
        yield
        with project.adapter.connection_named("__test"):
            relation = project.adapter.Relation.create(
                database=project.database,
                schema=f"{project.test_schema}_{TEST_AUDIT_SCHEMA_SUFFIX}",
            )
            project.adapter.drop_schema(relation)

    def test_store_and_assert(self, project):
        self.run_tests_store_one_failure(project)
        self.run_tests_store_failures_and_assert(project)
