"""The primary-key write path on Spark: a model's rows -> one atomic Paimon commit.

No dbt imports (like runtime/ and format/). Public API::

    from dbt.adapters.paimon.write import write_primary_key_run, WriteResult
    result = write_primary_key_run(spark, df, location, row_kind_column=None, model_name="orders")

See spark_job.py for the stages, tasks.py for what runs in Spark tasks.
"""
from dbt.adapters.paimon.write.spark_job import WriteResult, write_primary_key_run

__all__ = ["WriteResult", "write_primary_key_run"]
