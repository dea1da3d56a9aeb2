"""A dbt-spark / dbt-databricks (Delta) project's configs on dbt's materializations with
file_format='paimon': mapped to their Paimon meaning, or refused naming the config and the fix."""

import pytest

from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.config.spark_configs import REFUSED
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = [("id", "BIGINT"), ("dt", "STRING"), ("amount", "INT")]


def define(config, materialization="incremental"):
    return table_definition("orders", materialization, config, COLUMNS)


def error_of(config, materialization="incremental") -> str:
    with pytest.raises(PaimonConfigError) as info:
        define(config, materialization)
    return str(info.value)


def test_a_delta_merge_model_builds_its_paimon_table():
    d = define({"incremental_strategy": "merge", "unique_key": "id", "partition_by": ["dt"],
                "file_format": "paimon", "on_schema_change": "append_new_columns",
                "tblproperties": {"snapshot.num-retained.max": 10}, "persist_docs": {},
                "skip_matched_step": False, "zorder": None, "liquid_clustered_by": []})
    assert d.primary_keys == ("id",)   # a cross-partition key (dynamic buckets), as in Paimon
    assert d.partition_keys == ("dt",)
    assert d.options["snapshot.num-retained.max"] == "10"


def test_clustered_by_and_buckets_are_the_bucket_key():
    d = define({"clustered_by": ["id"], "buckets": 4}, "table")
    assert d.options["bucket-key"] == "id" and d.options["bucket"] == "4"
    assert "given two ways" in error_of({"clustered_by": "id", "bucket_key": "id",
                                         "buckets": 2}, "table")


def test_tblproperties_must_be_paimon_options():
    message = error_of({"tblproperties": {"delta.autoOptimize.optimizeWrite": "true",
                                          "file.compression": "zstd"}}, "table")
    assert "Model 'orders'" in message and "`tblproperties`" in message
    assert "delta.autoOptimize.optimizeWrite" in message and "file.compression" not in message
    assert "given two ways" in error_of({"tblproperties": {"file.compression": "zstd"},
                                         "table_options": {"file.compression": "lz4"}}, "table")


@pytest.mark.parametrize("key, value", [
    ("liquid_clustered_by", ["id"]), ("auto_liquid_cluster", True), ("zorder", "id"),
    ("location_root", "/mnt/lake"), ("source_alias", "s"), ("target_alias", "t"),
    ("options", {"compression": "gzip"}),
])
def test_delta_only_configs_are_refused_with_the_fix(key, value):
    message = error_of({key: value, "unique_key": "id"})
    assert f"Model 'orders'" in message and f"config `{key}`" in message
    assert REFUSED[key] in message


def test_replace_where_names_the_paimon_strategies():
    message = error_of({"incremental_strategy": "replace_where"})
    assert "replace_where" in message and "insert_overwrite" in message
    assert "microbatch" in message


def test_merge_with_schema_evolution_is_a_merges_config():
    define({"incremental_strategy": "merge", "unique_key": "id",
            "merge_with_schema_evolution": True})
    define({"incremental_strategy": "append", "merge_with_schema_evolution": False})
    for config, materialization in [
            ({"incremental_strategy": "append", "merge_with_schema_evolution": True},
             "incremental"),
            ({"unique_key": "id", "merge_with_schema_evolution": True}, "table")]:
        message = error_of(config, materialization)
        assert "`merge_with_schema_evolution` applies to incremental models with " \
               "incremental_strategy='merge'" in message
    assert "true or false, got 'yes'" in error_of(
        {"incremental_strategy": "merge", "unique_key": "id",
         "merge_with_schema_evolution": "yes"})
