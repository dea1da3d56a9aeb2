"""Spark jobs named by the dbt node that runs them (job_labels.py): each job of a model's build
and of a data test carries the node's tag and the invocation's, and (Spark in the dbt process)
its description names the node, as Spark's UI and history server show them: the application's
status store in session mode, the server's event log over Spark Connect (where Spark prefixes
a client's tag with the session's ids)."""

import json

import pytest
from dbt.tests.util import run_dbt
from dbt_common.invocation import get_invocation_id

from dbt.adapters.paimon import environments

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}
select cast(id as bigint) as id, cast(id % 3 as int) as v from range(0, 20)
"""

TOTALS = """
{{ config(materialized='table', file_format='paimon') }}
select v, count(*) as n from {{ ref('orders') }} group by v
"""

SCHEMA = """
version: 2
models:
  - name: orders
    columns:
      - name: id
        data_tests: [unique]
"""


def jobs(spark, event_log):
    """(description, tags) of every job of the application, newest first, as its UI lists
    them; over Connect, as the server's event log records them."""
    from dbt.adapters.paimon.datasource.spark_env import is_connect

    if is_connect(spark):
        started = {}
        # Spark 4 rolls the log: a folder per application, of events_<n>_<app> files
        for path in event_log.rglob("events_*"):
            for line in path.read_text().splitlines():
                event = json.loads(line)
                if event.get("Event") == "SparkListenerJobStart":
                    properties = event.get("Properties") or {}
                    started[event["Job ID"]] = (properties.get("spark.job.description", ""),
                                                properties.get("spark.job.tags", ""))
        return [started[job] for job in sorted(started, reverse=True)]
    jvm = spark.sparkContext._jvm
    store = spark.sparkContext._jsc.sc().statusStore()
    listed = jvm.scala.jdk.javaapi.CollectionConverters.asJava(store.jobsList(None))
    return [(job.description().getOrElse(None) if job.description().isDefined() else "",
             str(job.jobTags().mkString("|"))) for job in listed]


class TestJobLabels:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": TOTALS, "schema.yml": SCHEMA}

    def test_each_nodes_jobs_carry_its_name(self, project, profile_type, request):
        spark = environments.current_registry().spark
        connect = profile_type == "connect"
        event_log = request.getfixturevalue("connect_event_log") if connect else None
        before = len(jobs(spark, event_log))
        run_dbt(["build"])
        invocation = get_invocation_id()  # the build's, until the next dbt command
        listed = jobs(spark, event_log)
        ran = listed[: len(listed) - before]  # the store lists the newest first
        assert ran, "the build ran no Spark job"
        # a data test's unique_id ends with dbt's hash of it: matched by its start
        for node in ("model.test.orders", "model.test.totals", "test.test.unique_orders_id"):
            labelled = [(d, t) for d, t in ran if f"dbt-node:{node}" in t]
            assert labelled, (node, ran)
            if not connect:  # a Connect client sets tags, not descriptions
                assert all(d.startswith(f"dbt {node}") for d, _ in labelled), labelled
            assert all(f"dbt-invocation:{invocation}" in t for _, t in labelled), labelled
