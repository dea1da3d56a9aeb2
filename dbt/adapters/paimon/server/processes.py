"""Whether a process recorded in a pid file still runs (the daemon, its server, a Connect server
that `dbt-paimon server start` ran, a JVM writing the class-data archive)."""

from __future__ import annotations

import os
import subprocess
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


def command_line(pid) -> str:
    """The process's whole command line, "" if it cannot be read (gone, or no ``ps``): what
    tells a daemon's watchdog from a process that took its recorded pid (daemon.py)."""
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return ""  # Linux: the process is gone
    except (OSError, ValueError, TypeError):
        return ""
    try:
        # -ww: the whole command line, not a screen's width of it
        return subprocess.run(["ps", "-ww", "-o", "command=", "-p", str(int(pid))],
                              capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
