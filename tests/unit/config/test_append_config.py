"""paimon_append config: row tracking only unbucketed, merge strategy needs unique_key and row
tracking, unique_key is a merge key (never a primary key) on append tables."""

import pytest

from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = [("id", "INT"), ("data", "STRING"), ("dt", "STRING")]


def define(config):
    return table_definition("items", "paimon_append", config, COLUMNS)


def error_of(config) -> str:
    with pytest.raises(PaimonConfigError) as info:
        define(config)
    return str(info.value)


def test_row_tracking_and_merge_keys():
    d = define({"row_tracking": True, "incremental_strategy": "merge", "unique_key": "id"})
    assert d.options["row-tracking.enabled"] == "true"
    assert d.merge_keys == ("id",) and d.primary_keys == ()
    assert define({"buckets": 4, "bucket_key": "id"}).options == {"bucket": "4", "bucket-key": "id"}


@pytest.mark.parametrize("config, expected", [
    ({"row_tracking": True, "buckets": 2}, "needs an unbucketed append table"),
    ({"row_tracking": True, "bucket_key": "id"}, "remove `buckets` and `bucket_key`"),
    ({"incremental_strategy": "merge", "unique_key": "id"}, "needs row_tracking=true"),
    ({"incremental_strategy": "merge", "row_tracking": True}, "needs config `unique_key`"),
    ({"unique_key": "id"}, "is the key of incremental_strategy='merge'"),
    ({"incremental_strategy": "merge", "row_tracking": True, "unique_key": "nope"},
     "`unique_key` names ['nope']"),
    ({"primary_key": "id"}, "without primary key"),
])
def test_errors_name_the_config_and_fix(config, expected):
    message = error_of(config)
    assert "Model 'items'" in message and expected in message
