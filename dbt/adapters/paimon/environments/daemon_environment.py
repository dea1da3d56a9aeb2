"""The default profile's environment when ``daemon_policy`` chooses the background daemon: join
(or start) the warehouse's daemon over Spark Connect; if that fails for any reason, say so in
one line and run Spark in this process, as ``method: session`` does. A command never fails
because the daemon did."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import daemon, spark_logs
from dbt.adapters.paimon.environments.base import Environment
from dbt.adapters.paimon.environments.embedded import EmbeddedEnvironment

# pyspark marks a process that made a Connect session as Connect-only through these variables;
# an in-process Spark started after a failed attempt must not inherit them
_CONNECT_MODE_VARIABLES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE",
                           "SPARK_API_MODE")


@dataclass
class DaemonEnvironment(Environment):
    plan: daemon.DaemonPlan
    embedded: EmbeddedEnvironment  # the fallback, and the settings both share

    @property
    def warehouse(self) -> str:  # type: ignore[override]
        return self.embedded.warehouse

    @property
    def catalog_options(self) -> Dict[str, str]:
        return self.embedded.catalog_options

    def _open(self) -> PaimonTableRegistry:
        from dbt.adapters.paimon.environments.connect import ConnectEnvironment

        saved = {key: os.environ.get(key) for key in _CONNECT_MODE_VARIABLES}
        logger = spark_logs._adapter_logger()
        try:
            url = daemon.acquire(self.plan, logger.info)
            connect = ConnectEnvironment(url, self.embedded.warehouse,
                                         dict(self.embedded.spark_conf),
                                         dict(self.embedded.catalog_options))
            return connect._open()
        except Exception as exc:  # noqa: BLE001 - any failure: Spark in this process instead
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            logger.warning(f"The background Spark is not available ({reason}); running Spark "
                           f"in this dbt process. Its log: {self.plan.path(daemon.LOG_NAME)}")
            daemon.release()  # the in-process Spark stops the daemon if idle (embedded.py)
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            return self.embedded._open()
