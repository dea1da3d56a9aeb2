"""Whether a process recorded in a pid file still runs (the daemon, its server, a Connect server
that `dbt-paimon server start` ran, a JVM writing the class-data archive)."""

from __future__ import annotations

import os
from typing import Optional


def alive(pid: Optional[int]) -> bool:
    """The process runs: it exists (also when it belongs to another user) and is not a zombie,
    a process that has exited and waits for its parent to reap it."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{int(pid)}/stat") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all there is
