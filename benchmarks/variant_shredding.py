"""Shredding a VARIANT column (`variant.shreddingSchema`): dbt-paimon's vectorized shredder
against pypaimon 2.1's row-by-row one, on the same Arrow column.

    .venv/bin/python benchmarks/variant_shredding.py [--rows 100000,300000] [--runs 3]

The column holds JSON objects of four fields (two of them shredded: a BIGINT and a STRING; the
others, an array and an object, stay in the untyped bytes), encoded as pypaimon encodes them.
Both shredders produce the same columns here (the script checks it). Prints seconds and rows a
second, best of ``--runs``, and writes results/variant_shredding.txt and .png.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from dbt.adapters.paimon.format import pypaimon_compat  # noqa: E402,F401  (installs ours)
from dbt.adapters.paimon.format.variant_shredder import shred  # noqa: E402
from plots import BASELINE, PAIMON, save_bars  # noqa: E402  (same folder: run as a script)
from provenance import results_header  # noqa: E402
from pypaimon.data import variant_shredding  # noqa: E402
from pypaimon.data.generic_variant import GenericVariant  # noqa: E402

SCHEMA = json.dumps({"type": "ROW", "fields": [{"id": 0, "name": "v", "type": {
    "type": "ROW", "fields": [{"id": 0, "name": "a", "type": "BIGINT"},
                              {"id": 1, "name": "tag", "type": "STRING"}]}}]})


def column(rows: int):
    distinct = [GenericVariant.from_python({"a": i, "tag": f"tag-{i % 97}", "more": [i, i + 1],
                                            "nested": {"x": i % 5}}) for i in range(1000)]
    return GenericVariant.to_arrow_array((distinct * (rows // 1000 + 1))[:rows])


def best(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="100000,300000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    fields = variant_shredding.parse_shredding_schema_option(SCHEMA)["v"]
    target = variant_shredding.shredding_schema_to_arrow_type(fields)
    pypaimons = getattr(variant_shredding.shred_variant_column, "pypaimon",
                        variant_shredding.shred_variant_column)
    lines = [results_header("variant_shredding.py", "one Python thread"),
             "a VARIANT column of 4-field objects, 2 fields shredded (BIGINT, STRING); "
             f"seconds (rows a second), best of {args.runs}"]
    print(lines[0], flush=True)
    last = None
    for rows in [int(r) for r in args.rows.split(",")]:
        data = column(rows)
        ours, theirs = shred(data, fields, target), pypaimons(data, fields, target)
        if ours.to_pylist() != theirs.to_pylist():
            raise SystemExit("the two shredders disagree")
        last = (rows, best(lambda: shred(data, fields, target), args.runs),
                best(lambda: pypaimons(data, fields, target), args.runs))
        lines.append(f"{rows:>9,} rows   dbt-paimon {last[1]:6.3f} s ({rows / last[1]:>10,.0f}/s)"
                     f"   pypaimon 2.1 {last[2]:6.3f} s ({rows / last[2]:>9,.0f}/s)"
                     f"   {last[2] / last[1]:5.1f}x")
        print(lines[-1], flush=True)
    plot = save_bars("variant_shredding", ["dbt-paimon", "pypaimon 2.1"], [last[1], last[2]],
                     f"shredding {last[0]:,} VARIANT values", [PAIMON, BASELINE])
    lines.append(f"plot: {os.path.relpath(plot, os.path.dirname(os.path.dirname(plot)))}")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                           "variant_shredding.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
