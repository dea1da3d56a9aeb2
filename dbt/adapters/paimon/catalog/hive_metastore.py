"""A Hive Metastore over Thrift: the connection and the table lock Paimon's Hive catalog uses.

The client is ``hmsclient`` (PyPI, the ``[hive]`` extra): the metastore's Thrift interface
generated for Hive 2.x by Thrift 0.11, on the ``thrift`` runtime (here 0.25 on Python 3.11).
Only its generated code is used (``ThriftHiveMetastore.Client`` and the types), not its
``HMSClient`` wrapper, which reads host and port from environment variables. It is old (2018),
but the calls used here (``get_database``, ``get_table``, ``get_table_objects_by_name``,
``create_table``, ``alter_table_with_environment_context``, ``drop_table``, ``lock``,
``check_lock``, ``unlock``) are in the interface of Hive 2.3 and 3.x metastores alike, and
fields a later interface added are optional: each side skips what it does not know. Tested
against a Hive Metastore 2.3.10 server.

The lock is Paimon's ``HiveCatalogLock`` (paimon-hive-catalog org/apache/paimon/hive/
HiveCatalogLock.java, release 1.0): an EXCLUSIVE, TABLE-level lock on ``<db>.<table>`` without
a transaction and without an operation type, then ``check_lock`` with a doubling sleep (from
100 ms, capped at ``lock-check-max-sleep``) until it is ACQUIRED or ``lock-acquire-timeout``
has passed; a lock still WAITING then is given back. A Java or Flink writer committing to the
same table through Paimon's Hive catalog with ``lock.enabled`` takes the same lock, so the two
exclude each other.
"""

from __future__ import annotations

import getpass
import logging
import socket
import time
from contextlib import contextmanager
from typing import Iterator, List, Mapping

from dbt.adapters.paimon.catalog.config import (DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS,
                                                DEFAULT_LOCK_CHECK_MAX_SLEEP_MS,
                                                LOCK_ACQUIRE_TIMEOUT_KEY,
                                                LOCK_CHECK_MAX_SLEEP_KEY,
                                                duration_millis,
                                                hive_metastore_addresses)
from dbt.adapters.paimon.format.errors import CatalogLockTimeout, CatalogUnreachableError

# a metastore call that takes longer than this is a metastore that does not answer (Hive's
# own client waits 600 s by default; DDL and lock calls return at once, a lock that must
# wait answers WAITING)
SOCKET_TIMEOUT_MS = 60_000
# thrift logs every failed connection attempt at ERROR on the root logger's stderr; the error
# raised here says it once, with the fix
logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)


def thrift_api():
    """hmsclient's generated ``(ThriftHiveMetastore, ttypes)``; a clear error without it."""
    try:
        from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore, ttypes
    except ImportError as exc:
        raise CatalogUnreachableError(
            "the Hive catalog needs the Hive Metastore client: pip install "
            f"\"dbt-paimon[hive]\" (it adds hmsclient and thrift). ({exc})") from exc
    return ThriftHiveMetastore, ttypes


class MetastoreConnection:
    """One open Thrift connection to the first metastore of ``uri`` that answers.

    ``client`` is the generated ``ThriftHiveMetastore.Client``; ``close`` ends the connection
    (a lock taken through it is not tied to it: the metastore keys locks by id)."""

    def __init__(self, uri: str):
        ThriftHiveMetastore, _ = thrift_api()
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        self.uri = uri
        failures: List[str] = []
        for host, port in hive_metastore_addresses(uri):
            sock = TSocket.TSocket(host, port)
            sock.setTimeout(SOCKET_TIMEOUT_MS)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except TTransport.TTransportException as exc:
                failures.append(f"{host}:{port}: {exc}")
                continue
            self._transport = transport
            self.client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
            return
        raise CatalogUnreachableError(
            f"cannot reach the Hive Metastore {uri} ({'; '.join(failures)}). Check the profile's "
            "catalog uri (thrift://host:port of a running metastore, usually port 9083), that "
            "the metastore runs (hive --service metastore) and that this machine reaches it.")

    def close(self) -> None:
        self._transport.close()


class MetastoreLock:
    """Paimon's ``HiveCatalogLock`` (see the module docstring)."""

    def __init__(self, uri: str, options: Mapping[str, str]):
        self.uri = uri
        self.check_max_sleep_ms = _millis(options, LOCK_CHECK_MAX_SLEEP_KEY,
                                          DEFAULT_LOCK_CHECK_MAX_SLEEP_MS)
        self.acquire_timeout_ms = _millis(options, LOCK_ACQUIRE_TIMEOUT_KEY,
                                          DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS)

    @contextmanager
    def hold(self, database: str, table: str) -> Iterator[int]:
        """The table's lock for the block; yields the metastore's lock id."""
        connection = MetastoreConnection(self.uri)
        try:
            lock_id = self._acquire(connection.client, database, table)
            try:
                yield lock_id
            finally:
                connection.client.unlock(thrift_api()[1].UnlockRequest(lockid=lock_id))
        finally:
            connection.close()

    def _acquire(self, client, database: str, table: str) -> int:
        _, ttypes = thrift_api()
        # LockComponent without operationType: HiveCatalogLock unsets it (a metastore then
        # takes it as a lock outside any transaction)
        component = ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE,
                                         level=ttypes.LockLevel.TABLE,
                                         dbname=database, tablename=table)
        response = client.lock(ttypes.LockRequest(component=[component], user=metastore_user(),
                                                  hostname=socket.gethostname()))
        sleep_ms = 50
        start = time.monotonic()
        while response.state == ttypes.LockState.WAITING:
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
            time.sleep(sleep_ms / 1000)
            response = client.check_lock(ttypes.CheckLockRequest(lockid=response.lockid))
            if (time.monotonic() - start) * 1000 > self.acquire_timeout_ms:
                break
        if response.state != ttypes.LockState.ACQUIRED:
            if response.state == ttypes.LockState.WAITING:
                client.unlock(ttypes.UnlockRequest(lockid=response.lockid))
            state = ttypes.LockState._VALUES_TO_NAMES.get(response.state, response.state)
            raise CatalogLockTimeout(
                f"could not take the Hive Metastore lock of table {database}.{table} within "
                f"{self.acquire_timeout_ms} ms (state {state}: another writer holds it). Raise "
                f"{LOCK_ACQUIRE_TIMEOUT_KEY}, or find the holder with SHOW LOCKS in Hive.")
        return response.lockid


def metastore_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers; Java's user.name is never empty
        return "dbt-paimon"


def _millis(options: Mapping[str, str], key: str, default: int) -> int:
    return duration_millis(options[key], key) if key in options else default
