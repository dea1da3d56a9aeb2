"""Shredded VARIANT columns on write (`variant.shreddingSchema`, Paimon 1.4): pypaimon 2.1's data
writer, through which dbt-paimon writes every data file, stores the fields the option lists in
typed Parquet columns (``typed_value``) beside the rest of each variant (``value``). Where a
row's field holds another type than the option gives it, Paimon's writers keep that value in
the field's untyped bytes, and so does variant_shredder.py, which shreds schemas of objects
and scalars (format/pypaimon_compat.py installs it; it also shreds the schemas inferred per
file, format/variant_inference.py). pypaimon 2.1's shredder, which shreds the other schemas
(arrays, timestamps of another precision than microseconds), fails on such a value instead,
with a bare Arrow error deep in its writer (or converts it). ``refused`` turns that failure
into an error that says what to do."""

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
    if OPTION not in dict(table.table_schema.options) or not isinstance(error, Exception):
        return None
    if all(frame.name != _SHREDDER for frame in traceback.extract_tb(error.__traceback__)):
        return None
    return PaimonDataError(
        f"Paimon table {table.identifier.get_full_name()} shreds VARIANT fields ('{OPTION}'), "
        f"and a row's shredded field holds a value of another type than the option gives it "
        f"({str(error)[:200]}). Paimon's writers keep such a value in the variant's remaining "
        f"bytes; pypaimon 2.1's writer, which writes the table's files, cannot. Give the field "
        f"the option's type in the model's query (e.g. parse_json of a cast value), or leave "
        f"it out of '{OPTION}'.")
