"""A dbt process over Spark Connect exits at once even when its server has gone first (stopped
with `dbt-paimon server stop`, or by a test process's teardown): pyspark's own exit hook would
retry a clean-up call to the missing server for minutes (environments/connect.py)."""

import os
import socket
import subprocess
import sys
import textwrap
import threading
from urllib.parse import urlparse

from dbt.adapters.paimon.environments.connect_server import CLIENT_MODE_VARIABLES

# join the shared session through the proxy, say so, exit when told
CHILD = textwrap.dedent("""
    import concurrent.futures
    import sys
    from dbt.adapters.paimon.environments import connect_client
    from dbt.adapters.paimon.environments.connect import ConnectEnvironment

    registry = ConnectEnvironment(connect_client.parse_connect_url(sys.argv[1]), sys.argv[2]).start()
    registry.spark.sql("select 1").collect()
    # the query's asynchronous ReleaseExecute calls have reached the server: the server goes
    # after the work is done, as at the end of a dbt command
    concurrent.futures.wait(registry.spark.client._release_futures)
    print("joined", flush=True)
    sys.stdin.readline()
""")


class Proxy:
    """A TCP forwarder to the server that can vanish, as a stopped server does."""

    def __init__(self, port: int):
        self.target = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def vanish(self):
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def test_a_connect_client_exits_at_once_when_its_server_has_gone(connect_server_url,
                                                                 paimon_warehouse):
    proxy = Proxy(urlparse(connect_server_url.replace("sc://", "http://")).port)
    env = {key: value for key, value in os.environ.items() if key not in CLIENT_MODE_VARIABLES}
    child = subprocess.Popen([sys.executable, "-c", CHILD, f"sc://127.0.0.1:{proxy.port}",
                              paimon_warehouse], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "joined", child.stderr.read()
        proxy.vanish()
        # pyspark's hook alone retries for about ten minutes; a closed client skips it
        _, stderr = child.communicate("\n", timeout=60)
        assert child.returncode == 0, stderr
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        proxy.vanish()
