"""Processes on one Spark Connect session send identical requests for different data: pyspark
numbers a process's plans from 0, so the first plans of two fresh processes are byte for byte the
same request when they ask the same thing. Spark Connect keeps each session's resolved plans by
their request (`spark.connect.session.planCache.enabled`, on by default) and can answer a later
process with the plan an earlier one resolved, with the file lists it read then (a command's
merge of a snapshot id that a rollback had reused read the old snapshot's deleted files).

dbt-paimon turns the cache off in the session a command joins (spark_conf.py), also on a server
that has it on: here the shared session has it on (as on a server `dbt-paimon server start` did
not start) until the first probe joins. Each probe is a fresh process that joins the session as a
dbt command does and runs the same query as its first plan; between the two, a run commits a new
snapshot, which moves the table's catalog entry, and the second probe reads it."""

import subprocess
import sys

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.paimon import environments

PLAN_CACHE = "spark.connect.session.planCache.enabled"
MODEL = ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
         "select id, id * {{ var('batch', 1) }} as v from range(5)")
PROBE = """
import sys
from dbt.adapters.paimon.environments import connect, connect_client
from dbt.adapters.paimon.environments.spark_conf import connect_session_conf
spark, _ = connect.join_shared_session(connect_client.parse_connect_url(sys.argv[1]),
                                       connect_session_conf())
print("total", spark.sql(sys.argv[2]).collect()[0][0])
connect.close_without_release(spark)
"""


def probe(url: str, query: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, url, query], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return int(done.stdout.split("total", 1)[1].split()[0])


class TestPlanCache:
    @pytest.fixture(scope="class")
    def models(self):
        return {"m.sql": MODEL}

    def test_a_later_process_resolves_the_same_query_again(self, project, connect_server_url):
        run_dbt(["run", "--vars", "{batch: 1}"])
        spark = environments.current_registry().spark
        query = f"select sum(v) from {project.test_schema}.m"
        spark.conf.set(PLAN_CACHE, "true")  # as a server dbt-paimon did not start has it
        try:
            assert probe(connect_server_url, query) == 10
            assert spark.conf.get(PLAN_CACHE) == "false"  # the probe joined as a command does
            run_dbt(["run", "--vars", "{batch: 3}"])
            assert probe(connect_server_url, query) == 30
        finally:
            spark.conf.set(PLAN_CACHE, "false")
