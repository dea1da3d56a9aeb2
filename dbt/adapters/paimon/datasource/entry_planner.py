"""Which catalog entries the registry (registry.py) makes, keeps, makes again or drops, decided
from plain values: what Spark lists (catalog_entry.py), what the warehouse holds, the snapshot
each entry reads. No session and no file is read here: the registry gathers the values, asks,
and runs the answer (the SQL of one entry is entry_statements.py's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Mapping, Optional, Tuple

from dbt.adapters.paimon.datasource.catalog_entry import (UNCHOSEN, UNMERGED, CatalogEntry,
                                                          names_table, reads_rows)
from dbt.adapters.paimon.catalog import listing

Key = Tuple[str, str]  # (database, table)


@dataclass(frozen=True)
class SyncPlan:
    """A database's sync: the Paimon tables to expose (with their entries as listed, None when
    Spark has none), in name order, then this registry's entries whose table is gone."""

    expose: Tuple[Tuple[str, Optional[CatalogEntry]], ...]
    forget: Tuple[Tuple[str, CatalogEntry], ...]


def plan_sync(paimon_tables: Iterable[str], entries: Mapping[str, CatalogEntry]) -> SyncPlan:
    """Every Paimon table gets an entry; an entry of ours without its table is dropped, any
    other Spark table is left alone."""
    tables = set(paimon_tables)
    return SyncPlan(
        expose=tuple((table, entries.get(table)) for table in sorted(tables)),
        forget=tuple((table, entry) for table, entry in entries.items()
                     if entry.ours and table not in tables))


@dataclass(frozen=True)
class WantedEntry:
    """What an entry of ``database.table`` must read: the Paimon schema, the snapshot stamp
    ('' when not tracked), the branch ('' for main), and whether with its choice of rows made
    (``choose``) and its merge of values (``merge``), with the session's read options."""

    database: str
    table: str
    warehouse: str
    schema_id: int
    snapshot: str
    branch: str
    choose: bool
    merge: bool = False
    read_options: str = ""   # the session's, encoded (session_options.py)


def keeps(entry: Optional[CatalogEntry], wanted: WantedEntry, files_present) -> bool:
    """Whether the listed ``entry`` stays as it is (else it is made: from nothing if None).
    ``files_present``: called only for an entry that reads ``wanted``, whether its native file
    list is on disk. A Spark table of the same name that is not ours is refused: ValueError."""
    if entry is None:
        return False
    if not entry.ours:
        raise ValueError(
            f"{wanted.database}.{wanted.table} is both a Paimon table in {wanted.warehouse} "
            f"and a Spark {entry.provider or entry.kind} table; drop one of them.")
    return entry.reads(wanted.schema_id, wanted.snapshot, wanted.branch, wanted.choose,
                       wanted.merge, wanted.read_options) and files_present()


@dataclass(frozen=True)
class Refresh:
    """An entry to make again before a statement; ``choose``: with its choice of rows;
    ``merge``: with its merge of values."""

    database: str
    table: str
    choose: bool
    merge: bool = False


def plan_refresh(exposed: Mapping[Key, str], latest: Mapping[Key, str],
                 entries: Mapping[Key, CatalogEntry], sql: Optional[str]) -> List[Refresh]:
    """The entries behind their table (``exposed``: the snapshot each reads, ``latest``: each
    table's latest, given only for the tables refreshed this way), the UNCHOSEN entries of
    tables the statement ``sql`` names (its choice of rows is made for those only) and the
    UNMERGED entries of tables it names and reads rows of (a DESCRIBE merges nothing)."""
    plan = []
    reading = reads_rows(sql)
    for key, snapshot in exposed.items():
        if key not in latest:
            continue
        entry = entries.get(key)
        named = names_table(sql, key[1])
        read = entry.read if entry is not None else None
        if latest[key] != snapshot or (named and read == UNCHOSEN) \
                or (named and reading and read == UNMERGED):
            plan.append(Refresh(key[0], key[1], named, named and reading))
    return plan


def branch_moves(entries: Mapping[Key, CatalogEntry], sources: Mapping[Key, str]) -> List[Key]:
    """The entries that read another branch than their Paimon name in ``sources`` (``t`` or
    ``t$branch_b``) does now; a table missing from ``sources`` is left for its next read."""
    return [key for key, entry in entries.items() if key in sources
            and entry.branch != sources[key].partition(listing.BRANCH_SEPARATOR)[2]]


def moved_databases(before: Mapping[str, object], after: Mapping[str, object]) -> List[str]:
    """The databases whose catalog route differs between ``before`` and ``after``, sorted."""
    return sorted(d for d in set(before) | set(after) if before.get(d) != after.get(d))

