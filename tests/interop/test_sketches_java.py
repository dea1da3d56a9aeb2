"""hll_sketch, theta_sketch and rbm32 against Paimon 1.0 Java, byte for byte.

Paimon Java builds the sketches (HllSketchUtil.sketchOf, ThetaSketch.sketchOf,
RoaringBitmap32.bitmapOf: HLL LIST/SET/HLL modes, theta empty/single-item/exact/estimation mode,
array/bitmap/run containers by their sizes; the HLL pool also holds HLL_6 and HLL_8 sketches the
C++ library builds), then (1) folds them with its own aggregators (``PaimonPeer union``:
FieldHllSketchAgg, FieldThetaSketchAgg, FieldRoaringBitmap32Agg) and (2) writes them into
aggregation and partial-update tables over several commits and reads the merged rows.
``merge_arrow`` must produce the same bytes.
"""
from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.runtime import MergeSpec, merge_arrow

KINDS = {"hll_sketch": "hll", "theta_sketch": "theta", "rbm32": "rbm32"}
SIZES = [0, 1, 2, 3, 40, 300, 3000, 6000, 20000]
FIELDS = [("k", "INT"), ("g", "INT"), ("h", "BYTES"), ("t", "BYTES"), ("r", "BYTES")]
COLUMN = {"h": "hll_sketch", "t": "theta_sketch", "r": "rbm32"}


@pytest.fixture(scope="module")
def pool(paimon_java, tmp_path_factory):
    """{function: [hex of a Java-built sketch]} over overlapping integer sets of every size."""
    rng = random.Random(16)
    sets = []
    for n in SIZES:
        start = rng.randint(-10**6, 10**6)
        sets.append([start + rng.randint(0, 3 * n + 5) for _ in range(n)])
    commands = [["sketch", kind, ",".join(map(str, values))] for kind in KINDS.values() for values in sets]
    outputs = paimon_java.batch(commands, tmp_path_factory.mktemp("sketches") / "pool.jsonl")
    hexes = iter(out.strip() for out in outputs)
    pool = {function: [next(hexes) for _ in sets] for function in KINDS}
    import datasketches as ds

    for kind in (ds.tgt_hll_type.HLL_6, ds.tgt_hll_type.HLL_8):
        for values in (sets[5], sets[-1]):  # SET and HLL mode
            sketch = ds.hll_sketch(12, kind)
            for v in values:
                sketch.update(v)
            pool["hll_sketch"].append(sketch.serialize_compact().hex())
    return pool


def _merge(options, rows):
    """rows: (commit, kind, k, g, h, t, r) with hex binaries; the merged rows, binaries as hex."""
    spec = MergeSpec.from_table_options(FIELDS, ["k"], options)
    columns = {}
    for i, (name, t) in enumerate(spec.columns):
        values = [r[i + 2] for r in rows]
        if t.root == "VARBINARY":
            values = [None if v is None else bytes.fromhex(v) for v in values]
        columns[name] = pa.array(values, type=t.arrow)
    columns["_row_kind"] = pa.array([r[1] for r in rows], pa.string())
    columns["_seq"] = pa.array(range(len(rows)), pa.int64())
    columns["_commit"] = pa.array([r[0] for r in rows], pa.int64())
    merged = merge_arrow(spec, pa.table(columns)).to_pylist()
    return [tuple(v.hex() if isinstance(v, bytes) else v for v in (row[n] for n, _ in FIELDS)) for row in merged]


def test_unions_equal_paimon_java_aggregators(paimon_java, pool, tmp_path):
    """Folds of 2-4 inputs (every size against every other) through Paimon's own FieldAggregators."""
    rng = random.Random(7)
    folds = []
    for function in KINDS:
        n = len(pool[function])
        for i in range(n):
            for j in range(n):
                extra = [rng.randrange(n) for _ in range(rng.choice([0, 0, 1, 2]))]
                folds.append((function, [pool[function][x] for x in [i, j] + extra]))
    outputs = paimon_java.batch([["union", KINDS[f]] + inputs for f, inputs in folds], tmp_path / "union.jsonl")
    for (function, inputs), java in zip(folds, outputs):
        options = {"merge-engine": "aggregation", "fields.h.aggregate-function": function,
                   "fields.t.aggregate-function": function, "fields.r.aggregate-function": function}
        column = {"hll_sketch": 2, "theta_sketch": 3, "rbm32": 4}[function]
        rows = [(1, "+I", 1, None) + tuple(x if c == column else None for c in (2, 3, 4)) for x in inputs]
        merged = _merge(options, rows)
        assert merged[0][column] == java.strip(), (function, [len(x) for x in inputs])


def test_hll_unions_of_different_lg_k_equal_paimon_java(paimon_java, tmp_path):
    """FieldHllSketchAgg over sketches of different lg_k (every mode, HLL_4/6/8): Union.unionImpl
    downsamples an HLL-mode sketch to the smaller lg_k; a third input meets the out-of-order
    accumulator of the first union. Folds of 2 and 3 inputs through Paimon's aggregator, byte for byte."""
    import datasketches as ds

    rng = random.Random(11)
    kinds = [ds.tgt_hll_type.HLL_4, ds.tgt_hll_type.HLL_6, ds.tgt_hll_type.HLL_8]

    def sketch():
        lg_k = rng.choice([4, 5, 7, 8, 10, 11, 12])
        s = ds.hll_sketch(lg_k, rng.choice(kinds))
        n = rng.choice([1, 3, 10, 30, 100, 400, 3000])
        start = rng.randint(0, 10**6)
        for _ in range(n):
            s.update(start + rng.randint(0, 3 * n + 5))
        return s.serialize_compact().hex()

    folds = [[sketch() for _ in range(rng.choice([2, 3]))] for _ in range(150)]
    outputs = paimon_java.batch([["union", "hll"] + inputs for inputs in folds], tmp_path / "union.jsonl")
    options = {"merge-engine": "aggregation", "fields.h.aggregate-function": "hll_sketch"}
    for inputs, java in zip(folds, outputs):
        merged = _merge(options, [(1, "+I", 1, None, x, None, None) for x in inputs])
        assert merged[0][2] == java.strip(), [(bytes.fromhex(x)[3], bytes.fromhex(x)[7] & 3) for x in inputs]


def test_list_accumulator_meets_an_out_of_order_union_like_paimon_java(paimon_java, pool, tmp_path):
    """The example ``test_tables_merge_sketches_like_paimon_java`` once drew (hypothesis seed 1):
    the first commit stores a LIST-mode sketch for a key, the second the union of two HLL-mode
    sketches (out of order, HIP field 0). Java's read unions them with
    ``HllSketchUtil.union(list, ooo)``: ``Union.heapify(ooo)`` copies the HLL side and the LIST's
    coupons raise its HIP field; C++ wrote 0 there (runtime/aggregators/hll.py)."""
    hll = pool["hll_sketch"]
    options = {"merge-engine": "aggregation", "fields.h.aggregate-function": "hll_sketch",
               "fields.h.ignore-retract": "true"}
    commits = [[hll[0], hll[3]], [hll[7], hll[6]]]  # empty, LIST of 3; two HLL-mode sketches
    warehouse = str(tmp_path / "warehouse")
    spec = {"fields": [list(f) for f in FIELDS], "primaryKeys": ["k"], "partitionKeys": [],
            "options": dict(options, bucket="1")}
    commands, rows = [["create", warehouse, "db.t", json.dumps(spec)]], []
    for c, sketches in enumerate(commits, start=1):
        path = tmp_path / f"commit-{c}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            for h in sketches:
                rows.append((c, "+I", 0, None, h, None, None))
                f.write(json.dumps({"_row_kind": "+I", "k": 0, "g": None, "h": h, "t": None, "r": None}) + "\n")
        commands.append(["write", warehouse, "db.t", str(path)])
    commands.append(["read", warehouse, "db.t"])
    commands.append(["union", "hll", hll[7], hll[6]])
    *_, read, pair = paimon_java.batch(commands, tmp_path / "commands.jsonl")
    java = [tuple(json.loads(line)[n] for n, _ in FIELDS) for line in read.splitlines() if line.strip()]
    ooo = bytes.fromhex(pair.strip())
    assert ooo[5] & 0x10 and ooo[8:16] == bytes(8)  # the second commit's row: out of order, HIP 0
    assert _merge(options, rows) == java


@st.composite
def table_case(draw, pool_sizes):
    if draw(st.booleans()):
        options = {"merge-engine": "aggregation"}
        kinds = ["+I", "+U", "-D"]
        for column, function in COLUMN.items():
            options[f"fields.{column}.aggregate-function"] = function
            options[f"fields.{column}.ignore-retract"] = "true"  # Paimon raises on a retraction otherwise
    else:  # an older record of the group is aggregated with agg(x, acc)
        options = {"merge-engine": "partial-update", "fields.g.sequence-group": "h,t,r"}
        kinds = ["+I", "+U"]
        for column, function in COLUMN.items():
            options[f"fields.{column}.aggregate-function"] = function
    sketches = [st.one_of(st.none(), st.integers(0, pool_sizes[f] - 1)) for f in COLUMN.values()]
    record = st.tuples(st.sampled_from(kinds), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 4)),
                       *sketches)
    commits = draw(st.lists(st.lists(record, min_size=1, max_size=5), min_size=1, max_size=3))
    return options, commits


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None,
          phases=[Phase.generate])  # a shrink step is a JVM run: report the batch as drawn
@given(data=st.data())
def test_tables_merge_sketches_like_paimon_java(paimon_java, pool, tmp_path_factory, data):
    sizes = {f: len(hexes) for f, hexes in pool.items()}
    cases = data.draw(st.lists(table_case(sizes), min_size=12, max_size=12))
    work = tmp_path_factory.mktemp("sketch-tables")
    warehouse = str(work / "warehouse")
    commands, expected = [], []
    for i, (options, commits) in enumerate(cases):
        spec = {"fields": [list(f) for f in FIELDS], "primaryKeys": ["k"], "partitionKeys": [],
                "options": dict(options, bucket="1")}
        commands.append(["create", warehouse, f"db.t{i}", json.dumps(spec)])
        rows = []
        for c, commit in enumerate(commits, start=1):
            path = work / f"t{i}-{c}.jsonl"
            with open(path, "w", encoding="utf-8") as f:
                for kind, k, g, *picks in commit:
                    values = [None if p is None else pool[COLUMN[col]][p] for col, p in zip("htr", picks)]
                    rows.append((c, kind, k, g, *values))
                    f.write(json.dumps(dict(zip(["_row_kind", "k", "g", "h", "t", "r"],
                                                [kind, k, g, *values]))) + "\n")
            commands.append(["write", warehouse, f"db.t{i}", str(path)])
        commands.append(["read", warehouse, f"db.t{i}"])
        expected.append((options, rows, len(commits)))
    outputs = iter(paimon_java.batch(commands, work / "commands.jsonl"))
    for options, rows, n_commits in expected:
        for _ in range(n_commits + 1):  # create, writes
            next(outputs)
        java = sorted(tuple(json.loads(line)[n] for n, _ in FIELDS) for line in next(outputs).splitlines()
                      if line.strip())
        assert _merge(options, rows) == java, (options, [r[:4] for r in rows])
