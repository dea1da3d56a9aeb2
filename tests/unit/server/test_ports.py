"""server/ports.py: a listener is found, a closed port is not, and a connection that met itself
(what a connect to a free loopback port of the ephemeral range can make) counts as no listener."""
import socket

from dbt.adapters.paimon.server import ports


def test_a_listening_port_accepts_connections():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert ports.accepts_connections("127.0.0.1", listener.getsockname()[1])
        assert ports.connect_error("127.0.0.1", listener.getsockname()[1]) is None


def test_a_closed_port_does_not_and_says_why():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert not ports.accepts_connections("127.0.0.1", port)
    assert "refused" in ports.connect_error("127.0.0.1", port).lower()


def test_a_connection_that_met_itself_is_no_listener(monkeypatch):
    """On Linux a socket bound to a port and connected to that same port connects to itself,
    as a connect whose kernel-chosen source port is its destination does."""
    def met_itself(address, timeout=None):
        connection = socket.socket()
        # the previous call's connection lingers in TIME_WAIT on the port
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        connection.bind(address)
        connection.connect(address)
        assert connection.getsockname() == connection.getpeername()
        return connection

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(socket, "create_connection", met_itself)
    assert not ports.accepts_connections("127.0.0.1", port)
    assert "met itself" in ports.connect_error("127.0.0.1", port)
