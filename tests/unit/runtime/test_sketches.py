"""hll_sketch, theta_sketch, rbm32: unions of serialized sketches / bitmaps (Paimon
FieldHllSketchAgg, FieldThetaSketchAgg, FieldRoaringBitmap32Agg); rbm64 is refused. Their bytes are held to Paimon
Java in tests/interop/test_sketches_java.py; these tests check the merge rules without a JVM."""
import struct

import datasketches as ds
import pytest
from pyroaring import BitMap

from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

AGG = {"merge-engine": "aggregation"}


def _spec(rt, function, **options):
    return rt.spec("k INT, v BYTES", **dict(AGG, **{"fields.v.aggregate-function": function}, **options))


def _bitmap(*values) -> bytes:
    return BitMap(values).serialize()


def _hll(*values, lg_k=12) -> bytes:
    sketch = ds.hll_sketch(lg_k, ds.tgt_hll_type.HLL_4)
    for v in values:
        sketch.update(v)
    return sketch.serialize_compact()


def _theta(*values) -> bytes:
    sketch = ds.update_theta_sketch()
    for v in values:
        sketch.update(v)
    return sketch.compact().serialize()


def test_rbm32_unions_the_bitmaps_of_a_key(rt):
    s = _spec(rt, "rbm32")
    out = rt.merge(s, [(1, _bitmap(1, 2)), (2, _bitmap(7)), (1, None)], [(1, _bitmap(2, 3, 70000))])
    assert [(k, sorted(BitMap.deserialize(v))) for k, v in out] == [(1, [1, 2, 3, 70000]), (2, [7])]


def test_a_lone_input_is_kept_byte_for_byte(rt):
    """agg(null, x) returns x itself: a bitmap that was not run-optimized stays as written, even
    when a NULL input of the same key took part in the merge."""
    # 0..999 as an array container (portable format, no-run cookie); runOptimize makes it a run
    raw = bytes.fromhex("3a300000" "01000000" "0000e703" "10000000") + b"".join(
        i.to_bytes(2, "little") for i in range(1000))
    assert BitMap.deserialize(raw) == BitMap(range(1000)) and _bitmap(*range(1000)) != raw
    s = _spec(rt, "rbm32")
    assert rt.merge(s, [(1, None), (1, raw), (1, None)]) == [(1, raw)]
    assert rt.merge(s, [(1, None), (1, None)]) == [(1, None)]


def test_hll_and_theta_unions_estimate_the_distinct_count(rt):
    for function, make, load in (("hll_sketch", _hll, ds.hll_sketch.deserialize),
                                 ("theta_sketch", _theta, ds.compact_theta_sketch.deserialize)):
        s = _spec(rt, function)
        out = rt.merge(s, [(1, make(*range(0, 60))), (1, make(*range(40, 100))), (1, None)],
                       [(1, make(*range(90, 130)))])
        assert round(load(out[0][1]).get_estimate()) == 130, function


def test_hll_union_writes_javas_hip_field(rt):
    """An out-of-order accumulator in HLL mode meeting a LIST-mode sketch: Java's union copies
    the accumulator and adds the coupons one by one, raising the HIP field by k / kxq for each
    register they raise; C++ keeps the copied field (0). Every other byte is C++'s. (The value
    itself is held to Paimon Java in tests/interop/test_sketches_java.py.)"""
    s = _spec(rt, "hll_sketch")
    big = [_hll(*range(i * 3000, i * 3000 + 3000)) for i in range(2)]
    few = _hll(*range(10**9, 10**9 + 5))
    (_, pair), = rt.merge(s, [(1, big[0]), (1, big[1])])
    (_, merged), = rt.merge(s, [(1, big[0]), (1, big[1]), (1, few)])
    assert pair[5] & 0x10 and pair[8:16] == bytes(8)  # out of order, HIP field 0
    u = ds.hll_union(12)
    u.update(ds.hll_sketch.deserialize(few))
    u.update(ds.hll_sketch.deserialize(pair))
    plain = u.get_result(ds.tgt_hll_type.HLL_4).serialize_compact()
    assert merged[:8] + merged[16:] == plain[:8] + plain[16:]
    assert plain[8:16] == bytes(8) and 0 < struct.unpack("<d", merged[8:16])[0] < 10


def test_hll_list_accumulator_meeting_an_out_of_order_sketch_writes_javas_hip_field(rt):
    """A LIST-mode accumulator (the first commit's row) meeting an out-of-order HLL-mode sketch
    (the second commit's union of two HLL-mode sketches): Java's ``Union.heapify(x)`` copies
    ``x`` (its HIP field, 0) and adds the accumulator's coupons through ``couponUpdate``, raising
    the HIP field by k / kxq for each register they raise; C++ writes 0. The value is Paimon Java
    1.0's (HllSketchUtil.union of these two images); every other byte is C++'s."""
    s = _spec(rt, "hll_sketch")
    big = [_hll(*range(i * 3000, i * 3000 + 3000)) for i in range(2)]
    few = _hll(*range(10**9, 10**9 + 5))
    (_, merged), = rt.merge(s, [(1, few)], [(1, big[0]), (1, big[1])])
    (_, pair), = rt.merge(s, [(1, big[0]), (1, big[1])])
    u = ds.hll_union(12)
    u.update(ds.hll_sketch.deserialize(pair))
    u.update(ds.hll_sketch.deserialize(few))
    plain = u.get_result(ds.tgt_hll_type.HLL_4).serialize_compact()
    assert merged[:8] + merged[16:] == plain[:8] + plain[16:] and plain[8:16] == bytes(8)
    assert merged[8:16] == bytes.fromhex("cadd33a5db8a1240")  # 4.635603505411789


def test_hll_inputs_of_different_lg_k(rt):
    """Union.unionImpl (DataSketches Java 4.2, called by HllSketchUtil.union with a union of the
    input's lg_k) keeps the input's lg_k, or the smaller one for an HLL-mode accumulator. An
    HLL-mode accumulator above the input's lg_k is downsampled (Union.downsample keeps its HIP
    value) and the input's coupons are added one by one, each raising the HIP accumulator by
    k / kxq: the registers are the C++ union's, the HIP field is Java's (byte-equal to Paimon Java
    in tests/interop/test_sketches_java.py)."""
    s = _spec(rt, "hll_sketch")
    big = _hll(*range(3000), lg_k=12)  # HLL mode
    few = _hll(5000, 5001, 5002, lg_k=10)  # LIST mode
    (_, merged), = rt.merge(s, [(1, big), (1, few)])
    u = ds.hll_union(10)
    u.update(ds.hll_sketch.deserialize(few))
    u.update(ds.hll_sketch.deserialize(big))
    plain = u.get_result(ds.tgt_hll_type.HLL_4).serialize_compact()
    assert merged[3] == 10 and merged[:8] + merged[16:] == plain[:8] + plain[16:]
    hip = struct.unpack("<d", merged[8:16])[0]
    assert merged[8:16] != plain[8:16] and hip > struct.unpack("<d", big[8:16])[0]
    # an input of a larger lg_k meets the smaller accumulator as C++ writes it (no downsampling of acc)
    (_, other), = rt.merge(s, [(1, few), (1, big)])
    u = ds.hll_union(12)
    u.update(ds.hll_sketch.deserialize(big))
    u.update(ds.hll_sketch.deserialize(few))
    assert other == u.get_result(ds.tgt_hll_type.HLL_4).serialize_compact()


def test_theta_union_writes_javas_header(rt):
    """DataSketches Java 4.2 writes p = 1.0f in the second preamble long and no seed hash in an
    empty sketch; the C++ library leaves both 0 (checked against Java in the interop test)."""
    s = _spec(rt, "theta_sketch")
    (_, merged), = rt.merge(s, [(1, _theta(1, 2)), (1, _theta(3))])
    assert merged[12:16] == bytes.fromhex("0000803f")
    (_, empty), = rt.merge(s, [(1, _theta()), (1, _theta())])
    assert empty == bytes.fromhex("01030300001e0000")


def test_retraction_needs_ignore_retract(rt):
    """FieldAggregator.retract raises for functions without a retract of their own."""
    s = _spec(rt, "theta_sketch")
    with pytest.raises(PaimonDataError, match="fields.v.ignore-retract"):
        rt.merge(s, [(1, _theta(1)), ("-D", 1, _theta(2))])
    kept = _spec(rt, "rbm32", **{"fields.v.ignore-retract": "true"})
    assert rt.merge(kept, [(1, _bitmap(1)), ("-D", 1, _bitmap(1)), (1, _bitmap(2))]) == [(1, _bitmap(1, 2))]


def test_sketches_inside_a_sequence_group(rt):
    """An older record of the group is aggregated with aggReversed(acc, x) = agg(x, acc)."""
    s = rt.spec("k INT, g INT, v BYTES", **{
        "merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.v.aggregate-function": "rbm32"})
    out = rt.merge(s, [(1, 5, _bitmap(1)), (1, 3, _bitmap(2)), (1, None, _bitmap(9))])
    assert [(k, g, sorted(BitMap.deserialize(v))) for k, g, v in out] == [(1, 5, [1, 2])]


@pytest.mark.parametrize("function", ["hll_sketch", "theta_sketch", "rbm32"])
def test_sketches_need_a_varbinary_column(rt, function):
    """Paimon's factories check ``fieldType instanceof VarBinaryType``: BINARY(n) is refused."""
    for column in ("BINARY(16)", "STRING"):
        with pytest.raises(PaimonConfigError, match="VARBINARY / BYTES"):
            rt.spec(f"k INT, v {column}", **dict(AGG, **{"fields.v.aggregate-function": function}))
    rt.spec("k INT, v VARBINARY(64)", **dict(AGG, **{"fields.v.aggregate-function": function}))


def test_rbm64_is_refused_with_the_reason(rt):
    with pytest.raises(PaimonConfigError, match="rbm64.*ART-tree serialization"):
        _spec(rt, "rbm64")
