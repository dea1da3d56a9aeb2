"""The folders, ports and logs of the throwaway database servers the tests start (tests/postgres_server.py,
tests/hive_metastore_server.py): one ``mkdtemp`` folder per server under the system temp
folder, marked with the pid of the test process it belongs to."""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TypeVar

Server = TypeVar("Server")

OWNER_FILE = "owner.pid"  # the test process a server folder belongs to


@contextmanager
def server_folder(prefix: str) -> Iterator[str]:
    """A folder for a server of this test process (the folders of dead test processes go
    first), removed again if the server does not start."""
    remove_folders_of_dead_processes(prefix)
    root = tempfile.mkdtemp(prefix=prefix)
    try:
        with open(os.path.join(root, OWNER_FILE), "w") as f:
            f.write(str(os.getpid()))
        yield root
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise


def start_on_a_free_port(start: Callable[[int], Optional[Server]],
                         attempts: int) -> Optional[Server]:
    """``start(port)`` on free ports until it returns a server (None: another process took the
    port between probing and binding it), at most ``attempts`` times."""
    for _ in range(attempts):
        server = start(free_port())
        if server is not None:
            return server
    return None


def remove_folders_of_dead_processes(prefix: str) -> None:
    """Server folders left by test processes killed before their finalizers ran (their servers
    died with them: the parent-death signal); a folder whose process lives is kept."""
    parent = tempfile.gettempdir()
    for name in os.listdir(parent):
        if not name.startswith(prefix):
            continue
        folder = os.path.join(parent, name)
        try:
            with open(os.path.join(folder, OWNER_FILE)) as f:
                os.kill(int(f.read().strip()), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue  # being created, or not ours


def free_port() -> int:
    """A free port of 127.0.0.1 (another process may take it before the server binds it: the
    servers' starts retry on another one)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tail(path: str, size: int = 3000) -> str:
    """The end of a server's log, for a failure message."""
    try:
        with open(path, errors="replace") as f:
            return f.read()[-size:]
    except OSError:
        return "(no log)"
