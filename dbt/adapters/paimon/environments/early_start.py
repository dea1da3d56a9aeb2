"""Spark started while dbt parses the project.

A fresh session-mode command (how schedulers and CI run dbt) spends most of its first seconds
starting Spark: the JVM, the session, and the Hive metastore's first call (Derby and
DataNucleus). Until the first statement, the same command's Python thread parses the project
and compiles nodes, which needs no Spark. Started in a background thread as soon as the adapter
exists, the two overlap on a machine's cores, and the first statement finds the session ready
or nearly so.

Only the embedded environment starts early: it is the only one that costs seconds and prints
nothing on the terminal (a daemon's start announces itself; a Connect client is quick). A
command that fails before its first statement (a parse error) exits with the start under way:
the JVM ends with the process, as it always does (it stops when its parent's pipe closes).
``wait()`` before the first connection opens gives the start's failure to that connection, so
a bad setting fails the command exactly as it would without the early start.
"""

from __future__ import annotations

import threading
from typing import Optional

from dbt.adapters.paimon.environments import base

_lock = threading.Lock()
_thread: Optional[threading.Thread] = None
_failure: Optional[BaseException] = None


def start(environment: base.Environment) -> bool:
    """Start ``environment`` (and its metastore's first call) in a background thread, unless a
    registry or an early start exists already; whether it started one."""
    global _thread
    with _lock:
        if _thread is not None or base._registry is not None:
            return False
        _thread = threading.Thread(target=_run, args=(environment,), daemon=True,
                                   name="dbt-paimon-early-spark")
        _thread.start()
        return True


def _run(environment: base.Environment) -> None:
    global _failure
    try:
        registry = environment.start()
        # the Hive metastore's client starts at its first call: Derby, DataNucleus, ~3 s
        registry.spark.catalog.databaseExists("default")
    except BaseException as exc:  # noqa: BLE001 - handed to the first connection (wait)
        _failure = exc


def wait() -> None:
    """Wait for an early start; raise its failure, once (a later connection starts afresh)."""
    global _failure
    thread = _thread
    if thread is None:
        return
    thread.join()
    with _lock:
        failure, _failure = _failure, None
    if failure is not None:
        raise failure
