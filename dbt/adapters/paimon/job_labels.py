"""Spark jobs named by the dbt node that runs them.

Every Spark job a dbt node starts (its SQL, its write, its data tests) carries two Spark job
tags, ``dbt-node:<unique_id>`` and ``dbt-invocation:<invocation id>``, which Spark's UI and
history server show on the job and which ``SparkSession.interruptTag`` cancels by; with Spark
in the dbt process the job's description names the node too (``dbt model.shop.orders``),
where the UI otherwise shows only a call site. Over Spark Connect a client can set tags, not
descriptions.

Tags and descriptions belong to a thread, and dbt runs nodes in a pool of threads that each run
many nodes: ``apply`` runs before each statement (the registry calls it when it activates the
session for one) and changes a thread's labels only when its node changed.
"""

from __future__ import annotations

import threading
from typing import Tuple

from dbt_common.events.contextvars import get_node_info
from dbt_common.invocation import get_invocation_id

from dbt.adapters.paimon.datasource.spark_env import is_connect

NODE_TAG_PREFIX = "dbt-node:"
INVOCATION_TAG_PREFIX = "dbt-invocation:"
DESCRIPTION_PREFIX = "dbt "
_applied = threading.local()


def tag_text(text: str) -> str:
    """Spark refuses a tag holding a comma."""
    return text.replace(",", "_")


def labels() -> Tuple[Tuple[str, ...], str]:
    """The tags and the description of this thread's node now (no node: run-operation, the
    connection's own statements: the invocation's tag only, no description)."""
    node = get_node_info() or {}
    unique_id = node.get("unique_id") or ""
    tags = [INVOCATION_TAG_PREFIX + tag_text(get_invocation_id())]
    if unique_id:
        tags.insert(0, NODE_TAG_PREFIX + tag_text(unique_id))
    return tuple(tags), (DESCRIPTION_PREFIX + unique_id) if unique_id else ""


def apply(spark) -> None:
    """Label the jobs this thread starts from now on with its node."""
    tags, description = labels()
    if getattr(_applied, "tags", None) == tags:
        return
    for tag in getattr(_applied, "tags", ()):
        if tag not in tags:
            spark.removeTag(tag)
    for tag in tags:
        spark.addTag(tag)
    if not is_connect(spark):
        # None clears it: a later statement of no node keeps no stale name
        spark.sparkContext.setJobDescription(description or None)
    _applied.tags = tags
