"""Paimon 1.0 Java (PaimonPeer) reads a snapshot table and a microbatch table that dbt-paimon
built through dbt's own materializations (`dbt snapshot`, `incremental_strategy='microbatch'`),
and the tables two Python models built (a `paimon_pk` and a dbt `table` from a DataFrame).

dbt builds in this test process's session (its adapter's, as every functional test): Paimon
Java reads the files of the warehouse, which are the same whichever Spark wrote them."""
from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt

# Paimon Java's fixture (tests/interop/conftest.py, imported by its package path: pytest
# loads each folder's conftest as `conftest`)
from tests.interop.conftest import paimon_java  # noqa: F401


# customers: version 1 of every row, then (STEP=2) customer 2 renamed and customer 3 gone
CUSTOMERS = """
{{ config(materialized='table') }}
select 1 as id, 'ann' as name, timestamp'2024-01-01 00:00:00' as updated_at
union all
select 2, {% if env_var('JAVA_READS_STEP', '1') == '1' %}'bob', timestamp'2024-01-01 00:00:00'
          {% else %}'bobby', timestamp'2024-01-05 00:00:00'{% endif %}
{% if env_var('JAVA_READS_STEP', '1') == '1' %}
union all select 3, 'cid', timestamp'2024-01-01 00:00:00'
{% endif %}
"""

SNAPSHOT = """
snapshots:
  - name: customers_history
    relation: ref('customers')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: invalidate
"""

# three days of events, one batch (one commit) per day
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='event_time', batch_size='day', begin='2024-01-01') }}
select id, cast(event_time as timestamp) as event_time, amount from values
  (1, '2024-01-01 10:00:00', 10), (2, '2024-01-02 11:00:00', 20),
  (3, '2024-01-02 12:00:00', 30), (4, '2024-01-03 09:00:00', 40)
  as t(id, event_time, amount)
"""


PY_KEYED = """
def model(dbt, session):
    dbt.config(materialized="paimon_pk", primary_key="id", buckets=2)
    return dbt.ref("events").selectExpr("id", "amount * 2 as doubled")
"""

PY_TABLE = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.ref("events").groupBy().sum("amount").withColumnRenamed("sum(amount)", "total")
"""


class TestJavaReadsSnapshotAndMicrobatchTables:
    @pytest.fixture(scope="class")
    def models(self):
        return {"customers.sql": CUSTOMERS, "events.sql": EVENTS, "py_keyed.py": PY_KEYED,
                "py_table.py": PY_TABLE}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"customers_history.yml": SNAPSHOT}

    def test_java_reads_snapshot_and_microbatch_tables(self, project, paimon_java, tmp_path,
                                                       monkeypatch):
        run_dbt(["build", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-04"])
        # the step is an environment variable, not a dbt var: a changed var parses the whole
        # project again
        monkeypatch.setenv("JAVA_READS_STEP", "2")
        run_dbt(["build", "--select", "customers", "customers_history"])

        warehouse, schema = project.adapter.config.credentials.warehouse, project.test_schema
        events, history, keyed, table = paimon_java.batch(
            [["read", warehouse, f"{schema}.{name}"]
             for name in ("events", "customers_history", "py_keyed", "py_table")],
            tmp_path / "commands.jsonl")
        assert sorted((r["id"], r["doubled"]) for r in map(json.loads, keyed.splitlines()) if r) \
            == [(1, 20), (2, 40), (3, 60), (4, 80)]
        assert [json.loads(r) for r in table.splitlines() if r] == [{"total": 100}]
        events = sorted((r["id"], r["event_time"], r["amount"])
                        for r in map(json.loads, events.splitlines()) if r)
        assert events == [(1, "2024-01-01T10:00:00.000000", 10),
                          (2, "2024-01-02T11:00:00.000000", 20),
                          (3, "2024-01-02T12:00:00.000000", 30),
                          (4, "2024-01-03T09:00:00.000000", 40)]

        versions = sorted(((r["id"], r["name"], r["dbt_valid_to"] is None)
                           for r in map(json.loads, history.splitlines()) if r))
        # Paimon Java sees every version: bob closed and bobby current, cid closed (deleted),
        # ann open
        assert versions == [(1, "ann", True), (2, "bob", False), (2, "bobby", True),
                            (3, "cid", False)]
        closed_bob = [r for r in map(json.loads, history.splitlines()) if r["name"] == "bob"][0]
        assert closed_bob["dbt_valid_to"] == "2024-01-05T00:00:00.000000"
