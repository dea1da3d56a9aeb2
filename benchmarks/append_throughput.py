"""Append throughput: `dbt run` of a scalable paimon_append model beside a plain
parquet `table` model writing the same rows, in the same dbt run.

    .venv/bin/python benchmarks/append_throughput.py [--rows 5000000] [--runs 4]

One dbt project, one Spark session (local[2]); each of `--runs` dbt runs builds both models
(the append model appends --rows rows as one Paimon commit, the parquet model rewrites its
table with the same rows). The first run pays Spark's warm-up for whichever model goes first,
so the table reports the median of the later runs. Goal: paimon_append within 1.5x of parquet.
Writes benchmarks/results/append_throughput.txt and .png.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

from dbt.cli.main import dbtRunner

from e2e_merge import model_seconds  # same folder: run as a script
from bench_project import write_bench_project
from plots import BASELINE, PAIMON, save_bars
from provenance import results_header

MODEL_ROWS = """
select cast(id as bigint) as event_id,
       cast(id % 100000 as bigint) as user_id,
       cast(id * 0.5 as double) as amount,
       concat('event-', cast(id % 1000 as string)) as event_type,
       date_add(date'2024-01-01', cast(id % 8 as int)) as event_date
from range({rows})
"""


def write_project(root: str, rows: int) -> None:
    body = MODEL_ROWS.format(rows=rows)
    write_bench_project(root, {
        "append_model.sql": "{{ config(materialized='paimon_append') }}\n" + body,
        "parquet_model.sql": "{{ config(materialized='table', file_format='parquet') }}\n" + body,
    })


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="bench-append-")
    write_project(root, args.rows)
    runner = dbtRunner()
    runs = []
    try:
        for _ in range(args.runs):
            result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                    "--quiet"])
            if not result.success:
                print(result.exception, file=sys.stderr)
                return 1
            runs.append(model_seconds(result))
        from dbt.adapters.paimon import environments

        spark = environments.current_registry().activate()
        appended = spark.table("bench.append_model").count()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    warm = runs[1:] or runs  # the first run pays Spark's and the Python workers' start-up
    median = {name: statistics.median(r[name] for r in warm)
              for name in ("append_model", "parquet_model")}
    ratio = median["append_model"] / median["parquet_model"]

    def row(label: str, name: str) -> str:
        return (f"{label:28}{median[name]:>10.1f}{args.rows / median[name]:>14,.0f}   "
                + ", ".join(f"{r[name]:.1f}" for r in runs))

    lines = [
        results_header("append_throughput.py", "local[2]"),
        "",
        f"{args.rows:,} rows per dbt run, {args.runs} runs in one process (append table now "
        f"holds {appended:,} rows); median of the runs after the first",
        f"{'':28}{'seconds':>10}{'rows/s':>14}   per run",
        row("paimon_append (scalable)", "append_model"),
        row("parquet table", "parquet_model"),
        "",
        f"paimon_append / parquet = {ratio:.2f}x (goal <= 1.5x); per run: "
        + ", ".join(f"{r['append_model'] / r['parquet_model']:.2f}x" for r in runs),
        "The first run is cold: the append model goes first and pays the Python workers' start-up.",
    ]
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "append_throughput.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    path = save_bars("append_throughput", ["paimon_append", "parquet table"],
                     [median["append_model"], median["parquet_model"]],
                     f"dbt run appending {args.rows:,} rows ({ratio:.2f}x)",
                     colors=[PAIMON, BASELINE], ylabel="seconds (median warm run)")
    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
