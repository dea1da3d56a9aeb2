"""``paimon_changes(ref('orders'))``: a model reads what changed in a Paimon table since its last
successful run, tracked like a Paimon streaming consumer.

The position lives in the source table as Paimon consumer ``<id>`` (format/consumers.py), so
Paimon's snapshot expiry keeps what the consumer has not read. One model run:

1. compile: ``plan`` picks the snapshots to read: after the consumer's ``nextSnapshot`` up to
   the table's latest snapshot (pinned: later commits wait for the next run); without a
   consumer (first run, ``--full-refresh``, a consumer that expired, ``consumer.ignore-progress``)
   every current row as +I, as a new Paimon streaming consumer (scan mode ``latest-full``);
   the new position is held as *pending* for the model;
2. the model's materialization runs;
3. ``PendingPositions.settle`` (from the adapter's post-model hook): only when it succeeded is
   the consumer moved to the snapshot after the one read. A failed run reads the same changes
   again next time (at-least-once, as a Paimon consumer restarting from its last checkpoint).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from dbt.adapters.paimon.format import consumers


@dataclass(frozen=True)
class Consumption:
    consumer_id: str
    start: Optional[int]       # read snapshots after this one; None: all rows of ``end`` as +I
    end: int                   # last snapshot read (0: the table has none yet)
    next_snapshot: Optional[int]  # the position to store on success (None: leave it)

    @property
    def options(self) -> Dict[str, str]:
        """The paimon data source options of this change read."""
        options = {"changes_to": str(self.end)}
        if self.start is not None:
            options["changes_from"] = str(self.start)
        return options


def default_consumer_id(schema: str, identifier: str) -> str:
    """One consumer per consuming model (its relation), for each table it reads."""
    return f"dbt-{schema}.{identifier}"


def plan(table, consumer_id: str, from_start: bool) -> Consumption:
    """What one run of the consuming model reads (see the module doc)."""
    from dbt.adapters.paimon.format.splits import current_snapshot_id

    latest = current_snapshot_id(table)
    if latest is None:  # nothing committed yet: an empty read, no position
        return Consumption(consumer_id, 0, 0, None)
    ignore = str(table.table_schema.options.get("consumer.ignore-progress", "false")).lower()
    position = None if from_start or ignore == "true" else \
        consumers.read_consumer(table, consumer_id)
    if position is None:
        return Consumption(consumer_id, None, latest, latest + 1)
    if position > latest:  # nothing new since the last run
        return Consumption(consumer_id, latest, latest, None)
    earliest = min(s.id for s in table.snapshot_manager().list_snapshots())
    if position < earliest:
        raise ValueError(
            f"consumer '{consumer_id}' of Paimon table {table.identifier} is at snapshot "
            f"{position}, which has expired (earliest retained: {earliest}): the changes in "
            f"between are lost. Run the consuming model with --full-refresh to read the table "
            f"again from its current rows.")
    return Consumption(consumer_id, position - 1, latest, latest + 1)


class PendingPositions:
    """Consumer positions read by models that are still running, keyed by model unique_id."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: Dict[str, Dict[Tuple[str, str], Tuple[object, Consumption]]] = {}

    def hold(self, model_id: str, location, consumption: Consumption) -> None:
        with self._lock:
            self._pending.setdefault(model_id, {})[(location.name, consumption.consumer_id)] = \
                (location, consumption)

    def settle(self, model_id: Optional[str], succeeded: bool) -> None:
        """Store the model's positions if its run succeeded; forget them either way."""
        with self._lock:
            held = self._pending.pop(model_id, {}) if model_id else {}
        if not succeeded:
            return
        for location, consumption in held.values():
            if consumption.next_snapshot is not None:
                consumers.write_consumer(location.open(), consumption.consumer_id,
                                         consumption.next_snapshot)
