"""Downstream reads of Paimon tables vs the same rows in a Parquet table, in one Spark session.

    flock /work/bench.lock .venv/bin/python benchmarks/read_speed.py [--rows 5000000]

The same ``--rows`` rows x 20 columns (an id, 9 integers, 5 doubles, 5 strings) as:
* a Parquet table (``USING parquet``, written by Spark): the floor;
* a Paimon append table, and a Paimon primary-key table after a full compaction, each read
  through its catalog entry (Spark's own Parquet reader: no split needs a merge) and through
  the ``paimon`` Python data source (what every read cost before, and what a read that needs a
  merge still costs);
* a primary-key table after 4 uncompacted runs (the first inserts every key, the next three
  update half of them): its entry reads each key's last record with Spark's reader (the merge
  of a deduplicate table is a choice of stored rows, made once per snapshot from the keys and
  sequence numbers alone: its time is reported beside the table), and through the Python
  source, which merges every column in the merge runtime;
* a deletion-vector primary-key table after the same 4 runs, each followed by the compaction
  dbt-paimon's runs do (deletion vectors for the superseded rows);
* a partial-update and an aggregation table (``i0`` summed, the other columns' last non-null
  value) after the same 4 runs: their merge combines values, so their entries read the merged
  rows Spark wrote once as Parquet at the snapshot's first read (its time is reported beside
  the table), and the partial-update table also through the Python source;
* pypaimon-rust's DataFusion SQL on the compacted primary-key table (its own reader).
Three downstream queries, each best of 3, as a dbt model's select would run them:
* narrow: 2 of 20 columns, a selective filter, a group by;
* full: every column aggregated;
* join: the table joined with itself on the key, one side filtered.
Then the memory a Python task needs to read one split (the largest of each table), each read in
a fresh Python process: its peak resident memory above what it held after its imports, for the
reader's way (pieces streamed as the data source hands them to Spark) and for the whole split
read at once.
Writes benchmarks/results/read_speed.txt and read_speed.png.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry  # noqa: E402
from dbt.adapters.paimon.datasource.source import TableRef  # noqa: E402
from dbt.adapters.paimon.catalog import warehouse as wh  # noqa: E402
from dbt.adapters.paimon.format.kv_files import table_arrow_schema  # noqa: E402
from dbt.adapters.paimon.ops import compact_table  # noqa: E402
from plots import BASELINE, PAIMON, RESULTS, save_bars  # noqa: E402
from provenance import results_header  # noqa: E402

INTS = [f"i{k}" for k in range(9)]
DOUBLES = [f"d{k}" for k in range(5)]
STRINGS = [f"s{k}" for k in range(5)]
QUERIES = {
    "narrow": "select i0 % 100 as g, sum(d0) as total from {t} where i1 < 50000 group by 1",
    "full": "select count(*), " + ", ".join(
        [f"sum({c})" for c in INTS + DOUBLES] + [f"max({c})" for c in STRINGS]) + " from {t}",
    "join": "select a.i0 % 100 as g, count(*) as n, sum(b.d1) as total from {t} a "
            "join {t} b on a.id = b.id where a.i1 < 100000 group by 1",
}


def rows_of(n: int, start: int, rng) -> pa.Table:
    columns = {"id": pa.array(np.arange(start, start + n), pa.int64())}
    for c in INTS:
        columns[c] = pa.array(rng.integers(0, 1_000_000, n), pa.int64())
    for c in DOUBLES:
        columns[c] = pa.array(rng.random(n))
    for c in STRINGS:
        columns[c] = pa.array(np.char.add("v", rng.integers(0, 10_000, n).astype(str)))
    return pa.table(columns)


def write_paimon(warehouse: str, name: str, runs, primary_key: bool, options=None) -> None:
    """One commit per run (a list of Arrow chunks) into a new table."""
    schema = runs[0][0].schema
    if primary_key:
        schema = pa.schema([schema.field("id").with_nullable(False)] + list(schema)[1:])
    wh.create_table(warehouse, "bench", name, schema,
                    primary_keys=["id"] if primary_key else [],
                    options={"bucket": "4", **(options or {})} if primary_key else {})
    for chunks in runs:
        write_run(warehouse, name, chunks)


def write_run(warehouse: str, name: str, chunks) -> None:
    table = wh.open_table(warehouse, "bench", name)
    schema = table_arrow_schema(table)
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    for chunk in chunks:
        write.write_arrow(chunk.cast(schema))
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


def updates(chunks, rng):
    """Half of the keys with new values: one update run."""
    out = []
    for chunk in chunks:
        keep = pa.array(rng.random(chunk.num_rows) < 0.5)
        fresh = rows_of(chunk.num_rows, 0, rng).drop_columns(["id"])
        picked = chunk.select(["id"]).filter(keep)
        out.append(pa.table({"id": picked.column("id"),
                             **{c: fresh.column(c).filter(keep) for c in fresh.column_names}}))
    return out


FLOOR = "Parquet table"


def ratio_cells(results, row: str, subjects, digits: int = 2) -> list:
    """One table row's cells: each subject's seconds, and its ratio to the Parquet table's."""
    floor = results[(row, FLOOR)]
    return [f"{results[(row, label)]:.{digits}f} s"
            + ("" if label == FLOOR else f" ({results[(row, label)] / floor:.2f}x)")
            for label, _ in subjects]


def save_comparison(name: str, results, rows, subjects, title: str) -> None:
    """Every (row, subject)'s seconds as bars, the Parquet table's in the baseline colour."""
    pairs = [(row, label) for row in rows for label, _ in subjects]
    save_bars(name, [f"{row}\n{label}" for row, label in pairs],
              [results[pair] for pair in pairs], title,
              [BASELINE if label == FLOOR else PAIMON for _, label in pairs])


def rust_seconds(warehouse: str, sql: str, times: int = 3) -> float:
    from pypaimon_rust.datafusion import SQLContext

    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": warehouse})
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        ctx.sql(sql)
        best = min(best, time.perf_counter() - start)
    return best


def best_of(spark, sql: str, times: int = 3) -> float:
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        spark.sql(sql).collect()
        best = min(best, time.perf_counter() - start)
    return best


# one split read in a fresh process: argv = warehouse, table, 'streamed' | 'whole'; prints the
# process's peak resident memory (KiB) after the imports and after the read, and the rows.
# /proc/self/status VmHWM, not ru_maxrss: Linux carries a parent's peak into ru_maxrss across
# fork and exec, and this benchmark's own process is large
SPLIT_READ = """
import os, sys
from dbt.adapters.paimon.datasource.source import iter_merged_split, read_merged_split
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.kv_files import iter_append_file
from dbt.adapters.paimon.format.splits import plan_splits
import dbt.adapters.paimon.runtime, polars  # imported by a first merge: not the read's memory

def peak():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

table = wh.open_table(sys.argv[1], "bench", sys.argv[2])
split = max(plan_splits(table), key=lambda s: sum(f.row_count for f in s.files))
names = list(table.field_names)
before = peak()
if not table.primary_keys:
    pieces = (p for f in split.files for p in iter_append_file(table, split, f, names))
elif sys.argv[3] == "streamed":
    pieces = iter_merged_split(table, split, names)
else:
    pieces = [read_merged_split(table, split, names)]
rows = sum(p.num_rows for p in pieces)
print(before, peak(), rows, flush=True)
os._exit(0)  # (pypaimon's reader can leave a thread that aborts the interpreter's exit)
"""


def split_read_mib(warehouse: str, name: str, way: str) -> tuple:
    """(MiB a fresh process's read of the table's largest split adds to its peak, rows)."""
    done = subprocess.run([sys.executable, "-c", SPLIT_READ, warehouse, name, way],
                          capture_output=True, text=True, check=True,
                          cwd=os.path.join(os.path.dirname(__file__), ".."))
    before, after, rows = map(int, done.stdout.split())
    return (after - before) / 1024, rows


def bench_session(root: str):
    """A local[2] Spark session with dbt-paimon's settings, its state under ``root``."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from dbt.adapters.paimon.environments.spark_conf import default_spark_conf

    builder = SparkSession.builder
    for key, value in default_spark_conf("local[2]", os.path.join(root, "state")).items():
        builder = builder.config(key, value)
    spark = builder.config("spark.driver.memory", "4g").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="read-speed-")
    warehouse = os.path.join(root, "warehouse")
    spark = bench_session(root)

    rng = np.random.default_rng(7)
    chunk = 500_000
    chunks = [rows_of(min(chunk, args.rows - s), s, rng) for s in range(0, args.rows, chunk)]
    write_paimon(warehouse, "events_append", [chunks], primary_key=False)
    write_paimon(warehouse, "events_pk", [chunks], primary_key=True)
    compact_table(spark, TableRef(warehouse, "bench", "events_pk", {}), full=True)
    runs = [chunks] + [updates(chunks, rng) for _ in range(3)]
    write_paimon(warehouse, "events_pk_4_runs", runs, primary_key=True)
    write_paimon(warehouse, "events_pu_4_runs", runs, primary_key=True,
                 options={"merge-engine": "partial-update"})
    write_paimon(warehouse, "events_agg_4_runs", runs, primary_key=True,
                 options={"merge-engine": "aggregation", "fields.i0.aggregate-function": "sum"})
    write_paimon(warehouse, "events_pk_dv", runs[:1], primary_key=True,
                 options={"deletion-vectors.enabled": "true"})
    dv = TableRef(warehouse, "bench", "events_pk_dv", {})
    compact_table(spark, dv)
    for run in runs[1:]:
        write_run(warehouse, "events_pk_dv", run)
        compact_table(spark, dv)  # lifts the run above level 0, deleting what it supersedes
    registry = PaimonTableRegistry(spark, warehouse, {})
    spark.sql("create database if not exists bench")
    start = time.perf_counter()
    registry.expose("bench", "events_pk_4_runs")  # the snapshot's choice of rows, made once
    choice_seconds = time.perf_counter() - start
    merge_seconds = {}
    for name in ("events_pu_4_runs", "events_agg_4_runs"):
        start = time.perf_counter()
        registry.expose("bench", name, merge=True)  # the snapshot's merge of values, made once
        merge_seconds[name] = time.perf_counter() - start
    registry.sync()
    spark.sql("create database if not exists floor")
    frame = spark.createDataFrame(pa.concat_tables(chunks).to_pandas())
    frame.write.format("parquet").saveAsTable("floor.events_parquet")
    for name in ("events_append", "events_pk", "events_pk_4_runs", "events_pu_4_runs"):
        spark.read.format("paimon").option("warehouse", warehouse) \
            .option("table", f"bench.{name}").load().createOrReplaceTempView(f"{name}_python")

    subjects = [("Parquet table", "floor.events_parquet"),
                ("append, native", "bench.events_append"),
                ("append, Python source", "events_append_python"),
                ("pk compacted, native", "bench.events_pk"),
                ("pk compacted, Python source", "events_pk_python"),
                ("pk 4 runs, native", "bench.events_pk_4_runs"),
                ("pk 4 runs, Python source (merge runtime)", "events_pk_4_runs_python"),
                ("pk deletion vectors 4 runs, native", "bench.events_pk_dv"),
                ("partial-update 4 runs, native (merged once)", "bench.events_pu_4_runs"),
                ("partial-update 4 runs, Python source (merge runtime)",
                 "events_pu_4_runs_python"),
                ("aggregation 4 runs, native (merged once)", "bench.events_agg_4_runs")]
    results = {}
    for query, sql in QUERIES.items():
        for label, table in subjects:
            results[(query, label)] = best_of(spark, sql.format(t=table))
        results[(query, "pypaimon-rust, pk compacted")] = rust_seconds(
            warehouse, sql.format(t="paimon.bench.events_pk"))
    subjects.append(("pypaimon-rust, pk compacted", None))

    lines = [results_header("read_speed.py", f"{args.rows:,} rows x 20 columns, local[2]"),
             "| query | " + " | ".join(label for label, _ in subjects) + " |",
             "|---|" + "---|" * len(subjects)]
    for query in QUERIES:
        lines.append(f"| {query} | " + " | ".join(ratio_cells(results, query, subjects)) + " |")
    lines.append(f"pk 4 runs: choosing each key's last record of the new snapshot (once per "
                 f"snapshot, at its first read): {choice_seconds:.2f} s")
    for name, label in (("events_pu_4_runs", "partial-update"),
                        ("events_agg_4_runs", "aggregation")):
        lines.append(f"{label} 4 runs: merging the new snapshot's values into Parquet files "
                     f"(once per snapshot, at its first read): {merge_seconds[name]:.2f} s")
    lines += ["", "Memory of a Python task reading one split (the table's largest), all columns: "
              "peak resident memory above the process's after its imports",
              "| table | rows | as the reader streams it | the split read whole |", "|---|---|---|---|"]
    for label, name in (("append", "events_append"), ("pk compacted", "events_pk"),
                        ("pk 4 runs (merge runtime)", "events_pk_4_runs")):
        streamed, rows = split_read_mib(warehouse, name, "streamed")
        whole = f"{split_read_mib(warehouse, name, 'whole')[0]:.0f} MiB" \
            if name != "events_append" else "-"
        lines.append(f"| {label} | {rows:,} | {streamed:.0f} MiB | {whole} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "read_speed.txt"), "w", encoding="utf-8") as out:
        out.write(text)
    save_comparison("read_speed", results, list(QUERIES), subjects,
                    "Downstream reads: Paimon vs Parquet")
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
