"""The background Spark of the default profile: a Spark Connect server per warehouse that the
first dbt command starts and later commands join (``daemon_policy`` decides when; the process
itself is ``daemon_process``, the watchdog that runs the server and stops it when idle).

This module finds, starts, joins and stops it: the lock, the records, the processes. What the
watchdog runs is the plan's ``server`` (a ``DaemonServer``): its command line, environment and
URL, and a server already running on the warehouse that a command joins instead; the Spark
Connect server's are environments/daemon_environment.py's, the daemon's client side.

pyspark 4.3 has an opt-in reusable local Connect server (pyspark/sql/connect/local_server.py):
one per user, with no idle stop and no warehouse of its own. dbt-paimon needs one per warehouse
(the server holds the warehouse's Derby metastore), stopped when idle, restarted when dbt-paimon
or pyspark change, so it keeps its own files; it follows local_server's safety rules (loopback
only, a random token in a 0600 file).

Files in the warehouse's Spark state folder (``<warehouse>/.spark``):

- ``daemon.lock``: held exclusively while a dbt process finds or starts the daemon, so that
  commands starting at the same moment start one daemon;
- ``daemon.json`` (0600): the watchdog's pid, the server's pid, port and token, and the
  fingerprint of the installation that started it;
- ``daemon.clients``: every dbt process using the daemon holds a shared lock on it until it
  exits (the kernel drops it when a process dies, even by SIGKILL); the watchdog stops the
  server only while it can lock it exclusively;
- ``daemon.last-used``: touched when a command joins and when it exits: the idle clock;
- ``daemon.log`` (the watchdog's lines) and ``daemon-spark.out`` (the server's output).
"""

from __future__ import annotations

import abc
import atexit
import fcntl
import hashlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable, Dict, Iterator, List, Optional

from dbt.adapters.paimon.server import daemon_process
from dbt.adapters.paimon.server.daemon_process import (CLIENTS_NAME, INFO_NAME,
                                                       LAST_USED_NAME, LOG_NAME,
                                                       SPARK_OUT_NAME, read_json, touch,
                                                       write_private_json)
from dbt.adapters.paimon.server.ports import accepts_connections
from dbt.adapters.paimon.server.processes import alive, command_line, listens_on

LOCK_NAME = "daemon.lock"
START_TIMEOUT_S = 300
# A daemon of another installation still serving commands: how long a new command waits for
# them to finish before it runs Spark in its own process instead.
RETIRE_TIMEOUT_S = 600
STOP_TIMEOUT_S = daemon_process.STOP_GRACE_S + 15

_client_lock: Optional[int] = None  # this process's shared lock on daemon.clients
_started_here = False  # this process started the daemon it uses: its Python workers are cold


class DaemonUnavailable(RuntimeError):
    """The background Spark could not be started or joined (the message says why)."""


class PortTaken(DaemonUnavailable):
    """Another process bound the port chosen for a new server before the server did."""


# A new server whose port another process took first is started again on another port: the
# port is chosen free, then bound by a JVM seconds later, and anything may bind it meanwhile.
PORT_ATTEMPTS = 3


class DaemonServer(abc.ABC):
    """The server a daemon runs, as far as finding, starting and joining it needs to know it
    (environments/daemon_environment.py ``ConnectDaemonServer``: a Spark Connect server)."""

    @abc.abstractmethod
    def command(self, plan: "DaemonPlan", port: int) -> List[str]:
        """The command line the watchdog runs: a server listening on 127.0.0.1:``port``."""

    @abc.abstractmethod
    def environment(self, plan: "DaemonPlan", port: int, token: str) -> Dict[str, str]:
        """The server's environment variables, ``token`` (the one it accepts) among them."""

    @abc.abstractmethod
    def url(self, port: int, token: str) -> Any:
        """What a command joins the daemon's server at."""

    @abc.abstractmethod
    def explicit_url(self, plan: "DaemonPlan") -> Any:
        """A server running on the warehouse outside any daemon, which a command joins instead
        of starting the daemon; None when there is none."""


@dataclass(frozen=True)
class DaemonPlan:
    """What a daemon for this profile runs: decided by daemon_policy; ``server`` is the server
    process its watchdog runs."""
    warehouse: str
    state_dir: str
    master: str
    idle_seconds: float
    server: DaemonServer

    def path(self, name: str) -> str:
        return os.path.join(self.state_dir, name)


def fingerprint(master: str) -> str:
    """The installation a daemon runs: a command never joins a daemon of another one.
    dbt-paimon's and pyspark's versions, the Python, and the newest source file of dbt-paimon
    (an upgrade or an edited checkout changes it)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    newest = 0.0
    for folder, _dirs, files in os.walk(package):
        for name in files:
            if name.endswith((".py", ".sql")):
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime)
    from dbt.adapters.paimon.__version__ import version

    # normalised: a Python started as `../.venv/bin/python` keeps the `..` in sys.executable,
    # its child processes do not (symlinks stay: another virtualenv is another installation)
    python = os.path.normpath(os.path.abspath(sys.executable))
    parts = [version, metadata.version("pyspark"), python, repr(newest), master]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def acquire(plan: DaemonPlan, announce: Callable[[str], None]) -> Any:
    """The URL (with its token, ``plan.server.url``) of the warehouse's daemon, started if none
    runs; this process counts as its client until it exits."""
    os.makedirs(plan.state_dir, exist_ok=True)
    mine = fingerprint(plan.master)
    for _attempt in range(3):
        with _locked(plan.path(LOCK_NAME)):
            info = _live_info(plan.state_dir)
            if info is not None and info.get("fingerprint") != mine:
                announce("The background Spark of this warehouse runs another dbt-paimon or "
                         "pyspark installation: restarting it.")
                _retire(plan, info)
                info = None
            if info is None:
                explicit = plan.server.explicit_url(plan)
                if explicit is not None:
                    _join(plan)
                    return explicit
                _retire_unrecorded(plan, announce)
                announce(f"Starting a background Spark for {plan.warehouse}; later dbt "
                         f"commands reuse it. It stops after {plan.idle_seconds / 60:g} min "
                         f"without a command, or with `dbt-paimon server stop --warehouse "
                         f"{plan.warehouse}`; DBT_PAIMON_DAEMON=off turns it off.")
                info = _start_on_a_free_port(plan, mine)
                global _started_here
                _started_here = True
            _wait_ready(plan, info)
            _join(plan)
            # not stopped for idleness while we waited to join
            if _live_info(plan.state_dir) == info:
                return plan.server.url(info["port"], info["token"])
            release()
    raise DaemonUnavailable("the background Spark stopped three times while joining it")


def started_here() -> bool:
    return _started_here


def release() -> None:
    """Stop counting as the daemon's client (before falling back to an in-process Spark)."""
    global _client_lock
    if _client_lock is not None:
        os.close(_client_lock)
        _client_lock = None


def _join(plan: DaemonPlan) -> None:
    """Hold the shared lock on daemon.clients until this process exits (waits while the
    watchdog is stopping the server), and restart the idle clock now and at exit."""
    global _client_lock
    if _client_lock is None:
        descriptor = os.open(plan.path(CLIENTS_NAME), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(descriptor, fcntl.LOCK_SH)
        _client_lock = descriptor
        atexit.register(_touch_quietly, plan.path(LAST_USED_NAME))
    touch(plan.path(LAST_USED_NAME))


def _touch_quietly(path: str) -> None:
    try:
        touch(path)
    except OSError:
        pass


@contextmanager
def _locked(path: str) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _live_info(state_dir: str) -> Optional[Dict]:
    """daemon.json while its watchdog and server live (a stale file is removed, and a server
    it left behind is stopped; a watchdog whose server died is stopped). A recorded watchdog
    pid that another process has taken since (the file outlived a reboot or a SIGKILLed
    watchdog) counts as gone: that process is never signalled."""
    path = os.path.join(state_dir, INFO_NAME)
    info = read_json(path)
    if info is None:
        return None
    if not _is_watchdog(info.get("pid"), state_dir):
        _stop_orphan(info)
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        return None
    if info.get("server_pid") and not alive(info["server_pid"]):
        # the server died (killed, out of memory) and its watchdog has not noticed yet (it
        # looks every few seconds): stop the watchdog now rather than join a dead server
        _terminate(state_dir, info)
        return None
    return info


_WATCHDOG_SCRIPT = "daemon_process.py "
_SPEC_PREFIX = "daemon-spec."


def _watchdog_state_dir(command: str) -> Optional[str]:
    """The state folder of the watchdog with this command line (``python .../daemon_process.py
    <state_dir>/daemon-spec.<pid>.json``, see _start), or None if it is no watchdog's."""
    script = command.find(_WATCHDOG_SCRIPT)
    if script < 0:
        return None
    spec = command[script + len(_WATCHDOG_SCRIPT):].strip()
    if not os.path.basename(spec).startswith(_SPEC_PREFIX):
        return None
    return os.path.realpath(os.path.dirname(spec))


def _is_watchdog(pid, state_dir: str) -> bool:
    """``pid`` runs and is a watchdog of this state folder (not a process that took its pid)."""
    return alive(pid) and _watchdog_state_dir(command_line(pid)) == os.path.realpath(state_dir)


def _unrecorded_watchdogs(state_dir: str) -> List[int]:
    """Watchdogs of this state folder that run although daemon.json does not name them (it is
    missing, or was unreadable)."""
    if not os.path.exists(os.path.join(state_dir, LOG_NAME)):
        return []  # no daemon ever started here
    recorded = (read_json(os.path.join(state_dir, INFO_NAME)) or {}).get("pid")
    if os.path.isdir("/proc/self"):
        candidates = [(int(name), command_line(name)) for name in os.listdir("/proc")
                      if name.isdigit()]
    else:
        try:
            listing = subprocess.run(["ps", "-ww", "-e", "-o", "pid=,command="],
                                     capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        candidates = [(int(pid), command) for pid, _, command in
                      (line.strip().partition(" ") for line in listing.splitlines())
                      if pid.isdigit()]
    mine = os.path.realpath(state_dir)
    return [pid for pid, command in candidates
            if pid not in (recorded, os.getpid()) and _SPEC_PREFIX in command
            and _watchdog_state_dir(command) == mine and alive(pid)]


def _retire_unrecorded(plan: DaemonPlan, announce: Callable[[str], None]) -> None:
    """Before a new daemon starts: stop a daemon of this warehouse whose daemon.json was lost
    (deleted, or overwritten with garbage) while it ran. No command can join it any more, and
    it holds the warehouse's Derby metastore, which the new daemon's server needs."""
    for pid in _unrecorded_watchdogs(plan.state_dir):
        announce(f"The background Spark of this warehouse runs without its record "
                 f"({plan.path(INFO_NAME)} is missing or unreadable): stopping it (watchdog "
                 f"pid {pid}) once no command uses it, and starting a new one.")
        _retire(plan, {"pid": pid})


def _stop_orphan(info: Dict) -> None:
    """Stop the server of a watchdog that is gone. On Linux the parent-death signal has stopped
    it already; elsewhere (macOS has no such signal) a SIGKILLed watchdog leaves its server
    running, and the next command stops it here. The pid is only taken for the server's while
    that process's command line names the server's port (a pid can be reused)."""
    pid, port = info.get("server_pid"), info.get("port")
    if not alive(pid) or not port:
        return
    command = command_line(pid)
    if not re.search(rf"(?<!\d){int(port)}(?!\d)", command):
        return
    _stop_and_wait([pid])


def _listening(port: int) -> bool:
    return accepts_connections("127.0.0.1", port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(plan: DaemonPlan, mine: str) -> Dict:
    """Launch the watchdog (which launches the server) and return its daemon.json."""
    port = _free_port()
    token = secrets.token_urlsafe(32)
    env = plan.server.environment(plan, port, token)
    launch = secrets.token_hex(8)
    spec_path = plan.path(f"daemon-spec.{os.getpid()}.json")
    write_private_json(spec_path, {
        "state_dir": plan.state_dir, "command": plan.server.command(plan, port), "env": env,
        "idle_seconds": plan.idle_seconds, "port": port, "token": token, "fingerprint": mine,
        "warehouse": plan.warehouse, "launch": launch,
        "poll_seconds": float(os.environ.get("DBT_PAIMON_DAEMON_POLL_SECONDS", "5")),
    })
    with open(plan.path(LOG_NAME), "ab") as log:
        watchdog = subprocess.Popen(
            [sys.executable, os.path.abspath(daemon_process.__file__), spec_path],
            cwd=plan.state_dir, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # not in the terminal's process group: Ctrl-C spares it
            close_fds=True)
    deadline = time.monotonic() + 30
    while True:
        info = read_json(plan.path(INFO_NAME))
        if info is not None and info.get("launch") == launch:
            watchdog.wait()  # it forked the watchdog and exited
            return info
        if watchdog.poll() not in (None, 0):
            raise DaemonUnavailable(f"its watchdog exited ({watchdog.returncode}).{_tail(plan)}")
        if time.monotonic() > deadline:
            raise DaemonUnavailable(f"its watchdog did not start within 30 s.{_tail(plan)}")
        time.sleep(0.05)


def _start_on_a_free_port(plan: DaemonPlan, mine: str) -> Dict:
    """``_start``, again on another port while another process takes the chosen one first."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        info = _start(plan, mine)
        try:
            _wait_ready(plan, info)
            return info
        except PortTaken:
            _terminate(plan.state_dir, info)
            if attempt == PORT_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def _serving(info: Dict) -> bool:
    """The daemon's own server listens on its port: not merely something (another process may
    have bound the port first, and would then be joined in its place)."""
    owned = listens_on(info.get("server_pid"), info["port"])
    return owned if owned is not None else _listening(info["port"])


def _wait_ready(plan: DaemonPlan, info: Dict) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _serving(info):
        if not alive(info.get("server_pid")) or not alive(info.get("pid")):
            tail = _tail(plan)
            if _listening(info["port"]) or f"bind to address /127.0.0.1:{info['port']}" in tail:
                raise PortTaken(f"another process took port {info['port']} before the Spark "
                                f"Connect server bound it.{tail}")
            raise DaemonUnavailable(f"the Spark Connect server exited while starting.{tail}")
        if time.monotonic() > deadline:
            _terminate(plan.state_dir, info)
            raise DaemonUnavailable(f"the Spark Connect server did not accept connections "
                                    f"within {START_TIMEOUT_S} s and was stopped.{_tail(plan)}")
        time.sleep(0.2)


def _retire(plan: DaemonPlan, info: Dict) -> None:
    """Stop a daemon of another installation once no command uses it."""
    descriptor = os.open(plan.path(CLIENTS_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + RETIRE_TIMEOUT_S
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DaemonUnavailable(
                        "the running background Spark belongs to another dbt-paimon or "
                        f"pyspark installation and still serves commands after "
                        f"{RETIRE_TIMEOUT_S} s") from None
                time.sleep(0.5)
        _terminate(plan.state_dir, info)
    finally:
        os.close(descriptor)


def _terminate(state_dir: str, info: Dict) -> None:
    """SIGTERM the watchdog (it stops the server) and wait for both to end; then daemon.json
    goes, unless a new daemon wrote it (a watchdog removes it itself, a killed one cannot)."""
    _stop_and_wait([info.get("pid"), info.get("server_pid")])
    _live_info(state_dir)  # removes the file of a watchdog that is gone


def _stop_and_wait(pids: List[Optional[int]]) -> None:
    """SIGTERM the first of ``pids`` that runs (a watchdog stops its server itself) and wait
    for all of them to end; what still runs after STOP_TIMEOUT_S gets SIGKILL, last first."""
    for pid in pids:
        if alive(pid):
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass
            break
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            for pid in reversed(pids):
                if alive(pid):
                    os.kill(int(pid), signal.SIGKILL)
            break
        time.sleep(0.1)


def running(state_dir: str) -> Optional[Dict]:
    """daemon.json of the daemon running in this state folder, if one does."""
    return _live_info(state_dir)


def stop(state_dir: str) -> bool:
    """Stop the warehouse's daemon (``dbt-paimon server stop``); False if none ran."""
    info = running(state_dir)
    if info is None:
        return False
    _terminate(state_dir, info)
    return True


def stop_if_idle(state_dir: str) -> Optional[Dict]:
    """Before an in-process Spark opens the warehouse's metastore: stop its daemon unless a
    command uses it; the daemon's daemon.json if it is busy (the caller says so)."""
    info = running(state_dir)
    if info is None:
        return None
    descriptor = os.open(os.path.join(state_dir, CLIENTS_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return info
        _terminate(state_dir, info)
        return None
    finally:
        os.close(descriptor)


def _tail(plan: DaemonPlan, lines: int = 20) -> str:
    for name in (SPARK_OUT_NAME, LOG_NAME):
        try:
            with open(plan.path(name), errors="replace") as handle:
                tail = handle.readlines()[-lines:]
        except OSError:
            continue
        if tail:
            return f" {plan.path(name)} ends with:\n" + "".join(tail)
    return ""
