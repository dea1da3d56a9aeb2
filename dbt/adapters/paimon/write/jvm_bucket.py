"""Fixed buckets that Spark computes itself for integer bucket keys: no Python pass before the
distributed path's shuffle.

Paimon's bucket is ``abs(hashCode % numBuckets)``, where ``hashCode`` is Murmur3-32 (seed 42)
over the bucket key's BinaryRow bytes, word by word, then ``fmix`` with the length
(``MurmurHashUtils.hashBytesByWords``; format/bucket.py has the layout). Spark's ``hash()`` of a
BINARY value is the same function (``Murmur3_x86_32.hashUnsafeBytes``, seed 42) whenever the
length is a multiple of 4, and a BinaryRow's always is (a multiple of 8). So Spark computes
Paimon's bucket when given the row's bytes. For TINYINT, SMALLINT, INT and BIGINT keys, the
usual primary keys, those bytes are a zeroed null-bit header (row kind INSERT, no NULL) and one
8-byte little-endian slot per key column holding the value's two's complement in its width,
zero-extended: built here with ``hex``/``unhex``, evaluated in the JVM.

Any other key type, and a model column whose Spark type is not an integer at most as wide as
the stored one (whose cast could fail or round), keeps the Arrow UDF (tasks.bucket_udf), so a
value that does not fit still reaches the writing task's validation. A NULL key hashes to
Spark's seed and lands in some bucket, whose writing task then fails the run naming the rows,
as with the UDF.
"""

from __future__ import annotations

from typing import Optional

from dbt.adapters.paimon.write.plan import WritePlan

# table type (as PyArrow names it) -> mask of its width; BIGINT needs none
_WIDTH_MASK = {"int8": 0xFF, "int16": 0xFFFF, "int32": 0xFFFFFFFF, "int64": None}
# model column types (Spark's simpleString) whose value a table type of each width holds exactly
_FITS = {"int8": {"tinyint"}, "int16": {"tinyint", "smallint"},
         "int32": {"tinyint", "smallint", "int"},
         "int64": {"tinyint", "smallint", "int", "bigint"}}


def jvm_bucket_column(plan: WritePlan, frame):
    """A Spark Column holding each row's fixed bucket, or None where the Arrow UDF must compute
    it (see the module's docstring). ``frame``: the write's input, its columns named as
    ``plan.spark_name`` says."""
    from pyspark.sql import functions as F

    if plan.postpone:  # a bucket count per partition: the Arrow UDF
        return None
    spark_types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    slots = []
    for key in plan.bucket_keys:
        stored = str(plan.arrow_schema.field(key).type)
        if stored not in _WIDTH_MASK or spark_types.get(plan.spark_name(key)) not in _FITS[stored]:
            return None
        slots.append(_slot(F.col(f"`{plan.spark_name(key)}`"), _WIDTH_MASK[stored]))
    header_bytes = ((len(plan.bucket_keys) + 63 + 8) // 64) * 8
    row = F.concat(F.unhex(F.lit("00" * header_bytes)), *slots)
    return F.abs(F.hash(row) % F.lit(plan.num_buckets)).cast("int")


def _slot(column, mask: Optional[int]):
    """The 8 little-endian bytes of a BinaryRow slot holding ``column``'s integer value."""
    from pyspark.sql import functions as F

    value = column.cast("bigint")
    if mask is not None:
        value = value.bitwiseAND(F.lit(mask).cast("bigint"))
    # hex of a BIGINT is its unsigned two's complement (Long.toHexString), big-endian
    digits = F.lpad(F.hex(value), 16, "0")
    return F.unhex(F.concat(*[F.substring(digits, position, 2) for position in range(15, 0, -2)]))
