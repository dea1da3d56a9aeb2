"""server/processes.py: whether a recorded process runs, and whether it is the one listening on
a port."""
import os
import socket
import subprocess
import sys

from dbt.adapters.paimon.server.processes import alive, listens_on


def test_the_listener_of_a_port_is_told_from_other_processes():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert listens_on(os.getpid(), port) is True
        assert listens_on(other.pid, port) is False
        listener.close()
        assert listens_on(os.getpid(), port) is False  # nothing listens on it any more
    finally:
        other.kill()
        other.wait()
    assert listens_on(other.pid, port) is False  # a process that is gone
    assert not alive(other.pid)


def test_a_connected_socket_is_not_a_listener():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    try:
        other_end = listener.accept()[0]
        listener.close()
        assert listens_on(os.getpid(), port) is False
        other_end.close()
    finally:
        client.close()
