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


def listens_on(pid: Optional[int], port: int) -> Optional[bool]:
    """Whether process ``pid`` holds a listening TCP socket on ``port``; None where this cannot
    be told (no /proc, or another user's process). What tells a daemon's server that bound its
    port from another process that took the port first (daemon.py)."""
    inodes = set()
    tables = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as handle:
                lines = handle.readlines()[1:]
        except OSError:
            continue
        tables += 1
        for line in lines:
            fields = line.split()
            # local address "ADDR:PORT" in hex, state 0A = LISTEN, then the socket's inode
            if len(fields) > 9 and fields[3] == "0A" and \
                    int(fields[1].rsplit(":", 1)[1], 16) == int(port):
                inodes.add(f"socket:[{fields[9]}]")
    if not tables or not pid:
        return None
    if not inodes:
        return False
    try:
        descriptors = os.listdir(f"/proc/{int(pid)}/fd")
    except FileNotFoundError:
        return False
    except OSError:
        return None
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{int(pid)}/fd/{descriptor}") in inodes:
                return True
        except OSError:
            continue
    return False
