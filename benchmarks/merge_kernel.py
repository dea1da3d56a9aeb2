"""Merge kernel benchmark: dbt-paimon's runtime vs a hand-written polars floor vs pypaimon.

    .venv/bin/python benchmarks/merge_kernel.py [--records 2000000] [--keys 500000] [--pypaimon-rows 100000]

For each scenario the same Arrow table (all records in one commit) is merged by
* kernel   -- ``merge_arrow`` (Arrow in, Arrow out, every Paimon rule applied),
* floor    -- the minimal polars program computing the same result (Arrow -> sort/group_by -> Arrow),
* pypaimon -- pypaimon 2.1.0's per-row merge functions (its SortMergeReader protocol: sort by key and
              sequence number, reset/add/get_result per key) on the first ``--pypaimon-rows`` records;
              its time is extrapolated linearly to the full size (it is a per-row Python loop).
Prints a table with the ratios kernel/floor (goal <= 2x) and pypaimon/kernel (goal >= 20x) and writes
benchmarks/results/merge_kernel.png when matplotlib is installed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import polars as pl
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow  # noqa: E402
from provenance import results_header  # noqa: E402  (same folder: run as a script)

SCHEMA = [("k", "BIGINT"), ("a", "BIGINT"), ("b", "DOUBLE"), ("c", "STRING"), ("g_1", "BIGINT"), ("g_2", "BIGINT")]


def make_records(n: int, keys: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, keys, n)
    a = rng.integers(0, 1000, n)
    b = rng.random(n) * 100
    c = np.array(["x", "yy", "zzz", "wwww"])[rng.integers(0, 4, n)]
    null_a = rng.random(n) < 0.2
    null_c = rng.random(n) < 0.3
    null_g2 = rng.random(n) < 0.5
    return pa.table({
        "k": pa.array(k, pa.int64()),
        "a": pa.array(a, pa.int64(), mask=null_a),
        "b": pa.array(b, pa.float64()),
        "c": pa.array(c, pa.string(), mask=null_c),
        "g_1": pa.array(rng.integers(0, 50, n), pa.int64()),
        "g_2": pa.array(rng.integers(0, 50, n), pa.int64(), mask=null_g2),
        "_row_kind": pa.array(["+I"] * n, pa.string()),
        "_seq": pa.array(np.arange(n), pa.int64()),
    })


SCENARIOS = {
    "deduplicate": {},
    "aggregation (sum, max, last_non_null_value)": {
        "merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "max",
        "fields.c.aggregate-function": "last_non_null_value",
        "fields.g_1.aggregate-function": "last_non_null_value", "fields.g_2.aggregate-function": "last_non_null_value",
    },
    "partial-update": {"merge-engine": "partial-update"},
    "partial-update + sequence groups": {
        "merge-engine": "partial-update", "fields.g_1.sequence-group": "a,b", "fields.g_2.sequence-group": "c",
    },
}

VALUES = ["a", "b", "c", "g_1", "g_2"]


def floor(name: str, table: pa.Table) -> pa.Table:
    """The least a polars program must do for the same answer (no Paimon edge cases)."""
    df = pl.from_arrow(table).sort("_seq")
    if name == "deduplicate":
        out = df.group_by("k").agg([pl.col(c).last() for c in VALUES])
    elif name.startswith("aggregation"):
        out = df.group_by("k").agg(
            pl.col("a").sum(), pl.col("b").max(),
            *[pl.col(c).drop_nulls().last() for c in ("c", "g_1", "g_2")],
        )
    elif name == "partial-update":
        out = df.group_by("k").agg([pl.col(c).drop_nulls().last() for c in VALUES])
    else:
        # each group: the values of the record with the greatest group sequence (last on ties)
        out = df.group_by("k").agg(
            *[pl.col(c).sort_by("g_1", maintain_order=True).last() for c in ("a", "b", "g_1")],
            *[pl.col(c).filter(pl.col("g_2").is_not_null()).sort_by(pl.col("g_2").filter(pl.col("g_2").is_not_null()), maintain_order=True).last()
              for c in ("c", "g_2")],
        )
    return out.sort("k").to_arrow()


def pypaimon_merge(name: str, table: pa.Table) -> int:
    """pypaimon's merge functions driven like its SortMergeReader; returns merged row count."""
    from pypaimon.read.reader.aggregation_merge_function import AggregateMergeFunction
    from pypaimon.read.reader.aggregate.aggregators import FieldLastNonNullValueAgg, FieldMaxAgg, FieldSumAgg
    from pypaimon.read.reader.deduplicate_merge_function import DeduplicateMergeFunction
    from pypaimon.read.reader.partial_update_merge_function import PartialUpdateMergeFunction
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.table.row.key_value import KeyValue

    n_values = len(VALUES)
    if name == "deduplicate":
        mf = DeduplicateMergeFunction()
    elif name.startswith("aggregation"):
        mf = AggregateMergeFunction(1, n_values, [
            FieldSumAgg("sum", AtomicType("BIGINT")), FieldMaxAgg("max", AtomicType("DOUBLE")),
            *[FieldLastNonNullValueAgg("last_non_null_value", AtomicType(t)) for t in ("STRING", "BIGINT", "BIGINT")],
        ])
    else:  # pypaimon has no sequence groups: its plain partial-update is the closest it can do
        mf = PartialUpdateMergeFunction(1, n_values)
    cols = table.to_pydict()
    rows = sorted(
        zip(cols["k"], cols["_seq"], [0] * table.num_rows, *[cols[c] for c in VALUES]),
        key=lambda r: (r[0], r[1]),
    )
    merged, current = 0, object()
    for row in rows:
        if row[0] != current:
            if merged:
                mf.get_result()
            mf.reset()
            current = row[0]
            merged += 1
        mf.add(KeyValue(1, n_values).replace(row))
    mf.get_result()
    return merged


def timed(fn, repeat: int):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=500_000)
    parser.add_argument("--pypaimon-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    table = make_records(args.records, args.keys)
    subset = table.slice(0, args.pypaimon_rows)
    print(results_header("merge_kernel.py", "one process"))
    print(f"{args.records:,} records over {args.keys:,} keys; pypaimon measured on {args.pypaimon_rows:,} records "
          f"and extrapolated linearly; best of {args.repeat}; polars {pl.__version__}, "
          f"{os.cpu_count()} cpu(s)\n")
    header = f"{'scenario':45s} {'kernel s':>9s} {'floor s':>8s} {'pypaimon s':>11s} {'kernel/floor':>13s} {'pypaimon/kernel':>16s}"
    print(header)
    print("-" * len(header))
    results = []
    for name, options in SCENARIOS.items():
        spec = MergeSpec.from_table_options(SCHEMA, ["k"], options)
        merge_arrow(spec, table.slice(0, 10_000))  # warm up
        t_kernel, out = timed(lambda: merge_arrow(spec, table), args.repeat)
        t_floor, expected = timed(lambda: floor(name, table), args.repeat)
        assert out.num_rows == expected.num_rows, (name, out.num_rows, expected.num_rows)
        t_small, _ = timed(lambda: pypaimon_merge(name, subset), 1)
        t_py = t_small * args.records / args.pypaimon_rows
        results.append((name, t_kernel, t_floor, t_py))
        print(f"{name:45s} {t_kernel:9.3f} {t_floor:8.3f} {t_py:11.1f} {t_kernel / t_floor:12.2f}x {t_py / t_kernel:15.1f}x")
    print("\ngoal: kernel/floor <= 2x, pypaimon/kernel >= 20x "
          "(pypaimon has no sequence groups: its row is plain partial-update)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(len(results))
    for i, (label, idx) in enumerate((("kernel", 1), ("polars floor", 2), ("pypaimon (extrapolated)", 3))):
        ax.bar(x + (i - 1) * 0.27, [r[idx] for r in results], 0.27, label=label)
    ax.set_xticks(x, [r[0].replace(" (", "\n(").replace(" + ", "\n+ ") for r in results], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("seconds (log)")
    ax.set_title(f"merge of {args.records:,} records over {args.keys:,} keys")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(__file__), "results", "merge_kernel.png"), dpi=120)


if __name__ == "__main__":
    main()
