"""The Spark Connect environment (``method: connect``): Spark runs in a Spark Connect server
(``connect_server``, or any server a profile names); this process joins the server's shared
dbt-paimon session (connect_client's docstring says why shared) with the session settings that
change results (``CONNECT_SESSION_CONF_KEYS``)."""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass, field
from typing import Dict, Optional

from pyspark.sql import SparkSession

from dbt.adapters.paimon.datasource.registry import PaimonTableRegistry
from dbt.adapters.paimon.environments import connect_client, server_watch
from dbt.adapters.paimon.environments.base import Environment, quiet_query_loggers
from dbt.adapters.paimon.environments.spark_conf import connect_session_conf

# pyspark marks a process that made a Connect session as Connect-only through these variables,
# and child processes inherit them: an in-process Spark, or a session-mode dbt started from this
# process, would then refuse to start. Code that must leave Connect mode after joining a session
# saves them before (connect_mode_env) and puts them back after (restore_connect_mode_env).
CONNECT_MODE_VARIABLES = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE",
                          "SPARK_API_MODE")


def connect_mode_env() -> Dict[str, Optional[str]]:
    """This process's Connect-mode variables now (None: unset), for restore_connect_mode_env."""
    return {key: os.environ.get(key) for key in CONNECT_MODE_VARIABLES}


def restore_connect_mode_env(saved: Dict[str, Optional[str]]) -> None:
    """Set each variable back to its saved value, or unset it if it was unset."""
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@dataclass
class ConnectEnvironment(Environment):
    url: connect_client.ConnectUrl
    warehouse: Optional[str]  # None: the server's own
    spark_conf: Dict[str, str] = field(default_factory=dict)
    catalog_options: Dict[str, str] = field(default_factory=dict)
    # how to tell that a server on this machine has gone (the daemon's processes); a loopback
    # server is otherwise watched by its port, a remote one keeps pyspark's own retries
    watch: Optional[server_watch.ServerWatch] = None

    def _open(self) -> PaimonTableRegistry:
        """Raises connect_client.ConnectSetupError with the fix when the server cannot serve us."""
        connect_client.check_reachable(self.url, self.warehouse)
        session_conf = connect_session_conf()
        session_conf.update(self.spark_conf)
        watch = self.watch
        if watch is None and server_watch.is_loopback(self.url.host):
            watch = server_watch.port_watch(
                self.url.host, self.url.port,
                connect_client.restart_remedy(self.warehouse, self.url.port))
        spark, session_url = join_shared_session(self.url, session_conf, watch)
        atexit.register(close_without_release, spark)
        served = spark.conf.get(connect_client.WAREHOUSE_CONF, None)
        warehouse = self.warehouse
        if warehouse is None:
            if served is None:
                raise connect_client.ConnectSetupError(
                    f"The Spark Connect server at {self.url.redacted} was not started by "
                    "`dbt-paimon server start`, so it names no Paimon warehouse: set "
                    "`warehouse` in the profile.")
            warehouse = served
        elif served is not None and os.path.normpath(served) != os.path.normpath(warehouse):
            raise connect_client.ConnectSetupError(
                f"The Spark Connect server at {self.url.redacted} serves the Paimon warehouse "
                f"{served}, the profile names {warehouse}: its metastore belongs to the "
                "server's warehouse. Point the profile at that warehouse (or drop `warehouse` "
                "from it), or start a server for this warehouse on another port "
                f"(`{connect_client.start_command(warehouse, self.url.port + 1)}`).")
        connect_client.check_server(spark, self.url)
        quiet_query_loggers()
        # code that asks pyspark for "the" session (pandas-on-Spark in Python models) finds the
        # dbt session: the default session of this URL
        os.environ["SPARK_REMOTE"] = str(session_url)
        return PaimonTableRegistry(spark, warehouse, self.catalog_options)


def close_without_release(spark) -> None:
    """Close this process's channel to the server, leaving the shared session open for other
    dbt processes. Registered after pyspark's own exit hook, so it runs first: that hook sends
    the server an ML-cache clean-up call and, when the server has gone (``dbt-paimon server
    stop`` while a process still holds a session), retries it for minutes before the process
    can exit; it skips a closed client."""
    spark.release_session_on_close = False
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - exiting: nothing left to report it to
        pass


def join_shared_session(url: connect_client.ConnectUrl, session_conf: Dict[str, str],
                        watch: Optional[server_watch.ServerWatch] = None):
    """The server's shared dbt-paimon session (connect_client's docstring says why shared),
    or the URL's own ``session_id`` when it names one; (session, its URL). ``watch``: the
    session's requests, from the first, retry only while it finds the server alive."""
    try:
        import pyspark.sql.connect.session  # noqa: F401 - needs pyspark[connect]'s libraries
    except ImportError as exc:
        raise connect_client.ConnectSetupError(
            f"method 'connect' needs Spark Connect's client libraries ({exc}): "
            "pip install 'pyspark[connect]'") from exc
    generations = ([None] if url.param("session_id")
                   else range(connect_client.MAX_SESSION_GENERATIONS))
    last_error: Optional[BaseException] = None
    for generation in generations:
        target = url if generation is None else url.with_params(
            session_id=connect_client.shared_session_id(generation))
        # through pyspark.sql's builder: it switches pyspark.sql.functions to Connect mode
        builder = SparkSession.builder.remote(str(target))
        spark = None
        try:
            # the settings after the retry policy: the builder would send them on creating the
            # session, under pyspark's ten minutes of retries
            spark = builder.create()
            if watch is not None:
                server_watch.watch_session(spark, watch, joining=True)
            _set_session_conf(spark, session_conf)
            spark.conf.get(connect_client.WAREHOUSE_CONF, None)  # the session is usable
            if watch is not None:
                server_watch.watch_session(spark, watch)
            return spark, target
        except Exception as exc:  # noqa: BLE001 - classified below
            last_error = exc
            if spark is not None:
                # closed now: pyspark's exit hook would otherwise retry its clean-up calls
                # on this session's channel while the process exits
                close_without_release(spark)
            if not connect_client.is_session_closed(exc):
                raise connect_client.ConnectSetupError(
                    f"The Spark Connect server at {url.redacted} refused the dbt session: "
                    f"{_first_line(exc)}") from None
    raise connect_client.ConnectSetupError(
        f"The Spark Connect server at {url.redacted} has closed all of dbt-paimon's shared "
        f"sessions ({_first_line(last_error)}); restart it.")


def _set_session_conf(spark, session_conf: Dict[str, str]) -> None:
    """The session's settings in one request, as the builder sends them (pyspark's
    RuntimeConf._set_all); one request each where this pyspark lacks it."""
    if not session_conf:
        return
    set_all = getattr(spark.conf, "_set_all", None)
    if set_all is not None:
        set_all(configs=dict(session_conf), silent=True)
        return
    for key, value in session_conf.items():
        spark.conf.set(key, value)


def _first_line(exc: Optional[BaseException]) -> str:
    return str(exc).strip().splitlines()[0] if exc is not None and str(exc).strip() else repr(exc)
