"""Errors of the format layer; the adapter maps them to dbt errors."""


class PaimonFormatError(RuntimeError):
    """A Paimon table could not be read, written or committed as asked."""


class TableNotFoundError(PaimonFormatError, LookupError):
    """The named database or table does not exist in the warehouse."""


class TableAlreadyExistsError(PaimonFormatError):
    """create_table / rename_table would replace an existing table."""


class CommitConflictError(PaimonFormatError):
    """Another writer committed conflicting changes; nothing of this commit is visible."""
