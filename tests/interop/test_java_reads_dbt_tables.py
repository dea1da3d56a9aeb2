"""Paimon 1.0 Java (PaimonPeer) reads a snapshot table and a microbatch table that dbt-paimon
built through dbt's own materializations (`dbt snapshot`, `incremental_strategy='microbatch'`),
and the tables two Python models built (a `paimon_pk` and a dbt `table` from a DataFrame).

dbt runs in a process of its own (its own embedded Spark session), as a user runs it: this pytest
process has its own Spark session (tests/interop), and one process holds one session."""
from __future__ import annotations

import json
import os
import textwrap

from tests import dbt_fork_server

PROJECT = """
name: java_reads
version: '1.0'
profile: java_reads
config-version: 2
"""

PROFILES = """
java_reads:
  target: dev
  outputs:
    dev:
      type: paimon
      schema: lake
      threads: 1
      warehouse: {warehouse}
      spark_master: "local[1]"
      spark_conf:
        spark.sql.shuffle.partitions: "2"
"""

# customers: version 1 of every row, then (var step=2) customer 2 renamed and customer 3 gone
CUSTOMERS = """
{{ config(materialized='table') }}
select 1 as id, 'ann' as name, timestamp'2024-01-01 00:00:00' as updated_at
union all
select 2, {% if var('step', 1) == 1 %}'bob', timestamp'2024-01-01 00:00:00'
          {% else %}'bobby', timestamp'2024-01-05 00:00:00'{% endif %}
{% if var('step', 1) == 1 %}union all select 3, 'cid', timestamp'2024-01-01 00:00:00'{% endif %}
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


def _dbt(project, *args):
    env = dict(os.environ, DBT_PROFILES_DIR=str(project), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    proc = dbt_fork_server.run([*args, "--project-dir", str(project)], project, env,
                               timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:]


def test_java_reads_snapshot_and_microbatch_tables(tmp_path, paimon_java):
    project, warehouse = tmp_path / "project", tmp_path / "warehouse"
    for folder in ("models", "snapshots"):
        (project / folder).mkdir(parents=True)
    (project / "dbt_project.yml").write_text(PROJECT)
    (project / "profiles.yml").write_text(PROFILES.format(warehouse=warehouse))
    (project / "models" / "customers.sql").write_text(textwrap.dedent(CUSTOMERS))
    (project / "models" / "events.sql").write_text(textwrap.dedent(EVENTS))
    (project / "snapshots" / "customers_history.yml").write_text(SNAPSHOT)
    (project / "models" / "py_keyed.py").write_text(PY_KEYED)
    (project / "models" / "py_table.py").write_text(PY_TABLE)

    _dbt(project, "build", "--event-time-start", "2024-01-01", "--event-time-end",
         "2024-01-04")
    _dbt(project, "build", "--select", "customers", "customers_history",
         "--vars", "{step: 2}")

    events, history, keyed, table = paimon_java.batch(
        [["read", warehouse, "lake.events"], ["read", warehouse, "lake.customers_history"],
         ["read", warehouse, "lake.py_keyed"], ["read", warehouse, "lake.py_table"]],
        tmp_path / "commands.jsonl")
    assert sorted((r["id"], r["doubled"]) for r in map(json.loads, keyed.splitlines()) if r) \
        == [(1, 20), (2, 40), (3, 60), (4, 80)]
    assert [json.loads(r) for r in table.splitlines() if r] == [{"total": 100}]
    events = sorted((r["id"], r["event_time"], r["amount"])
                    for r in map(json.loads, events.splitlines()) if r)
    assert events == [(1, "2024-01-01T10:00:00.000000", 10), (2, "2024-01-02T11:00:00.000000", 20),
                      (3, "2024-01-02T12:00:00.000000", 30), (4, "2024-01-03T09:00:00.000000", 40)]

    versions = sorted(((r["id"], r["name"], r["dbt_valid_to"] is None)
                       for r in map(json.loads, history.splitlines()) if r))
    # Paimon Java sees every version: bob closed and bobby current, cid closed (deleted), ann open
    assert versions == [(1, "ann", True), (2, "bob", False), (2, "bobby", True),
                        (3, "cid", False)]
    closed_bob = [r for r in map(json.loads, history.splitlines()) if r["name"] == "bob"][0]
    assert closed_bob["dbt_valid_to"] == "2024-01-05T00:00:00.000000"
