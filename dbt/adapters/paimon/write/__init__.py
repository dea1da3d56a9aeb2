"""The primary-key write path on Spark: a model's rows -> one atomic Paimon commit.

No dbt imports (like runtime/ and format/). Public API::

    from dbt.adapters.paimon.write import write_primary_key_run, WriteResult
    result = write_primary_key_run(spark, df, location, row_kind_column=None, model_name="orders")

See spark_job.py for the stages, tasks.py for what runs in Spark tasks.
"""
from typing import Any

__all__ = ["WriteResult", "write_primary_key_run"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: importing a light submodule (task_errors, for every dbt command's
    # error handling) must not load the write path's runtime, polars and pypaimon.
    if name in __all__:
        from dbt.adapters.paimon.write import spark_job

        return getattr(spark_job, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
