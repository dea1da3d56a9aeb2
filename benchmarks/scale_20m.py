"""Scale benchmark: `dbt run` merging 20,000,000 rows over 5,000,000 keys into a
bucketed paimon_pk table, with the peak memory of every process involved.

    .venv/bin/python benchmarks/scale_20m.py [--rows 20000000] [--keys 5000000] [--runs 4]
                                             [--buckets 16] [--out benchmarks/results/scale_20m.txt]

One child process runs the dbt runs (dbtRunner, one Spark session, local[2]): `--runs` runs of
rows/runs rows each, every run touching every key once, so each run merges into the table
written by the previous ones. Then a merged read checks the result (one row per key, each with
its last version). Meanwhile this process samples the RSS of the child's process tree from /proc
every 0.5 s: the Python driver (dbt), the Spark driver JVM and the Python workers (peak of
their sum and of the largest one). A writing task holds one (partition, bucket)'s rows, so
worker memory is bounded by rows / buckets, not by the table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

from provenance import results_header  # same folder: run as a script

MODEL = """{{{{ config(materialized='paimon_pk', primary_key='k', buckets={buckets}) }}}}
select cast(id % {keys} as bigint) as k,
       cast({{{{ var('run') }}}} as int) as version,
       cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double,
       concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('run') }}}} * {per_run}, ({{{{ var('run') }}}} + 1) * {per_run})
"""


# --------------------------------------------------------------------------- child: dbt runs

def child(root: str, runs: int, keys: int) -> int:
    from dbt.cli.main import dbtRunner

    runner = dbtRunner()
    for run in range(runs):
        start = time.perf_counter()
        result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                "--vars", f"{{run: {run}}}", "--quiet"])
        if not result.success:
            print(json.dumps({"error": str(result.exception)}), flush=True)
            return 1
        model_seconds = sum(r.execution_time for r in result.result.results)
        print(json.dumps({"run": run, "seconds": time.perf_counter() - start,
                          "model_seconds": model_seconds}), flush=True)
    from dbt.adapters.paimon import environments

    spark = environments.current_registry().activate()
    start = time.perf_counter()
    check = spark.sql("select count(*) as n, count(distinct k) as keys, min(version) as lo, "
                      "max(version) as hi from scale.big").collect()[0]
    print(json.dumps({"read_seconds": time.perf_counter() - start, "rows": check["n"],
                      "keys": check["keys"], "min_version": check["lo"],
                      "max_version": check["hi"]}), flush=True)
    return 0


# --------------------------------------------------------------------------- memory sampling

def _children(pid: int) -> List[int]:
    """Child processes of every thread (the JVM starts Python workers from its own threads,
    which /proc/<pid>/task/<pid>/children alone would miss)."""
    found: List[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return found


def _tree(pid: int) -> List[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(_children(current))
    return found


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _kind(pid: int, root_pid: int) -> str:
    if pid == root_pid:
        return "python_driver"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    if "java" in cmd.split(" ")[0]:
        return "jvm"
    if "pyspark.daemon" in cmd or "pyspark.worker" in cmd or "pyspark/worker" in cmd:
        return "python_worker"
    return "other"


def sample(root_pid: int, peaks: Dict[str, float]) -> None:
    totals: Dict[str, float] = {}
    largest_worker = 0.0
    for pid in _tree(root_pid):
        kind, rss = _kind(pid, root_pid), _rss_mb(pid)
        totals[kind] = totals.get(kind, 0.0) + rss
        if kind == "python_worker":
            largest_worker = max(largest_worker, rss)
    totals["largest_python_worker"] = largest_worker
    totals["whole_tree"] = sum(v for k, v in totals.items() if k != "largest_python_worker")
    for kind, value in totals.items():
        peaks[kind] = max(peaks.get(kind, 0.0), value)


# --------------------------------------------------------------------------- main

def write_project(root: str, rows: int, keys: int, runs: int, buckets: int) -> None:
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: scale\nversion: '1.0'\nconfig-version: 2\nprofile: scale\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write("scale:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
                "      schema: scale\n      spark_master: 'local[2]'\n      spark_conf:\n"
                f"        spark.sql.shuffle.partitions: '{buckets}'\n"
                "        spark.driver.memory: '4g'\n")
    with open(os.path.join(root, "models", "big.sql"), "w") as f:
        f.write(MODEL.format(buckets=buckets, keys=keys, per_run=rows // runs))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--keys", type=int, default=5_000_000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(
        __file__)), "results", "scale_20m.txt"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.runs, args.keys)

    root = tempfile.mkdtemp(prefix="bench-scale-")
    write_project(root, args.rows, args.keys, args.runs, args.buckets)
    peaks: Dict[str, float] = {}
    events = []
    start = time.perf_counter()
    try:
        process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", root, "--runs",
             str(args.runs), "--keys", str(args.keys)],
            stdout=subprocess.PIPE, text=True, bufsize=1)
        os.set_blocking(process.stdout.fileno(), False)
        while process.poll() is None:
            sample(process.pid, peaks)
            for line in process.stdout:
                if line.startswith("{"):
                    events.append(json.loads(line))
            time.sleep(0.5)
        for line in process.stdout:
            if line.startswith("{"):
                events.append(json.loads(line))
        total = time.perf_counter() - start
        code = process.returncode
    finally:
        shutil.rmtree(root, ignore_errors=True)
    lines = [results_header("scale_20m.py", "local[2]"), "",
             f"{args.rows:,} rows over {args.keys:,} keys in {args.runs} dbt runs into a "
             f"{args.buckets}-bucket paimon_pk table (each run merges {args.rows // args.runs:,} "
             f"rows, one per key)", ""]
    for event in events:
        if "run" in event:
            lines.append(f"run {event['run'] + 1}: {event['seconds']:8.1f} s "
                         f"(model {event['model_seconds']:.1f} s, "
                         f"{args.rows // args.runs / event['model_seconds']:,.0f} rows/s)")
        elif "read_seconds" in event:
            lines.append(f"merged read + check: {event['read_seconds']:.1f} s: "
                         f"{event['rows']:,} rows, {event['keys']:,} distinct keys, versions "
                         f"{event['min_version']}..{event['max_version']}")
        elif "error" in event:
            lines.append(f"FAILED: {event['error']}")
    lines += [f"total wall time (incl. dbt and Spark start): {total:.1f} s, exit code {code}", "",
              "peak RSS (MB)"]
    for kind in ("python_driver", "jvm", "python_worker", "largest_python_worker",
                 "whole_tree"):
        label = {"python_driver": "Python driver (dbt)", "jvm": "Spark driver JVM",
                 "python_worker": "Python workers (sum)",
                 "largest_python_worker": "largest Python worker",
                 "whole_tree": "whole process tree"}[kind]
        lines.append(f"  {label:28}{peaks.get(kind, 0.0):10,.0f}")
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text + "\n")
    ok = code == 0 and any(e.get("keys") == args.keys and e.get("rows") == args.keys
                           for e in events)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
