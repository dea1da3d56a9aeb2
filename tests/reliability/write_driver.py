"""A writer process for the concurrency tests: one primary-key run through the real write path
(its own local Spark session, no dbt), retried while it loses commit races.

    python write_driver.py <warehouse> <database> <table> <value> <id ranges>

``<id ranges>`` like ``0-50,1000-1050``: the ids written, each with column v = <value>. Prints
``CONFLICT <error>`` for every CommitConflictError (then writes the run again, at most 5
times) and ``SNAPSHOT <id>`` when a commit lands; exits 0, or 3 when every attempt conflicted.
"""
import os
import sys

ATTEMPTS = 5


def main(warehouse, database, table, value, ranges):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from dbt.adapters.paimon.datasource.source import TableRef
    from dbt.adapters.paimon.format.errors import CommitConflictError
    from dbt.adapters.paimon.write import write_primary_key_run

    spark = (SparkSession.builder.master("local[1]").appName("dbt-paimon-writer")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "512m")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    frame = None
    for piece in ranges.split(","):
        low, high = (int(x) for x in piece.split("-"))
        part = spark.range(low, high)
        frame = part if frame is None else frame.union(part)
    frame = frame.selectExpr("id", f"'{value}' as v")
    location = TableRef(warehouse, database, table, {})
    for _ in range(ATTEMPTS):
        try:
            result = write_primary_key_run(spark, frame, location, model_name=table)
        except CommitConflictError as exc:
            print(f"CONFLICT {exc}", flush=True)
            continue
        print(f"SNAPSHOT {result.snapshot_id}", flush=True)
        return 0
    return 3


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
