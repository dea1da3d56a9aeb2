"""Where a warm distributed primary-key run spends its time, from Spark's event log.

    flock /work/bench.lock .venv/bin/python benchmarks/distributed_profile.py [--rows 500000]
        [--runs 3]

The vs_rust.py model (``--rows`` rows over ``--rows`` keys into a 4-bucket ``paimon_pk``
table, ``write_path: distributed``) runs ``--runs`` + 1 times in one process (dbtRunner, one
Spark session with its event log on); the first run is cold and not reported. For each warm run
the event log gives every Spark job inside the model's time, and the report splits the run into:
* each job's wall time, named by its call site in the write path, and its stages' task time
  split into Spark's own metrics (executor run and CPU time, deserialization, result
  serialization, GC, shuffle write and fetch wait; task run time minus CPU time is mostly the
  JVM waiting for the Python worker);
* the dbt process's time outside Spark jobs (dbt's own work, planning, the commit).
Prints the table and saves it, with the commit and the machine, to
benchmarks/results/distributed_profile.txt.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple

from bench_project import PROFILE, write_bench_project  # same folder: run as a script
from plots import RESULTS

MODEL = """{{{{ config(materialized='paimon_pk', primary_key='k', buckets=4,
                         write_path='distributed') }}}}
select cast(id % {rows} as bigint) as k, cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double, concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('batch') }}}} * {rows}, ({{{{ var('batch') }}}} + 1) * {rows})
"""
# task metrics summed per job (milliseconds, except the *_ns ones)
METRICS = (("Executor Run Time", "run"), ("Executor CPU Time", "cpu_ns"),
           ("Executor Deserialize Time", "deserialize"), ("Result Serialization Time",
                                                          "result_ser"),
           ("JVM GC Time", "gc"))


def write_project(root: str, rows: int, event_dir: str) -> None:
    write_bench_project(root, {"pk_model.sql": MODEL.format(rows=rows)})
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(PROFILE + "        spark.eventLog.enabled: 'true'\n"
                "        spark.eventLog.compress: 'false'\n"
                f"        spark.eventLog.dir: 'file://{event_dir}'\n")


def run_models(root: str, runs: int) -> List[Tuple[float, float, float, str]]:
    """``runs`` + 1 dbt runs: [(start epoch ms, end epoch ms, model seconds, message)]."""
    from dbt.cli.main import dbtRunner

    runner = dbtRunner()
    out = []
    for batch in range(runs + 1):
        start = time.time() * 1000
        result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                "--vars", f"{{batch: {batch}}}", "--quiet"]
                               + (["--full-refresh"] if batch == 0 else []))
        end = time.time() * 1000
        if not result.success:
            raise RuntimeError(result.exception)
        (model,) = result.result.results
        message = getattr(model.adapter_response, "get", lambda k: None)("_message") or ""
        out.append((start, end, model.execution_time, message))
    return out


def read_events(event_dir: str) -> List[dict]:
    """Spark 4 writes one folder per application (eventlog_v2_<app>/events_<n>_<app>)."""
    events = []
    for path in sorted(glob.glob(os.path.join(event_dir, "*", "events_*"))):
        with open(path) as f:
            events += [json.loads(line) for line in f]
    return events


def jobs_of(events: List[dict]) -> List[dict]:
    """Every job: its times, its stages' names and its tasks' summed metrics."""
    stage_job, jobs = {}, {}
    for event in events:
        kind = event["Event"]
        if kind == "SparkListenerJobStart":
            job = {"id": event["Job ID"], "start": event["Submission Time"],
                   "stages": [s["Stage Name"] for s in event["Stage Infos"]],
                   "tasks": 0, **{name: 0 for _, name in METRICS},
                   "shuffle_write_bytes": 0, "shuffle_write_ns": 0, "fetch_wait": 0}
            jobs[job["id"]] = job
            for stage in event["Stage IDs"]:
                stage_job[stage] = job
        elif kind == "SparkListenerJobEnd":
            jobs[event["Job ID"]]["end"] = event["Completion Time"]
        elif kind == "SparkListenerTaskEnd" and event.get("Task Metrics"):
            job = stage_job.get(event["Stage ID"])
            if job is None:
                continue
            metrics = event["Task Metrics"]
            job["tasks"] += 1
            for key, name in METRICS:
                job[name] += metrics.get(key, 0)
            write = metrics.get("Shuffle Write Metrics", {})
            job["shuffle_write_bytes"] += write.get("Shuffle Bytes Written", 0)
            job["shuffle_write_ns"] += write.get("Shuffle Write Time", 0)
            job["fetch_wait"] += metrics.get("Shuffle Read Metrics", {}).get("Fetch Wait Time", 0)
    return sorted((j for j in jobs.values() if "end" in j), key=lambda j: j["start"])


def job_label(job: dict) -> str:
    """The job's call site, as Spark names its last stage ("collect at task_errors.py:41")."""
    name = job["stages"][-1]
    action, _, where = name.partition(" at ")
    return f"{action} at {os.path.basename(where)}" if where else name


def report(runs, jobs) -> List[str]:
    lines = []
    outside = []
    for number, (start, end, seconds, message) in enumerate(runs[1:], start=2):
        inside = [j for j in jobs if j["start"] >= start and j["end"] <= end]
        busy = _union_ms([(j["start"], j["end"]) for j in inside])
        outside.append((end - start - busy) / 1000)
        lines.append(f"run {number}: {(end - start) / 1000:.2f} s in dbt ({seconds:.2f} s the "
                     f"model), Spark jobs {busy / 1000:.2f} s, outside jobs "
                     f"{(end - start - busy) / 1000:.2f} s; {message}")
        lines.append(f"  {'job (call site)':34}{'wall s':>8}{'tasks':>6}{'run s':>8}{'cpu s':>8}"
                     f"{'deser s':>8}{'gc s':>7}{'shuffle MiB':>12}{'sh.write s':>11}"
                     f"{'fetch s':>8}")
        for job in inside:
            lines.append(
                f"  {job_label(job):34}{(job['end'] - job['start']) / 1000:>8.2f}"
                f"{job['tasks']:>6}{job['run'] / 1000:>8.2f}{job['cpu_ns'] / 1e9:>8.2f}"
                f"{job['deserialize'] / 1000:>8.2f}{job['gc'] / 1000:>7.2f}"
                f"{job['shuffle_write_bytes'] / 2**20:>12.1f}"
                f"{job['shuffle_write_ns'] / 1e9:>11.2f}{job['fetch_wait'] / 1000:>8.2f}")
    lines.append(f"median time outside Spark jobs: {statistics.median(outside):.2f} s")
    return lines


def _union_ms(intervals) -> float:
    total, last_end = 0.0, None
    for start, end in sorted(intervals):
        if last_end is None or start > last_end:
            total += end - start
            last_end = end
        elif end > last_end:
            total += end - last_end
            last_end = end
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-dist-profile-")
    event_dir = os.path.join(root, "events")
    os.makedirs(event_dir)
    load = os.getloadavg()[0]
    project = os.path.join(root, "project")
    write_project(project, args.rows, event_dir)
    try:
        runs = run_models(project, args.runs)
        # the event log is complete once the session stops
        from pyspark.sql import SparkSession

        SparkSession.getActiveSession().stop()
        jobs = jobs_of(read_events(event_dir))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))
                            ).stdout.strip()
    lines = [f"# benchmarks/distributed_profile.py, commit {commit}, {platform.node()} "
             f"({os.cpu_count()} cores, {platform.machine()}), load {load:.1f} at the start, "
             f"{os.getloadavg()[0]:.1f} at the end; local[2], 4 shuffle partitions",
             f"{args.rows:,} rows per run over {args.rows:,} keys into a 4-bucket paimon_pk "
             f"table, write_path: distributed, {args.runs} warm runs (a cold one first)"]
    lines += report(runs, jobs)
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "distributed_profile.txt"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
