"""Driver memory stays bounded: merge a table larger than the driver's memory setting
on the 2-worker standalone cluster.

    .venv/bin/python benchmarks/driver_memory.py [--rows 3000000] [--runs 2]

The dbt driver gets spark.driver.memory=512m. A paimon_pk model (8 buckets) writes --rows keys
with a ~200-byte incompressible payload, every later run updates every key, then a full
compaction merges all runs' files into one sorted run (reads merge them too). The merged table's Arrow
size (summed by the executors) must exceed the driver's heap; the driver's JVM heap peak and
its Python process's peak RSS are printed: the driver only sees plans, commit messages and
metadata. Writes benchmarks/results/driver_memory.txt. Too slow for the test suite (minutes).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))

from provenance import results_header  # noqa: E402  (same folder: run as a script)

DRIVER_MEMORY = "512m"
MODEL = """
{{ config(materialized='paimon_pk', primary_key='k', buckets=8) }}
select cast(id as bigint) as k,
       concat(sha2(cast(id as string), 256), sha2(cast(id + 1 as string), 256),
              sha2(cast(id + 2 as string), 256)) as payload,
       cast(id * {{ var('run') }} as bigint) as v
from range(0, {rows})
"""


def write_project(root: str, master: str, rows: int) -> None:
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write("bench:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
                f"      schema: bench\n      spark_master: '{master}'\n      spark_conf:\n"
                f"        spark.driver.memory: '{DRIVER_MEMORY}'\n"
                "        spark.executor.memory: '768m'\n        spark.executor.cores: '1'\n"
                "        spark.sql.shuffle.partitions: '8'\n")
    with open(os.path.join(root, "models", "big.sql"), "w") as f:
        f.write(MODEL.replace("{rows}", str(rows)))


def driver_heap(spark) -> tuple:
    """(max heap, peak heap used) of the driver JVM, bytes."""
    management = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    peak = sum(pool.getPeakUsage().getUsed() for pool in management.getMemoryPoolMXBeans()
               if str(pool.getType()) == "Heap memory")
    return management.getMemoryMXBean().getHeapMemoryUsage().getMax(), peak


def arrow_bytes(spark, table: str) -> int:
    """The table's merged rows as Arrow, in bytes, summed by the executors."""
    import pyarrow as pa

    def sizes(batches):
        for batch in batches:
            yield pa.RecordBatch.from_pydict({"n": [batch.nbytes]})

    return spark.table(table).mapInArrow(sizes, "n long").groupBy().sum("n").first()[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()

    from dbt.cli.main import dbtRunner
    from standalone import StandaloneCluster

    root = tempfile.mkdtemp(prefix="bench-driver-memory-")
    steps = []
    try:
        with StandaloneCluster(os.path.join(root, "cluster"), workers=2, cores=1,
                               memory="1g") as cluster:
            project = os.path.join(root, "project")
            write_project(project, cluster.master_url, args.rows)
            runner = dbtRunner()
            base = ["--project-dir", project, "--profiles-dir", project, "--quiet"]
            commands = [(f"dbt run {run}", ["run", "--vars", f"{{run: {run}}}"])
                        for run in range(1, args.runs + 1)]
            commands.append(("full compaction", ["run-operation", "compact", "--args",
                                                 "{model: big, full: true}"]))
            for title, command in commands:
                started = time.perf_counter()
                result = runner.invoke(command + base)
                if not result.success:
                    print(f"{title} failed: {result.exception}", file=sys.stderr)
                    return 1
                steps.append((title, time.perf_counter() - started))
            from dbt.adapters.paimon import environments

            spark = environments.current_registry().activate()
            merged_rows = spark.table("bench.big").count()
            merged_bytes = arrow_bytes(spark, "bench.big")
            max_heap, peak_heap = driver_heap(spark)
            warehouse = os.path.join(project, "paimon_warehouse", "bench.db", "big")
            on_disk = sum(os.path.getsize(os.path.join(d, f))
                          for d, _, files in os.walk(warehouse) for f in files)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            spark.stop()  # before its cluster goes away
    finally:
        shutil.rmtree(root, ignore_errors=True)

    mib = 1024 * 1024
    lines = [results_header("driver_memory.py", "a 2-worker standalone cluster"),
             "",
             f"paimon_pk model, 8 buckets, {args.rows:,} keys x ~210 bytes, {args.runs} runs "
             f"(each later run updates every key), then a full compaction",
             *(f"  {title:<18}{seconds:>8.1f} s" for title, seconds in steps),
             f"merged table: {merged_rows:,} rows, {merged_bytes / mib:,.0f} MiB as Arrow, "
             f"{on_disk / mib:,.0f} MiB of files",
             f"driver: spark.driver.memory={DRIVER_MEMORY} (max heap {max_heap / mib:,.0f} MiB), "
             f"peak heap used {peak_heap / mib:,.0f} MiB; dbt Python process peak RSS "
             f"{rss / mib:,.0f} MiB",
             f"merged table / driver max heap = {merged_bytes / max_heap:.1f}x"]
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "driver_memory.txt"), "w") as f:
        f.write(text + "\n")
    return 0 if merged_bytes > max_heap and merged_rows == args.rows else 1


if __name__ == "__main__":
    sys.exit(main())
