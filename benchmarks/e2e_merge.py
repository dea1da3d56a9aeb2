"""End-to-end benchmark: `dbt run` of a paimon_pk model vs a plain parquet table model.

    .venv/bin/python benchmarks/e2e_merge.py [--rows 2000000] [--keys 500000] [--commits 4]
        [--write-path auto|in_process|distributed]

In one dbt project and one Spark session (local[2]):
* paimon_pk  -- `--commits` dbt runs, each merging rows/commits rows over `--keys` keys into a
                4-bucket Paimon primary-key table (one Paimon commit per run);
* parquet    -- the same runs of a plain dbt `table` model writing the same rows as parquet;
* reads      -- a full read (all columns, Spark's noop sink) of the merged Paimon table beside the
                parquet table;
* floor      -- the same merged rows served by the cheapest possible Python data source (Arrow
                IPC files, one per Spark partition): the cost of Spark's Python data source
                plumbing, which every read of the `paimon` data source pays before any merge;
* pypaimon   -- pypaimon 2.1.0 writing one commit of --pypaimon-rows rows (default: one run's
                rows) into the same kind of table with its own writer, in this process after its
                imports, as rows/s.
Write throughput is given two ways: over all runs (the first run of a process is cold: Spark
starts its Python workers and imports the write path in them) and for the median warm run.
Prints a table with the ratios (goals: merge-write <= 2x parquet write, merged read <= 2x parquet
read, >= 10x pypaimon's write throughput) and writes benchmarks/results/e2e_merge.png.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import pyarrow as pa
from dbt.cli.main import dbtRunner

from bench_project import write_bench_project  # same folder: run as a script
from plots import BASELINE, FLOOR, PAIMON, save_bars
from provenance import results_header

MODEL_ROWS = """
select cast(id % {keys} as bigint) as k,
       cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double,
       concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('batch') }}}} * {per_commit}, ({{{{ var('batch') }}}} + 1) * {per_commit})
"""


def write_project(root: str, rows: int, keys: int, commits: int,
                  write_path: str = "auto") -> None:
    body = MODEL_ROWS.format(keys=keys, per_commit=rows // commits)
    write_bench_project(root, {
        "pk_model.sql": "{{ config(materialized='paimon_pk', primary_key='k', buckets=4, "
                        f"write_path='{write_path}') }}}}\n" + body,
        "parquet_model.sql": "{{ config(materialized='table', file_format='parquet') }}\n" + body,
    })


def model_seconds(result) -> dict:
    return {r.node.name: r.execution_time for r in result.result.results}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def python_source_floor_seconds(spark, table_name: str, parts: int = 4):
    """A full read (noop sink) of ``table_name``'s rows through a Python data source that does
    nothing but serve them from Arrow IPC files: Spark's cost of a Python data source. Also the
    same read of one row per partition: the fixed cost of any query of a Python data source
    (planning in a Python process, tasks in Python workers). Both as (full, fixed) seconds."""
    import json

    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
    from pyspark.sql.types import StructType

    frame = spark.table(table_name)
    rows = pa.Table.from_batches(frame._collect_as_arrow())
    folder = tempfile.mkdtemp(prefix="bench-floor-")
    step = -(-rows.num_rows // parts)
    for i in range(parts):
        with pa.ipc.new_file(os.path.join(folder, f"part-{i}.arrow"), rows.schema) as sink:
            sink.write_table(rows.slice(i * step, step))
        with pa.ipc.new_file(os.path.join(folder, f"one-{i}.arrow"), rows.schema) as sink:
            sink.write_table(rows.slice(i * step, 1))

    class FloorReader(DataSourceReader):
        def __init__(self, folder, prefix):
            self.folder, self.prefix = folder, prefix

        def partitions(self):
            return [InputPartition(os.path.join(self.folder, f"{self.prefix}-{i}.arrow"))
                    for i in range(parts)]

        def read(self, partition):
            with pa.memory_map(partition.value) as source:
                yield from pa.ipc.open_file(source).read_all().to_batches(max_chunksize=65536)

    class FloorSource(DataSource):
        @classmethod
        def name(cls):
            return "arrow_floor"

        def schema(self):
            return StructType.fromJson(json.loads(self.options["schema"]))

        def reader(self, schema):
            return FloorReader(self.options["folder"], self.options["prefix"])

    spark.dataSource.register(FloorSource)

    def best(prefix):
        reader = (spark.read.format("arrow_floor").option("folder", folder)
                  .option("prefix", prefix).option("schema", frame.schema.json()))
        return min(timed(lambda: reader.load().write.format("noop").mode("overwrite").save())
                   for _ in range(3))

    try:
        return best("part"), best("one")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def pypaimon_rows_per_second(rows: int, keys: int) -> float:
    from pypaimon import CatalogFactory, Schema

    warehouse = tempfile.mkdtemp(prefix="bench-pypaimon-")
    try:
        catalog = CatalogFactory.create({"warehouse": warehouse})
        catalog.create_database("b", True)
        schema = pa.schema([("k", pa.int64()), ("v_long", pa.int64()), ("v_double", pa.float64()),
                            ("v_string", pa.string())])
        catalog.create_table("b.t", Schema.from_pyarrow_schema(
            schema, primary_keys=["k"], options={"bucket": "4"}), False)
        data = pa.table({
            "k": pa.array([i % keys for i in range(rows)], pa.int64()),
            "v_long": pa.array(range(rows), pa.int64()),
            "v_double": pa.array([i * 0.5 for i in range(rows)], pa.float64()),
            "v_string": pa.array([f"name-{i % 1000}" for i in range(rows)]),
        })
        table = catalog.get_table("b.t")

        def write():
            builder = table.new_batch_write_builder()
            writer, commit = builder.new_write(), builder.new_commit()
            writer.write_arrow(data)
            commit.commit(writer.prepare_commit())
            writer.close()
            commit.close()

        return rows / timed(write)
    finally:
        shutil.rmtree(warehouse, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=500_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--pypaimon-rows", type=int, default=0,
                        help="rows of the pypaimon commit (default: --rows / --commits)")
    parser.add_argument("--write-path", default="auto",
                        choices=["auto", "in_process", "distributed"],
                        help="the paimon_pk model's write_path config (docs/write_paths.md)")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="bench-e2e-")
    write_project(root, args.rows, args.keys, args.commits, args.write_path)
    runner = dbtRunner()
    write = {"pk_model": 0.0, "parquet_model": 0.0}
    per_run = {"pk_model": [], "parquet_model": []}
    try:
        for batch in range(args.commits):
            result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                    "--vars", f"{{batch: {batch}}}", "--quiet"])
            if not result.success:
                print(result.exception, file=sys.stderr)
                return 1
            for name, seconds in model_seconds(result).items():
                write[name] += seconds
                per_run[name].append(seconds)
        from dbt.adapters.paimon import environments

        spark = environments.current_registry().activate()
        pk_rows = spark.table("bench.pk_model").count()
        read_pk = min(timed(lambda: spark.table("bench.pk_model").write.format("noop")
                            .mode("overwrite").save()) for _ in range(2))
        read_parquet = min(timed(lambda: spark.table("bench.parquet_model").write.format("noop")
                                 .mode("overwrite").save()) for _ in range(2))
        read_floor, read_fixed = python_source_floor_seconds(spark, "bench.pk_model")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    run_rows = args.rows // args.commits
    pypaimon_rows = args.pypaimon_rows or run_rows
    pypaimon_rate = pypaimon_rows_per_second(pypaimon_rows, args.keys)
    paimon_rate = args.rows / write["pk_model"]
    warm = {name: statistics.median(times[1:]) for name, times in per_run.items()}
    warm_rate = run_rows / warm["pk_model"]

    print("\n" + results_header("e2e_merge.py", "local[2]"))
    print(f"\n{args.rows:,} rows over {args.keys:,} keys in {args.commits} dbt runs "
          f"(merged table: {pk_rows:,} rows), local[2], write_path={args.write_path}")
    print(f"{'':32}{'seconds':>10}{'rows/s':>14}")
    print(f"{'paimon_pk merge-write':32}{write['pk_model']:>10.1f}{paimon_rate:>14,.0f}")
    print(f"{'parquet table write':32}{write['parquet_model']:>10.1f}"
          f"{args.rows / write['parquet_model']:>14,.0f}")
    for name, label in (("pk_model", "  per run (first is cold)"), ("parquet_model", "  per run")):
        print(f"{label:32}" + " ".join(f"{t:.1f}" for t in per_run[name]))
    print(f"{'paimon_pk median warm run':32}{warm['pk_model']:>10.1f}{warm_rate:>14,.0f}")
    print(f"{'parquet median warm run':32}{warm['parquet_model']:>10.1f}"
          f"{run_rows / warm['parquet_model']:>14,.0f}")
    print(f"{'merged read (Paimon)':32}{read_pk:>10.2f}")
    print(f"{'parquet read':32}{read_parquet:>10.2f}")
    print(f"{'Python data source floor':32}{read_floor:>10.2f}  (same rows from Arrow files)")
    print(f"{'  of which fixed per query':32}{read_fixed:>10.2f}  (one row per partition)")
    print(f"{'pypaimon PK write':32}{pypaimon_rows / pypaimon_rate:>10.1f}"
          f"{pypaimon_rate:>14,.0f}  ({pypaimon_rows:,} rows, one commit)")
    print(f"\nmerge-write / parquet write = {write['pk_model'] / write['parquet_model']:.2f}x over "
          f"all runs, {warm['pk_model'] / warm['parquet_model']:.2f}x warm (goal <= 2x)")
    print(f"merged read / parquet read   = {read_pk / read_parquet:.2f}x (goal <= 2x)")
    print(f"floor read / parquet read    = {read_floor / read_parquet:.2f}x (no merge, no files: "
          f"Spark's Python data source alone)")
    print(f"write throughput vs pypaimon = {paimon_rate / pypaimon_rate:.1f}x over all runs, "
          f"{warm_rate / pypaimon_rate:.1f}x warm (goal >= 10x)")
    path = save_bars(
        "e2e_merge", ["merge-write", "parquet write", "merged read", "parquet read",
                      "py-source floor"],
        [write["pk_model"], write["parquet_model"], read_pk, read_parquet, read_floor],
        f"dbt run: {args.rows:,} rows, {args.keys:,} keys, {args.commits} commits",
        colors=[PAIMON, BASELINE, PAIMON, BASELINE, FLOOR])
    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
