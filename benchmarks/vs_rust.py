"""A primary-key run of dbt-paimon beside a parquet `table` model and pypaimon-rust.

    .venv/bin/pip install -e '.[bench]'          # pypaimon-rust, outside the runtime deps
    flock /work/bench.lock .venv/bin/python benchmarks/vs_rust.py [--rows 500000] [--runs 4]
    flock /work/bench.lock .venv/bin/python benchmarks/vs_rust.py --rows 5000000 --runs 2 \\
        --skip-fresh --write-paths auto,distributed   # the large run: which path, how fast

The same rows each run (``--rows`` rows over ``--rows`` keys, so every later run updates every
key) go into a 4-bucket ``paimon_pk`` table and a parquet ``table`` model:
* fresh  -- ``--runs`` `dbt run` processes, as users run dbt (each starts Spark); the models'
            own times from run_results.json, and each process's wall time;
* warm   -- ``--runs`` + 1 runs in this process (dbtRunner, one Spark session); the median
            of all but the first, per ``--write-paths`` entry (model config ``write_path``);
* rust   -- pypaimon-rust (DataFusion SQL) committing the same rows into the same kind of
            table, ``--runs`` commits, median of all but the first.
Goals: fresh paimon_pk <= 1.0x parquet; warm paimon_pk <= 3x pypaimon-rust's commit; at 5M
rows per run ``auto`` takes the distributed path and is no slower than ``distributed``.
Results: benchmarks/results/vs_rust.txt (the printed block) and vs_rust.png.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_project import fresh_dbt_runs, write_bench_project  # same folder: a script
from plots import BASELINE, FLOOR, PAIMON, save_bars

MODEL_ROWS = """
select cast(id % {rows} as bigint) as k,
       cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double,
       concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('batch') }}}} * {rows}, ({{{{ var('batch') }}}} + 1) * {rows})
"""


def write_project(root: str, rows: int) -> None:
    body = MODEL_ROWS.format(rows=rows)
    write_bench_project(root, {
        "pk_model.sql": "{{ config(materialized='paimon_pk', primary_key='k', buckets=4, "
                        "write_path=var('write_path', 'auto')) }}\n" + body,
        "parquet_model.sql": "{{ config(materialized='table', file_format='parquet') }}\n" + body,
    })


def fresh_runs(rows: int, runs: int):
    """``runs`` dbt processes; per run: (process seconds, {model: (seconds, message)})."""
    root = tempfile.mkdtemp(prefix="bench-rust-fresh-")
    write_project(root, rows)
    try:
        return fresh_dbt_runs(root, [{"batch": batch} for batch in range(runs)])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def warm_runs(root: str, rows: int, runs: int, write_path: str):
    """``runs`` + 1 dbt runs in this process into the project at ``root`` (one dbt process
    serves one warehouse): {model: [(seconds, message)]}. The first (cold) run rebuilds the
    tables (--full-refresh), so each write path's series starts from empty tables."""
    from dbt.cli.main import dbtRunner

    runner = dbtRunner()
    per_model = {}
    for batch in range(runs + 1):
        result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                "--vars", f"{{batch: {batch}, write_path: {write_path}}}",
                                "--quiet"] + (["--full-refresh"] if batch == 0 else []))
        if not result.success:
            raise RuntimeError(result.exception)
        for r in result.result.results:
            message = getattr(r.adapter_response, "get", lambda k: None)("_message") \
                or r.message or ""
            per_model.setdefault(r.node.name, []).append((r.execution_time, message))
    return per_model


def rust_commits(rows: int, runs: int):
    """pypaimon-rust: ``runs`` commits of the same rows into a 4-bucket primary-key table."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pypaimon_rust.datafusion import SQLContext

    root = tempfile.mkdtemp(prefix="bench-rust-pr-")
    ctx = SQLContext()
    ctx.register_catalog("paimon", {"warehouse": root})
    ctx.sql("CREATE SCHEMA paimon.bench")
    ctx.sql("CREATE TABLE paimon.bench.pk (k BIGINT NOT NULL, v_long BIGINT, v_double DOUBLE, "
            "v_string STRING, PRIMARY KEY (k)) WITH ('bucket' = '4')")
    seconds = []
    try:
        for batch in range(runs):
            ids = np.arange(batch * rows, (batch + 1) * rows, dtype=np.int64)
            names = pc.binary_join_element_wise("name-", pa.array((ids % 1000).astype(str)), "")
            data = pa.record_batch({"k": ids % rows, "v_long": ids, "v_double": ids * 0.5,
                                    "v_string": names})
            start = time.perf_counter()
            ctx.register_batch(f"run_{batch}", data)
            ctx.sql(f"INSERT INTO paimon.bench.pk SELECT * FROM run_{batch}")
            seconds.append(time.perf_counter() - start)
        count = ctx.sql("SELECT count(*) AS n FROM paimon.bench.pk")[0].column(0)[0].as_py()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert count == rows, f"pypaimon-rust merged table has {count} rows, expected {rows}"
    return seconds


class WorkerPeakRss:
    """The largest peak RSS (VmHWM) of any Spark Python worker seen while it runs, sampled from
    /proc every 0.2 s: the distributed path's memory per Python process (workers are the JVM's
    children, which this process's rusage never sees)."""

    def __init__(self):
        import threading

        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        while not self._stop.wait(0.2):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if b"pyspark.daemon" not in f.read():
                            continue
                    with open(f"/proc/{pid}/status") as f:
                        for line in f:
                            if line.startswith("VmHWM:"):
                                self.peak_kib = max(self.peak_kib, int(line.split()[1]))
                except OSError:  # the worker ended between listing and reading
                    continue


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=os.path.dirname(__file__)).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000, help="rows (and keys) per run")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--write-paths", default="auto",
                        help="comma-separated write_path configs for the warm runs")
    parser.add_argument("--skip-fresh", action="store_true")
    parser.add_argument("--skip-rust", action="store_true")
    args = parser.parse_args()

    load = os.getloadavg()[0]
    print(f"# benchmarks/vs_rust.py, "
          f"commit {_commit()}, {platform.machine()} {os.cpu_count()} cores, local[2], "
          f"load {load:.1f} at the start")
    print(f"{args.rows:,} rows per run over {args.rows:,} keys, 4 buckets, {args.runs} runs")
    bars, labels, colors = [], [], []
    if not args.skip_fresh:
        fresh = fresh_runs(args.rows, args.runs)
        pk = [r["pk_model"][0] for _, r in fresh]
        parquet = [r["parquet_model"][0] for _, r in fresh]
        print("fresh dbt processes (each starts Spark):")
        print(f"  paimon_pk per run      {' '.join(f'{t:.2f}' for t in pk)}  sum {sum(pk):.2f} s"
              f"  ({fresh[-1][1]['pk_model'][1]})")
        print(f"  parquet table per run  {' '.join(f'{t:.2f}' for t in parquet)}  "
              f"sum {sum(parquet):.2f} s")
        print(f"  dbt process wall       {' '.join(f'{w:.1f}' for w, _ in fresh)} s")
        print(f"  paimon_pk / parquet    {sum(pk) / sum(parquet):.2f}x (goal <= 1.0x)")
        bars += [sum(pk), sum(parquet)]
        labels += ["pk fresh (sum)", "parquet fresh (sum)"]
        colors += [PAIMON, BASELINE]
    rust = None if args.skip_rust else rust_commits(args.rows, args.runs)
    if rust:
        rust_warm = statistics.median(rust[1:]) if len(rust) > 1 else rust[0]
        print(f"pypaimon-rust commits    {' '.join(f'{t:.2f}' for t in rust)}  "
              f"median warm {rust_warm:.2f} s")
    warm_root = tempfile.mkdtemp(prefix="bench-rust-warm-")
    write_project(warm_root, args.rows)
    for write_path in args.write_paths.split(","):
        with WorkerPeakRss() as workers:
            warm = warm_runs(warm_root, args.rows, args.runs, write_path)
        pk = [t for t, _ in warm["pk_model"]]
        parquet = [t for t, _ in warm["parquet_model"]]
        pk_warm, parquet_warm = statistics.median(pk[1:]), statistics.median(parquet[1:])
        print(f"warm runs in one process, write_path={write_path} (first is cold):")
        print(f"  paimon_pk per run      {' '.join(f'{t:.2f}' for t in pk)}  "
              f"median warm {pk_warm:.2f} s")
        print(f"  parquet table per run  {' '.join(f'{t:.2f}' for t in parquet)}  "
              f"median warm {parquet_warm:.2f} s")
        print(f"  paimon_pk / parquet    {pk_warm / parquet_warm:.2f}x warm")
        for run, (_, message) in enumerate(warm["pk_model"], start=1):
            print(f"  paimon_pk run {run}: {message}")
        print(f"  peak RSS of a Spark Python worker (both models): "
              f"{workers.peak_kib / 1024:.0f} MiB")
        if rust:
            print(f"  paimon_pk / rust       {pk_warm / rust_warm:.2f}x warm (goal <= 3x)")
        bars += [pk_warm, parquet_warm]
        labels += [f"pk warm {write_path}", "parquet warm"]
        colors += [PAIMON, BASELINE]
    shutil.rmtree(warm_root, ignore_errors=True)
    print(f"peak RSS of this (dbt) process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if rust:
        bars.append(rust_warm)
        labels.append("rust warm")
        colors.append(FLOOR)
    path = save_bars(f"vs_rust_{args.rows}", labels, bars,
                     f"{args.rows:,} rows per run, 4 buckets", colors=colors)
    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
