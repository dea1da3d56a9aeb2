"""The default profile's environment when ``daemon_policy`` chooses the background daemon: join
(or start) the warehouse's daemon over Spark Connect; if that fails for any reason, say so in
one line and run Spark in this process, as ``method: session`` does. A command never fails
because the daemon did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import daemon, server_watch, spark_logs
from dbt.adapters.paimon.environments.base import Environment
from dbt.adapters.paimon.environments.embedded import EmbeddedEnvironment


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
        from dbt.adapters.paimon.environments.connect import (ConnectEnvironment,
                                                              connect_mode_env,
                                                              restore_connect_mode_env)

        # a failed attempt may have left this process in Connect mode: the in-process Spark
        # started instead must not be
        saved = connect_mode_env()
        logger = spark_logs._adapter_logger()
        try:
            url = daemon.acquire(self.plan, logger.info)
            connect = ConnectEnvironment(url, self.embedded.warehouse,
                                         dict(self.embedded.spark_conf),
                                         dict(self.embedded.catalog_options),
                                         watch=daemon.watch(self.plan, url))
            return connect._open()
        except Exception as exc:  # noqa: BLE001 - any failure: Spark in this process instead
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            logger.warning(f"The background Spark is not available ({reason}); running Spark "
                           f"in this dbt process. Its log: {self.plan.path(daemon.LOG_NAME)}")
            daemon.release()  # the in-process Spark stops the daemon if idle (embedded.py)
            server_watch.forget()
            restore_connect_mode_env(saved)
            return self.embedded._open()
