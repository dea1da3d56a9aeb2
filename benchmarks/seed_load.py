"""`dbt seed` of one 10-column CSV (bigint, double, text, boolean, timestamp, date, NULLs) at
1k, 10k, 100k and 1M rows, side by side in one run:

* paimon        -- dbt-paimon's default (`file_format: paimon`): the file read with Arrow,
                   one Paimon commit;
* paimon parquet -- dbt-paimon with `+file_format: parquet` (a Spark parquet table, the same
                   Arrow read);
* dbt-duckdb    -- dbt-duckdb 1.11 loading the same file (its `COPY`, after dbt's agate parse),
                   when the `bench` extra is installed.

    flock /work/bench.lock .venv/bin/python benchmarks/seed_load.py [--runs 2] [--sizes 1000,...]

Each measurement is a fresh `dbt seed` process (as users run it; each starts Spark); the seed
time is the seed node's execution time from run_results.json, best of ``--runs``. Goal: 100k
rows in <= 2 s of seed time and within 3x of dbt-duckdb.
Results: benchmarks/results/seed_load.txt (the printed block) and seed_load.png.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from bench_project import PROFILE
from plots import BASELINE, FLOOR, PAIMON, save_bars
from provenance import results_header

MODES = {"paimon": "paimon", "paimon parquet": "paimon", "dbt-duckdb": "duckdb"}
HEADER = ["id", "customer_id", "name", "city", "amount", "qty", "is_active", "created_at",
          "order_date", "note"]


def write_csv(path: str, rows: int) -> None:
    rng = random.Random(7)
    base = dt.datetime(2024, 1, 1)
    cities = ["Paris", "Rome", "Oslo", "Lima", "Quito"]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(HEADER)
        for i in range(rows):
            out.writerow([i, rng.randint(1, 5000), f"name_{i % 997}", cities[i % 5],
                          f"{rng.random() * 1000:.2f}", rng.randint(0, 50),
                          "true" if i % 3 else "false",
                          (base + dt.timedelta(seconds=i * 37)).strftime("%Y-%m-%d %H:%M:%S"),
                          (base + dt.timedelta(days=i % 900)).strftime("%Y-%m-%d"),
                          "" if i % 10 == 0 else f"note {i}"])


def write_project(root: str, rows: int, mode: str) -> None:
    os.makedirs(os.path.join(root, "seeds"))
    config = "seeds:\n  bench:\n    +file_format: parquet\n" if mode == "paimon parquet" else ""
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n" + config)
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(PROFILE + "    duckdb:\n      type: duckdb\n"
                f"      path: {root}/bench.duckdb\n      schema: bench\n")
    write_csv(os.path.join(root, "seeds", "orders.csv"), rows)


def seed_time(root: str, target: str) -> float:
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    subprocess.run([dbt, "seed", "--project-dir", root, "--profiles-dir", root,
                    "--target", target, "--quiet"], check=True, cwd=root)
    with open(os.path.join(root, "target", "run_results.json")) as f:
        (result,) = json.load(f)["results"]
    assert result["status"] == "success", result
    return result["execution_time"]


def has_dbt_duckdb() -> bool:
    try:
        import dbt.adapters.duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = {m: t for m, t in MODES.items() if t != "duckdb" or has_dbt_duckdb()}
    lines = [results_header("seed_load.py", "local[2]"),
             f"`dbt seed` of one 10-column CSV, fresh dbt processes, seed node time, best of "
             f"{args.runs}; rows/s in brackets"]
    print(lines[0], flush=True)
    times = {}
    for rows in sizes:
        for mode, target in modes.items():
            root = tempfile.mkdtemp(prefix="bench-seed-")
            try:
                write_project(root, rows, mode)
                best = min(seed_time(root, "duckdb" if target == "duckdb" else "dev")
                           for _ in range(args.runs))
            finally:
                shutil.rmtree(root, ignore_errors=True)
            times[(rows, mode)] = best
        lines.append(f"{rows:>9,} rows  " + "   ".join(
            f"{mode} {times[(rows, mode)]:6.2f} s ({rows / times[(rows, mode)]:>9,.0f}/s)"
            for mode in modes))
        print(lines[-1], flush=True)
    if 100_000 in sizes:
        paimon = times[(100_000, "paimon")]
        line = f"100k rows: paimon {paimon:.2f} s (goal <= 2 s)"
        if "dbt-duckdb" in modes:
            line += f", {paimon / times[(100_000, 'dbt-duckdb')]:.2f}x dbt-duckdb (goal <= 3x)"
        lines.append(line)
    biggest = max(sizes)
    plot = save_bars("seed_load", list(modes), [times[(biggest, m)] for m in modes],
                     f"`dbt seed` of {biggest:,} rows x 10 columns (seed time)",
                     [PAIMON, BASELINE, FLOOR][:len(modes)])
    lines.append(f"plot: {os.path.relpath(plot, os.path.dirname(os.path.dirname(plot)))}")
    print("\n".join(lines[1:]))
    results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "seed_load.txt")
    with open(results, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
