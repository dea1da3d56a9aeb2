"""Noticing, within seconds, that the Spark Connect server of this dbt process has gone.

pyspark's client retries a request that failed with UNAVAILABLE under its ``DefaultPolicy``:
15 retries, backoff up to a minute, about ten minutes in all, which suits a remote cluster
behind a load balancer. A server on this machine (the background daemon, or one that
`dbt-paimon server start` runs) that stopped answering has died: its port no longer accepts
connections, or the process is gone. This module replaces the policy of such a session by one
that asks first whether the server still lives and then retries for about half a minute at
most, and it remembers what it found, so that dbt's error says in one line what happened and
what the next command does, instead of the gRPC trace.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

from dbt.adapters.paimon.server.ports import accepts_connections
from dbt.adapters.paimon.server.processes import alive

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# a server that lives but refuses requests: retried for about 30 s
# (0.05 + 0.2 + 0.8 + 2 * 15 s), never pyspark's ten minutes
MAX_RETRIES = 18
MAX_BACKOFF_MS = 2000
# while joining: a live process whose port accepts connections but answers no Spark Connect (a
# server wedged at its start, another program on a reused port) is given up after about 5 s
# (0.05 + 0.2 + 0.8 + 2 + 2 s): the daemon's command then runs Spark in its own process at once.
# A Spark Connect server opens its port once its SparkContext runs (SparkConnectServer), so
# only a joined server's later failures get the full MAX_RETRIES.
JOIN_MAX_RETRIES = 5

_lock = threading.Lock()
_loss: Optional["ServerLoss"] = None
_watch: Optional["ServerWatch"] = None  # this process's server, once its session is watched


@dataclass(frozen=True)
class ServerLoss:
    """What this process found when its server stopped answering."""
    server: str      # "The background Spark of this warehouse", "The Spark Connect server at ..."
    reason: str      # e.g. "its Spark server process 1234 has exited"
    remedy: str      # what the user does (or what the next command does by itself)
    log: str = ""    # where the server's last words are

    @property
    def message(self) -> str:
        """dbt's one line for any statement that failed because of it."""
        log = f" Its output: {self.log}." if self.log else ""
        return f"{self.server} stopped while this command ran ({self.reason}). {self.remedy}{log}"


def server_loss() -> Optional[ServerLoss]:
    """Whether this process's server is gone, and why (error_messages words dbt's error from
    it): asked when a statement failed, so a failure the retry policy never saw (a stream cut
    mid-answer) is checked too. None while the server lives, or for an in-process Spark."""
    if _loss is None and _watch is not None:
        _watch.check()
    return _loss


def forget() -> None:
    """No server to watch any more (the command runs Spark in its own process instead)."""
    global _loss, _watch
    with _lock:
        _loss, _watch = None, None


def _record(loss: ServerLoss) -> None:
    global _loss
    with _lock:
        if _loss is None:
            _loss = loss


@dataclass
class ServerWatch:
    """How to tell that a loopback server is gone. ``gone`` returns why, or "" while it lives;
    ``remedy`` and ``log`` go into the one-line error."""
    gone: Callable[[], str]
    server: str
    remedy: str
    log: str = ""

    def check(self) -> bool:
        """True while the server may still answer; records the loss otherwise."""
        reason = self.gone()
        if reason:
            _record(ServerLoss(self.server, reason, self.remedy, self.log))
            return False
        return True


def port_watch(host: str, port: int, remedy: str, log: str = "") -> ServerWatch:
    """A loopback server known only by its port (`dbt-paimon server start`, a profile's host)."""
    def gone() -> str:
        if accepts_connections(host, port):
            return ""
        return f"nothing accepts connections on {host}:{port} any more"
    return ServerWatch(gone, f"The Spark Connect server at {host}:{port}", remedy, log)


def process_watch(host: str, port: int, pids: dict, remedy: str, log: str = "") -> ServerWatch:
    """A server whose processes are known (the daemon: ``{"watchdog": pid, "Spark server":
    pid}``): gone when one of them has exited or its port is closed."""
    def gone() -> str:
        for role, pid in pids.items():
            if pid and not alive(pid):
                return f"its {role} process {pid} has exited"
        if not accepts_connections(host, port):
            return f"nothing accepts connections on port {port} any more"
        return ""
    return ServerWatch(gone, "The background Spark of this warehouse", remedy, log)


def watched_policy(watch: ServerWatch, max_retries: int = MAX_RETRIES):
    """pyspark's default retry rules, bounded, and only while ``watch`` finds the server alive.
    Every failed request passes through the policy, also the first (pyspark's retry loop asks
    it before anything else): once the server is gone, the policy raises the loss as dbt's
    error in place of the gRPC one, so that whatever dbt-paimon code made the request, dbt
    shows the one line. (Made here: pyspark's Connect client needs grpc, which only Connect
    sessions load.)"""
    import grpc
    from pyspark.sql.connect.client.retries import DefaultPolicy

    class WatchedServerPolicy(DefaultPolicy):
        def __init__(self):
            super().__init__(max_retries=max_retries, max_backoff=MAX_BACKOFF_MS,
                             max_server_retry_delay=MAX_BACKOFF_MS)

        def can_retry(self, e: BaseException) -> bool:
            if isinstance(e, grpc.RpcError) and not watch.check():
                from dbt_common.exceptions import DbtRuntimeError

                raise DbtRuntimeError(server_loss().message) from e
            return super().can_retry(e)

    return WatchedServerPolicy()


def is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_HOSTS


def watch_session(spark, watch: ServerWatch, joining: bool = False) -> None:
    """Retry the session's failed requests only while ``watch`` finds its server alive; while
    ``joining``, for a few seconds only (JOIN_MAX_RETRIES): call again without it once joined."""
    global _watch
    retries = JOIN_MAX_RETRIES if joining else MAX_RETRIES
    spark.client.set_retry_policies([watched_policy(watch, retries)])
    # pyspark warns on stderr when retries run out; the command's own line says what happened
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]")
    _watch = watch
