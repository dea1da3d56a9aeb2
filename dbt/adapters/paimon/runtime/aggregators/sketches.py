"""hll_sketch, theta_sketch, rbm32 (Paimon FieldHllSketchAgg, FieldThetaSketchAgg,
FieldRoaringBitmap32Agg): unions of serialized sketches / bitmaps in VARBINARY columns.

Java's ``agg(acc, x)`` keeps a NULL side's partner as it is (the first non-null input is stored
byte for byte) and otherwise deserializes both, unions them and serializes the result. The
Python libraries give the same bytes (held to Paimon Java by tests/interop/test_sketches_java.py):

* ``hll_sketch``: ``HllSketchUtil.union`` with DataSketches C++ and one header field set as
  Java does (``hll.py``).
* ``theta_sketch``: ``ThetaSketch.union(acc, x)`` is a default union (lg_k 12, seed 9001) of
  ``acc`` and ``x``, returned as an ordered compact sketch. The C++ library keeps the same hashes
  and theta; only header fields Java fills differently are set as Java 4.2 does
  (``_java_compact_header``).
* ``rbm32``: ``RoaringBitmap.or`` then ``runOptimize`` and the portable serialization, which
  CRoaring (``pyroaring``) writes identically.

A union is not an Arrow operation: one merge's inputs are folded in a loop over that merge's
non-null inputs, in merge order (HLL images depend on it). Only merges with two or more non-null
inputs enter the loop; the others are resolved with list expressions over all keys at once.
``rbm64`` stays refused (aggregators/__init__.py says why).
"""
from __future__ import annotations

import struct
from typing import Callable

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .base import Aggregator, GroupMasks, Masks

ADD, ADD_OLDER = 0, 1
_V, _O = "__v", "__o"


class _SerializedUnion(Aggregator):
    supports_sequence_group = True
    single_safe = False  # agg() gathers inputs, finish() unions them: a lone record bypasses both

    def check_type(self, t):
        # Paimon's factories require VarBinaryType: BYTES / VARBINARY(n), not BINARY(n)
        if t.root != "VARBINARY" or (t.text or "").upper().startswith("BINARY"):
            raise self.type_error("VARBINARY / BYTES")

    def agg(self, col: pl.Expr, m: Masks) -> pl.Expr:
        return self._inputs(col, pl.lit(ADD), m.add)

    def agg_in_group(self, col: pl.Expr, g: GroupMasks) -> pl.Expr:
        # an older record of the group: aggReversed(acc, x) = agg(x, acc)
        return self._inputs(col, pl.when(g.w).then(ADD).otherwise(ADD_OLDER), g.w | g.l)

    @staticmethod
    def _inputs(col: pl.Expr, op: pl.Expr, mask: pl.Expr) -> pl.Expr:
        return pl.struct(col.alias(_V), op.alias(_O)).filter(mask & col.is_not_null())

    def finish(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        inputs = pl.col(column)
        # no non-null input: NULL; one: that input as written (agg(null, x) = x)
        first = inputs.list.first().struct.field(_V)
        frame = frame.with_columns(
            pl.when(inputs.list.len() >= 2).then(pl.lit(None, pl.Binary)).otherwise(first).alias("__single"),
        )
        folded = frame[column].to_arrow()
        if isinstance(folded, pa.ChunkedArray):
            folded = folded.combine_chunks()
        lengths = pc.fill_null(folded.value_lengths(), 0).to_numpy(zero_copy_only=False)
        several = np.nonzero(lengths >= 2)[0].tolist()
        out = frame["__single"]
        if several:
            union = self.union_function()
            values = []
            for i in several:  # one iteration per merge with >= 2 inputs, not per record
                acc = None
                for item in folded[i].values.to_pylist():
                    x = item[_V]
                    if acc is None:
                        acc = x
                    elif item[_O] == ADD:
                        acc = union(acc, x)
                    else:
                        acc = union(x, acc)
                values.append(acc)
            out = out.scatter(several, pl.Series(values, dtype=pl.Binary))
        return frame.with_columns(out.alias(column)).drop("__single")

    def union_function(self) -> Callable[[bytes, bytes], bytes]:
        raise NotImplementedError


class HllSketch(_SerializedUnion):
    name = "hll_sketch"

    def union_function(self):
        from .hll import union

        return union


class ThetaSketch(_SerializedUnion):
    name = "theta_sketch"

    def union_function(self):
        import datasketches as ds

        def union(acc: bytes, x: bytes) -> bytes:
            # ThetaSketch.union: Sketches.setOperationBuilder().buildUnion() (lg_k 12), ordered result
            u = ds.theta_union(12)
            u.update(ds.compact_theta_sketch.deserialize(acc))
            u.update(ds.compact_theta_sketch.deserialize(x))
            return _java_compact_header(bytes(u.get_result(True).serialize()))

        return union


_JAVA_EMPTY_THETA = bytes.fromhex("01030300001e0000")  # Java's EmptyCompactSketch image (seed hash 0)
_SINGLE_ITEM_FLAG = 0x20
_EMPTY_FLAG = 0x04


def _java_compact_header(image: bytes) -> bytes:
    """A C++ compact theta image with the header DataSketches Java 4.2 writes for the same sketch:
    the empty sketch carries no seed hash, a one-entry exact sketch has the single-item flag,
    and with two or more preamble longs the unused sampling probability p is 1.0f."""
    out = bytearray(image)
    preamble_longs = out[0] & 0x3F
    if preamble_longs == 1 and len(out) == 8 and out[5] & _EMPTY_FLAG:
        return _JAVA_EMPTY_THETA
    if preamble_longs == 1 and len(out) == 16:
        out[5] |= _SINGLE_ITEM_FLAG
    if preamble_longs >= 2:
        out[12:16] = struct.pack("<f", 1.0)
    return bytes(out)


class RoaringBitmap32(_SerializedUnion):
    name = "rbm32"

    def union_function(self):
        from pyroaring import BitMap

        def union(acc: bytes, x: bytes) -> bytes:
            # RoaringBitmap32: deserialize both, or, runOptimize, portable serialization
            result = BitMap.deserialize(acc) | BitMap.deserialize(x)
            result.run_optimize()
            return bytes(result.serialize())

        return union
