"""dbt-paimon merge runtime: Paimon's merge engines as one vectorized Arrow kernel.

Public API (a stable contract, docs/merge_runtime.md "The Python API")::

    MergeSpec.from_table_options(schema, primary_keys, options) -> MergeSpec
        schema: [(name, Paimon SQL type)], primary_keys: list (or comma string),
        options: Paimon table options (string values). Raises PaimonConfigError.

    merge_arrow(spec, records, with_changelog=False) -> pa.Table | (pa.Table, pa.Table)
        records: schema columns + _row_kind (+I/-U/+U/-D) + _seq (int64) [+ _commit (int64)].
        Returns the rows a reader sees, schema columns only, sorted by primary key; with
        with_changelog=True also the lookup/full-compaction changelog (schema columns +
        _row_kind + _commit), in commit order.

    premerge_arrow(spec, records) -> pa.Table
        The write buffer of ONE commit: one row per key, schema columns + _row_kind (stored kind,
        retractions kept) + _seq (sequence number kept for the merged record: first-row keeps the
        first record's, every other engine the last record's; a key's only record is stored as-is),
        sorted by primary key -- the order in which rows are written. Merge-on-read of stored files
        is ``merge_arrow`` of their rows with _seq = _SEQUENCE_NUMBER in one commit.

    merged_row_is_a_record(spec) -> bool; merged_record_rows(spec, records, sorted_by_key=True) -> pa.Array
        A deduplicate or first-row table's merged row is one of its records: the row numbers of the
        records a merged read returns, from the keys, sequence fields, _row_kind and _seq alone.

    PaimonConfigError, PaimonDataError: ValueError subclasses.
"""
from .errors import PaimonConfigError, PaimonDataError
from .kernel import merge_arrow, merged_record_rows, merged_row_is_a_record, premerge_arrow
from .spec import MergeSpec, SequenceGroup
from .types import SqlType, parse_type

__all__ = [
    "MergeSpec",
    "PaimonConfigError",
    "PaimonDataError",
    "SequenceGroup",
    "SqlType",
    "merge_arrow",
    "merged_record_rows",
    "merged_row_is_a_record",
    "parse_type",
    "premerge_arrow",
]
