"""Python data sources registered in a Spark session, once per shared Spark Connect session.

Over Spark Connect every dbt process joins one shared server session, and a data source
registered there stays registered for the next command. So the session's conf records each
registration (``spark.dbt.paimon.registered.<name>`` = a digest of what was registered), read
with one request, and a command registers only what is missing or differs: a command on an
unchanged warehouse sends no registration at all. An embedded session is the process's own:
each registration is a call in the process."""

from __future__ import annotations

import hashlib
from typing import Dict, Optional

from dbt.adapters.paimon.datasource.spark_env import is_connect, register_data_source

REGISTERED_CONF_PREFIX = "spark.dbt.paimon.registered."


class SessionSources:
    """The data sources one client has registered in ``spark``."""

    def __init__(self, spark):
        self.spark = spark
        # Spark Connect: what the shared session has registered (conf key -> digest)
        self._registrations: Optional[Dict[str, str]] = None

    def register(self, source: type, identity: str) -> None:
        """Register a data-source class in the session, unless the shared Spark Connect
        session holds it already: ``identity`` is what makes two registrations of the same name
        the same (e.g. the table location; the class code is the server's dbt-paimon, whose
        version the connection checked)."""
        if not is_connect(self.spark):
            register_data_source(self.spark, source)
            return
        key = REGISTERED_CONF_PREFIX + source.name()
        digest = hashlib.sha256(f"{source.__module__}.{source.__qualname__}|{identity}"
                                .encode()).hexdigest()[:32]
        if self._registrations is None:
            self._registrations = {
                k: v for k, v in self.spark.conf.getAll.items()
                if k.startswith(REGISTERED_CONF_PREFIX)}
        if self._registrations.get(key) == digest:
            return
        register_data_source(self.spark, source)
        self.spark.conf.set(key, digest)
        self._registrations[key] = digest
