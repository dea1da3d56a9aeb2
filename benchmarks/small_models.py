"""A dbt project of small models, as a dbt user runs it many times a day: dbt's own `table` and
key-less `incremental` models on Paimon beside the same project on parquet (plain dbt-spark).

    flock /work/bench.lock .venv/bin/python benchmarks/small_models.py [--runs 3] [--rows 20000]

Five models, the same SQL in every mode: two `table` models generated from `range` (orders and
customers), a `table` joining them (reads two tables of the warehouse), a `table` aggregating
that one, and an `incremental` append model. Three modes, each its own project and warehouse,
each ``--runs`` fresh `dbt run` processes (the first creates the tables, the later ones replace
or append):
* paimon auto         -- `file_format: paimon` (dbt-paimon's default), `write_path: auto`;
* paimon distributed  -- the same with `write_path: distributed`: every write in Spark tasks
                         through the `paimon` data source;
* parquet             -- `file_format: parquet`: dbt-spark's own materializations.
Per mode: the models' summed times from run_results.json and the dbt process's wall time, the
median over the runs after the first. Goal: Paimon models cost what parquet models cost
(paimon auto / parquet <= 1.0x on the models' time).
Results: benchmarks/results/small_models.txt (the printed block) and small_models.png.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

from bench_project import fresh_dbt_runs, write_bench_project  # same folder: a script
from plots import BASELINE, FLOOR, PAIMON, save_bars
from provenance import results_header

MODELS = {
    "orders.sql": """{{{{ config(materialized='table') }}}}
select id as order_id, cast(id % {customers} as bigint) as customer_id,
       cast(id * 0.25 as decimal(12, 2)) as amount,
       date_add(date'2024-01-01', cast(id % 365 as int)) as order_date
from range({rows})
""",
    "customers.sql": """{{{{ config(materialized='table') }}}}
select id as customer_id, concat('customer-', cast(id as string)) as name,
       case when id % 3 = 0 then 'gold' else 'basic' end as tier
from range({customers})
""",
    "order_facts.sql": """{{{{ config(materialized='table') }}}}
select o.order_id, o.order_date, o.amount, c.name, c.tier
from {{{{ ref('orders') }}}} o join {{{{ ref('customers') }}}} c
  on o.customer_id = c.customer_id
""",
    "daily_revenue.sql": """{{{{ config(materialized='table') }}}}
select order_date, tier, count(*) as orders, sum(amount) as revenue
from {{{{ ref('order_facts') }}}} group by order_date, tier
""",
    "events.sql": """{{{{ config(materialized='incremental') }}}}
select {{{{ var('run') }}}} * {events} + id as event_id, cast(id % 7 as int) as kind
from range({events})
""",
}
MODES = {
    "paimon auto": {"format": "paimon", "write_path": "auto"},
    "paimon distributed": {"format": "paimon", "write_path": "distributed"},
    "parquet": {"format": "parquet", "write_path": "auto"},
}
PROJECT_CONFIG = ("models:\n  bench:\n    +file_format: \"{{ var('format') }}\"\n"
                  "    +write_path: \"{{ var('write_path') }}\"\n")


def write_project(root: str, rows: int) -> None:
    write_bench_project(root, {name: sql.format(rows=rows, customers=max(rows // 10, 1),
                                                events=max(rows // 4, 1))
                               for name, sql in MODELS.items()})
    with open(os.path.join(root, "dbt_project.yml"), "a") as f:
        f.write(PROJECT_CONFIG)


def fresh_runs(mode: dict, rows: int, runs: int):
    """``runs`` dbt processes of one mode: [(wall seconds, {model: (seconds, message)})]."""
    root = tempfile.mkdtemp(prefix="bench-small-")
    write_project(root, rows)
    try:
        return fresh_dbt_runs(root, [{**mode, "run": run} for run in range(runs)])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=20_000, help="orders rows")
    args = parser.parse_args()
    lines = [results_header("small_models.py", "local[2]"),
             f"5 models ({args.rows:,} orders, {args.rows // 10:,} customers, "
             f"{args.rows // 4:,} events per run), {args.runs} fresh `dbt run` processes per "
             f"mode; medians over the runs after the first"]
    print(lines[0], flush=True)
    summary = {}
    for label, mode in MODES.items():
        runs = fresh_runs(mode, args.rows, args.runs)
        later = runs[1:] or runs
        models = statistics.median(sum(t for t, _ in r.values()) for _, r in later)
        wall = statistics.median(w for w, _ in later)
        summary[label] = (models, wall)
        per_model = {name: statistics.median(r[name][0] for _, r in later)
                     for name in sorted(runs[-1][1])}
        lines.append(f"{label:<20} models {models:5.2f} s   dbt process {wall:5.1f} s   "
                     + "  ".join(f"{name} {t:.2f}" for name, t in per_model.items()))
        lines.append(f"{'':<20} last run: " + "; ".join(
            f"{name}: {message}" for name, (_, message) in sorted(runs[-1][1].items())))
        print(lines[-2], flush=True)
    auto, dist, parquet = (summary[m] for m in MODES)
    lines.append(f"paimon auto / parquet        models {auto[0] / parquet[0]:.2f}x, "
                 f"dbt process {auto[1] / parquet[1]:.2f}x (goal <= 1.0x on the models)")
    lines.append(f"paimon auto / distributed    models {auto[0] / dist[0]:.2f}x")
    plot = save_bars("small_models", [f"{m}\nmodels" for m in MODES],
                     [summary[m][0] for m in MODES],
                     "5 small dbt models per run (median of fresh runs)",
                     [PAIMON, FLOOR, BASELINE])
    lines.append(f"plot: {os.path.relpath(plot, os.path.dirname(os.path.dirname(plot)))}")
    text = "\n".join(lines)
    print("\n".join(lines[1:]))
    results = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "small_models.txt")
    with open(results, "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
