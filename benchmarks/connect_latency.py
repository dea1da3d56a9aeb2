"""Latency of fresh dbt commands: a warm Spark Connect server vs session mode.

    flock /work/bench.lock .venv/bin/python benchmarks/connect_latency.py [--repeat 3] [--rows 500000]

Every measurement is the wall time of a new `dbt` process, as a user types it, side by side:
* `dbt show --inline "select 1"`: connect, session (dbt-paimon's embedded Spark) and plain
  dbt-spark's session method (goal: connect <= 3 s);
* `dbt run` of a one-model project (a 10-row paimon_pk): connect vs session (goal <= 5 s);
* 4 fresh `dbt run`s each merging --rows rows into a 4-bucket paimon_pk table vs the same 4 runs
  of a parquet `table` model, both over connect (goal: paimon_pk <= 1.5x parquet).
The server (local[2], 4 shuffle partitions, as the session targets) is started and warmed before
the first measurement and stopped at the end. Prints a table and saves it, with the commit and
the machine, to benchmarks/results/connect_latency.txt (plot: connect_latency.png).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from plots import BASELINE, FLOOR, PAIMON, RESULTS, save_bars  # same folder: run as a script

from dbt.adapters.paimon import connect_server, jvm_cds

HERE = os.path.dirname(os.path.abspath(__file__))
DBT = [sys.executable, "-m", "dbt.cli.main"]
PK_ROWS = """{{{{ config(materialized='{materialized}'{extra}) }}}}
select cast(id % {keys} as bigint) as k, cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double, concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('batch', 0) }}}} * {rows}, ({{{{ var('batch', 0) }}}} + 1) * {rows})
"""


def profiles(url: str, warehouse: str, root: str) -> str:
    session = ("      spark_master: 'local[2]'\n      spark_conf:\n"
               "        spark.sql.shuffle.partitions: '4'\n        spark.driver.memory: '4g'\n")
    return (
        "bench:\n  target: connect\n  outputs:\n"
        f"    connect:\n      type: paimon\n      schema: bench\n      method: connect\n"
        f"      host: '{url}'\n"
        f"    session:\n      type: paimon\n      schema: bench\n      warehouse: {root}/session_wh\n"
        + session +
        "    spark:\n      type: spark\n      method: session\n      host: NA\n      schema: bench\n"
        "      server_side_parameters:\n        spark.master: 'local[2]'\n"
        "        spark.sql.shuffle.partitions: '4'\n        spark.ui.showConsoleProgress: 'false'\n")


def write_project(root: str, url: str, warehouse: str, rows: int) -> None:
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(profiles(url, warehouse, root))
    models = {
        "one_pk.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}\n"
                      "select id, concat('v', id) as v from range(10)",
        "pk_model.sql": PK_ROWS.format(materialized="paimon_pk",
                                       extra=", primary_key='k', buckets=4", keys=rows,
                                       rows=rows),
        "parquet_model.sql": PK_ROWS.format(materialized="table", extra=", file_format='parquet'",
                                            keys=rows, rows=rows),
    }
    for name, sql in models.items():
        with open(os.path.join(root, "models", name), "w") as f:
            f.write(sql)


def dbt_seconds(root: str, *args: str) -> float:
    start = time.perf_counter()
    result = subprocess.run(DBT + list(args) + ["--project-dir", root, "--profiles-dir", root],
                            cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return seconds


def wait_for_cds_archive(timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while jvm_cds.dump_running() and time.monotonic() < deadline:
        time.sleep(1)


def cds_state() -> str:
    directory = jvm_cds.archive_dir()
    if directory is None:
        return "session mode without a CDS archive"
    archive = os.path.join(directory, f"{jvm_cds.archive_key()}.jsa")
    return ("session mode with its CDS archive" if jvm_cds.is_archive(archive)
            else "session mode without a CDS archive")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=500_000, help="rows of each merging run")
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="bench-connect-")
    warehouse = os.path.join(root, "connect_wh")
    port = free_port()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    server = connect_server.start(warehouse, port, master="local[2]",
                                  conf={"spark.sql.shuffle.partitions": "4",
                                        "spark.driver.memory": "4g"})
    server_start = time.perf_counter() - started
    write_project(root, server.url, warehouse, args.rows)
    rows = []  # (what, target, median seconds, every run)
    try:
        def measure(what, target, *dbt_args, repeat=args.repeat):
            times = [dbt_seconds(root, *dbt_args, "--target", target) for _ in range(repeat)]
            rows.append((what, target, statistics.median(times), times))

        # first runs of a project (dbt's parse, Spark's first model) are not what is measured;
        # session mode's JVM class-data-sharing archive is built once per machine: its first
        # session start writes it when its JVM exits
        dbt_seconds(root, "run", "-s", "one_pk", "--target", "connect")
        dbt_seconds(root, "run", "-s", "one_pk", "--target", "session")
        wait_for_cds_archive()
        for target in ("connect", "session", "spark"):
            measure('show --inline "select 1"', target, "show", "--inline", "select 1")
        for target in ("connect", "session"):
            measure("run: one 10-row paimon_pk", target, "run", "-s", "one_pk")
        for model in ("pk_model", "parquet_model"):
            times = [dbt_seconds(root, "run", "-s", model, "--vars", f"{{batch: {i}}}",
                                 "--target", "connect") for i in range(args.runs)]
            rows.append((f"{args.runs} runs x {args.rows:,} rows: {model}", "connect",
                         sum(times), times))
    finally:
        connect_server.stop(warehouse, port)
        shutil.rmtree(root, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                            capture_output=True, text=True).stdout.strip()
    lines = [f"# benchmarks/connect_latency.py, commit "
             f"{commit}, {platform.node()} ({os.cpu_count()} cores, {platform.machine()}), "
             f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; fresh dbt "
             f"processes, local[2]; server start + warm-up {server_start:.1f} s; "
             f"{cds_state()}",
             f"{'command':44}{'target':10}{'seconds':>9}   each run"]
    for what, target, seconds, times in rows:
        lines.append(f"{what:44}{target:10}{seconds:>9.1f}   "
                     + " ".join(f"{t:.1f}" for t in times))
    by = {(what, target): seconds for what, target, seconds, _ in rows}
    pk = by[(f"{args.runs} runs x {args.rows:,} rows: pk_model", "connect")]
    parquet = by[(f"{args.runs} runs x {args.rows:,} rows: parquet_model", "connect")]
    show_what, run_what = 'show --inline "select 1"', "run: one 10-row paimon_pk"
    lines += [f"show select 1 over connect: {by[(show_what, 'connect')]:.1f} s (goal <= 3 s); "
              f"session mode {by[(show_what, 'session')]:.1f} s, dbt-spark session mode "
              f"{by[(show_what, 'spark')]:.1f} s",
              f"run of a 10-row paimon_pk over connect: {by[(run_what, 'connect')]:.1f} s "
              f"(goal <= 5 s); session mode {by[(run_what, 'session')]:.1f} s",
              f"{args.runs} merging paimon_pk runs / parquet runs over connect = "
              f"{pk / parquet:.2f}x (goal <= 1.5x)"]
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "connect_latency.txt"), "w") as f:
        f.write(text + "\n")
    path = save_bars("connect_latency",
                     ["show\nconnect", "show\nsession", "show\ndbt-spark", "run 10 rows\nconnect",
                      "run 10 rows\nsession"],
                     [row[2] for row in rows[:5]], "fresh dbt processes (seconds)",
                     colors=[PAIMON, BASELINE, FLOOR, PAIMON, BASELINE])
    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
