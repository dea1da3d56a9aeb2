"""Thin layer over pypaimon's format code for our Spark data source and write path.

No dbt, no Spark: only pypaimon, pyarrow, numpy. Everything a Spark driver hands to its
tasks (Split, DataFileMeta, CommitMessage) pickles.
"""

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from dbt.adapters.paimon.format.bucket import bucket_ids, bucket_key_columns, hash_codes
from dbt.adapters.paimon.format.commit import (abort, commit_append, commit_compact,
                                               commit_overwrite)
from dbt.adapters.paimon.format.errors import (CommitConflictError, PaimonFormatError,
                                               TableAlreadyExistsError, TableNotFoundError)
from dbt.adapters.paimon.format.kv_files import (new_commit_message, next_sequence_number,
                                                 read_append_split, read_split_records,
                                                 write_kv_file)
from dbt.adapters.paimon.format.splits import (Split, current_snapshot_id, list_snapshots,
                                               plan_splits)
from dbt.adapters.paimon.format.warehouse import (create_table, drop_table, list_databases,
                                                  list_tables, open_catalog, open_table,
                                                  rename_table, table_exists)

__all__ = [
    "abort", "bucket_ids", "bucket_key_columns", "commit_append", "commit_compact",
    "commit_overwrite", "CommitConflictError", "create_table", "current_snapshot_id",
    "drop_table", "hash_codes", "list_databases", "list_snapshots", "list_tables",
    "new_commit_message", "next_sequence_number", "open_catalog", "open_table",
    "PaimonFormatError", "plan_splits", "read_append_split", "read_split_records",
    "rename_table", "Split", "table_exists", "TableAlreadyExistsError", "TableNotFoundError",
    "write_kv_file",
]
