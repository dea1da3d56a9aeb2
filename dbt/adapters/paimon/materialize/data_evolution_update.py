"""materialized='data_evolution_update': a model's query written as columns of the rows of an
existing data-evolution table, matched by the model's `update_key` (one commit of column files:
write/column_update.py), in this process or in Spark tasks (write/column_update_job.py), as
write/path_choice.py chooses from the model's `write_path` and `in_process_max_bytes`."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from dbt.adapters.paimon.datasource.spark_arrow import collect_arrow
from dbt.adapters.paimon.runtime import PaimonConfigError


def check_config(model: str, config: Mapping[str, Any]) -> None:
    """PaimonConfigError when `target` or `update_key` is missing, `update_columns` is
    neither a column name nor a list of them, or `when_not_matched` is not one of
    column_update.WHEN_NOT_MATCHED."""
    from dbt.adapters.paimon.write.column_update import WHEN_NOT_MATCHED
    from dbt.adapters.paimon.write.path_choice import check_max_bytes, check_write_path

    missing = [c for c in ("target", "update_key") if not config.get(c)]
    if missing:
        raise PaimonConfigError(
            f"Model '{model}': materialized='data_evolution_update' needs config "
            f"{' and '.join(f'`{c}`' for c in missing)}: `target` names the data-evolution "
            f"table whose columns the model writes, `update_key` the column matching the "
            f"model's rows to its rows ('_ROW_ID' or a column unique in the table).")
    columns = config.get("update_columns")
    if columns is not None and not isinstance(columns, (list, tuple, str)):
        raise PaimonConfigError(f"Model '{model}': config `update_columns` is {columns!r}; "
                                f"expected a column name or a list of them.")
    when = config.get("when_not_matched", "error")
    if when not in WHEN_NOT_MATCHED:
        raise PaimonConfigError(
            f"Model '{model}': config `when_not_matched` is {when!r}; expected one of "
            f"{list(WHEN_NOT_MATCHED)} ('error': a row whose key matches no row of the table "
            f"fails the run; 'insert': it becomes a new row).")
    try:
        check_write_path(config.get("write_path"), model)
        check_max_bytes(config.get("in_process_max_bytes"),
                        f"Model '{model}': config `in_process_max_bytes`")
    except ValueError as exc:
        raise PaimonConfigError(str(exc)) from None


def not_a_target(model: str, relation: str) -> PaimonConfigError:
    return PaimonConfigError(
        f"Model '{model}': its `target` {relation} is not a Paimon table. A "
        f"data_evolution_update model writes columns of an existing data-evolution "
        f"table (options 'row-tracking.enabled' and 'data-evolution.enabled'): create "
        f"it first (a paimon_append model with those table_options, or another "
        f"engine), and run this model after it.")


def update_from_query(registry, model: str, config: Mapping[str, Any], schema: str, table: str,
                      sql: str, committed: Callable):
    """Write the query's columns into ``schema.table``, in the ``committed()`` block; returns
    (the columns written, write/column_update.py's result, the executor's PathChoice). Checked
    before Spark computes a row: every column typed, the key and columns the table's
    (check_update). The executor is chosen as for every model (write/path_choice.py): the
    model's rows are what the in-process one collects here."""
    from dbt.adapters.paimon.materialize.model_builder import check_typed
    from dbt.adapters.paimon.write.column_update import (
        check_update, owned_columns, update_columns)
    from dbt.adapters.paimon.write.path_choice import (
        IN_PROCESS, check_max_bytes, choose_path, warehouse_table_bytes)

    key = config["update_key"]
    columns = config.get("update_columns")
    if isinstance(columns, str):
        columns = [columns]
    opened = registry.open_table(schema, table)
    spark = registry.activate(sql)
    df = spark.sql(sql)
    check_typed(model, df)
    when = config.get("when_not_matched", "error")
    owned = owned_columns(key, df.columns, columns)
    check_update(opened, model, key, owned, df.columns, when == "insert")
    # new rows (when_not_matched='insert') also take the partition columns from the query
    placed = [c for c in opened.partition_keys if c in df.columns and c not in owned + [key]] \
        if when == "insert" else []
    frame = df.select(*[f"`{c}`" for c in [key] + owned + placed])
    location = registry.location(schema, table)
    choice = choose_path(spark, frame, model, config.get("write_path"),
                         check_max_bytes(config.get("in_process_max_bytes"),
                                         "config `in_process_max_bytes`"),
                         table_bytes=warehouse_table_bytes(location))
    if choice.path == IN_PROCESS:
        rows = collect_arrow(frame)
        with committed():
            return owned, update_columns(opened, model, rows, key, owned, when), choice
    from dbt.adapters.paimon.write.column_update_job import update_in_spark

    with committed():
        return owned, update_in_spark(spark, opened, location, model, frame, key, owned,
                                      placed, when == "insert"), choice
