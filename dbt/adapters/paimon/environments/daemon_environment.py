"""The default profile's environment when ``daemon_policy`` chooses the background daemon: join
(or start) the warehouse's daemon (server/daemon.py) over Spark Connect; if that fails for any
reason, say so in one line and run Spark in this process, as ``method: session`` does. A
command never fails because the daemon did.

The daemon's client side: what its watchdog runs (``ConnectDaemonServer``: a Spark Connect
server with connect_server's settings), and how a command that joined it notices that it died
(``watch``, server_watch).
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Dict, List, Optional

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import (connect_client, server_watch, spark_logs,
                                              state_folder)
from dbt.adapters.paimon.environments.base import Environment
from dbt.adapters.paimon.environments.embedded import EmbeddedEnvironment
from dbt.adapters.paimon.server import daemon

SERVER_NAME = "dbt-paimon daemon"


class ConnectDaemonServer(daemon.DaemonServer):
    """What the background daemon runs: a Spark Connect server of the installed pyspark,
    started by spark-submit with the settings of connect_server (the driver JVM's class-data
    archive among them, once one is built), joined at localhost with the daemon's token."""

    def command(self, plan: daemon.DaemonPlan, port: int) -> List[str]:
        from dbt.adapters.paimon.environments import connect_server

        server = connect_server.Server(plan.warehouse, port, plan.state_dir)
        command = [os.path.join(connect_server.spark_home(), "bin", "spark-submit"),
                   "--class", connect_server.SERVER_CLASS, "--name", SERVER_NAME,
                   "--master", plan.master]
        settings = connect_server.server_conf(server, plan.master)
        settings["spark.app.name"] = f"{SERVER_NAME} ({plan.warehouse})"
        # its Python workers run this installation (PYSPARK_PYTHON, and the fingerprint checks
        # it): the first command skips connect_client.check_server's probe of a worker's imports
        settings[connect_client.CHECKED_CONF] = connect_client.expected_versions()
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        return command

    def environment(self, plan: daemon.DaemonPlan, port: int, token: str) -> Dict[str, str]:
        from dbt.adapters.paimon.environments import connect_server

        env = connect_server.server_environment(
            connect_server.Server(plan.warehouse, port, plan.state_dir), plan.master)
        # the server reads its token from the environment: never on a command line `ps` shows
        env["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
        return env

    def url(self, port: int, token: str) -> connect_client.ConnectUrl:
        # "localhost": pyspark sends a token without TLS only to that host name
        # (ChannelBuilder.toChannel: gRPC local credentials); the server binds 127.0.0.1
        return connect_client.parse_connect_url(f"{connect_client.SCHEME}localhost:{port}",
                                                token=token)

    def explicit_url(self, plan: daemon.DaemonPlan) -> Optional[connect_client.ConnectUrl]:
        """A server that `dbt-paimon server start` runs on this warehouse: the default profile
        uses it (its Derby metastore admits no second Spark anyway)."""
        from dbt.adapters.paimon.environments.connect_server import SERVER_CLASS, Server

        for pid_file in glob.glob(os.path.join(plan.state_dir,
                                               f"spark-dbt-paimon-*-{SERVER_CLASS}-1.pid")):
            port = os.path.basename(pid_file)[len("spark-dbt-paimon-"):].split("-", 1)[0]
            if not port.isdigit():
                continue
            server = Server(plan.warehouse, int(port), plan.state_dir)
            if server.pid() is not None and server.accepts_connections():
                return connect_client.parse_connect_url(server.url)
        return None


def watch(plan: daemon.DaemonPlan, url: connect_client.ConnectUrl) -> server_watch.ServerWatch:
    """How a command notices that the daemon it joined has died (server_watch): its watchdog's
    and server's processes and its port. A `dbt-paimon server start` server is watched by
    its port."""
    info = daemon.running(plan.state_dir) or {}
    if info.get("port") != url.port:
        return server_watch.port_watch(url.host, url.port,
                                       connect_client.restart_remedy(plan.warehouse, url.port))
    return server_watch.process_watch(
        url.host, url.port, {"watchdog": info.get("pid"), "Spark server": info.get("server_pid")},
        "Every table holds exactly the runs committed before it stopped; run the command "
        "again: it starts a new background Spark.", log=plan.path(daemon.SPARK_OUT_NAME))


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

        # the daemon and the in-process fallback alike need the folder: one clear error first
        state_folder.check_usable(self.plan.state_dir)
        # a failed attempt may have left this process in Connect mode: the in-process Spark
        # started instead must not be
        saved = connect_mode_env()
        logger = spark_logs._adapter_logger()
        try:
            url = daemon.acquire(self.plan, logger.info)
            connect = ConnectEnvironment(url, self.embedded.warehouse,
                                         dict(self.embedded.spark_conf),
                                         dict(self.embedded.catalog_options),
                                         watch=watch(self.plan, url))
            return connect._open()
        except Exception as exc:  # noqa: BLE001 - any failure: Spark in this process instead
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            logger.warning(f"The background Spark is not available ({reason}); running Spark "
                           f"in this dbt process. Its log: {self.plan.path(daemon.LOG_NAME)}")
            daemon.release()  # the in-process Spark stops the daemon if idle (embedded.py)
            server_watch.forget()
            restore_connect_mode_env(saved)
            return self.embedded._open()
