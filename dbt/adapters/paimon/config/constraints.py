"""A model contract's constraints -> the Paimon table: ``not_null`` columns are NOT NULL columns,
a ``primary_key`` constraint is the table's primary key. (``check``, ``unique`` and
``foreign_key`` are not enforced; dbt warns about them through the adapter's constraint map.)

Pure Python: the model's ``columns`` and ``constraints`` as dbt's manifest has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from dbt.adapters.paimon.runtime import PaimonConfigError

# materializations whose table takes the contract's primary key: dbt's own table, incremental
# and seed (file_format='paimon') build a primary-key table when the model has a key
PRIMARY_KEY_MATERIALIZATIONS = ("paimon_pk", "partial_update", "table", "incremental", "seed")


@dataclass(frozen=True)
class ContractKeys:
    primary_key: Tuple[str, ...]   # from primary_key constraints; () when there is none
    not_null: Tuple[str, ...]      # not_null columns and the primary-key constraint's columns


def _kinds(constraints: Sequence[Mapping[str, Any]]) -> List[str]:
    return [str(c.get("type", "")) for c in constraints or []]


def contract_keys(model: str, columns: Mapping[str, Mapping[str, Any]],
                  constraints: Sequence[Mapping[str, Any]]) -> ContractKeys:
    primary_key: List[str] = []
    not_null: List[str] = []
    for name, column in (columns or {}).items():
        kinds = _kinds(column.get("constraints", []))
        if "primary_key" in kinds:
            primary_key.append(column.get("name", name))
        if "not_null" in kinds or "primary_key" in kinds:
            not_null.append(column.get("name", name))
    for constraint in constraints or []:
        if constraint.get("type") == "primary_key":
            declared = [str(c) for c in constraint.get("columns") or []]
            if primary_key and declared != primary_key:
                raise PaimonConfigError(
                    f"Model '{model}': its contract declares two primary keys ({primary_key} on "
                    f"columns, {declared} on the model); keep one.")
            primary_key = declared
            not_null += [c for c in declared if c not in not_null]
    return ContractKeys(tuple(primary_key), tuple(not_null))


def apply_contract(model: str, materialization: str, config: Mapping[str, Any],
                   keys: ContractKeys) -> Dict[str, Any]:
    """The model's config with the contract's primary key as its ``primary_key``; an error if
    ``primary_key``/``unique_key`` config says otherwise or the table cannot have a key."""
    config = dict(config)
    if not keys.primary_key:
        return config
    if materialization not in PRIMARY_KEY_MATERIALIZATIONS:
        raise PaimonConfigError(
            f"Model '{model}': its contract declares primary key {list(keys.primary_key)}, but "
            f"materialized='{materialization}' builds a table without primary key. Use "
            "materialized='paimon_pk', or remove the primary_key constraint.")
    configured_as = "primary_key" if config.get("primary_key") is not None else "unique_key"
    configured = config.get(configured_as)
    if configured is None:
        config["primary_key"] = list(keys.primary_key)
        return config
    from dbt.adapters.paimon.config.model_config import as_list

    if set(as_list(configured)) != set(keys.primary_key):
        raise PaimonConfigError(
            f"Model '{model}': config `{configured_as}` is {as_list(configured)} but its "
            f"contract's primary_key constraint is {list(keys.primary_key)}; they name the "
            "Paimon table's primary key and must agree: change one, or remove the config.")
    return config


def contract_config(model: str, materialization: str, node: Mapping[str, Any]):
    """(config, NOT NULL columns) of a model node as dbt's manifest has it: with an enforced
    contract, its constraints applied; without one, the config as it is."""
    config = dict(node["config"])
    if not (config.get("contract") or {}).get("enforced"):
        return config, ()
    keys = contract_keys(model, node.get("columns") or {}, node.get("constraints") or [])
    return apply_contract(model, materialization, config, keys), keys.not_null
