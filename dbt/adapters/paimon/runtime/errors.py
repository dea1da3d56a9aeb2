"""Errors raised by the merge runtime.

Both are ``ValueError`` subclasses so callers that do not know the runtime can
still catch them; the dbt adapter maps them to compiler / runtime errors.
"""


class PaimonConfigError(ValueError):
    """Invalid or unsupported table configuration (raised by ``MergeSpec.from_table_options``).

    The message names the offending option and how to fix it.
    """


class PaimonDataError(ValueError):
    """Records that Paimon itself would refuse while writing or merging them."""
