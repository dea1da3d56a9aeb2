"""Paimon's JDBC catalog: pypaimon's, with what pypaimon 2.1 leaves out of it.

pypaimon's ``JdbcCatalog`` (pypaimon/catalog/jdbc_catalog.py) keeps the same three tables as
Paimon Java's (``paimon_tables``, ``paimon_database_properties``, and its own
``paimon_table_properties``), so Java and we see the same tables. What it lacks:

- **the catalog lock.** Java's ``JdbcCatalog`` (paimon-core org/apache/paimon/jdbc/, release
  1.0) takes ``JdbcCatalogLock`` around creating a table's schema, altering it and publishing
  each snapshot (``RenamingSnapshotCommit``: the ``snapshot-<id>`` existence check and write)
  when ``lock.enabled`` is true, or when it is unset and the warehouse is an object store
  (commits here hold it a little longer: format/commit.py ``_run``).
  The lock is a row of ``paimon_distributed_locks`` keyed ``<catalog-key>.<database>.<table>``:
  inserted to take it (the primary key refuses a second holder), deleted to release it, and
  deleted by the next taker once older than its ``expire_time_seconds`` (the acquire timeout).
  ``CatalogLock`` here is that protocol, the same SQL per database (Java's
  ``SqlLiteDistributedLockDialect``, ``MysqlDistributedLockDialect``, and the later
  ``PostgresqlDistributedLockDialect``), so a Java writer and a dbt run exclude each other.
- **a snapshot loader that stays out of the way.** A table from pypaimon's JDBC catalog asks a
  new catalog instance (a new database connection) for its latest snapshot on every look-up,
  which the JDBC catalog then refuses (``load_snapshot`` is not implemented) before the
  snapshot files are read. Tables opened here read the snapshot files directly
  (catalog/catalogs.py ``FileSnapshotsEnvironment``).
"""

from __future__ import annotations

import time
from contextlib import closing, contextmanager, nullcontext
from typing import ContextManager, Dict, Iterator, Mapping

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.catalog.catalog_context import CatalogContext
from pypaimon.catalog.jdbc_catalog import JdbcCatalog, _DbApiConnection
from pypaimon.common.identifier import Identifier
from pypaimon.common.options import Options

from dbt.adapters.paimon.catalog.catalogs import FileSnapshotsEnvironment, lock_enabled
from dbt.adapters.paimon.catalog.config import (CATALOG_KEY_KEY, DEFAULT_CATALOG_KEY,
                                                DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS,
                                                DEFAULT_LOCK_CHECK_MAX_SLEEP_MS,
                                                DEFAULT_LOCK_KEY_MAX_LENGTH,
                                                LOCK_ACQUIRE_TIMEOUT_KEY,
                                                LOCK_CHECK_MAX_SLEEP_KEY,
                                                LOCK_KEY_MAX_LENGTH_KEY, URI_KEY,
                                                duration_millis, redact_uri)
from dbt.adapters.paimon.format.errors import (CatalogLockTimeout, CatalogUnreachableError,
                                               PaimonFormatError)

LOCKS_TABLE = "paimon_distributed_locks"


def open_jdbc_catalog(options: Dict[str, str]) -> "LockingJdbcCatalog":
    """pypaimon's JDBC catalog over ``options`` (``warehouse`` and ``uri`` set); a database that
    cannot be opened is a CatalogUnreachableError naming the URI."""
    try:
        return LockingJdbcCatalog(CatalogContext.create_from_options(Options(options)))
    except ImportError as exc:  # pypaimon names the missing driver
        raise CatalogUnreachableError(
            f"cannot open the JDBC catalog {redact_uri(options.get(URI_KEY, ''))}: {exc}") from exc
    except Exception as exc:
        if _is_database_error(exc):
            raise CatalogUnreachableError(
                f"cannot open the JDBC catalog {redact_uri(options.get(URI_KEY, ''))}: "
                f"{type(exc).__name__}: {exc}. Check the profile's catalog uri (for SQLite: "
                "the file's folder must exist and be writable; for a server: that it runs and "
                "accepts these credentials).") from exc
        raise


def _is_database_error(exc: BaseException) -> bool:
    """A DB-API error of any driver (they all derive from their module's ``Error``)."""
    return any(cls.__name__ in ("Error", "OperationalError", "DatabaseError", "InterfaceError")
               for cls in type(exc).__mro__)


class LockingJdbcCatalog(JdbcCatalog):
    """pypaimon's JDBC catalog, taking the catalog lock where Java's does (schema creation and
    changes; commits take it through their table's ``FileSnapshotsEnvironment``,
    catalog/catalogs.py) and giving tables that read snapshots from their files."""

    def get_table(self, identifier):
        table = super().get_table(identifier)
        env = table.catalog_environment
        table.catalog_environment = FileSnapshotsEnvironment(
            env.identifier, env.uuid, env.catalog_loader, env.supports_version_management,
            getattr(env, "rest_table_response", None))
        return table

    def create_table(self, identifier, schema, ignore_if_exists: bool) -> None:
        identifier = _as_identifier(identifier)
        with self.lock(identifier):
            super().create_table(identifier, schema, ignore_if_exists)

    def alter_table(self, identifier, changes, ignore_if_not_exists: bool = False) -> None:
        identifier = _as_identifier(identifier)
        with self.lock(identifier):
            super().alter_table(identifier, changes, ignore_if_not_exists)

    def lock(self, identifier: Identifier) -> ContextManager[None]:
        """The catalog lock of the table when the catalog locks, else no lock."""
        if not lock_enabled(self.options, self.warehouse):
            return nullcontext()
        return CatalogLock(self.options).hold(identifier.get_database_name(),
                                              identifier.get_object_name())


def _as_identifier(identifier) -> Identifier:
    return identifier if isinstance(identifier, Identifier) else Identifier.from_string(identifier)


class CatalogLock:
    """Java's ``JdbcCatalogLock`` over the catalog's database (see the module docstring)."""

    def __init__(self, options: Mapping[str, str]):
        self.options = dict(options)
        self.catalog_key = self.options.get(CATALOG_KEY_KEY, DEFAULT_CATALOG_KEY)
        self.check_max_sleep_ms = _millis(self.options, LOCK_CHECK_MAX_SLEEP_KEY,
                                          DEFAULT_LOCK_CHECK_MAX_SLEEP_MS)
        self.acquire_timeout_ms = _millis(self.options, LOCK_ACQUIRE_TIMEOUT_KEY,
                                          DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS)
        self.key_max_length = int(self.options.get(LOCK_KEY_MAX_LENGTH_KEY,
                                                   DEFAULT_LOCK_KEY_MAX_LENGTH))

    @contextmanager
    def hold(self, database: str, table: str) -> Iterator[None]:
        lock_id = f"{self.catalog_key}.{database}.{table}"
        with closing(_DbApiConnection(self.options)) as connection:
            dialect = _DIALECTS.get(connection.protocol)
            if dialect is None:
                raise PaimonFormatError(f"the JDBC catalog lock is not available on "
                                        f"{connection.protocol}; set lock.enabled: false")
            self._create_table(connection)
            self._acquire(connection, dialect, lock_id)
            try:
                yield
            finally:
                with connection.transaction():
                    connection.execute(f"DELETE FROM {LOCKS_TABLE} WHERE lock_id = ?", (lock_id,))

    def _create_table(self, connection) -> None:
        with connection.transaction():
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {LOCKS_TABLE} ("
                f"lock_id VARCHAR({self.key_max_length}) NOT NULL,"
                "acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,"
                "expire_time_seconds BIGINT DEFAULT 0 NOT NULL,"
                "PRIMARY KEY (lock_id))")

    def _try_acquire(self, connection, dialect: "_LockDialect", lock_id: str) -> bool:
        with connection.transaction():  # a lock older than its expiry is left by a dead holder
            connection.execute(
                f"DELETE FROM {LOCKS_TABLE} WHERE {dialect.age_seconds} > expire_time_seconds "
                "AND lock_id = ?", (lock_id,))
        try:
            with connection.transaction():
                return connection.execute(
                    f"INSERT INTO {LOCKS_TABLE} (lock_id, expire_time_seconds) VALUES (?, ?)",
                    (lock_id, self.acquire_timeout_ms // 1000)) > 0
        except Exception as exc:
            if _is_database_error(exc):  # the key is taken (or the database refused)
                return False
            raise

    def _acquire(self, connection, dialect: "_LockDialect", lock_id: str) -> None:
        # JdbcCatalogLock.lock: retry with a doubling sleep, capped, until the timeout
        start = time.monotonic()
        sleep_ms = 50
        while not self._try_acquire(connection, dialect, lock_id):
            waited_ms = (time.monotonic() - start) * 1000
            if waited_ms > self.acquire_timeout_ms:
                raise CatalogLockTimeout(
                    f"could not take the JDBC catalog lock {lock_id!r} within "
                    f"{self.acquire_timeout_ms} ms (another writer holds it; a holder that "
                    f"died releases it after {self.acquire_timeout_ms // 1000} s). Raise "
                    f"{LOCK_ACQUIRE_TIMEOUT_KEY} or look for the writer holding it in "
                    f"{LOCKS_TABLE}.")
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
            time.sleep(sleep_ms / 1000)


class _LockDialect:
    def __init__(self, age_seconds: str):
        # SQL: seconds since the lock row's acquired_at
        self.age_seconds = age_seconds


_DIALECTS = {
    "sqlite": _LockDialect("strftime('%s', 'now') - strftime('%s', acquired_at)"),
    "mysql": _LockDialect("TIMESTAMPDIFF(SECOND, acquired_at, NOW())"),
    "postgresql": _LockDialect("EXTRACT(EPOCH FROM AGE(NOW(), acquired_at))"),
}


def _millis(options: Mapping[str, str], key: str, default: int) -> int:
    return duration_millis(options[key], key) if key in options else default
