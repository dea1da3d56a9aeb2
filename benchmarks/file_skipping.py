"""File skipping: a filter that only a few files can match, Paimon vs a Parquet table.

    flock /work/bench.lock .venv/bin/python benchmarks/file_skipping.py [--rows 2000000] [--files 100]

The same ``--rows`` rows x 20 columns (read_speed.py's) in ``--files`` files ordered by ``id``
(the layout of time-ordered data, where skipping pays), as:
* a Parquet table written by Spark (range-partitioned by ``id``): the floor;
* a Paimon append table, one commit per file, written by the adapter's append writer (full
  statistics in the manifests), read through its catalog entry (Spark's Parquet reader over the
  snapshot's file list: it skips a file by its footer's statistics) and through the ``paimon``
  Python data source (it skips a file by the manifests' statistics, before opening it).
Three filters, each query best of 5: one file's range of ids, no file's (``id < 0``), and a
filter every file matches (a random column). Writes benchmarks/results/file_skipping.txt and
file_skipping.png.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry  # noqa: E402
from dbt.adapters.paimon.datasource.source import (FILTER_PUSHDOWN_OPTION,  # noqa: E402
                                                   commit_append_files, write_append_files)
from dbt.adapters.paimon.catalog import warehouse as wh  # noqa: E402
from plots import RESULTS  # noqa: E402
from provenance import results_header  # noqa: E402
from read_speed import bench_session, best_of, ratio_cells, rows_of, save_comparison  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="file-skipping-")
    warehouse = os.path.join(root, "warehouse")
    spark = bench_session(root)

    rng = np.random.default_rng(7)
    per_file = args.rows // args.files
    chunks = [rows_of(per_file, start, rng) for start in range(0, per_file * args.files, per_file)]
    table = wh.create_table(warehouse, "bench", "events", chunks[0].schema)
    for chunk in chunks:  # one commit, one file each
        table = wh.open_table(warehouse, "bench", "events")
        commit_append_files(table, write_append_files(table, [chunk]))
    spark.sql("create database if not exists bench")
    PaimonTableRegistry(spark, warehouse, {}).sync()
    # with the filters pushed to it, as the adapter's sessions read (its statistics skip files)
    spark.read.format("paimon").option("warehouse", warehouse).option("table", "bench.events") \
        .option(FILTER_PUSHDOWN_OPTION, "true").load().createOrReplaceTempView("events_python")
    spark.sql("create database if not exists floor")
    spark.createDataFrame(pa.concat_tables(chunks).to_pandas()) \
        .repartitionByRange(args.files, "id").write.format("parquet") \
        .saveAsTable("floor.events_parquet")

    middle = per_file * (args.files // 2)
    filters = {"one file": f"id between {middle} and {middle + per_file // 2}",
               "no file": "id < 0",
               "every file": "i1 < 50000"}
    subjects = [("Parquet table", "floor.events_parquet"), ("Paimon, native", "bench.events"),
                ("Paimon, Python source", "events_python")]
    results = {}
    for name, where in filters.items():
        sql = f"select count(*), sum(i0) from {{t}} where {where}"
        answers = {tuple(spark.sql(sql.format(t=t)).collect()[0]) for _, t in subjects}
        assert len(answers) == 1, f"the tables disagree on {name}: {answers}"
        for label, t in subjects:
            results[(name, label)] = best_of(spark, sql.format(t=t), 5)

    lines = [results_header("file_skipping.py", f"{per_file * args.files:,} rows x 20 columns "
                            f"in {args.files} files ordered by id, local[2]"),
             "| filter | " + " | ".join(label for label, _ in subjects) + " |",
             "|---|" + "---|" * len(subjects)]
    for name, where in filters.items():
        lines.append(f"| {name} (`{where}`) | "
                     + " | ".join(ratio_cells(results, name, subjects, 3)) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "file_skipping.txt"), "w", encoding="utf-8") as out:
        out.write(text)
    save_comparison("file_skipping", results, list(filters), subjects,
                    "Selective filters: Paimon vs Parquet")
    spark.stop()
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
