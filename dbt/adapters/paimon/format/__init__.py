"""Thin layer over pypaimon's format code for our Spark data source and write path: a table's
files, snapshots and commits, given the opened table. Which tables a warehouse holds, and
opening them, is the catalog package's (dbt/adapters/paimon/catalog/, the layer above).

No dbt, no Spark: only pypaimon, pyarrow, numpy. Everything a Spark driver hands to its
tasks (Split, DataFileMeta, CommitMessage) pickles. Each module using pypaimon imports
``pypaimon_compat`` first.
"""

from typing import Any

# name -> submodule. Loaded on first use: a dbt command that only lists tables (the registry's
# sync, `dbt show`) must not pay for the commit and read code (pypaimon's readers import polars
# and pyarrow.dataset).
_EXPORTS = {
    "bucket": ("bucket_ids", "bucket_key_columns", "hash_codes"),
    "commit": ("abort", "commit_append", "commit_compact", "commit_overwrite"),
    "errors": ("CommitConflictError", "PaimonFormatError", "TableAlreadyExistsError",
               "TableNotFoundError"),
    "kv_files": ("new_commit_message", "next_sequence_number", "read_append_split",
                 "read_split_records", "write_kv_file"),
    "splits": ("Split", "current_snapshot_id", "list_snapshots", "plan_splits"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "abort", "bucket_ids", "bucket_key_columns", "commit_append", "commit_compact",
    "commit_overwrite", "CommitConflictError", "current_snapshot_id", "hash_codes",
    "list_snapshots", "new_commit_message", "next_sequence_number", "PaimonFormatError",
    "plan_splits", "read_append_split", "read_split_records", "Split",
    "TableAlreadyExistsError", "TableNotFoundError", "write_kv_file",
]


def __getattr__(name: str) -> Any:
    import importlib

    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
