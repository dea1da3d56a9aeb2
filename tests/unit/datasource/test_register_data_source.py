"""register_data_source: Spark's check-then-register race between two clients of one Spark
Connect session (DataSourceRegistration.checkDataSourceExists, then
DataSourceManager.registerDataSource) refuses the loser with DATA_SOURCE_ALREADY_EXISTS; the
name is then a Python source, which may be replaced, so one retry registers it."""

import pytest

from dbt.adapters.paimon.datasource.spark_env import register_data_source


class _Registration:
    def __init__(self, failures):
        self.failures = list(failures)
        self.registered = []

    def register(self, source):
        if self.failures:
            raise self.failures.pop(0)
        self.registered.append(source)


class _Spark:
    def __init__(self, *failures):
        self.dataSource = _Registration(failures)


class _Source:
    pass


RACE = RuntimeError("[DATA_SOURCE_ALREADY_EXISTS] Data source 'paimon' already exists. "
                    "Please choose a different name for the new data source. SQLSTATE: 42710")


def test_the_loser_of_a_concurrent_registration_registers_on_its_retry():
    spark = _Spark(RACE)
    register_data_source(spark, _Source)
    assert spark.dataSource.registered == [_Source]


def test_a_name_held_by_a_jvm_source_keeps_spark_s_error():
    spark = _Spark(RACE, RACE)
    with pytest.raises(RuntimeError, match="DATA_SOURCE_ALREADY_EXISTS"):
        register_data_source(spark, _Source)
    assert spark.dataSource.registered == []


def test_other_errors_are_not_retried():
    spark = _Spark(ValueError("PYTHON_DATA_SOURCE_ERROR"))
    with pytest.raises(ValueError):
        register_data_source(spark, _Source)
    assert spark.dataSource.failures == [] and spark.dataSource.registered == []
