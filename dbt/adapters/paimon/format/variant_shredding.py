"""Shredded VARIANT columns on write (`variant.shreddingSchema`, Paimon 1.4): pypaimon 2.1's data
writer, through which dbt-paimon writes every data file, stores the fields the option lists in
typed Parquet columns (``typed_value``) beside the rest of each variant (``value``). Where a
row's field holds another type than the option gives it, Paimon's writers keep that value in
the field's untyped bytes, and so does variant_shredder.py, which shreds a flat schema of
scalar fields (format/pypaimon_compat.py installs it). pypaimon 2.1's shredder, which shreds the
other schemas (nested objects, arrays, dates, timestamps), fails on such a value
instead, with a bare Arrow error deep in its writer (or converts it: a DOUBLE 1.5 into a BIGINT
field as 1). ``refused`` turns that failure into an error that says what to do, for a
configured schema and for one inferred per file (`variant.inferShreddingSchema`,
format/variant_inference.py)."""

from __future__ import annotations

import traceback
from typing import Optional

from dbt.adapters.paimon.runtime import PaimonDataError

OPTION = "variant.shreddingSchema"
# the pypaimon 2.1 function that shreds a column (pypaimon/data/variant_shredding.py)
_SHREDDER = "shred_variant_column"


def refused(table, error: BaseException) -> Optional[PaimonDataError]:
    """The error to raise instead of ``error`` when it is pypaimon's shredder failing on a
    value of another type than the table's ``variant.shreddingSchema`` gives its field; None
    for any other error."""
    from dbt.adapters.paimon.format import variant_inference

    options = dict(table.table_schema.options)
    inferred = variant_inference.enabled(options)
    if (OPTION not in options and not inferred) or not isinstance(error, Exception):
        return None
    if all(frame.name != _SHREDDER for frame in traceback.extract_tb(error.__traceback__)):
        return None
    if inferred:
        return PaimonDataError(
            f"Paimon table {table.identifier.get_full_name()} infers the shredding of its VARIANT "
            f"columns per data file ('{variant_inference.INFER}'), and a row's shredded field "
            f"holds a value pypaimon 2.1's shredder cannot store as the inferred type "
            f"({str(error)[:200]}): the schema has nested objects, dates or timestamps, "
            f"which pypaimon 2.1 shreds, and the value has another type or is a JSON null. "
            f"Paimon's writers keep such a value in the variant's remaining bytes. Set "
            f"'{variant_inference.INFER}' to 'false', or name the fields to shred in "
            f"'{OPTION}' instead.")
    return PaimonDataError(
        f"Paimon table {table.identifier.get_full_name()} shreds VARIANT fields ('{OPTION}'), "
        f"and a row's shredded field holds a value of another type than the option gives it "
        f"({str(error)[:200]}). Paimon's writers keep such a value in the variant's remaining "
        f"bytes; pypaimon 2.1's writer, which writes the table's files, cannot. Give the field "
        f"the option's type in the model's query (e.g. parse_json of a cast value), or leave "
        f"it out of '{OPTION}'.")
