"""Start Spark's Python processes in the background, right after a dbt process's Spark session
has started and synced the warehouse's tables.

In a fresh process the first Python stage waits for Spark to start its Python daemon and workers
(~2.5 s on the 2-core machine) and for the workers to import the task code: pyarrow, polars,
pypaimon and ours (~1.7 s more). The first read of a Python data source also waits ~3 s for the
Python process that plans data-source reads. Spark keeps all of them and reuses them (the same
pids) for later tasks and later reads of any Python data source. So one tiny read of a do-nothing
data source, run from a background thread, moves those waits to where dbt works on the driver
(compiling, driver-side model work, earlier SQL models): its planning imports the paimon data
source in the planner process, and each of its tasks (one per task slot) imports the write and
read code in a Python worker.

On a 2-core machine (fresh `dbt run` of a 500k-row paimon_pk model, then a read of it) the first
model takes 8.5 s instead of 10-12 s, the first read 2.4 s instead of 4.7-6.4 s; a command that
never starts a Python task (`dbt show` of `select 1`) pays ~2.5 s more, the warm-up's CPU. On by
default; ``spark.dbt.paimon.warmUpWorkers: 'false'`` in the profile's ``spark_conf`` turns it
off for a profile, ``DBT_PAIMON_WARM_UP_WORKERS=off`` for every command on a machine (a CI job or
a 2-core runner of many short commands, where its CPU goes to the command beside it). Best
effort: if it fails, the first real task starts its Python worker itself.

A command may end while the warm-up still runs (`dbt show` of `select 1` ends ~1 s after the
session starts). At exit no new job starts, a running one is cancelled (by its operation tag,
which a Spark Connect session has too) and the thread is waited for a quarter of a second, not
until the cancellation lands: waiting for it (up to 2 s) was most of a short command's exit
(`dbt run` of one model: 1.1-2.4 s from dbt's last line to the end of the process, 0.2-0.3 s
without the wait). A job the JVM's shutdown cuts short can log its tasks' failures ("Python
worker exited unexpectedly (crashed)") to Spark's log file, never to dbt's output; the line the
log gets first says they are the warm-up's.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from typing import Iterator, Optional

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

CONF_KEY = "spark.dbt.paimon.warmUpWorkers"
ENV_SWITCH = "DBT_PAIMON_WARM_UP_WORKERS"
JOB_DESCRIPTION = "dbt-paimon: start Python workers"
OPERATION_TAG = "dbt-paimon-worker-warm-up"
EXIT_WAIT_SECONDS = 0.25

logger = logging.getLogger(__name__)


def enabled(spark) -> bool:
    """On unless the environment switch or the session's setting says otherwise (the switch,
    a machine's choice, wins over every profile)."""
    from dbt.adapters.paimon.server.daemon_policy import OFF_VALUES

    if os.environ.get(ENV_SWITCH, "").strip().lower() in OFF_VALUES:
        return False
    return str(spark.conf.get(CONF_KEY, "true")).strip().lower() == "true"


def start_in_background(spark) -> Optional[threading.Thread]:
    if not enabled(spark):
        return None
    stopping = threading.Event()
    thread = threading.Thread(target=warm_up, args=(spark, stopping), daemon=True,
                              name="dbt-paimon-worker-warm-up")
    thread.start()
    atexit.register(stop, spark, thread, stopping)
    return thread


def stop(spark, thread: threading.Thread, stopping: threading.Event,
         wait_seconds: float = EXIT_WAIT_SECONDS) -> None:
    """Stop the warm-up: no job starts after this, a running one is cancelled; wait at most
    ``wait_seconds`` for its thread (a read being planned is not cancellable: the thread ends
    once the planning returns, or the process exits without it)."""
    from dbt.adapters.paimon.environments import spark_logs

    if not thread.is_alive():
        return
    stopping.set()
    started = time.monotonic()
    while True:
        try:
            spark.interruptTag(OPERATION_TAG)
        except Exception as exc:  # noqa: BLE001 - the session may already be gone
            logger.debug("dbt-paimon: cancelling the worker warm-up failed: %s", exc)
            return
        thread.join(min(0.25, wait_seconds))
        if not thread.is_alive() or time.monotonic() >= started + wait_seconds:
            break
    outcome = "stopped" if not thread.is_alive() else \
        "left to the JVM's shutdown (failures of its tasks logged below are the warm-up's)"
    spark_logs.record("the worker warm-up was running at exit: cancelled",
                      f"{outcome} after {time.monotonic() - started:.1f} s")


def warm_up(spark, stopping: Optional[threading.Event] = None) -> None:
    try:
        context = spark.sparkContext
        slots = max(1, int(context.defaultParallelism))
        context.setJobDescription(JOB_DESCRIPTION)  # this thread's jobs only
        spark.addTag(OPERATION_TAG)  # this thread's operations only
        spark.dataSource.register(WarmUpSource)
        planned = spark.read.format(WarmUpSource.name()).option("tasks", slots).load()
        if stopping is not None and stopping.is_set():
            return  # the command ended while the read was planned: start no job
        planned.write.format("noop").mode("overwrite").save()
    except Exception as exc:  # noqa: BLE001 - best effort, see the module docstring
        logger.debug("dbt-paimon: warming up Spark's Python processes failed: %s", exc)


class WarmUpSource(DataSource):
    """Reads one row per task; what matters is what its planning and its tasks import."""

    @classmethod
    def name(cls) -> str:
        return "dbt_paimon_warm_up"

    def schema(self) -> str:
        return "task int"

    def reader(self, schema) -> "WarmUpReader":
        # runs in the planner process that later plans every paimon read
        import dbt.adapters.paimon.datasource.source  # noqa: F401

        return WarmUpReader(int(self.options.get("tasks", 1)))


class WarmUpReader(DataSourceReader):
    def __init__(self, tasks: int):
        self.tasks = tasks

    def partitions(self):
        return [InputPartition(i) for i in range(self.tasks)]

    def read(self, partition) -> Iterator[tuple]:
        # runs in a Python worker that later runs write and read tasks
        import dbt.adapters.paimon.datasource.source  # noqa: F401
        import dbt.adapters.paimon.write.tasks  # noqa: F401

        yield (partition.value,)
