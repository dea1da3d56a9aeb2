"""Whether a server listens on a port: the readiness and liveness checks of the daemon, of
`dbt-paimon server` and of a command watching its server.

A TCP connection from this machine to one of its own ports in the ephemeral range (32768-60999
on Linux), on which nothing listens, can connect to itself: the kernel may pick that very port as
the connection's source, and the two ends then meet (TCP simultaneous open). Taken for a
listener, such a connection would make a stopped server look alive, or a free port look taken;
it is no listener here."""

from __future__ import annotations

import socket
from typing import Optional


def connect_error(host: str, port: int, timeout: float = 1.0) -> Optional[str]:
    """None when something listens at ``host:port``, else why a connection failed."""
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as connection:
            if connection.getsockname() == connection.getpeername():
                return "Connection refused (nothing listens: the connection met itself)"
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def accepts_connections(host: str, port: int, timeout: float = 1.0) -> bool:
    return connect_error(host, port, timeout) is None
