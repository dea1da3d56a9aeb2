"""HllSketchUtil.union (Paimon's hll_sketch) with DataSketches C++, byte-equal to Java 4.2.

``union(acc, x)``: an HLL union of lg_max_k = ``x``'s lg_config_k updated with ``x`` then
``acc``, returned as a compact HLL_4 image. The C++ library computes the same registers and
image, but the HIP accumulator differs where one side is in HLL mode and the other in LIST/SET
mode. Java then adds the LIST/SET side's coupons one by one to the HLL side's registers, raising
the HIP accumulator by ``k / kxq`` for every register a coupon raises
(``AbstractHllArray.hipAndKxQIncrementalUpdate``, which runs whether or not the sketch is out of
order), starting from the HLL side's HIP value:

* ``acc`` in HLL mode, ``x`` in LIST/SET mode (``Union.unionImpl`` cases 0-18, "reverse merge"):
  ``acc``'s registers copied as HLL_8, or, when ``acc``'s lg_k is above ``x``'s, downsampled to
  ``x``'s lg_k (``Union.downsample``: ``acc``'s slots folded in slot order, its HIP value kept).
  C++ leaves the HIP value of an out-of-order ``acc`` copied at one lg_k, and computes its own for
  a downsampled one.
* ``acc`` in LIST/SET mode, ``x`` in HLL mode: ``Union.heapify(x)`` copies ``x`` as the HLL_8
  gadget (case 6: ``Conversions.convertToHll8`` keeps ``x``'s HIP value), then
  ``CouponList.mergeTo`` adds ``acc``'s coupons through ``couponUpdate``. When ``x`` is out of
  order (itself a union result: two HLL-mode sketches merged in one commit) C++ writes HIP 0,
  Java ``x``'s HIP plus the increments.

``_java_hip`` replays Java's order: the LIST/SET side's coupons as its heapified
``CouponHashSet`` holds them (a LIST keeps its order), on the HLL side's registers with the KxQ
sums Java builds slot by slot. Every other case (both in HLL mode, both in LIST/SET mode, any
lg_k) is byte-equal as C++ writes it (checked against Paimon Java in
``tests/interop/test_sketches_java.py``).
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
    if _mode(bytes(image)) == _HLL:
        if _mode(acc) == _HLL and _mode(x) in (_LIST, _SET):
            if acc[3] > x[3] or acc[5] & _OUT_OF_ORDER:
                image[8:16] = struct.pack("<d", _java_hip(acc, x, min(acc[3], x[3])))
        elif _mode(acc) in (_LIST, _SET) and _mode(x) == _HLL:
            image[8:16] = struct.pack("<d", _java_hip(x, acc, x[3]))
    return bytes(image)


def _mode(image: bytes) -> int:
    return image[7] & 3


def _java_hip(hll: bytes, coupons: bytes, lg_k: int) -> float:
    """The HIP value Java's union leaves when it adds a LIST/SET image's ``coupons`` to an
    HLL-mode image: ``hll``'s registers at ``lg_k`` -- its KxQ sums built slot by slot
    (Conversions.convertToHll8 / Union.downsample, couponUpdate from all-zero registers), its HIP
    value kept -- then the coupons, each raising HIP by k / kxq."""
    k = 1 << lg_k
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

    for slot, value in enumerate(_registers(hll)):
        if value:
            raise_slot(slot & (k - 1), value)
    hip = struct.unpack_from("<d", hll, 8)[0]
    for coupon in _coupons_in_java_order(coupons):
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
