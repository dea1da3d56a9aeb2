"""After rescale_buckets of some partitions, a write must not hash rows of a partition still at
the old bucket count with the new count (its keys' older versions live in the old buckets)."""

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.ops import rescale_buckets
from dbt.adapters.paimon.runtime import PaimonConfigError
from dbt.adapters.paimon.write import write_primary_key_run

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string()),
                    pa.field("dt", pa.string(), nullable=False)])


def run(spark, location, rows):
    df = spark.createDataFrame(rows, "k bigint, v string, dt string")
    return write_primary_key_run(spark, df, location, model_name="events")


def test_stale_partition_is_refused_rescaled_one_is_written(spark, tmp_path):
    warehouse = str(tmp_path)
    wh.create_table(warehouse, "db", "events", SCHEMA, primary_keys=["k", "dt"],
                    partition_keys=["dt"], options={"bucket": "2"})
    location = TableRef(warehouse, "db", "events", {})
    run(spark, location, [(i, "a", "d1") for i in range(20)] + [(i, "a", "d2") for i in range(20)])
    rescale_buckets(spark, location, 4, partitions=[{"dt": "d1"}])

    run(spark, location, [(1, "b", "d1")])  # d1 now has 4 buckets like the table: fine
    with pytest.raises(PaimonConfigError) as info:
        run(spark, location, [(1, "b", "d2")])
    message = str(info.value)
    assert "{'dt': 'd2'}" in message and "rescale_buckets" in message and "buckets: 4" in message
