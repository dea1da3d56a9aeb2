"""Undo one dbt invocation: every table it committed to rolled back to the snapshot before its
first commit there.

Each snapshot dbt-paimon commits records the dbt invocation and the node (a model, seed, snapshot
or run-operation) in the snapshot's ``properties`` (format/commit.py ``commit_properties``):
Paimon Java 1.2+ shows them, 1.0 ignores them, and expiry of other snapshots keeps them. A table
is rolled back only when every snapshot from the invocation's first commit on is the
invocation's own; a table someone committed to afterwards (another invocation, another engine)
is refused and left as it is, naming that commit. So is a table the invocation created (there is
no snapshot before it) or whose previous snapshot expired without a tag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.ops.rollback import rollback

INVOCATION_PROPERTY = "dbt.invocation-id"
NODE_PROPERTY = "dbt.node"


@dataclass(frozen=True)
class TableUndo:
    table: str
    snapshots: List[int]                 # the invocation's snapshots of this table
    target: Optional[int] = None         # rolled back to (None: refused)
    refused: str = ""


@dataclass
class InvocationUndo:
    invocation_id: str
    tables: List[TableUndo] = field(default_factory=list)
    dry_run: bool = False

    @property
    def rolled_back(self) -> List[TableUndo]:
        return [t for t in self.tables if t.target is not None]

    @property
    def refused(self) -> List[TableUndo]:
        return [t for t in self.tables if t.target is None]

    @property
    def message(self) -> str:
        verb = "would roll back" if self.dry_run else "rolled back"
        lines = [f"invocation {self.invocation_id}:"]
        for undo in self.tables:
            if undo.target is not None:
                lines.append(f"  {undo.table}: {verb} to snapshot {undo.target} (removing "
                             f"snapshot(s) {_ranges(undo.snapshots)})")
            else:
                lines.append(f"  {undo.table}: left untouched: {undo.refused}")
        return "\n".join(lines)


def snapshot_origin(snapshot) -> Tuple[Optional[str], Optional[str]]:
    """(dbt invocation id, node) that committed ``snapshot``; (None, None) for other writers."""
    properties = snapshot.properties or {}
    return properties.get(INVOCATION_PROPERTY), properties.get(NODE_PROPERTY)


def latest_invocation(tables: Iterable[TableRef]) -> Optional[str]:
    """The invocation of the most recent snapshot any dbt-paimon invocation committed."""
    newest: Tuple[int, Optional[str]] = (-1, None)
    for location in tables:
        for snapshot in location.open().snapshot_manager().list_snapshots():
            invocation, _ = snapshot_origin(snapshot)
            if invocation and snapshot.time_millis > newest[0]:
                newest = (snapshot.time_millis, invocation)
    return newest[1]


def rollback_invocation(tables: Iterable[TableRef], invocation_id: Optional[str] = None,
                        dry_run: bool = False) -> InvocationUndo:
    """Roll back every one of ``tables`` that ``invocation_id`` (default: the latest that
    committed) wrote."""
    tables = list(tables)
    if invocation_id is None:
        invocation_id = latest_invocation(tables)
        if invocation_id is None:
            raise ValueError("no snapshot of the warehouse records a dbt invocation: "
                             "nothing to undo")
    result = InvocationUndo(str(invocation_id), dry_run=dry_run)
    for location in tables:
        undo = _plan(location, str(invocation_id))
        if undo is None:
            continue
        if undo.target is not None and not dry_run:
            rollback(location, snapshot_id=undo.target)
        result.tables.append(undo)
    if not result.tables:
        raise ValueError(f"invocation {invocation_id} committed to no retained snapshot of "
                         f"the warehouse (a mistyped id, or already rolled back)")
    return result


def _plan(location: TableRef, invocation_id: str) -> Optional[TableUndo]:
    table = location.open()
    snapshots = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    mine = [s.id for s in snapshots if snapshot_origin(s)[0] == invocation_id]
    if not mine:
        return None
    first = mine[0]
    for snapshot in snapshots:
        if snapshot.id > first and snapshot.id not in mine:
            invocation, node = snapshot_origin(snapshot)
            by = (f"dbt invocation {invocation} ({node})" if invocation else
                  f"commit user {snapshot.commit_user}")
            return TableUndo(location.name, mine, refused=(
                f"snapshot {snapshot.id} was committed afterwards by {by}; roll it back "
                f"with `rollback` if that is meant"))
    if first <= 1:
        return TableUndo(location.name, mine, refused=(
            f"the invocation created it (snapshot {first} is its first): there is no earlier "
            f"state; drop it with paimon_drop_table if it should go"))
    if time_travel.snapshot_by_id(table, first - 1) is None:
        return TableUndo(location.name, mine, refused=(
            f"snapshot {first - 1}, the state before the invocation, expired (and no tag "
            f"keeps it)"))
    return TableUndo(location.name, mine, target=first - 1)


def warehouse_tables(warehouse: str, catalog_options: Dict[str, str]) -> List[TableRef]:
    """Every table of one catalog."""
    return [TableRef(warehouse, database, table, catalog_options)
            for database in listing.list_databases(warehouse, catalog_options)
            for table in listing.list_tables(warehouse, database, catalog_options)]


def _ranges(ids: List[int]) -> str:
    return f"{ids[0]}..{ids[-1]}" if len(ids) > 1 else str(ids[0])
