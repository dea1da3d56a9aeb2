"""Fresh dbt processes without paying dbt's import each time: a fork server for the tests.

Most of the suite's time is dbt commands run as processes of their own, the way a scheduler
runs them, and a third of such a process's CPU (about 3.5 of its 6 CPU-s without Spark) is
importing dbt-core, dbt-spark and this adapter before the command starts. On the 2-core CI
machine, where two test processes share the cores, that CPU is the wall time of the test beside.

The server is one Python process per test process that imports those modules once and then only
forks: each child becomes a dbt command exactly as ``dbt <args>`` would run it (its own session
and process group, the given environment, working folder and output file, stdin from
/dev/null), runs it through dbt's own entry point and leaves through the interpreter's normal
exit (threads joined, atexit handlers run). A child shares nothing with another command: the
server runs no command, starts no Spark and no thread, and it checks before each fork that it is
still single-threaded (/proc/self/task), so a child starts from the state a fresh import leaves.
What a child cannot show is what a fresh interpreter prints while importing: the console tests
(tests/functional/console_output.py) run ``dbt`` as a new executable for that.

``popen(...)`` returns a handle with the parts of ``subprocess.Popen`` the tests use (pid, poll,
wait, returncode); the server reports each child's exit status. ``DBT_TEST_FORK_SERVER=off``
runs every command as a new executable instead."""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

# what `dbt <command>` imports before it runs the command, with this adapter's plugin. Not
# pyarrow nor polars: importing them starts threads (2 and 3), which a fork would copy half-way.
PRELOAD = ("dbt.cli.main", "dbt.adapters.spark.impl", "dbt.adapters.paimon.impl", "pyspark.sql")
SWITCH = "DBT_TEST_FORK_SERVER"


# ---------------------------------------------------------------- the server (its own process)

def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _serve(listener: socket.socket, parent_pipe: int):
    """Accept requests until the parent's pipe closes; returns only in a forked child, with its
    request."""
    children: Dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([listener, parent_pipe], [], [], 0.05)
        if parent_pipe in ready:
            os._exit(0)  # the test process ended: its children are its tests' to kill
        while children:  # report each ended child to the connection that asked for it
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            connection = children.pop(pid, None)
            if connection is not None:
                try:
                    connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
                connection.close()
        if listener not in ready:
            continue
        connection, _ = listener.accept()
        with connection.makefile("r") as reader:
            request = json.loads(reader.readline())
        threads = _threads()
        if threads != 1:  # an import started a thread: a fork would copy it half-way
            connection.sendall(f"error the fork server has {threads} threads\n".encode())
            connection.close()
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            listener.close()
            os.close(parent_pipe)
            for other in children.values():
                other.close()
            connection.close()
            return request
        children[pid] = connection
        connection.sendall(f"pid {pid}\n".encode())


def _become(request: dict) -> None:
    """The child: a new session and process group, the command's folder, environment and
    output, as subprocess.Popen(start_new_session=True) gives a new executable."""
    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    output = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    sys.argv = ["dbt", *request["args"]]


def _server_main(address: str, parent_pipe: int) -> None:
    for module in PRELOAD:
        __import__(module)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(16)
    print("ready", flush=True)
    request = _serve(listener, parent_pipe)
    _become(request)
    if "python" in request:  # the server's own tests: Python source in place of dbt
        exec(compile(request["python"], "<request>", "exec"), {"__name__": "__request__"})
        sys.exit(0)
    from dbt.cli.main import cli

    cli()  # dbt's console entry point: sys.exit(its code), then the interpreter's normal exit


# ---------------------------------------------------------------- the client (test processes)

class ForkedDbt:
    """A dbt command forked by the server: ``subprocess.Popen``'s pid, poll, wait and
    returncode."""

    def __init__(self, connection: socket.socket, args: List[str]):
        self.args = args
        self._started = time.monotonic()
        self.returncode: Optional[int] = None
        self._connection = connection
        self._reader = connection.makefile("r")
        first = self._reader.readline().strip()
        if not first.startswith("pid "):
            raise RuntimeError(f"the dbt fork server could not start dbt {args}: {first!r}")
        self.pid = int(first.split()[1])

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            ready, _, _ = select.select([self._connection], [], [], 0)
            if ready:
                self._collect()
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            ready, _, _ = select.select([self._connection], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired(["dbt", *self.args], timeout)
            self._collect()
        return self.returncode

    def _collect(self) -> None:
        line = self._reader.readline().strip()
        if not line.startswith("exit "):
            raise RuntimeError(f"the dbt fork server ended before dbt {self.args} did")
        self.returncode = int(line.split()[1])
        self._reader.close()
        self._connection.close()
        from tests import process_ledger  # (the client's import: the server runs as a script)

        process_ledger.record("dbt", time.monotonic() - self._started,
                              next((a for a in self.args if not a.startswith("-")), ""))


class _Server:
    def __init__(self, folder: Path):
        self.folder = folder
        self.address = str(folder / "dbt-fork-server.sock")
        read_end, self._write_end = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, __file__, self.address, str(read_end)], pass_fds=(read_end,),
            stdout=subprocess.PIPE, stderr=open(folder / "dbt-fork-server.log", "ab"),
            stdin=subprocess.DEVNULL, start_new_session=True)
        os.close(read_end)
        if self.process.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"the dbt fork server did not start: see {folder}")

    def close(self) -> None:
        os.close(self._write_end)  # the server exits when its pipe closes
        self.process.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


_server: Optional[_Server] = None
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get(SWITCH, "on") != "off"


def _ensure_server() -> _Server:
    global _server
    with _lock:
        if _server is None or _server.process.poll() is not None:
            folder = Path(tempfile.mkdtemp(prefix="dbt-fork-"))
            _server = _Server(folder)
            atexit.register(_server.close)
        return _server


def popen(args: List[str], cwd: Path, env: Dict[str, str], output: Path,
          python: Optional[str] = None):
    """``dbt <args>`` in ``cwd`` with exactly ``env`` (stdin from /dev/null, stdout and stderr
    appended to ``output``) in a new session: forked by the server, or a new executable when
    the server is switched off. ``python``: source a child runs instead of dbt (the server's
    own tests)."""
    open(output, "ab").close()  # there from the start, as a shell's redirection makes it
    if not enabled() and python is None:
        with open(output, "ab") as out:
            return subprocess.Popen([sys.executable, "-m", "dbt.cli.main", *map(str, args)],
                                    cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
    server = _ensure_server()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(server.address)
    request = {"args": [str(a) for a in args], "cwd": str(cwd), "env": dict(env),
               "output": str(output)}
    if python is not None:
        request["python"] = python
    connection.sendall((json.dumps(request) + "\n").encode())
    return ForkedDbt(connection, request["args"])


def start_in_project(project: Path, *args: str, env: Optional[Dict[str, str]] = None):
    """``dbt <args>`` on ``project`` (its own profiles.yml), this process's environment plus
    ``env``: the running command and the file its output goes to."""
    output = project / f"dbt-{time.monotonic_ns()}.out"
    return popen([*args, "--project-dir", str(project), "--profiles-dir", str(project)],
                 project, {**os.environ, **(env or {})}, output), output


def run(args: List[str], cwd: Path, env: Dict[str, str],
        timeout: float = 1200) -> subprocess.CompletedProcess:
    """``popen`` to the end: its exit code and its output (stdout and stderr) as text; the
    command's process group is killed if it outlives ``timeout``."""
    with tempfile.NamedTemporaryFile(prefix="dbt-", suffix=".out") as output:
        process = popen(args, cwd, env, Path(output.name))
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_group(process)
            raise
        return subprocess.CompletedProcess(["dbt", *args], code, Path(output.name).read_text())


def kill_group(process) -> None:
    """SIGKILL the command's whole process group (dbt, Spark's JVM, its Python workers)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=60)


if __name__ == "__main__":
    _server_main(sys.argv[1], int(sys.argv[2]))
