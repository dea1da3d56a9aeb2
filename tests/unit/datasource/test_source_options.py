"""The paimon data source's options name a table with its catalog options intact.

Spark lower-cases the option names of a data source (``CaseInsensitiveDict``), while pypaimon's
FileIO options are case-sensitive (``fs.s3.accessKeyId``): they travel as one JSON value."""

from dbt.adapters.paimon.datasource.source import PaimonDataSource, TableRef

CATALOG_OPTIONS = {"fs.s3.accessKeyId": "AKIA-Mixed-Case", "fs.s3.endpoint": "http://h:9000",
                   "fs.s3.path-style-access": "true"}


def as_spark_passes_them(options: dict) -> dict:
    return {key.lower(): value for key, value in options.items()}


def test_catalog_options_survive_spark_lower_casing_option_names():
    location = TableRef("s3://lake/wh", "db", "t", CATALOG_OPTIONS)
    source = PaimonDataSource(as_spark_passes_them(location.source_options()))
    assert source._location() == location


def test_a_source_without_catalog_options_has_none():
    source = PaimonDataSource({"warehouse": "/w", "table": "db.t"})
    assert source._location() == TableRef("/w", "db", "t", {})
