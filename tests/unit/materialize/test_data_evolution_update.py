"""A data_evolution_update model's config (materialize/data_evolution_update.py): the errors
raised before anything is read or written. The write itself runs in
tests/functional/paimon/test_data_evolution_update.py."""

import pytest

from dbt.adapters.paimon.materialize.data_evolution_update import check_config, not_a_target
from dbt.adapters.paimon.runtime import PaimonConfigError


def test_a_complete_config_passes():
    check_config("m", {"target": "t", "update_key": "_ROW_ID"})
    check_config("m", {"target": "raw.t", "update_key": "id", "update_columns": ["a"]})
    check_config("m", {"target": "raw.t", "update_key": "id", "update_columns": "a"})
    check_config("m", {"target": "t", "update_key": "id", "when_not_matched": "insert"})
    check_config("m", {"target": "t", "update_key": "id", "when_not_matched": "error"})
    check_config("m", {"target": "t", "update_key": "id", "write_path": "distributed",
                       "in_process_max_bytes": 1024})


@pytest.mark.parametrize("config, message", [
    ({}, "needs config `target` and `update_key`"),
    ({"target": "t"}, "needs config `update_key`"),
    ({"target": "t", "update_key": "id", "update_columns": 3},
     "config `update_columns` is 3; expected a column name or a list of them"),
    ({"target": "t", "update_key": "id", "when_not_matched": "ignore"},
     r"config `when_not_matched` is 'ignore'; expected one of \['error', 'insert'\]"),
    ({"target": "t", "update_key": "id", "write_path": "spark"},
     r"config `write_path` is 'spark'; expected one of \['auto', 'in_process', "
     r"'distributed'\]"),
    ({"target": "t", "update_key": "id", "in_process_max_bytes": -1},
     r"config `in_process_max_bytes` is -1; expected a whole number of bytes"),
])
def test_config_errors_name_the_model(config, message):
    with pytest.raises(PaimonConfigError, match=f"^Model 'm': .*{message}"):
        check_config("m", config)


def test_a_missing_target_says_to_create_it_first():
    assert "`target` `a`.`t` is not a Paimon table" in str(not_a_target("m", "`a`.`t`"))
