"""Paimon table options a Spark session sets for its reads, as Paimon's Spark connector reads
them (``OptionUtils.mergeSQLConfWithIdentifier``): ``spark.paimon.<option>`` for every table,
``spark.paimon.<catalog>.<database>.<table>.<option>`` for one (each of the three segments may be
``*``), the table's own setting winning over the global one. They override the table's stored
options for the session's reads only.

dbt-paimon's reads take from the session only the options listed in ``READ_OPTIONS``; any other
``spark.paimon.*`` setting is left to Paimon's own Spark connector. Its catalog entries live in
``spark_catalog``, the catalog segment a table setting names (or ``*``).

Where two table settings name the same table (an exact name and a ``*``), Paimon's connector
takes whichever its hash map lists last (``convertToDynamicTableProperties``), so the winner
depends on the other settings of the session. dbt-paimon takes the most specific one: an exact
table name before ``*``, then an exact database, then the catalog's name, so a command reads
the same way whatever else the session sets."""

from __future__ import annotations

from typing import Dict, Mapping, Tuple

from dbt.adapters.paimon.runtime import PaimonConfigError

PREFIX = "spark.paimon."
CATALOG = "spark_catalog"
# the options taken, all booleans (Paimon parses them case-insensitively)
READ_OPTIONS = ("postpone.merge-on-read",)

# an entry's record of the session options it was made with (catalog_entry.py)
ReadOptions = Tuple[Tuple[str, str], ...]


def paimon_confs(confs: Mapping[str, str]) -> Dict[str, str]:
    """The ``spark.paimon.*`` settings among a session's ``confs``."""
    return {key: str(value) for key, value in confs.items() if key.startswith(PREFIX)}


def table_read_options(confs: Mapping[str, str], database: str, table: str) -> ReadOptions:
    """The options of ``READ_OPTIONS`` that ``confs`` (a session's settings) set for reads of
    ``database.table`` (a branch ``t$branch_b`` is named as such), sorted by key."""
    found: Dict[str, str] = {}
    specific: Dict[str, Tuple[Tuple[bool, bool, bool], str]] = {}
    for key, value in confs.items():
        if not key.startswith(PREFIX):
            continue
        rest = key[len(PREFIX):]
        if rest in READ_OPTIONS:
            found[rest] = value
            continue
        parts = rest.split(".", 3)
        if len(parts) == 4 and parts[3] in READ_OPTIONS and parts[0] in (CATALOG, "*") \
                and parts[1] in (database, "*") and parts[2] in (table, "*"):
            # two keys of one rank are the same key: the order of ``confs`` never decides
            rank = (parts[2] == table, parts[1] == database, parts[0] == CATALOG)
            if parts[3] not in specific or rank > specific[parts[3]][0]:
                specific[parts[3]] = (rank, value)
    found.update({option: value for option, (_, value) in specific.items()})
    return tuple(sorted((key, _boolean(database, table, key, value))
                        for key, value in found.items()))


def _boolean(database: str, table: str, key: str, value: str) -> str:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise PaimonConfigError(
            f"The Spark session sets Paimon option '{key}' to {value!r} for reads of "
            f"{database}.{table} ({PREFIX}{key} or {PREFIX}<catalog>.<database>.<table>.{key}); "
            f"expected true or false.")
    return text


def encode(options: ReadOptions) -> str:
    """``options`` as one property value ('' for none): ``key=value;key=value``."""
    return ";".join(f"{key}={value}" for key, value in options)


def decode(text: str) -> ReadOptions:
    return tuple(tuple(item.split("=", 1)) for item in text.split(";") if "=" in item)
