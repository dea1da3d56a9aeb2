"""Spark jobs named by their dbt node (job_labels.py), against a stand-in session: a thread's
tags change when its node does, and only then (a statement's cost is one comparison)."""
import threading

from dbt_common.events.contextvars import log_contextvars
from dbt_common.invocation import get_invocation_id

from dbt.adapters.paimon import job_labels


class StandInSession:
    """The calls job_labels makes on a classic session."""

    def __init__(self):
        self.tags, self.calls, self.description = set(), 0, "unset"
        self.sparkContext = self

    def addTag(self, tag):
        assert tag and "," not in tag
        self.tags.add(tag)
        self.calls += 1

    def removeTag(self, tag):
        self.tags.discard(tag)
        self.calls += 1

    def setJobDescription(self, value):
        self.description = value


def in_new_thread(work):
    """dbt's worker threads: each has its own labels."""
    result = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join()
    return result[0]


def test_a_threads_jobs_follow_its_node():
    def work():
        spark = StandInSession()
        invocation = "dbt-invocation:" + get_invocation_id()
        with log_contextvars(node_info={"unique_id": "model.shop.orders"}):
            job_labels.apply(spark)
            assert spark.tags == {"dbt-node:model.shop.orders", invocation}
            assert spark.description == "dbt model.shop.orders"
            calls = spark.calls
            job_labels.apply(spark)  # the next statement of the same node: nothing to do
            assert spark.calls == calls
        with log_contextvars(node_info={"unique_id": "test.shop.unique_orders_id.1a2b,x"}):
            job_labels.apply(spark)
            assert spark.tags == {"dbt-node:test.shop.unique_orders_id.1a2b_x", invocation}
        job_labels.apply(spark)  # no node (run-operation, the connection's own statements)
        assert spark.tags == {invocation} and spark.description is None
        return True

    assert in_new_thread(work)
