"""A real-sized dbt project built end to end: what a team's `dbt build` costs per node.

    flock /work/bench.lock .venv/bin/python benchmarks/project_scale.py [--chains 10] [--threads 1]

The project: ``--chains`` chains of 10 models (positions cycle view, `table`, `incremental` with a
`unique_key`, `paimon_pk`), each model reading the one before it and the first reading a
2,000-row seed; a `not_null` and a `unique` test per model. With 10 chains: 100 models, 200 data
tests and one seed, 301 nodes. Each mode builds its own copy of the project twice, each time in a
fresh `dbt build` process as a scheduler runs it (the first creates every table, the second takes
the incremental path):
* dbt-duckdb          -- dbt-duckdb 1.11 (the `bench` extra), in-process: dbt-core's own cost
                         per node, the floor; `paimon_pk` models are `table` models there;
* parquet, session    -- dbt-paimon with `file_format: parquet`, i.e. dbt-spark's own
                         materializations on Parquet, Spark in the dbt process; `paimon_pk` models
                         are `table` models and incremental models use `insert_overwrite` (Spark
                         merges only Delta, Iceberg and Hudi tables);
* paimon, session     -- dbt-paimon, Spark in the dbt process (`DBT_PAIMON_DAEMON=off`: CI's and
                         a scheduler's mode);
* paimon, daemon      -- dbt-paimon through the warehouse's background Spark (`DBT_PAIMON_DAEMON=on`),
                         started by the first build, stopped at the end.
Per mode: each build's wall time and its ratio to dbt-duckdb's, the second build's median node
time per kind (from run_results.json), and the SQL statements the second build sent through
dbt's connection (the `SQL status` lines of its dbt.log: dbt-paimon's own Spark calls, such as
the catalog registry's and a write's, are not among them). Goal (issue: real-sized projects): a build within 2.5x of dbt-duckdb.
Results: benchmarks/results/project_scale.txt (the printed block) and project_scale.png.

    flock /work/bench.lock .venv/bin/python benchmarks/project_scale.py --thread-counts 1,2,4

builds the project with each `--threads` count instead, in dbt-duckdb and in dbt-paimon's session
and daemon modes (a fresh copy and two fresh builds per count; the daemon started by the first
build, stopped after the second), and gives each build's wall time, its speedup
over `--threads 1`, and how busy the machine's cores were (/proc/stat: the share of all cores'
time spent running anything, so the machine must be quiet): what limits more threads on a
2-core machine. Results: project_scale_threads.txt and .png.

    flock /work/bench.lock .venv/bin/python benchmarks/project_scale.py --thread-counts 1,2,4 \
        --sample-project

sweeps the sample project (sample_project/: seeds, Paimon materializations of every kind,
partial_update models assembling one table, a snapshot, data and unit tests) the same way, in
dbt-paimon's session and daemon modes (dbt-duckdb cannot build its Paimon materializations).
Results: project_scale_sample_threads.txt and .png.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List

from plots import BASELINE, FLOOR, PAIMON, save_bars  # same folder: a script
from provenance import results_header

KINDS = ("view", "table", "incremental", "paimon_pk")
SEED_ROWS = 2000
MODES = {  # mode -> (profile target, DBT_PAIMON_DAEMON)
    "dbt-duckdb": ("duckdb", "off"),
    "parquet, session": ("parquet", "off"),
    "paimon, session": ("paimon", "off"),
    "paimon, daemon": ("paimon", "on"),
}


def has_dbt_duckdb() -> bool:
    try:
        import dbt.adapters.duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def model_config(kind: str, target: str) -> str:
    if kind == "view":
        return "materialized='view'"
    if kind == "table" or (kind == "paimon_pk" and target != "paimon"):
        return "materialized='table'"
    if kind == "incremental":
        if target == "parquet":
            return "materialized='incremental', incremental_strategy='insert_overwrite'"
        return "materialized='incremental', unique_key='id'"
    return "materialized='paimon_pk', primary_key='id', buckets=1"


def write_project(root: str, chains: int, target: str) -> None:
    models = os.path.join(root, "models")
    os.makedirs(models)
    os.makedirs(os.path.join(root, "seeds"))
    file_format = "\nmodels:\n  +file_format: parquet\n" if target == "parquet" else "\n"
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: scale\nversion: '1.0'\nconfig-version: 2\nprofile: scale\n" + file_format)
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write("scale:\n  target: paimon\n  outputs:\n"
                "    paimon:\n      type: paimon\n      schema: scale\n"
                "      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n"
                "    parquet:\n      type: paimon\n      schema: scale\n      method: session\n"
                "      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n"
                f"    duckdb:\n      type: duckdb\n      path: {root}/floor.duckdb\n"
                "      schema: scale\n")
    with open(os.path.join(root, "seeds", "base.csv"), "w") as f:
        f.write("id,amount\n" + "".join(f"{i},{i % 97}\n" for i in range(SEED_ROWS)))
    tests = ["version: 2", "models:"]
    for chain in range(chains):
        for step in range(10):
            kind = KINDS[step % len(KINDS)]
            name = f"c{chain}_m{step}"
            parent = "ref('base')" if step == 0 else f"ref('c{chain}_m{step - 1}')"
            with open(os.path.join(models, f"{name}.sql"), "w") as f:
                f.write(f"{{{{ config({model_config(kind, target)}) }}}}\n"
                        f"select cast(id as bigint) as id, cast(amount + {step} as bigint) as amount"
                        f" from {{{{ {parent} }}}}\n")
            tests += [f"  - name: {name}", "    columns:", "      - name: id",
                      "        data_tests: [not_null, unique]"]
    with open(os.path.join(models, "schema.yml"), "w") as f:
        f.write("\n".join(tests) + "\n")


def build(root: str, target: str, daemon: str, threads: int) -> float:
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    env = {**os.environ, "DBT_PAIMON_DAEMON": daemon}
    log = os.path.join(root, "logs", "dbt.log")
    if os.path.exists(log):
        os.remove(log)
    start = time.perf_counter()
    subprocess.run([dbt, "build", "--project-dir", root, "--profiles-dir", root, "--target",
                    target, "--threads", str(threads), "--quiet"], check=True, cwd=root, env=env)
    return time.perf_counter() - start


def node_times(root: str) -> Dict[str, float]:
    """The last command's median node time per kind: each model kind, `test`, `seed`."""
    with open(os.path.join(root, "target", "run_results.json")) as f:
        results = json.load(f)["results"]
    by_kind: Dict[str, List[float]] = {}
    for r in results:
        uid = r["unique_id"]
        if uid.startswith("model."):
            step = int(uid.rsplit("_m", 1)[1])
            kind = KINDS[step % len(KINDS)]
        else:
            kind = uid.split(".", 1)[0]
        by_kind.setdefault(kind, []).append(r["execution_time"])
    return {k: statistics.median(v) for k, v in by_kind.items()}


def statements(root: str) -> int:
    with open(os.path.join(root, "logs", "dbt.log"), errors="replace") as f:
        return sum(line.count("SQL status:") for line in f)


def cpu_times() -> tuple:
    """(busy, total) jiffies of every core since boot (/proc/stat's first line)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


def busy_build(root: str, target: str, daemon: str, threads: int) -> tuple:
    """One build's wall seconds and the share of the machine's core time that was busy."""
    busy0, total0 = cpu_times()
    wall = build(root, target, daemon, threads)
    busy1, total1 = cpu_times()
    return wall, (busy1 - busy0) / max(total1 - total0, 1)


SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "sample_project")
SAMPLE_FILES = ("dbt_project.yml", "profiles.yml", "models", "seeds", "snapshots", "tests")


def copy_sample_project(root: str) -> None:
    for name in SAMPLE_FILES:
        source = os.path.join(SAMPLE, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(root, name))
        else:
            shutil.copy(source, os.path.join(root, name))


def sample_nodes(root: str) -> int:
    """The nodes the last build ran (run_results.json)."""
    with open(os.path.join(root, "target", "run_results.json")) as f:
        return len(json.load(f)["results"])


def thread_sweep(chains: int, counts: List[int], sample: bool = False) -> int:
    if sample:
        modes = {m: ("dev", v[1]) for m, v in MODES.items() if m.startswith("paimon")}
        title = "project_scale.py --thread-counts --sample-project"
    else:
        modes = {m: v for m, v in MODES.items()
                 if m != "parquet, session" and (v[0] != "duckdb" or has_dbt_duckdb())}
        title = "project_scale.py --thread-counts"
    nodes = chains * 10 * 3 + 1
    lines = [results_header(title, "local[2]"),
             "", f"{'mode':<18} {'threads':>7} {'first build':>18} {'second build':>18} "
             f"{'busy cores':>22}"]
    print(lines[0], flush=True)
    seconds: Dict[str, Dict[int, List[float]]] = {}
    for mode, (target, daemon) in modes.items():
        for count in counts:
            root = tempfile.mkdtemp(prefix="bench-scale-")
            try:
                if sample:
                    copy_sample_project(root)
                else:
                    write_project(root, chains, target)
                runs = [busy_build(root, target, daemon, count) for _ in range(2)]
                if sample:
                    nodes = sample_nodes(root)
            finally:
                if daemon == "on":
                    stop_daemon(root)
                shutil.rmtree(root, ignore_errors=True)
            seconds.setdefault(mode, {})[count] = [wall for wall, _ in runs]
            one = seconds[mode].get(counts[0])
            speedups = [f"({one[i] / runs[i][0]:.2f}x)" for i in range(2)]
            lines.append(f"{mode:<18} {count:>7} {runs[0][0]:9.1f} s {speedups[0]:>7} "
                         f"{runs[1][0]:9.1f} s {speedups[1]:>7} "
                         f"{runs[0][1]:9.0%} / {runs[1][1]:.0%} of 2")
            print(lines[-1], flush=True)
    lines[1] = (f"`dbt build` of the sample project ({nodes} nodes)" if sample else
                f"`dbt build` of {chains * 10} models, {chains * 20} data tests and a "
                f"{SEED_ROWS:,}-row seed ({nodes} nodes)") + \
        " with each --threads count: a fresh copy and two fresh builds (create, then " \
        "incremental) per count"
    lines.append(f"speedups against --threads {counts[0]}; busy cores: the share of the "
                 "machine's core time spent running anything during the first / second build")
    labels = [f"{m.replace(', ', chr(10))}\n{c} thr." for m in seconds for c in seconds[m]]
    name = "project_scale_sample_threads" if sample else "project_scale_threads"
    plot = save_bars(name, labels,
                     [seconds[m][c][1] for m in seconds for c in seconds[m]],
                     f"second `dbt build` of {nodes} nodes by --threads (wall seconds)",
                     [FLOOR if m == "dbt-duckdb" else PAIMON for m in seconds for _ in seconds[m]])
    lines.append(f"plot: {os.path.relpath(plot, os.path.dirname(os.path.dirname(plot)))}")
    with open(os.path.join(os.path.dirname(plot), f"{name}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def stop_daemon(root: str) -> None:
    cli = os.path.join(os.path.dirname(sys.executable), "dbt-paimon")
    subprocess.run([cli, "server", "stop", "--warehouse",
                    os.path.join(root, "paimon_warehouse")], cwd=root,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--thread-counts", default=None,
                        help="e.g. 1,2,4: the thread sweep instead (module docstring)")
    parser.add_argument("--sample-project", action="store_true",
                        help="with --thread-counts: sweep the sample project instead")
    args = parser.parse_args()
    if args.thread_counts:
        return thread_sweep(args.chains, [int(c) for c in args.thread_counts.split(",")],
                            sample=args.sample_project)
    modes = {m: v for m, v in MODES.items() if v[0] != "duckdb" or has_dbt_duckdb()}
    nodes = args.chains * 10 * 3 + 1
    lines = [results_header("project_scale.py", "local[2]"),
             f"`dbt build` of {args.chains * 10} models, {args.chains * 20} data tests and a "
             f"{SEED_ROWS:,}-row seed ({nodes} nodes), --threads {args.threads}, two fresh "
             "processes per mode (create, then incremental)"]
    print(lines[0], flush=True)
    walls: Dict[str, List[float]] = {}
    per_node: Dict[str, Dict[str, float]] = {}
    sent: Dict[str, int] = {}
    for mode, (target, daemon) in modes.items():
        root = tempfile.mkdtemp(prefix="bench-scale-")
        try:
            write_project(root, args.chains, target)
            walls[mode] = [build(root, target, daemon, args.threads) for _ in range(2)]
            per_node[mode] = node_times(root)
            sent[mode] = statements(root)
        finally:
            if daemon == "on":
                stop_daemon(root)
            shutil.rmtree(root, ignore_errors=True)
        print(f"{mode}: {walls[mode][0]:.1f} s, {walls[mode][1]:.1f} s", flush=True)
    floor = walls.get("dbt-duckdb")

    def ratio(mode: str, i: int) -> str:
        return f" ({walls[mode][i] / floor[i]:4.1f}x)" if floor else ""

    kinds = [k for k in (*KINDS, "test", "seed") if any(k in p for p in per_node.values())]
    lines.append(f"{'mode':<18} {'first build':>16} {'second build':>16} {'dbt SQL':>11}  "
                 + "  ".join(f"{k:>11}" for k in kinds))
    for mode in modes:
        lines.append(f"{mode:<18} {walls[mode][0]:9.1f} s{ratio(mode, 0):>7} "
                     f"{walls[mode][1]:9.1f} s{ratio(mode, 1):>7} {sent[mode]:>11}  "
                     + "  ".join(f"{per_node[mode].get(k, float('nan')):9.3f} s" for k in kinds))
    lines.append("the last columns: the second build's median node time per kind (seconds)")
    if floor:
        best = min(walls[m][1] / floor[1] for m in modes if m.startswith("paimon"))
        lines.append(f"goal: a dbt-paimon build within 2.5x of dbt-duckdb; best second build "
                     f"{best:.1f}x")
    plot = save_bars("project_scale", [m.replace(", ", "\n") for m in modes],
                     [walls[m][1] for m in modes],
                     f"second `dbt build` of {nodes} nodes (wall seconds)",
                     [FLOOR if m == "dbt-duckdb" else BASELINE if m.startswith("parquet")
                      else PAIMON for m in modes])
    lines.append(f"plot: {os.path.relpath(plot, os.path.dirname(os.path.dirname(plot)))}")
    print("\n".join(lines[1:]))
    with open(os.path.join(os.path.dirname(plot), "project_scale.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
