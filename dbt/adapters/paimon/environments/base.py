"""The one Spark environment of a dbt process and the Paimon table registry it serves.

A process serves one warehouse through one session, whichever environment made it; every other
module takes the session (``current_registry().spark``) it is given and never touches the JVM
gateway, so the same code serves all three environments (a classic session or a Spark
Connect one).
"""

from __future__ import annotations

import abc
import logging
import threading
from typing import TYPE_CHECKING, Optional

from dbt.adapters.paimon.environments import process_gc


class MetastoreTakenError(RuntimeError):
    """Another Spark of this machine holds the warehouse's Derby metastore, which admits one
    (embedded.py): the message names it and what to do; the dbt layer shows it as a connection
    failure. Here, not in embedded.py, so that the dbt layer names it without importing the
    session's modules."""


if TYPE_CHECKING:
    from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry

_lock = threading.Lock()
_registry: Optional["PaimonTableRegistry"] = None
_warm_up_started = False


class Environment(abc.ABC):
    """Where this process's Spark runs. ``start`` opens it once per process; later calls (other
    threads, other connections) get the same registry."""

    #: the Paimon warehouse the profile names; None: the environment's own (a Connect server's)
    warehouse: Optional[str]

    def start(self) -> "PaimonTableRegistry":
        global _registry
        with _lock:
            if _registry is not None:
                if self.warehouse is not None and _registry.warehouse != self.warehouse:
                    raise RuntimeError(
                        f"This process already serves the Paimon warehouse {_registry.warehouse}; "
                        f"one dbt process uses one warehouse (asked for {self.warehouse}).")
                asked = getattr(self, "catalog_options", None)
                if asked is not None and dict(asked) != _registry.catalog_options:
                    raise RuntimeError(
                        f"This process already serves the Paimon warehouse {_registry.warehouse} "
                        f"with other catalog settings (profile fields catalog, catalog_options); "
                        f"one dbt process uses one Paimon catalog.")
                return _registry
            registry = self._open()
            _registry = registry
            process_gc.freeze_long_lived()  # the Spark client's objects live as long as the process
            return registry

    @abc.abstractmethod
    def _open(self) -> "PaimonTableRegistry":
        """Start or join the Spark session and expose the warehouse's Paimon tables in it."""


def current_registry() -> "PaimonTableRegistry":
    if _registry is None:
        raise RuntimeError("The dbt-paimon Spark session has not been started yet.")
    return _registry


def warm_up_python_workers_once() -> None:
    """Start Spark's Python processes in the background (``worker_warm_up``), once per session.
    Called after the first registry sync: started with the session, the warm-up competed with
    the JVM's own start-up (Hive metastore) on a 2-core machine."""
    global _warm_up_started
    with _lock:
        if _warm_up_started or _registry is None:
            return
        from dbt.adapters.paimon.datasource.spark_env import is_connect

        from dbt.adapters.paimon.server import daemon

        if is_connect(_registry.spark) and not daemon.started_here():
            return  # the server's shared session keeps its Python processes warm
        _warm_up_started = True
        from dbt.adapters.paimon.environments import worker_warm_up

        worker_warm_up.start_in_background(_registry.spark)




def quiet_query_loggers() -> None:
    # PySpark logs every failed query to stderr as a JSON record with the Java stack trace
    # (its own handler, not log4j); dbt reports the error already.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
