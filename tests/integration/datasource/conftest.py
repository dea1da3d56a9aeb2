"""Fixtures of the tests that read tables another Paimon writer (pypaimon 2.1) made: a module's
own warehouse, a pypaimon catalog on it with database `db`, and the registry that exposes its
tables in the test session's Spark (dropped with their entries at the module's end)."""
import pytest
from pypaimon import CatalogFactory

from dbt.adapters.paimon.datasource.registry import HIDDEN_DATABASE_SUFFIX, PaimonTableRegistry


@pytest.fixture(scope="module")
def warehouse(request, tmp_path_factory):
    return str(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]) / "warehouse")


@pytest.fixture(scope="module")
def catalog(warehouse):
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db", True)
    return catalog


@pytest.fixture(scope="module")
def registry(spark, warehouse):
    registry = PaimonTableRegistry(spark, warehouse, {})
    yield registry
    spark.sql("drop database if exists db cascade")
    spark.sql(f"drop database if exists db{HIDDEN_DATABASE_SUFFIX} cascade")
