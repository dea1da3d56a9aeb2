"""dbt-tests-adapter's constraint suites on Paimon tables (file_format='paimon', the default)."""

import pytest

from dbt.tests.adapter.constraints.fixtures import (
    constrained_model_schema_yml,
    foreign_key_model_sql,
    model_fk_constraint_schema_yml,
    model_schema_yml,
    my_model_incremental_wrong_name_sql,
    my_model_incremental_wrong_order_depends_on_fk_sql,
    my_model_incremental_wrong_order_sql,
    my_model_wrong_name_sql,
    my_model_wrong_order_depends_on_fk_sql,
    my_model_wrong_order_sql,
)
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
)

# Spark has no type named 'text' (as dbt-spark's fixtures)
constraints_yml = model_schema_yml.replace("text", "string")


# sql_column_value, schema_data_type, error_data_type
SPARK_DATA_TYPES = [
    ["1", "int", "int"],
    ['"1"', "string", "string"],
    ["true", "boolean", "boolean"],
    ['array("1","2","3")', "array<string>", "array<string>"],
    ["array(1,2,3)", "array<int>", "array<int>"],
    ["cast(6.45 as decimal(4,2))", "decimal(4,2)", "decimal(4,2)"],
    ["cast('2019-01-01' as date)", "date", "date"],
    ["cast('2019-01-01' as timestamp)", "timestamp", "timestamp"],
]


class SparkTypes:
    """The query's types as the mismatch table names them: Spark's type names (session mode
    reads them from the query's schema, not from an ODBC type code as dbt-spark's profiles)."""

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self):
        return SPARK_DATA_TYPES


class TestTableConstraintsColumnsEqualPaimon(SparkTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": my_model_wrong_order_sql,
            "my_model_wrong_name.sql": my_model_wrong_name_sql,
            "constraints_schema.yml": constraints_yml,
        }


class TestIncrementalConstraintsColumnsEqualPaimon(SparkTypes,
                                                   BaseIncrementalConstraintsColumnsEqual):
    # The type check is the one contract check of every Paimon materialization (contracts.sql),
    # run through all of SparkTypes by the table suite: here one scalar, one decimal and one
    # nested type show the incremental materialization runs it (each type is a dbt run).
    @pytest.fixture
    def data_types(self):
        return [SPARK_DATA_TYPES[0], SPARK_DATA_TYPES[4], SPARK_DATA_TYPES[5]]

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": constraints_yml,
        }


# The run file of a Paimon model (target/run) holds the table as Paimon's Spark SQL would create
# it, then the model's query: a Paimon table is created through Paimon's catalog, not by a
# `create table` statement with constraint clauses. So the enforced constraints show as the
# table's own definition: `id` NOT NULL and the table's primary key (the primary_key
# constraint); check, unique and foreign_key constraints are not enforced by Paimon (dbt warns)
# and appear nowhere in it.
_expected_ddl = """
create table <model_identifier> (
    `id` int not null,
    `color` string,
    `date_day` string
) using paimon
tblproperties ('primary-key' = 'id');
-- the model's rows, written as one Paimon commit:
select
  id,
  color,
  date_day
from
(
    -- depends_on: <foreign_key_model_identifier>
    select
    'blue' as color,
    1 as id,
    '2019-01-01' as date_day ) as model_subq
"""
fk_constraints_yml = model_fk_constraint_schema_yml.replace("text", "string")
model_constraints_yml = constrained_model_schema_yml.replace("text", "string")


class TestTableConstraintsDdlEnforcementPaimon(BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": foreign_key_model_sql,
            "constraints_schema.yml": fk_constraints_yml,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return _expected_ddl


class TestModelConstraintsRuntimeEnforcementPaimon(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": foreign_key_model_sql,
            "constraints_schema.yml": model_constraints_yml,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return _expected_ddl
