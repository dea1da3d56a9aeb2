"""The background Spark's own process: a small Python watchdog that runs the Spark Connect
server JVM as its child and stops it after an idle period (``daemon.py`` starts it; the
protocol of the files it shares with dbt processes is described there).

Standard library only, so the process that stays alive for hours holds about 10 MiB, not pyspark.

- The JVM is this process's child with Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``):
  if the watchdog dies, even by SIGKILL, the kernel sends the JVM SIGTERM, so no orphan JVM is
  left behind without a watchdog to stop it.
- Idle: no dbt process holds the shared lock on ``daemon.clients`` and ``daemon.last-used`` is
  older than the idle timeout. The watchdog then takes that lock exclusively, stops the JVM and
  removes ``daemon.json`` before releasing it: a dbt process arriving meanwhile waits on the
  lock, then finds no daemon and starts a new one.
- SIGTERM (``dbt-paimon server stop``), or the JVM exiting by itself, end it the same way.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional

INFO_NAME = "daemon.json"
CLIENTS_NAME = "daemon.clients"
LAST_USED_NAME = "daemon.last-used"
LOG_NAME = "daemon.log"
SPARK_OUT_NAME = "daemon-spark.out"
STOP_GRACE_S = 60
_PR_SET_PDEATHSIG = 1


def write_private_json(path: str, data: Dict) -> None:
    """Written whole (rename) and readable by its owner only: it holds the server's token."""
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump(data, out)
    os.replace(temporary, path)


def read_json(path: str) -> Optional[Dict]:
    """The file's JSON object; None if it is missing, unreadable or holds anything else."""
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def touch(path: str) -> None:
    with open(path, "a"):
        pass
    os.utime(path)


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when this watchdog dies (Linux; elsewhere nothing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _WakeUp(Exception):
    """Raised by the SIGTERM handler into the watchdog's sleep."""


class Watchdog:
    def __init__(self, spec: Dict):
        self.state_dir: str = spec["state_dir"]
        self.command: List[str] = spec["command"]
        self.env: Dict[str, str] = spec["env"]
        self.idle_s: float = float(spec["idle_seconds"])
        self.poll_s: float = float(spec.get("poll_seconds", 5))
        self.info = {key: spec[key] for key in ("port", "token", "fingerprint", "warehouse",
                                                "idle_seconds")}
        self.launch: str = spec["launch"]  # tells the starting command this is its daemon
        self.jvm: Optional[subprocess.Popen] = None
        self.stopping = False
        self.sleeping = False

    def path(self, name: str) -> str:
        return os.path.join(self.state_dir, name)

    def log(self, message: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with open(self.path(LOG_NAME), "a") as out:
            out.write(f"{stamp} [pid {os.getpid()}] {message}\n")

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, self._on_term)
        with open(self.path(SPARK_OUT_NAME), "ab") as out:
            self.jvm = subprocess.Popen(self.command, env=self.env, stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=subprocess.STDOUT,
                                        preexec_fn=_die_with_parent)
        write_private_json(self.path(INFO_NAME), {**self.info, "pid": os.getpid(),
                                                  "launch": self.launch,
                                                  "server_pid": self.jvm.pid,
                                                  "started": time.time()})
        touch(self.path(LAST_USED_NAME))
        self.log(f"started the Spark Connect server (pid {self.jvm.pid}) on 127.0.0.1:"
                 f"{self.info['port']}; it stops after {self.idle_s:.0f} s without a dbt command")
        clients = os.open(self.path(CLIENTS_NAME), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while not self.stopping:
                if self.jvm.poll() is not None:
                    self.log(f"the Spark Connect server exited ({self.jvm.returncode}); see "
                             f"{SPARK_OUT_NAME}")
                    return self._finish(None)
                if self._idle() and self._try_lock(clients):
                    if self._idle():  # a command may have come and gone before the lock
                        self.log("idle: stopping the Spark Connect server")
                        return self._finish(clients)
                    fcntl.flock(clients, fcntl.LOCK_UN)
                self._sleep()
            self.log("asked to stop (SIGTERM)")
            return self._finish(None)
        finally:
            os.close(clients)

    def _idle(self) -> bool:
        try:
            last = os.path.getmtime(self.path(LAST_USED_NAME))
        except OSError:
            return True
        return time.time() - last >= self.idle_s

    @staticmethod
    def _try_lock(descriptor: int) -> bool:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _sleep(self) -> None:
        """Wait for the next look, cut short by SIGTERM: a command that found the server dead
        stops its watchdog and waits for it before it starts a new one."""
        self.sleeping = True
        try:
            time.sleep(self.poll_s)
        except _WakeUp:
            pass
        finally:
            self.sleeping = False

    def _on_term(self, *_args) -> None:
        self.stopping = True
        if self.sleeping:
            raise _WakeUp()

    def _finish(self, held_lock: Optional[int]) -> int:
        """Stop the JVM, then remove daemon.json (still holding the clients lock if taken)."""
        assert self.jvm is not None
        if self.jvm.poll() is None:
            self.jvm.terminate()
            try:
                self.jvm.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.log(f"the server did not stop within {STOP_GRACE_S} s: killed")
                self.jvm.kill()
                self.jvm.wait()
        info = read_json(self.path(INFO_NAME))
        if info is not None and info.get("pid") == os.getpid():
            os.remove(self.path(INFO_NAME))
        self.log("stopped")
        if held_lock is not None:
            fcntl.flock(held_lock, fcntl.LOCK_UN)
        return 0


def main(argv: Optional[List[str]] = None) -> int:
    """``python <this file> <spec.json>`` (run as a script, so the dbt-paimon package and dbt are
    not imported): the spec (0600, written by daemon.py) is read and deleted at once."""
    spec_path = (argv if argv is not None else sys.argv[1:])[0]
    spec = read_json(spec_path)
    os.remove(spec_path)
    if spec is None:
        return 2
    # Fork once more and let the first process exit: the watchdog is then no dbt process's
    # child (init adopts it), so the command that started it never holds it as a zombie.
    if os.fork() != 0:
        os._exit(0)
    return Watchdog(spec).run()


if __name__ == "__main__":
    sys.exit(main())
