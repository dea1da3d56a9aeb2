"""Read cost of a deletion-vector table vs merge-on-read vs a compacted table (same rows).

    .venv/bin/python benchmarks/deletion_vector_read.py [--keys 400000] [--runs 4] [--buckets 4]

Three primary-key tables (deduplicate) receive the same ``--runs`` runs (each updates half of the
keys, the first inserts them all), written with the format layer, no Spark:
* merge-on-read -- every run a level-0 file per bucket: a read merges ``--runs`` sorted runs;
* deletion vectors -- ``deletion-vectors.enabled``: every run followed by the lookup compaction
  dbt-paimon's run maintenance does (deletion vectors for the superseded rows, and a file whose
  vector deletes more than ``compaction.delete-ratio-threshold`` (0.2) of its rows rewritten
  without them);
* the same with ``compaction.delete-ratio-threshold`` = 1 (a file is never rewritten for its
  deleted rows: what Paimon Java's compaction of a primary-key table leaves);
* compacted -- the merge-on-read table after a full compaction: one top-level run.
Each read is the table's merged rows through ``plan_splits`` + ``read_merged_split`` (what each
Spark task of the ``paimon`` data source does), best of 3, beside the rows its files store and
the seconds its runs took to write and compact. Writes benchmarks/results/
deletion_vector_read.txt and deletion_vector_read.png.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from dbt.adapters.paimon.datasource.source import read_merged_split  # noqa: E402
from dbt.adapters.paimon.catalog import warehouse  # noqa: E402
from dbt.adapters.paimon.format.bucket import bucket_ids  # noqa: E402
from dbt.adapters.paimon.format.commit import commit_append  # noqa: E402
from dbt.adapters.paimon.format.kv_files import (new_commit_message,  # noqa: E402
                                                 next_sequence_number, write_kv_file)
from dbt.adapters.paimon.format.splits import plan_splits  # noqa: E402
from dbt.adapters.paimon.ops.compact import commit_units, compact_unit  # noqa: E402
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig, pick_full, pick_minor  # noqa: E402
from plots import BASELINE, PAIMON, save_bars  # noqa: E402  (same folder: run as a script)
from provenance import results_header  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                    ("amount", pa.int64()), ("score", pa.float64())])


def run_rows(keys: int, run: int, rng) -> pa.Table:
    ids = np.arange(keys) if run == 0 else np.sort(rng.choice(keys, keys // 2, replace=False))
    n = len(ids)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array(np.char.add("n", (ids % 1000).astype(str)), pa.string()),
                     "amount": pa.array(rng.integers(0, 10**6, n), pa.int64()),
                     "score": pa.array(rng.random(n)),
                     "_row_kind": pa.array(["+I"] * n, pa.string()),
                     "_seq": pa.array(np.arange(n), pa.int64())})


def write_run(table, rows: pa.Table, buckets: int) -> None:
    which = bucket_ids(rows.select(["id"]), buckets)
    messages = []
    for bucket in range(buckets):
        part = rows.filter(pa.array(which == bucket))
        base = next_sequence_number(table, {}, bucket)
        files = write_kv_file(table, (), bucket, part, sequence_base=base)
        messages.append(new_commit_message((), bucket, new_files=files))
    commit_append(table, messages)


def compact(table, full: bool) -> None:
    config = CompactionConfig.from_options(
        {str(k): str(v) for k, v in table.table_schema.options.items()})
    pick = pick_full if full else pick_minor
    units = [u for u in (pick(s, config) for s in plan_splits(table)) if u is not None]
    commit_units(table, [compact_unit(table, u) for u in units])


def read_seconds(location) -> tuple:
    best, rows = None, 0
    for _ in range(3):
        table = warehouse.open_table(*location, {})
        start = time.perf_counter()
        rows = sum(read_merged_split(table, s, list(table.field_names)).num_rows
                   for s in plan_splits(table))
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--buckets", type=int, default=4)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="dv-bench-")
    options = {"bucket": str(args.buckets)}
    vectors = {"deletion-vectors.enabled": "true"}
    tables = {"merge-on-read": ("merge_on_read", dict(options)),
              "deletion vectors": ("deletion_vectors", dict(options, **vectors)),
              "dv, never rewritten": ("never_rewritten", dict(
                  options, **vectors, **{"compaction.delete-ratio-threshold": "1"}))}
    write_seconds = {}
    for name, (table_name, opts) in tables.items():
        table = warehouse.create_table(root, "db", table_name, SCHEMA, primary_keys=["id"],
                                       options=opts)
        rng = np.random.default_rng(11)
        start = time.perf_counter()
        for run in range(args.runs):
            write_run(table, run_rows(args.keys, run, rng), args.buckets)
            table = warehouse.open_table(root, "db", table_name, {})
            if "deletion-vectors.enabled" in opts:
                compact(table, full=False)
                table = warehouse.open_table(root, "db", table_name, {})
        write_seconds[name] = time.perf_counter() - start
    results, stored = {}, {}
    for name, (table_name, _) in tables.items():
        results[name] = read_seconds((root, "db", table_name))
        table = warehouse.open_table(root, "db", table_name, {})
        stored[name] = sum(f.row_count for s in plan_splits(table) for f in s.files)
    deleted = {name: sum(d.cardinality or 0 for s in plan_splits(
        warehouse.open_table(root, "db", tables[name][0], {})) for d in s.deletion_files.values())
        for name in ("deletion vectors", "dv, never rewritten")}
    assert deleted["dv, never rewritten"] > 0, "the deletion-vector table holds no vectors"
    table = warehouse.open_table(root, "db", "merge_on_read", {})
    start = time.perf_counter()
    compact(table, full=True)
    write_seconds["compacted"] = write_seconds["merge-on-read"] + time.perf_counter() - start
    results["compacted"] = read_seconds((root, "db", "merge_on_read"))
    stored["compacted"] = sum(f.row_count for s in plan_splits(
        warehouse.open_table(root, "db", "merge_on_read", {})) for f in s.files)
    rows = {r for _, r in results.values()}
    assert len(rows) == 1, f"the tables read different row counts: {results}"
    base = results["compacted"][0]
    lines = [results_header("deletion_vector_read.py", "one process"),
             f"# {args.keys} keys, {args.runs} runs (the first inserts every key, each later one "
             f"updates half of them), {args.buckets} buckets, deduplicate; merged read of "
             f"{rows.pop()} rows, best of 3; rows the deletion vectors delete: "
             f"{deleted['deletion vectors']} (default threshold), "
             f"{deleted['dv, never rewritten']} (never rewritten); writes: the runs' "
             f"writes and compactions (compacted: merge-on-read's and one full compaction)",
             f"{'table':<20} {'read s':>8} {'vs compacted':>13} {'rows stored':>12} "
             f"{'writes s':>9}"]
    for name, (seconds, _) in results.items():
        lines.append(f"{name:<20} {seconds:>8.3f} {seconds / base:>12.2f}x "
                     f"{stored[name]:>12} {write_seconds[name]:>9.2f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    out = os.path.join(os.path.dirname(__file__), "results", "deletion_vector_read.txt")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    save_bars("deletion_vector_read", list(results), [s for s, _ in results.values()],
              "Merged read after 4 runs", [BASELINE if name == "compacted" else PAIMON
                                           for name in results])


if __name__ == "__main__":
    main()
