"""dbt's table / incremental / seed with file_format='paimon' -> the Paimon table they build,
and the config errors raised before anything is written (no Spark)."""

import pytest

from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = [("state", "STRING"), ("city", "STRING"), ("visits", "INT"), ("ts", "TIMESTAMP(6)")]


def define(config, materialization="incremental"):
    return table_definition("visits", materialization, config, COLUMNS)


def error_of(config, materialization="incremental") -> str:
    with pytest.raises(PaimonConfigError) as info:
        define(config, materialization)
    return str(info.value)


def test_merge_makes_unique_key_the_primary_key():
    d = define({"unique_key": ["state", "city", "state"]})  # duplicates as dbt allows them
    assert d.primary_keys == ("state", "city") and d.materialization == "incremental"
    assert define({"incremental_strategy": "merge", "unique_key": "state"}).primary_keys == \
        ("state",)


def test_append_table_without_key_and_for_delete_insert():
    assert define({}).primary_keys == ()
    assert define({"unique_key": ""}).primary_keys == ()
    assert define({"incremental_strategy": "delete+insert", "unique_key": "state"}
                  ).primary_keys == ()
    assert define({"primary_key": "state"}, "table").primary_keys == ("state",)
    assert define({"partition_by": "state"}, "seed").partition_keys == ("state",)


def test_errors_name_config_and_fix():
    assert "needs config `unique_key`" in error_of({"incremental_strategy": "merge"})
    assert "needs config `event_time`" in error_of(
        {"incremental_strategy": "microbatch", "batch_size": "day"})
    assert "'nope'" in error_of({"incremental_strategy": "microbatch", "event_time": "nope"})
    assert "Expected one of" in error_of({"incremental_strategy": "upsert"})
    assert "both set" in error_of({"unique_key": "state", "merge_update_columns": ["visits"],
                                   "merge_exclude_columns": ["city"]})
    assert "thisisnotacolumn" in error_of({"unique_key": ["state", "thisisnotacolumn"]})
    assert "thisisnotacolumn" in error_of({"incremental_strategy": "delete+insert",
                                           "unique_key": "thisisnotacolumn"})
    assert "differ" in error_of({"unique_key": "state", "primary_key": "city"})
    assert "`target`" in error_of({"target": "wide"}, "table")
    # table config rules of paimon_append / paimon_pk still apply
    assert "only applies to primary-key tables" in error_of({"merge_engine": "first-row"},
                                                             "table")
