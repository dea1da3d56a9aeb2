"""An enforced contract's constraints -> the Paimon table's primary key and NOT NULL columns."""

import pytest

from dbt.adapters.paimon.materialize.snapshot_rows import bookkeeping_columns, table_config
from dbt.adapters.paimon.config.constraints import apply_contract, contract_keys
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = {
    "id": {"name": "id", "constraints": [{"type": "primary_key"}]},
    "name": {"name": "name", "constraints": [{"type": "not_null"}, {"type": "check"}]},
    "amount": {"name": "amount", "constraints": []},
}


def test_column_constraints():
    keys = contract_keys("m", COLUMNS, [])
    assert keys.primary_key == ("id",)
    assert keys.not_null == ("id", "name")
    assert apply_contract("m", "paimon_pk", {}, keys)["primary_key"] == ["id"]


def test_model_level_primary_key():
    keys = contract_keys("m", {"a": {"name": "a"}, "b": {"name": "b"}},
                         [{"type": "primary_key", "columns": ["a", "b"]}])
    assert keys.primary_key == ("a", "b") and keys.not_null == ("a", "b")


def test_config_and_constraint_must_agree():
    keys = contract_keys("m", COLUMNS, [])
    assert apply_contract("m", "paimon_pk", {"unique_key": "id"}, keys) == {"unique_key": "id"}
    with pytest.raises(PaimonConfigError, match="must agree"):
        apply_contract("m", "paimon_pk", {"primary_key": ["name"]}, keys)


@pytest.mark.parametrize("materialization", ["table", "incremental"])
def test_dbt_materializations_take_the_primary_key(materialization):
    # file_format='paimon': the constraint makes the model's table a primary-key table
    keys = contract_keys("m", COLUMNS, [])
    assert apply_contract("m", materialization, {}, keys)["primary_key"] == ["id"]
    with pytest.raises(PaimonConfigError, match="must agree"):
        apply_contract("m", materialization, {"unique_key": "name"}, keys)


def test_append_tables_have_no_primary_key():
    with pytest.raises(PaimonConfigError, match="paimon_append.*without primary key"):
        apply_contract("m", "paimon_append", {}, contract_keys("m", COLUMNS, []))
    no_key = contract_keys("m", {"name": COLUMNS["name"]}, [])
    assert apply_contract("m", "paimon_append", {}, no_key) == {}


def test_two_primary_keys_are_an_error():
    with pytest.raises(PaimonConfigError, match="two primary keys"):
        contract_keys("m", COLUMNS, [{"type": "primary_key", "columns": ["name"]}])


def test_snapshot_table_config():
    assert table_config("s", {"unique_key": "id", "buckets": 4, "strategy": "check"},
                        "dbt_scd_id") == {"buckets": 4, "primary_key": "dbt_scd_id"}
    with pytest.raises(PaimonConfigError, match="partition_by"):
        table_config("s", {"partition_by": "day"}, "dbt_scd_id")
    assert bookkeeping_columns(["id", "dbt_change_type", "dbt_unique_key_1", "dbt_scd_id"]) == [
        "dbt_change_type", "dbt_unique_key_1"]
