"""What the code needs to know about the Spark session it was given, for both kinds: an
embedded (classic) session and a Spark Connect session, which has no JVM gateway
(``sparkContext``, ``_jvm``) in the client."""

from __future__ import annotations

# The conf a server started by `dbt-paimon server start` sets to its task slots (a Spark
# Connect client cannot ask SparkContext.defaultParallelism).
PARALLELISM_CONF = "spark.default.parallelism"
# file_format -> whether this process's Spark lacks that data source (it does not change while
# the session lives)
_missing_sources = {}


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


def explain_string(frame, mode: str) -> str:
    """What ``frame.explain(mode=mode)`` prints, returned instead: pyspark's classic explain
    only prints, and catching that with contextlib.redirect_stdout swaps the process's
    sys.stdout, which other threads (dbt's ``--threads``) write to meanwhile: their lines went
    into the capture and the plan onto the terminal."""
    if is_connect(frame.sparkSession):
        return frame._explain_string(mode=mode)
    jvm = frame.sparkSession.sparkContext._jvm
    return jvm.PythonSQLUtils.explainString(frame._jdf.queryExecution(), mode)


def lacks_data_source(session, file_format: str) -> bool:
    """Whether this Spark (``session()``, asked once per format) has no data source named
    ``file_format`` (Delta, Iceberg and Hudi come as packages of their own): Spark's
    DATA_SOURCE_NOT_FOUND while it resolves a read of a path that does not exist. Any other
    error (the path is missing) means it has one."""
    if file_format not in _missing_sources:
        try:
            session().read.format(file_format).load("/dbt-paimon-probe-no-such-path").schema
            missing = False
        except Exception as exc:  # noqa: BLE001 - Spark's analysis error, either way
            missing = "DATA_SOURCE_NOT_FOUND" in str(exc) or \
                "Failed to find the data source" in str(exc)
        _missing_sources[file_format] = missing
    return _missing_sources[file_format]


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
