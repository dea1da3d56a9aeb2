"""on_schema_change='ignore' with a changed column type: written cast to the stored type when
that is exact, otherwise an error naming the model, column and both types before any write."""

import pytest

from dbt.adapters.paimon.materialize.schema_changes import (ChangeRequest, StoredTable,
                                                            plan_changes, widens)
from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.runtime import PaimonConfigError


@pytest.mark.parametrize("query_type, stored_type, exact", [
    ("INT", "BIGINT", True), ("TINYINT", "INT", True), ("BIGINT", "INT", False),
    ("INT", "DOUBLE", True), ("BIGINT", "DOUBLE", False), ("FLOAT", "DOUBLE", True),
    ("DOUBLE", "FLOAT", False), ("INT", "DECIMAL(12, 2)", True), ("INT", "DECIMAL(10, 2)", False),
    ("DECIMAL(10, 2)", "DECIMAL(12, 3)", True), ("DECIMAL(10, 2)", "DECIMAL(10, 3)", False),
    ("STRING", "INT", False), ("INT", "STRING", False), ("DATE", "TIMESTAMP(6)", False),
])
def test_widens(query_type, stored_type, exact):
    assert widens(query_type, stored_type) is exact


def _plan(query_columns):
    definition = table_definition("events", "paimon_append", {}, query_columns)
    stored = StoredTable((), (), {}, (("id", "INT"), ("v", "INT")))
    return plan_changes(ChangeRequest(definition, stored, tuple(query_columns), "ignore",
                                      "s.events"))


def test_ignore_casts_a_narrower_type():
    assert _plan([("id", "INT"), ("v", "SMALLINT")]).cast_columns == {"v": "INT"}


def test_ignore_refuses_a_lossy_type_change():
    with pytest.raises(PaimonConfigError) as error:
        _plan([("id", "INT"), ("v", "STRING")])
    message = str(error.value)
    assert "Model 'events'" in message and "column 'v' is INT in s.events but STRING" in message
    assert "cast(v as int)" in message and "--full-refresh" in message


def _not_null_plan(table_options, config_options=None, table_nullable=("id", "v")):
    import dataclasses

    columns = [("id", "INT"), ("v", "INT")]
    config = {"primary_key": "id"}
    if config_options:
        config["table_options"] = config_options
    definition = dataclasses.replace(table_definition("events", "paimon_pk", config, columns),
                                     not_null=("id", "v"))
    stored = StoredTable(("id",), (), table_options, tuple(columns), tuple(table_nullable))
    return plan_changes(ChangeRequest(definition, stored, tuple(columns), "ignore", "s.events"))


def test_contract_not_null_refused_as_paimon_refuses_it():
    """SchemaManager.generateTableSchema (UpdateColumnNullability, assertNullabilityChange):
    nullable -> NOT NULL only when 'alter-column-null-to-not-null.disabled' is 'false'
    (CoreOptions.DISABLE_ALTER_COLUMN_NULL_TO_NOT_NULL defaults to true)."""
    with pytest.raises(PaimonConfigError) as error:
        _not_null_plan({})
    message = str(error.value)
    assert "Model 'events'" in message and "['v']" in message and "s.events" in message
    assert "'alter-column-null-to-not-null.disabled': 'false'" in message
    assert "--full-refresh" in message


def test_contract_not_null_altered_where_the_table_allows_it():
    allowed = {"alter-column-null-to-not-null.disabled": "false"}
    assert _not_null_plan(allowed).not_null_columns == ["v"]      # the key is NOT NULL already
    # the option set by this very run counts (the builder alters in two steps)
    plan = _not_null_plan({}, config_options=allowed)
    assert plan.not_null_columns == ["v"] and plan.set_options == allowed
    # a column NOT NULL already needs no change
    assert _not_null_plan({}, table_nullable=()).not_null_columns == []
    assert not _not_null_plan({}, table_nullable=()).changes_schema
