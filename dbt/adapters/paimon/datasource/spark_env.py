"""What the code needs to know about the Spark session it was given, for both kinds: an
embedded (classic) session and a Spark Connect session, which has no JVM gateway
(``sparkContext``, ``_jvm``) in the client."""

from __future__ import annotations

# The conf a server started by `dbt-paimon server start` sets to its task slots (a Spark
# Connect client cannot ask SparkContext.defaultParallelism).
PARALLELISM_CONF = "spark.default.parallelism"


def is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark) -> int:
    """Spark's task slots: SparkContext.defaultParallelism, or over Spark Connect the server's
    spark.default.parallelism (else its shuffle partitions)."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    value = spark.conf.get(PARALLELISM_CONF, None) or spark.conf.get(
        "spark.sql.shuffle.partitions", "4")
    return max(1, int(value))


def register_data_source(spark, source: type) -> None:
    """``spark.dataSource.register(source)``, safe when another client registers the same name
    at the same moment (two dbt commands joining one Spark Connect session): Spark checks that
    the name is free and registers it in two steps (DataSourceRegistration.checkDataSourceExists,
    then DataSourceManager.registerDataSource), so the loser of that race is refused with
    DATA_SOURCE_ALREADY_EXISTS although a Python source of that name may replace another. Once
    the name is a registered Python source the check passes: one retry settles it. A name that
    a JVM data source holds keeps failing, with Spark's own error."""
    try:
        spark.dataSource.register(source)
    except Exception as exc:  # noqa: BLE001 - pyspark raises a different class per session kind
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
            raise
        spark.dataSource.register(source)
