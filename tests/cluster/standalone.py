"""A Spark standalone cluster on 127.0.0.1 for tests and benchmarks: one master, N workers,
started from the pyspark package's own jars (``bin/spark-class``), nothing to install.

    with standalone_cluster(root, workers=2) as cluster:
        spark_master = cluster.master_url      # spark://127.0.0.1:<port>

Every daemon gets free loopback ports (several engineers' clusters share the machine), its own
work folder and log file under ``root``, and its own process group. ``stop()`` kills the groups
and every descendant (executors and their Python workers), so nothing is left behind, also when
a test fails; on Linux the daemons also die with the process that started them.

Workers run the executors' Python code with this interpreter (``PYSPARK_PYTHON``), so the
dbt-paimon package and its dependencies are importable there. A real cluster needs the same:
see docs/setup.md, "Clusters".
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional

import pyspark

SPARK_CLASS = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"


class ClusterStartError(RuntimeError):
    pass


def free_ports(count: int) -> List[int]:
    """``count`` distinct free loopback ports (all held open until every one is chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(s)
            s.bind((HOST, 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def daemon_env(work_root: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_HOSTNAME": "localhost",
        # executors' Python workers: this interpreter, which imports dbt-paimon
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_DAEMON_MEMORY": "256m",
        # no REST submission server: it would take the fixed port 6066
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_LOCAL_DIRS": os.path.join(work_root, "local"),
        # spark-class reads conf/spark-env.sh only from SPARK_CONF_DIR: an empty one
        "SPARK_CONF_DIR": os.path.join(work_root, "conf"),
    })
    env.pop("SPARK_HOME", None)  # spark-class finds the pyspark package's own
    return env


def _die_with_parent() -> None:
    """In the child before exec: own process group, and SIGKILL when the starting process dies
    (Linux), so a killed test run leaves no daemons."""
    os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class StandaloneCluster:
    root: str
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    timeout: float = 120.0
    master_port: int = 0
    web_port: int = 0
    processes: List[subprocess.Popen] = field(default_factory=list)
    logs: Dict[int, str] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def web_url(self) -> str:
        return f"http://{HOST}:{self.web_port}"

    def work_dir(self, index: int) -> str:
        return os.path.join(self.root, f"worker-{index}")

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "StandaloneCluster":
        os.makedirs(os.path.join(self.root, "conf"), exist_ok=True)
        ports = free_ports(2 + 2 * self.workers)
        self.master_port, self.web_port = ports[0], ports[1]
        try:
            self._spawn("master", [MASTER_CLASS, "--host", HOST, "--port", str(self.master_port),
                                   "--webui-port", str(self.web_port)])
            # workers start beside the master (JVM start-up dominates); they retry registering
            for index in range(self.workers):
                os.makedirs(self.work_dir(index), exist_ok=True)
                self._spawn(f"worker-{index}", [
                    WORKER_CLASS, self.master_url, "--host", HOST, "--port", str(ports[2 + 2 * index]),
                    "--webui-port", str(ports[3 + 2 * index]), "--cores", str(self.cores),
                    "--memory", self.memory, "--work-dir", self.work_dir(index)])
            self._wait(lambda state: state.get("aliveworkers", 0) >= self.workers,
                       f"{self.workers} workers to register")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Kill every daemon's process group and every descendant (executors, Python workers
        that moved to their own group), then reap them; bounded in time."""
        pids = {p.pid for p in self.processes}
        for process in self.processes:
            pids.update(descendants(process.pid))
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        self.processes.clear()

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        """The master's JSON status page (workers, running and completed applications)."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as response:
            return json.load(response)

    def executor_dirs(self) -> List[str]:
        """Executor folders (``<work dir>/<app id>/<executor id>``) of every worker."""
        found = []
        for index in range(self.workers):
            work = self.work_dir(index)
            for app in sorted(os.listdir(work)) if os.path.isdir(work) else []:
                for executor in sorted(os.listdir(os.path.join(work, app))):
                    found.append(os.path.join(work, app, executor))
        return found

    def log_tail(self, lines: int = 30) -> str:
        parts = []
        for name, path in sorted(self.logs.items()):
            with open(path, errors="replace") as f:
                tail = f.readlines()[-lines:]
            parts.append(f"--- {name} ({path})\n{''.join(tail)}")
        return "\n".join(parts)

    # ------------------------------------------------------------------ internals
    def _spawn(self, name: str, args: List[str]) -> None:
        log_path = os.path.join(self.root, f"{name}.log")
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [SPARK_CLASS, *args], stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=daemon_env(self.root), cwd=self.root,
                preexec_fn=_die_with_parent)
        self.processes.append(process)
        self.logs[name] = log_path

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        last_error: Optional[BaseException] = None
        while time.monotonic() < deadline:
            dead = [p for p in self.processes if p.poll() is not None]
            if dead:
                raise ClusterStartError(
                    f"a Spark daemon exited (code {dead[0].returncode}) while waiting for "
                    f"{what}:\n{self.log_tail()}")
            try:
                if ready(self.state()):
                    return
            except (OSError, ValueError) as exc:  # web UI not (fully) up yet
                last_error = exc
            time.sleep(0.5)
        raise ClusterStartError(f"timed out after {self.timeout:.0f}s waiting for {what} "
                                f"(last error: {last_error}):\n{self.log_tail()}")


def descendants(pid: int) -> List[int]:
    """Every process below ``pid`` (Linux /proc; empty elsewhere)."""
    children: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # "pid (comm) state ppid ...": comm may hold spaces, so split after the ')'
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


@contextlib.contextmanager
def standalone_cluster(root: str, **settings) -> Iterator[StandaloneCluster]:
    cluster = StandaloneCluster(root, **settings)
    with cluster:
        yield cluster
