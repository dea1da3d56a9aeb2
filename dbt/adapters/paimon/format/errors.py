"""Errors of the format layer; the adapter maps them to dbt errors."""


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


class CatalogLockTimeout(PaimonFormatError):
    """The catalog's lock of a table stayed taken longer than ``lock-acquire-timeout``."""
