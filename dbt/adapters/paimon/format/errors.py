"""Errors of the format layer; the adapter maps them to dbt errors."""

from dbt.adapters.paimon.runtime.errors import PaimonConfigError


class PaimonFormatError(RuntimeError):
    """A Paimon table could not be read, written or committed as asked."""


class TableNotFoundError(PaimonFormatError, LookupError):
    """The named database or table does not exist in the warehouse."""


class TableAlreadyExistsError(PaimonFormatError):
    """create_table / rename_table would replace an existing table."""


class CommitConflictError(PaimonFormatError):
    """Another writer committed conflicting changes; nothing of this commit is visible."""


class CatalogUnreachableError(PaimonFormatError):
    """The Paimon catalog (its database or metastore) cannot be reached; the message names its
    URI and the fix."""


class CatalogLocationError(PaimonFormatError, PaimonConfigError):
    """The catalog keeps a database or table outside the folder the profile names: the
    configuration is to fix (a config error to dbt, not a failure to report), and the message
    says how."""


class CatalogLockTimeout(PaimonFormatError):
    """The catalog's lock of a table stayed taken longer than ``lock-acquire-timeout``."""


def missing_data_file(table, path: str) -> PaimonFormatError:
    """The error of a read whose snapshot lists a data file that is gone: another process
    (Paimon Java, Flink, another dbt command) expired or compacted that snapshot after the read
    planned from it. A new read plans from the table's current snapshot."""
    return PaimonFormatError(
        f"data file {path} of Paimon table {table.identifier.get_full_name()} is gone: another "
        f"process expired or compacted the snapshot this read planned from. Run the command "
        f"again: it reads the table's current snapshot.")
