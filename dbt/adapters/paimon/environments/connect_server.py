"""A Spark Connect server for a Paimon warehouse, run from the installed pyspark
(``dbt-paimon server start|status|stop``; the command is dbt/adapters/paimon/cli.py).

The server is ``$SPARK_HOME/sbin/start-connect-server.sh`` with SPARK_HOME = the pyspark package
folder, and the settings of an embedded dbt-paimon session (spark_conf.default_spark_conf): its Hive
metastore (Derby) and spark-warehouse/ under ``<warehouse>/.spark``, where its log and pid files
go too. Its Python workers run this Python (the one with dbt-paimon installed), so dbt-paimon's
tasks import there. It listens on 127.0.0.1 only. The server holds the metastore, so any number of
dbt processes can use the warehouse at once through it (an embedded session's Derby cannot).
The background daemon's server (environments/daemon_environment.py) is started with the same
settings (``server_conf``, ``server_environment``).
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from dbt.adapters.paimon.environments import connect_client, jvm_cds, state_folder
from dbt.adapters.paimon.environments.connect import (connect_mode_env, join_shared_session,
                                                      restore_connect_mode_env)
from dbt.adapters.paimon.environments.locations import SPARK_STATE_DIRNAME, is_local_path, local_path
from dbt.adapters.paimon.environments.spark_conf import (DRIVER_JAVA_OPTIONS, default_spark_conf,
                                                         is_loopback_master, with_profile_conf)
from dbt.adapters.paimon.datasource.spark_env import PARALLELISM_CONF, register_data_source
from dbt.adapters.paimon.server import ports
from dbt.adapters.paimon.server.processes import alive, command_line

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 300
# spark-daemon.sh's pid file of the server on a port (Server.ident)
PID_FILE = "spark-dbt-paimon-{port}-" + SERVER_CLASS + "-1.pid"
STOP_TIMEOUT_S = 60


class ServerError(RuntimeError):
    """The server could not be started or stopped (the message says why)."""


@dataclass(frozen=True)
class Server:
    warehouse: str
    port: int
    state_dir: str

    @property
    def url(self) -> str:
        return f"{connect_client.SCHEME}127.0.0.1:{self.port}"

    @property
    def ident(self) -> str:
        # spark-daemon.sh names its pid and log files after it: one pair per port
        return f"dbt-paimon-{self.port}"

    @property
    def pid_file(self) -> str:
        return os.path.join(self.state_dir, PID_FILE.format(port=self.port))

    @property
    def log_file(self) -> Optional[str]:
        logs = sorted(glob.glob(os.path.join(self.state_dir, f"spark-{self.ident}-{SERVER_CLASS}-1-*.out")),
                      key=os.path.getmtime)
        return logs[-1] if logs else None

    def pid(self) -> Optional[int]:
        """The server's pid while its process lives."""
        try:
            with open(self.pid_file) as handle:
                pid = int(handle.read().strip())
        except (OSError, ValueError):
            return None
        return pid if alive(pid) else None

    def accepts_connections(self) -> bool:
        return ports.accepts_connections("127.0.0.1", self.port)

    def start_command(self) -> str:
        return connect_client.start_command(self.warehouse, self.port)


def server_for(warehouse: str, port: int = connect_client.DEFAULT_PORT,
               state_dir: Optional[str] = None) -> Server:
    """The server of ``warehouse`` on ``port``; its files under ``<warehouse>/.spark`` for a local
    warehouse (``state_dir`` otherwise: Derby needs a local folder)."""
    if is_local_path(warehouse):
        warehouse = os.path.abspath(local_path(warehouse))
        state_dir = state_dir or os.path.join(warehouse, SPARK_STATE_DIRNAME)
    elif state_dir is None:
        raise ServerError(f"warehouse {warehouse} is not a local folder: give --state-dir, a "
                          "local folder for the server's metastore, log and pid files")
    return Server(warehouse, int(port), os.path.abspath(state_dir))


def running_in(state_dir: str) -> List[Tuple[int, int]]:
    """(port, pid) of each server `dbt-paimon server start` runs with its files in
    ``state_dir``: its pid file names the port, and the pid runs a Spark Connect server (not a
    process that took a dead server's pid)."""
    prefix, suffix = PID_FILE.split("{port}")
    found = []
    for path in glob.glob(os.path.join(glob.escape(state_dir), f"{prefix}*{suffix}")):
        try:
            port = int(os.path.basename(path)[len(prefix):-len(suffix)])
        except ValueError:
            continue
        pid = Server("", port, state_dir).pid()
        if pid is not None and SERVER_CLASS in command_line(pid):
            found.append((port, pid))
    return sorted(found)


def spark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def server_conf(server: Server, master: str, conf: Optional[Dict[str, str]] = None
                ) -> Dict[str, str]:
    settings = default_spark_conf(master, server.state_dir)
    settings.pop("spark.master")
    settings.update({
        "spark.app.name": f"dbt-paimon server ({server.warehouse})",
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(server.port),
        connect_client.WAREHOUSE_CONF: server.warehouse,
    })
    slots = local_task_slots(master)
    if slots is not None:
        settings[PARALLELISM_CONF] = str(slots)
    # the driver JVM's class-data archive once a session-mode start has built it (same class
    # path, so it maps): a server accepts connections ~3 s sooner on the 2-core machine (5.1 s
    # against 8.1 s); the server never dumps it, a long-lived JVM whose exit may be hours away
    cds = jvm_cds.archive_options_if_built()
    if cds:
        settings[DRIVER_JAVA_OPTIONS] = f"{settings[DRIVER_JAVA_OPTIONS]} {cds}"
    return with_profile_conf(settings, conf or {})


def local_task_slots(master: str) -> Optional[int]:
    """local[N] / local[*]: the task slots clients plan with (they cannot ask the server's
    SparkContext); a cluster's slots are unknown before its executors register."""
    if master == "local":
        return 1
    if master.startswith("local["):
        count = master[len("local["):].split(",")[0].rstrip("]")
        return (os.cpu_count() or 1) if count == "*" else int(count)
    return None


# Variables that make spark-submit (or the pyspark it starts) a Spark Connect *client*: a caller
# whose shell exports them (usual for Connect users), or a process that has joined a Connect
# session (pyspark sets them), would start a server that exits with "Remote cannot be specified
# with master and/or deploy mode".
CLIENT_MODE_VARIABLES = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE",
                         "SPARK_API_MODE")


def server_environment(server: Server, master: str) -> Dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in CLIENT_MODE_VARIABLES}
    env.update({
        "SPARK_HOME": spark_home(),
        "SPARK_LOG_DIR": server.state_dir,
        "SPARK_PID_DIR": server.state_dir,
        "SPARK_IDENT_STRING": server.ident,
        # the server's Python workers and data-source planner import dbt-paimon
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })
    if is_loopback_master(master):
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def start(warehouse: str, port: int = connect_client.DEFAULT_PORT, master: str = "local[*]",
          conf: Optional[Dict[str, str]] = None, state_dir: Optional[str] = None,
          timeout: float = START_TIMEOUT_S, warm_up: bool = True) -> Server:
    """Start the server and return once it accepts connections (and, with ``warm_up``, once its
    Python workers run dbt-paimon). A server already running for it is left as it is."""
    server = server_for(warehouse, port, state_dir)
    if server.pid() is not None and server.accepts_connections():
        return server
    if server.accepts_connections():
        raise ServerError(f"port {port} is in use by another process: choose another --port")
    state_folder.check_usable(server.state_dir)
    # the warehouse's background daemon (server/daemon.py) holds the Derby metastore this server
    # needs
    from dbt.adapters.paimon.server import daemon

    if daemon.stop_if_idle(server.state_dir) is not None:
        raise ServerError(f"the background daemon of {server.warehouse} is serving a dbt "
                          "command and holds the warehouse's metastore: start the server when "
                          "it is idle (`dbt-paimon server stop --warehouse ...` stops it)")
    command: List[str] = [os.path.join(spark_home(), "sbin", "start-connect-server.sh"),
                          "--master", master]
    for key, value in server_conf(server, master, conf).items():
        command += ["--conf", f"{key}={value}"]
    result = subprocess.run(command, env=server_environment(server, master),
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise ServerError(f"start-connect-server.sh failed ({result.returncode}): "
                          f"{(result.stderr or result.stdout).strip()}")
    deadline = time.monotonic() + timeout
    while not server.accepts_connections():
        time.sleep(0.5)
        if server.pid() is None:  # spark-daemon.sh wrote it before returning
            raise ServerError(f"the Spark Connect server exited while starting.{_log_tail(server)}")
        if time.monotonic() > deadline:
            tail = _log_tail(server)
            # the server this call launched must not outlive the failed start (it would hold
            # the port and the metastore)
            stop(warehouse, port, state_dir)
            raise ServerError(f"the Spark Connect server did not accept connections on port "
                              f"{port} within {timeout:.0f} s and was stopped.{tail}")
    if warm_up:
        warm_up_server(server)
    return server


def warm_up_server(server: Server) -> None:
    """Join the shared dbt session and run what a dbt command's first Python work would wait
    for: the server's Python daemon and workers (the server check's probe) and the planner of
    Python data sources. Raises ConnectSetupError if the server's Python cannot run dbt-paimon."""
    from dbt.adapters.paimon.environments.worker_warm_up import WarmUpSource

    url = connect_client.parse_connect_url(server.url)
    saved = connect_mode_env()  # this process leaves Connect mode after (connect.py says why)
    spark, _ = join_shared_session(url, {})
    try:
        connect_client.check_server(spark, url)
        register_data_source(spark, WarmUpSource)
        slots = int(spark.conf.get(PARALLELISM_CONF, None) or 2)
        spark.read.format(WarmUpSource.name()).option("tasks", slots).load() \
            .write.format("noop").mode("overwrite").save()
    finally:
        # leave the shared session open on the server, and this process out of Connect mode
        spark.release_session_on_close = False
        spark.stop()
        restore_connect_mode_env(saved)


def stop(warehouse: str, port: int = connect_client.DEFAULT_PORT,
         state_dir: Optional[str] = None, timeout: float = STOP_TIMEOUT_S) -> bool:
    """Stop the server; False if none was running."""
    server = server_for(warehouse, port, state_dir)
    pid = server.pid()
    if pid is None:
        _remove(server.pid_file)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    killed = False
    while server.pid() is not None:
        if time.monotonic() > deadline:
            if killed:
                break
            # and wait (a few seconds) until it is gone: until then it holds the port and
            # the metastore that the next start needs
            os.kill(pid, signal.SIGKILL)
            killed, deadline = True, time.monotonic() + 10
        time.sleep(0.2)
    _remove(server.pid_file)
    return True


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _log_tail(server: Server, lines: int = 30) -> str:
    log = server.log_file
    if log is None:
        return ""
    with open(log, errors="replace") as handle:
        tail = handle.readlines()[-lines:]
    return f" Its log ({log}) ends with:\n" + "".join(tail)
