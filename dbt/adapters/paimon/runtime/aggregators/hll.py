"""HllSketchUtil.union (Paimon's hll_sketch) with DataSketches C++, byte-equal to Java 4.2.

``union(acc, x)``: an HLL union of lg_max_k = ``x``'s lg_config_k updated with ``x`` then
``acc``, returned as a compact HLL_4 image. The C++ library computes the same registers and
image, but one field differs when ``acc`` is in HLL mode and ``x`` in LIST/SET mode: Java's union
(``Union.unionImpl``, "reverse merge") takes ``acc``'s registers -- copied as HLL_8, or, when
``acc``'s lg_k is above ``x``'s, downsampled to ``x``'s lg_k (``Union.downsample``: ``acc``'s
slots folded in slot order, its HIP value kept) -- and adds ``x``'s coupons one by one, raising
the HIP accumulator by ``k / kxq`` for every register a coupon raises. C++ leaves the HIP value
of an out-of-order ``acc`` copied at one lg_k, and computes its own for a downsampled one.
``_java_hip`` replays Java's order: ``x``'s coupons as its heapified ``CouponHashSet`` holds them
(a LIST keeps its order), on the registers with the KxQ sums Java builds slot by slot. Every
other case (both in HLL mode, ``acc`` in LIST/SET mode, any lg_k) is byte-equal as C++ writes it
(checked against Paimon Java in ``tests/interop/test_sketches_java.py``).
"""
from __future__ import annotations

import struct
from typing import List

_LIST, _SET, _HLL = 0, 1, 2
_OUT_OF_ORDER = 0x10
_KEY_MASK_26 = (1 << 26) - 1
_HEADER = 40  # HLL-mode preamble: 10 ints


def union(acc: bytes, x: bytes) -> bytes:
    import datasketches as ds

    into = ds.hll_sketch.deserialize(x)
    u = ds.hll_union(into.lg_config_k)
    u.update(into)
    u.update(ds.hll_sketch.deserialize(acc))
    image = bytearray(u.get_result(ds.tgt_hll_type.HLL_4).serialize_compact())
    if _mode(acc) == _HLL and _mode(x) in (_LIST, _SET) and _mode(bytes(image)) == _HLL:
        if acc[3] > x[3] or acc[5] & _OUT_OF_ORDER:
            image[8:16] = struct.pack("<d", _java_hip(acc, x))
    return bytes(image)


def _mode(image: bytes) -> int:
    return image[7] & 3


def _java_hip(acc: bytes, x: bytes) -> float:
    """The HIP value of Java's reverse merge: ``acc``'s registers at lg_k min(acc's, x's) -- its
    KxQ sums built slot by slot (Conversions.convertToHll8 / Union.downsample, couponUpdate from
    all-zero registers), its HIP value kept -- then ``x``'s coupons, each raising HIP by k / kxq."""
    k = 1 << min(acc[3], x[3])
    registers = [0] * k
    kxq = [float(k), 0.0]  # Java's kxq0 (values < 32) and kxq1

    def raise_slot(slot: int, new: int) -> bool:  # Hll8Array.updateSlotWithKxQ
        old = registers[slot]
        if new <= old:
            return False
        kxq[old >= 32] -= 2.0 ** -old
        kxq[new >= 32] += 2.0 ** -new
        registers[slot] = new
        return True

    for slot, value in enumerate(_registers(acc)):
        if value:
            raise_slot(slot & (k - 1), value)
    hip = struct.unpack_from("<d", acc, 8)[0]
    for coupon in _coupons_in_java_order(x):
        before = kxq[0] + kxq[1]
        if raise_slot(coupon & (k - 1), coupon >> 26):  # hipAndKxQIncrementalUpdate
            hip += k / before
    return hip


def _registers(image: bytes) -> List[int]:
    """The slot values of an HLL-mode image (HLL_4 with its aux exceptions, HLL_6, HLL_8)."""
    k = 1 << image[3]
    kind = (image[7] >> 2) & 3
    if kind == 2:  # HLL_8: one byte a slot
        return list(image[_HEADER:_HEADER + k])
    if kind == 1:  # HLL_6: 6 bits a slot, little-endian
        out = []
        for slot in range(k):
            start = slot * 6
            pair = image[_HEADER + (start >> 3)] | (image[_HEADER + (start >> 3) + 1] << 8)
            out.append((pair >> (start & 7)) & 63)
        return out
    cur_min, aux_count = image[6], struct.unpack_from("<i", image, 36)[0]
    out = []
    for slot in range(k):  # HLL_4: curMin + nibble, 15 = look the value up in the aux map
        byte = image[_HEADER + (slot >> 1)]
        nibble = (byte >> 4) if slot & 1 else (byte & 15)
        out.append(cur_min + nibble if nibble != 15 else -1)
    aux = _HEADER + k // 2
    for i in range(aux_count):
        coupon = struct.unpack_from("<I", image, aux + 4 * i)[0]
        out[coupon & (k - 1)] = coupon >> 26
    return out


def _coupons_in_java_order(image: bytes) -> List[int]:
    """A LIST/SET image's coupons in the order Java's union gadget iterates them: a LIST as
    stored; a compact SET re-inserted into a new CouponHashSet (32 slots, grown at 3/4)."""
    preamble_ints = image[0] & 0x3F
    if _mode(image) == _LIST:
        count = image[6]
    else:
        count = struct.unpack_from("<i", image, 8)[0]
    coupons = [struct.unpack_from("<I", image, 4 * preamble_ints + 4 * i)[0] for i in range(count)]
    coupons = [c for c in coupons if c]
    if _mode(image) == _LIST:
        return coupons
    lg, table, size = 5, [0] * 32, 0
    for coupon in coupons:
        index = _find(table, lg, coupon)
        if index >= 0:
            continue
        table[~index] = coupon
        size += 1
        if 4 * size > 3 * (1 << lg):  # CouponHashSet.checkGrowOrPromote: grow
            lg += 1
            grown = [0] * (1 << lg)
            for c in table:
                if c:
                    grown[~_find(grown, lg, c)] = c
            table = grown
    return [c for c in table if c]


def _find(table: List[int], lg: int, coupon: int) -> int:
    """CouponHashSet.find: the slot of ``coupon`` or ~ the empty slot to insert it."""
    mask = len(table) - 1
    probe = coupon & mask
    while True:
        at = table[probe]
        if at == 0:
            return ~probe
        if at == coupon:
            return probe
        probe = (probe + (((coupon & _KEY_MASK_26) >> lg) | 1)) & mask
