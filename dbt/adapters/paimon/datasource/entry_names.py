"""The Spark names of a Paimon table's catalog entry: its hidden tables, its data-source
provider, and the names Paimon allows that Spark SQL cannot carry unquoted (a branch's '$').

The view ``db.t`` reads hidden tables in ``db__paimon``: ``read_<t>`` (the Python source's
rows), ``files_<t>`` (the snapshot's files, read natively), ``files_<n>_<t>`` (files read by
older column names), ``deletes_<t>`` (the rows a native read leaves out) and ``write_<t>`` (an
SQL INSERT's target)."""

from __future__ import annotations

import re

from dbt.adapters.paimon.datasource.spark_types import quote_identifier
from dbt.adapters.paimon.catalog import listing

PROVIDER_PREFIX = "paimon."
HIDDEN_DATABASE_SUFFIX = "__paimon"
READ_PREFIX, FILES_PREFIX, DELETES_PREFIX, WRITE_PREFIX = "read_", "files_", "deletes_", "write_"
# how a branch's '$branch_' appears in Spark names (providers, SQL INSERT targets)
SQL_BRANCH_SEPARATOR = "__branch_"
# Identifiers a provider name can carry unquoted; others are refused with a clear error.
_SAFE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def provider_name(database: str, table: str) -> str:
    """The Spark provider of a Paimon table (of a branch ``t$branch_b``: ``t__branch_b``, as
    '$' cannot appear in an unquoted SQL name)."""
    return f"{PROVIDER_PREFIX}{database}.{sql_name(table)}"


def sql_name(table: str) -> str:
    """A Paimon table's name as Spark names may carry it: ``t$branch_b`` as ``t__branch_b``."""
    return table.replace(listing.BRANCH_SEPARATOR, SQL_BRANCH_SEPARATOR)


def paimon_source_of(provider: str) -> str:
    """The Paimon table (or branch, ``t$branch_b``) a provider names: provider_name reversed."""
    table = provider[len(PROVIDER_PREFIX):].partition(".")[2]
    return table.replace(SQL_BRANCH_SEPARATOR, listing.BRANCH_SEPARATOR, 1)


def hidden_database(database: str) -> str:
    """The database of the tables the views of ``database`` read."""
    return database + HIDDEN_DATABASE_SUFFIX


def hidden_table(database: str, prefix: str, table: str) -> str:
    """``db__paimon.<prefix><table>``, quoted."""
    return f"{quote_identifier(hidden_database(database))}.{quote_identifier(prefix + table)}"


def projected_table(database: str, table: str, number: int) -> str:
    """The hidden table of a native read's ``number``-th Projection (from 1), quoted."""
    return hidden_table(database, f"{FILES_PREFIX}{number}_", table)


def entry_view(database: str, table: str) -> str:
    """The view a query names, ``db.t``, quoted."""
    return f"{quote_identifier(database)}.{quote_identifier(table)}"


def is_safe_name(name: str) -> bool:
    """Whether ``name`` can be part of a provider name (check_name)."""
    return bool(_SAFE_NAME.match(name or ""))


def check_name(kind: str, name: str) -> str:
    if not is_safe_name(name):
        raise ValueError(
            f"Paimon {kind} name {name!r} is not supported: use lower-case letters, digits and "
            "underscores, starting with a letter or underscore (Spark's metastore lower-cases "
            "names, and the name is part of the table's Spark provider)."
        )
    return name


def sql_text(text: str) -> str:
    """``text`` as the inside of a single-quoted Spark SQL literal (the package's one escape of
    it)."""
    return text.replace("\\", "\\\\").replace("'", "\\'")
