"""Cluster benchmark: the e2e merge of e2e_merge.py on `local[2]` vs a 2-worker
Spark standalone cluster (1 core, 1 GiB each, on this machine's loopback).

    .venv/bin/python benchmarks/cluster_vs_local.py [--rows 2000000] [--keys 500000] [--commits 4]

Both sides run the same dbt project (e2e_merge.py's paimon_pk model: --commits dbt runs merging
rows/commits rows each into a 4-bucket table) in their own dbt process (one Spark session per
process), then read the merged table in full. The cluster side's driver has
spark.driver.memory=512m. Prints a table and writes benchmarks/results/cluster_vs_local.{txt,png}.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cluster"))

import e2e_merge  # noqa: E402  (the model and its helpers)
from provenance import results_header  # noqa: E402

RESULTS = os.path.join(HERE, "results")
CLUSTER_CONF = {"spark.executor.cores": "1", "spark.executor.memory": "768m",
                "spark.driver.memory": "512m", "spark.sql.shuffle.partitions": "4"}
LOCAL_CONF = {"spark.driver.memory": "4g", "spark.sql.shuffle.partitions": "4"}


def write_profile(root: str, master: str, conf: dict) -> None:
    lines = ["bench:", "  target: dev", "  outputs:", "    dev:", "      type: paimon",
             "      schema: bench", f"      spark_master: '{master}'", "      spark_conf:"]
    lines += [f"        {key}: '{value}'" for key, value in conf.items()]
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write("\n".join(lines) + "\n")


def measure(master: str, rows: int, keys: int, commits: int) -> dict:
    """In this process: the dbt runs and a full read; seconds of each."""
    from dbt.cli.main import dbtRunner

    root = tempfile.mkdtemp(prefix="bench-cluster-")
    try:
        e2e_merge.write_project(root, rows, keys, commits)
        write_profile(root, master, LOCAL_CONF if master.startswith("local") else CLUSTER_CONF)
        runner = dbtRunner()
        write = 0.0
        for batch in range(commits):
            result = runner.invoke(["run", "--project-dir", root, "--profiles-dir", root,
                                    "--select", "pk_model", "--vars", f"{{batch: {batch}}}",
                                    "--quiet"])
            if not result.success:
                raise RuntimeError(f"dbt run failed on {master}: {result.exception}")
            write += e2e_merge.model_seconds(result)["pk_model"]
        from dbt.adapters.paimon import environments

        spark = environments.current_registry().activate()
        merged_rows = spark.table("bench.pk_model").count()
        read = min(e2e_merge.timed(lambda: spark.table("bench.pk_model").write.format("noop")
                                   .mode("overwrite").save()) for _ in range(2))
        return {"master": master, "write": write, "read": read, "merged_rows": merged_rows}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_side(master: str, args) -> dict:
    """One side in its own process (a process has one Spark session)."""
    out = subprocess.run(
        [sys.executable, __file__, "--measure", master, "--rows", str(args.rows),
         "--keys", str(args.keys), "--commits", str(args.commits)],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{master} side failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=500_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one side
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.rows, args.keys, args.commits)))
        return 0

    from standalone import StandaloneCluster

    results = [run_side("local[2]", args)]
    cluster_root = tempfile.mkdtemp(prefix="bench-spark-cluster-")
    try:
        with StandaloneCluster(cluster_root, workers=2, cores=1, memory="1g") as cluster:
            results.append(run_side(cluster.master_url, args))
            results[-1]["master"] = "2-worker cluster"
    finally:
        shutil.rmtree(cluster_root, ignore_errors=True)

    lines = [results_header("cluster_vs_local.py", "local[2] and a 2-worker standalone cluster"), "",
             f"{args.rows:,} rows over {args.keys:,} keys in {args.commits} dbt runs of a "
             f"4-bucket paimon_pk model, then a full read",
             f"{'':20}{'merge-write s':>15}{'rows/s':>12}{'merged read s':>15}{'merged rows':>13}"]
    for r in results:
        lines.append(f"{r['master']:20}{r['write']:>15.1f}{args.rows / r['write']:>12,.0f}"
                     f"{r['read']:>15.1f}{r['merged_rows']:>13,}")
    local, cluster = results
    lines += ["", f"cluster / local merge-write = {cluster['write'] / local['write']:.2f}x, "
                  f"merged read = {cluster['read'] / local['read']:.2f}x",
              "local[2]: driver and tasks in one JVM (spark.driver.memory 4g); cluster: 2 "
              "executors (1 core, 768m) on 2 workers, driver spark.driver.memory 512m"]
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "cluster_vs_local.txt"), "w") as f:
        f.write(text + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        labels = ["merge-write", "merged read"]
        width = 0.38
        for offset, r, color in ((-width / 2, local, "#9aa5b1"), (width / 2, cluster, "#3b6ea8")):
            ax.bar([i + offset for i in range(2)], [r["write"], r["read"]], width,
                   label=r["master"], color=color)
        ax.set_xticks(range(2), labels)
        ax.set_ylabel("seconds")
        ax.set_title(f"{args.rows:,} rows, {args.keys:,} keys, {args.commits} runs")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(RESULTS, "cluster_vs_local.png"), dpi=100)
    except ImportError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
