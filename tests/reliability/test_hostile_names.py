"""Hostile names and malformed configs, without Spark: every name either stays one folder inside
the warehouse or is refused with a clear error; names reaching Spark SQL are plain identifiers
or quoted; bad config values are reported (model, key, value) before anything is written.
The same rules through dbt: test_hostile_names_dbt.py."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest
from dbt_common.exceptions import CompilationError
from hypothesis import given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.config.model_config import table_definition
from dbt.adapters.paimon.datasource.registry import check_name
from dbt.adapters.paimon.datasource.spark_types import quote_identifier
from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.impl import _checked_name
from dbt.adapters.paimon.runtime import PaimonConfigError

HOSTILE = ["..", ".", "", "../evil", "a/b", "a\\b", "/abs", "a.b", "x'; drop table y; --",
           'q"uote', "back`tick", "sp ace", "semi;colon", "Upper", "1starts_with_digit",
           "nul\0byte", "x/../../y", "ünïcode", "tab\tname", "new\nline", "$snapshots"]
SCHEMA = pa.schema([("id", pa.int64())])


@pytest.mark.parametrize("name", HOSTILE)
def test_names_reaching_spark_sql_are_plain_identifiers_or_refused(name):
    with pytest.raises(ValueError, match="not supported"):
        check_name("table", name)
    with pytest.raises(CompilationError) as raised:
        _checked_name("table", name, "m")
    assert "Model or schema 'm'" in str(raised.value) and repr(name) in str(raised.value)


@pytest.mark.parametrize("name", ["orders", "_staging", "t_2024", "a" * 200])
def test_plain_names_pass(name):
    assert check_name("table", name) == name
    assert _checked_name("schema", name, "m") == name


@settings(max_examples=80, deadline=None)
@given(database=st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)),
       table=st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)))
def test_no_database_or_table_name_leaves_its_warehouse_folder(tmp_path_factory, database,
                                                               table):
    root = tmp_path_factory.mktemp("names")
    wh = root / "warehouse"
    wh.mkdir()
    try:
        created = warehouse.create_table(str(wh), database, table, SCHEMA, primary_keys=["id"],
                                         options={"bucket": "1"})
    except ValueError as exc:
        assert "is not allowed" in str(exc) or "identifier" in str(exc).lower(), exc
        assert not any(p != wh for p in root.iterdir()), "refused but wrote outside"
        return
    # accepted: exactly <warehouse>/<database>.db/<table>, nothing written beside it
    path = os.path.normpath(created.table_path.replace("file://", "").replace("file:", ""))
    assert path == os.path.join(str(wh), f"{database}.db", table)
    assert [p.name for p in root.iterdir()] == ["warehouse"]
    assert sorted(p.name for p in wh.iterdir()) == [f"{database}.db"]


def test_spark_quoting_escapes_backticks():
    assert quote_identifier("a`b") == "`a``b`"
    assert quote_identifier("x'; drop table y; --") == "`x'; drop table y; --`"


COLUMNS = [("id", "BIGINT"), ("dt", "STRING"), ("v", "DOUBLE"), ("weird.col", "INT")]
BAD_CONFIGS = [
    ({"primary_key": "id; drop table x"}, "primary_key", "id; drop table x"),
    ({"primary_key": "id", "partition_by": "../dt"}, "partition_by", "../dt"),
    ({"primary_key": "id", "sequence_field": "`v`"}, "sequence.field", "`v`"),
    ({"primary_key": "id", "merge_engine": "aggregation",
      "aggregations": {"v'; --": "sum"}}, "aggregate-function", "v'; --"),
    ({"primary_key": "id", "buckets": "four"}, "buckets", "four"),
    ({"primary_key": "id", "buckets": 0}, "bucket", "0"),
    ({"primary_key": "id", "merge_engine": "drop table"}, "merge", "drop table"),
    ({"primary_key": "id", "changelog_producer": "'; --"}, "changelog", "'; --"),
    ({"primary_key": "id", "table_options": {"bucket'; --": "2"}}, "bucket'; --", ""),
    ({"primary_key": "id", "table_options": "bucket=2"}, "table_options", "bucket=2"),
    ({"primary_key": "id", "table_options": {"bucket": "2"}, "buckets": 2}, "bucket", ""),
    ({"primary_key": "id", "sequence_groups": ["v"]}, "sequence_groups", "['v']"),
    ({"primary_key": "id", "merge_engine": "partial-update",
      "sequence_groups": {"../x": ["v"]}}, "sequence", "../x"),
]


@pytest.mark.parametrize("config,key,value", BAD_CONFIGS)
def test_malformed_configs_are_refused_naming_model_key_and_value(config, key, value):
    with pytest.raises(PaimonConfigError) as raised:
        table_definition("hostile_model", "paimon_pk", config, COLUMNS)
    message = str(raised.value)
    assert "hostile_model" in message and key in message and value in message, message


def test_odd_column_names_are_valid_key_columns():
    definition = table_definition("m", "paimon_pk", {"primary_key": ["id", "weird.col"]},
                                  COLUMNS)
    assert list(definition.primary_keys) == ["id", "weird.col"]
