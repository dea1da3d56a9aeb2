"""Paimon consumers (format/consumers.py) and the consumption plan of paimon_changes
(materialize/consumption.py): positions, first reads, nothing new, expired positions, ignore-progress,
positions stored only for successful runs, idle consumers expiring."""
import json
import os
import time

import pytest

from dbt.adapters.paimon.materialize import consumption
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import consumers
from dbt.adapters.paimon.catalog.warehouse import open_table
from dbt.adapters.paimon.ops import expire_snapshots
from paimon_format_helpers import orders, pypaimon_write


def _commits(table, n):
    for i in range(n):
        pypaimon_write(table, orders("d1", [i]))


def test_consumer_file_is_paimons_format(pk_table):
    assert consumers.read_consumer(pk_table, "dbt-a.b") is None
    consumers.write_consumer(pk_table, "dbt-a.b", 4)
    path = os.path.join(pk_table.table_path, "consumer", "consumer-dbt-a.b")
    assert json.load(open(path)) == {"nextSnapshot": 4}
    consumers.write_consumer(pk_table, "other", 2)
    assert consumers.list_consumers(pk_table) == {"dbt-a.b": 4, "other": 2}
    assert consumers.min_next_snapshot(pk_table) == 2
    with pytest.raises(ValueError, match="consumer id"):
        consumers.write_consumer(pk_table, "../escape", 1)


def test_plan_first_read_then_changes_then_nothing_new(pk_table):
    empty = consumption.plan(pk_table, "c", from_start=False)
    assert (empty.options, empty.next_snapshot) == ({"changes_to": "0", "changes_from": "0"}, None)
    _commits(pk_table, 2)
    first = consumption.plan(pk_table, "c", from_start=False)
    assert first.options == {"changes_to": "2"} and first.next_snapshot == 3  # all rows as +I
    consumers.write_consumer(pk_table, "c", 3)
    _commits(pk_table, 2)
    later = consumption.plan(pk_table, "c", from_start=False)
    assert later.options == {"changes_to": "4", "changes_from": "2"} and later.next_snapshot == 5
    consumers.write_consumer(pk_table, "c", 5)
    idle = consumption.plan(pk_table, "c", from_start=False)
    assert idle.options == {"changes_to": "4", "changes_from": "4"} and idle.next_snapshot is None
    # a full refresh starts over from the current rows
    assert consumption.plan(pk_table, "c", from_start=True).options == {"changes_to": "4"}


def test_plan_refuses_an_expired_position_and_honours_ignore_progress(warehouse, pk_table):
    _commits(pk_table, 4)
    consumers.write_consumer(pk_table, "c", 2)
    location = TableRef(warehouse, "db", "orders", {})
    # expiry keeps what the consumer has not read: snapshots 2.. stay
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    assert min(s.id for s in pk_table.snapshot_manager().list_snapshots()) == 2
    os.remove(os.path.join(pk_table.table_path, "consumer", "consumer-c"))
    expire_snapshots(location, retain_last=1, older_than="0 ms")
    consumers.write_consumer(pk_table, "c", 2)
    with pytest.raises(ValueError, match="has expired.*--full-refresh"):
        consumption.plan(pk_table, "c", from_start=False)
    # consumer.ignore-progress: the stored position is ignored (a new consumer's full read)
    _set_option(warehouse, "consumer.ignore-progress", "true")
    again = consumption.plan(open_table(warehouse, "db", "orders"), "c", from_start=False)
    assert again.options == {"changes_to": "4"} and again.next_snapshot == 5


def _set_option(warehouse, key, value):
    from pypaimon.schema.schema_change import SchemaChange

    from dbt.adapters.paimon.catalog.warehouse import open_catalog

    open_catalog(warehouse).alter_table("db.orders", [SchemaChange.set_option(key, value)])


def test_positions_are_stored_only_for_successful_runs(warehouse, pk_table):
    _commits(pk_table, 1)
    location = TableRef(warehouse, "db", "orders", {})
    pending = consumption.PendingPositions()
    planned = consumption.plan(pk_table, "c", from_start=False)
    pending.hold("model.p.log", location, planned)
    pending.settle("model.p.log", succeeded=False)
    assert consumers.read_consumer(pk_table, "c") is None
    pending.settle("model.p.log", succeeded=True)  # forgotten after the failure
    assert consumers.read_consumer(pk_table, "c") is None
    pending.hold("model.p.log", location, planned)
    pending.settle("model.p.other", succeeded=True)  # another model's hook
    assert consumers.read_consumer(pk_table, "c") is None
    pending.settle("model.p.log", succeeded=True)
    assert consumers.read_consumer(pk_table, "c") == 2


def test_idle_consumers_expire_with_consumer_expiration_time(warehouse, pk_table):
    _commits(pk_table, 3)
    consumers.write_consumer(pk_table, "idle", 1)
    consumers.write_consumer(pk_table, "busy", 3)
    old = time.time() - 3600
    os.utime(os.path.join(pk_table.table_path, "consumer", "consumer-idle"), (old, old))
    _set_option(warehouse, "consumer.expiration-time", "30 min")
    result = expire_snapshots(TableRef(warehouse, "db", "orders", {}), retain_last=1,
                              older_than="0 ms")
    table = open_table(warehouse, "db", "orders")
    assert consumers.list_consumers(table) == {"busy": 3}
    assert result.expired_snapshots == [1, 2]
