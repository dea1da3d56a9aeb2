"""paimon_changes(): a pipeline orders (paimon_pk, lookup changelog) -> order_changes_log
(paimon_append consuming the changes) over several runs with updates, deletes, a failed
downstream run, snapshot expiry and a full refresh of the consumer (a run with nothing new is a
unit test: tests/unit/format/test_consumers.py)."""
import json
import os

import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import open_table

EVENTS = """batch,order_id,status,amount,op
1,1,new,10,+I
1,2,new,20,+I
1,3,new,30,+I
2,1,paid,10,+U
2,3,new,30,-D
2,4,new,40,+I
3,2,shipped,20,+U
4,5,new,50,+I
"""

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='order_id', changelog_producer='lookup',
          row_kind_column='op', buckets=2) }}
select cast(order_id as int) order_id, status, cast(amount as int) amount, op
from {{ ref('order_events') }} where batch = {{ var('batch') }}
"""

# log_mode=fail makes the consuming model fail after it has read the changes
CHANGES_LOG = """
{{ config(materialized='paimon_append') }}
select order_id, status, amount, _row_kind as row_kind, {{ var('batch') }} as batch
from {{ paimon_changes(ref('orders')) }}
where '{{ var('log_mode', 'pass') }}' = 'pass' or raise_error('planned failure') is null
"""


def run(batch, *extra, expect_pass=True):
    return run_dbt(["run", "--vars", f"{{batch: {batch}, log_mode: "
                    f"{'fail' if 'fail' in extra else 'pass'}}}"]
                   + [e for e in extra if e != "fail"], expect_pass=expect_pass)


def log(project, batch=None):
    where = f" where batch = {batch}" if batch is not None else ""
    return sorted(tuple(r) for r in project.run_sql(
        f"select row_kind, order_id, status, amount from {project.test_schema}.order_changes_log"
        f"{where}", fetch="all"))


def consumer(project):
    table = open_table(project, "orders")
    path = os.path.join(table.table_path,
                        f"consumer/consumer-dbt-{project.test_schema}.order_changes_log")
    with open(path) as handle:
        return json.load(handle), table


class TestPaimonChanges:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"order_events.csv": EVENTS}

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "order_changes_log.sql": CHANGES_LOG}

    def test_pipeline_consumes_each_change_once(self, project):
        run_dbt(["seed"])
        run(1)
        # first run: every current row as +I
        assert log(project, 1) == [("+I", 1, "new", 10), ("+I", 2, "new", 20),
                                   ("+I", 3, "new", 30)]
        position, table = consumer(project)
        assert position == {"nextSnapshot": table.snapshot_manager().get_latest_snapshot().id + 1}

        run(2)
        assert log(project, 2) == [("+I", 4, "new", 40), ("+U", 1, "paid", 10),
                                   ("-D", 3, "new", 30), ("-U", 1, "new", 10)]

        # orders commits batch 3, the consumer fails: its position stays
        before, _ = consumer(project)
        results = run(3, "fail", expect_pass=False)
        assert {r.node.name: r.status for r in results} == {"orders": "success",
                                                           "order_changes_log": "error"}
        assert consumer(project)[0] == before
        assert log(project, 3) == []
        # expiry keeps every snapshot the consumer has not read
        run_dbt(["run-operation", "expire_snapshots", "--args",
                 "{model: orders, retain_last: 1, older_than: '0 ms'}"])
        earliest = min(s.id for s in table.snapshot_manager().list_snapshots())
        assert earliest == before["nextSnapshot"]

        # the next run reads batch 3's change (not consumed yet) and batch 4's
        run(4)
        assert log(project, 4) == [("+I", 5, "new", 50), ("+U", 2, "shipped", 20),
                                   ("-U", 2, "new", 20)]

        # a full refresh reads the current rows again as +I
        run(5, "--select", "order_changes_log", "--full-refresh")
        assert log(project) == [("+I", 1, "paid", 10), ("+I", 2, "shipped", 20),
                                ("+I", 4, "new", 40), ("+I", 5, "new", 50)]
