"""What one Spark statement costs a dbt command: in the dbt process's own Spark (session mode)
against a local Spark Connect server (`method: connect` and the background daemon).

    flock /work/bench.lock .venv/bin/python benchmarks/statement_cost.py [--repeat 30]

A dbt-paimon command runs many small statements besides its model's query: the catalog entries
of the registry (views, hidden tables, databases), `show table extended` listings, the schema of
a query (an analysis) and the `explain(mode="cost")` that chooses a write path. Over Spark
Connect each one is a gRPC round trip to the server, which session mode does not pay. Each kind
is timed --repeat times on a warm session (after 5 warm-up statements) and the median printed,
side by side; both sessions are local[2] on the same machine, each with its own warehouse. The
table and the machine go to benchmarks/results/statement_cost.txt (plot: statement_cost.png).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List, Tuple

from connect_latency import free_port  # same folder: run as a script
from plots import BASELINE, PAIMON, RESULTS, save_bars
from provenance import results_header

from dbt.adapters.paimon.datasource.spark_env import explain_string
from dbt.adapters.paimon.environments import connect_server

# name -> what it runs, given the session and the repetition's number
STATEMENTS: Dict[str, Callable] = {
    "select 1, collected": lambda s, i: s.sql("select 1").collect(),
    "create or replace temp view": lambda s, i: s.sql(
        f"create or replace temporary view v_{i} as select {i} as x"),
    "create database if not exists": lambda s, i: s.sql("create database if not exists bench"),
    "show tables": lambda s, i: s.sql("show tables in bench").collect(),
    "a query's schema (analysis)": lambda s, i: s.sql(
        f"select id, id * {i} as v from range(10)").schema,
    "explain cost (write path choice)": lambda s, i: explain_string(
        s.sql(f"select id % 7 as k, count(*) as n from range({1000 + i}) group by 1"), "cost"),
}


def medians_ms(spark, repeat: int) -> Dict[str, float]:
    for _ in range(5):
        spark.sql("select 1").collect()
    found = {}
    for name, run in STATEMENTS.items():
        times = []
        for i in range(repeat):
            started = time.perf_counter()
            run(spark, i)
            times.append(time.perf_counter() - started)
        found[name] = statistics.median(times) * 1000
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    root = tempfile.mkdtemp(prefix="statement-cost-")
    results: List[Tuple[str, float, float]] = []
    try:
        session = (SparkSession.builder.master("local[2]").appName("statement-cost")
                   .config("spark.ui.enabled", "false")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.sql.warehouse.dir", os.path.join(root, "session"))
                   .getOrCreate())
        session.sparkContext.setLogLevel("ERROR")
        in_process = medians_ms(session, args.repeat)
        session.stop()

        warehouse, port = os.path.join(root, "connect"), free_port()
        os.makedirs(warehouse)
        connect_server.start(warehouse, port, master="local[2]",
                             conf={"spark.sql.shuffle.partitions": "4"})
        try:
            remote = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
            over_connect = medians_ms(remote, args.repeat)
            remote.stop()
        finally:
            connect_server.stop(warehouse, port)
        results = [(name, in_process[name], over_connect[name]) for name in STATEMENTS]
    finally:
        shutil.rmtree(root, ignore_errors=True)

    lines = [results_header("statement_cost.py",
                            f"medians of {args.repeat} on warm local[2] sessions"),
             f"{'statement':34s} {'session mode':>13s} {'over Connect':>13s} {'ratio':>6s}"]
    for name, local, remote in results:
        lines.append(f"{name:34s} {local:10.1f} ms {remote:10.1f} ms {remote / local:5.1f}x")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "statement_cost.txt"), "w") as out:
        out.write(text)
    labels, values, colors = [], [], []
    for name, local, remote in results:
        short = name.split(" (")[0].replace("create or replace ", "").replace(" if not exists", "")
        labels += [f"{short}\nsession", f"{short}\nConnect"]
        values += [local / 1000, remote / 1000]
        colors += [BASELINE, PAIMON]
    save_bars("statement_cost", labels, values, "One statement: session mode vs Spark Connect",
              colors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
