"""dbt-tests-adapter suites of dbt's general behaviour, run on Paimon tables (file_format='paimon',
the default): sample mode (`dbt run --sample`), aliases, store_failures tables, model hooks."""

import pytest

from dbt.tests.adapter.aliases import fixtures as alias_fixtures
from dbt.tests.adapter.aliases.test_aliases import BaseAliases
from dbt.tests.adapter.hooks import test_model_hooks as hooks
from dbt.tests.adapter.hooks.test_model_hooks import (
    BasePrePostModelHooks,
    BasePrePostModelHooksInConfig,
)
from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    TEST_AUDIT_SCHEMA_SUFFIX,
    StoreTestFailuresBase,
)

from tests.functional.paimon_tables import open_table


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


# The hook suites with Spark's SQL: the hooks table is created by Spark (the suites' file is
# Postgres DDL), its columns are read with Spark's quoting, Postgres' `vacuum` outside the
# transaction becomes Spark's `refresh table`, and the models are Paimon tables
# (materialized='table'; the suites' default would be a Spark view).
_SPARK_HOOKS_TABLE = """create table {schema}.on_model_hook (
    test_state string, target_dbname string, target_host string, target_name string,
    target_schema string, target_type string, target_user string, target_pass string,
    target_threads int, run_started_at string, invocation_id string, thread_id string
) using parquet"""
_REFRESH = {"sql": "refresh table {{ this.schema }}.on_model_hook", "transaction": False}


class SparkHooks:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        project.run_sql(_SPARK_HOOKS_TABLE)

    def get_ctx_vars(self, state, count, project):
        fields = ["test_state", "target_dbname", "target_host", "target_name", "target_schema",
                  "target_threads", "target_type", "target_user", "target_pass",
                  "run_started_at", "invocation_id", "thread_id"]
        rows = project.run_sql(f"select {', '.join(fields)} from {project.test_schema}."
                               f"on_model_hook where test_state = '{state}'", fetch="all")
        assert len(rows) == count, f"{len(rows)} {state} rows in the hooks table"
        return [dict(zip(fields, row)) for row in rows]

    def check_hooks(self, state, project, host, count=1):
        # the target's values in a paimon profile (the suites assert their Postgres profile's:
        # dbname 'dbt', user 'root', 4 threads, which a paimon target does not have)
        for ctx in self.get_ctx_vars(state, count=count, project=project):
            assert ctx["test_state"] == state
            assert ctx["target_name"] == "default"
            assert ctx["target_schema"] == project.test_schema
            assert ctx["target_type"] == "paimon"
            assert ctx["target_threads"] == 1
            assert ctx["run_started_at"] and ctx["invocation_id"]
            assert ctx["thread_id"].startswith("Thread-")


class TestPrePostModelHooksPaimon(SparkHooks, BasePrePostModelHooks):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"test": {
            "+materialized": "table",
            "pre-hook": [hooks.MODEL_PRE_HOOK, _REFRESH],
            "post-hook": [_REFRESH, hooks.MODEL_POST_HOOK],
        }}}

    def test_pre_and_post_run_hooks(self, project, dbt_profile_target):
        super().test_pre_and_post_run_hooks(project, dbt_profile_target)
        assert open_table(project, "hooks").primary_keys == []  # the hooked model is Paimon's


class TestPrePostModelHooksInConfigPaimon(SparkHooks, BasePrePostModelHooksInConfig):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"macro-paths": ["macros"], "models": {"+materialized": "table"}}
