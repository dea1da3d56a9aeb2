"""The node config keys dbt-paimon takes beyond dbt-spark's (adapter_config.py) reach dbt as the
adapter's config: each is a field of PaimonConfig, unset by default."""

import dataclasses

from dbt.adapters.spark.impl import SparkConfig

from dbt.adapters.paimon.adapter_config import PaimonConfig
from dbt.adapters.paimon.impl import PaimonAdapter


def test_the_adapter_takes_paimon_config():
    assert PaimonAdapter.AdapterSpecificConfigs is PaimonConfig
    assert issubclass(PaimonConfig, SparkConfig)


def test_paimon_keys_are_unset_by_default():
    spark_keys = {f.name for f in dataclasses.fields(SparkConfig)}
    ours = {f.name: f.default for f in dataclasses.fields(PaimonConfig)
            if f.name not in spark_keys}
    assert {"primary_key", "merge_engine", "paimon_branch", "catalog_name", "update_key",
            "write_path"} <= set(ours)
    assert set(ours.values()) == {None}
