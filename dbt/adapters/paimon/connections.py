"""Connections of a ``type: paimon`` target: statements run in this process's Spark session
(embedded, or a Spark Connect session with method connect)."""

from __future__ import annotations

import datetime as dt
import re
from contextlib import contextmanager
from typing import Any, Dict, Generator, List, Optional, Tuple

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionWrapper
from dbt.adapters.spark.session import Cursor
from dbt.adapters.exceptions import FailedToConnectError
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id
from pyspark.sql import SparkSession

from dbt.adapters.paimon import environments, error_messages, job_labels
from dbt.adapters.paimon.branch_config import default_branch
from dbt.adapters.paimon.catalog.config import CatalogRoute
from dbt.adapters.paimon.environments import connect_client, early_start, spark_logs
from dbt.adapters.paimon.environments.base import MetastoreTakenError

logger = AdapterLogger("Paimon")
# `[/* query comment */] insert into|overwrite [table] <db>.<table>`: a Paimon table's catalog
# entry is a view, which Spark refuses to insert into (datasource/registry.py)
_INSERT = re.compile(
    r"^((?:\s*/\*.*?\*/)*\s*insert\s+(?:into|overwrite)\s+(?:table\s+)?)"
    r"(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*\.\s*(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)",
    re.IGNORECASE | re.DOTALL)


def paimon_insert_target(sql: str) -> Optional[str]:
    """``sql`` with its INSERT target replaced by the Paimon table's write table, or None when
    it is no INSERT into a Paimon table."""
    match = _INSERT.match(sql)
    if match is None:
        return None
    database, table = (part.strip("`").lower() for part in match.group(2, 3))
    target = environments.current_registry().sql_write_target(database, table)
    if target is None:
        return None
    return match.group(1) + target + sql[match.end():]


class SessionCursor(Cursor):
    """dbt-spark's session cursor, on our session, with bindings as Spark SQL parameters.

    dbt-spark formats bindings into the SQL text with neither quote escaping nor NULLs (seeds
    with quotes fail); Spark's positional parameters (``?``) need neither.
    """

    def __init__(self, spark: SparkSession):
        super().__init__()
        self._spark = spark

    def execute(self, sql: str, *parameters: Any) -> None:
        if parameters:
            self._df = self._spark.sql(sql, args=[spark_parameter(p) for p in parameters])
        else:
            self._df = self._spark.sql(sql)
        self._rows = None


def spark_parameter(value: Any) -> Any:
    """A binding as Spark should see it.

    Naive datetimes and dates go as text for the SQL's ``cast(? as timestamp)``: PySpark would
    turn a naive datetime into an instant through the *Python process's* local time zone, while
    Spark reads timestamps in the session time zone, so seeds would shift by the UTC offset.
    """
    if isinstance(value, (dt.datetime, dt.date)) and getattr(value, "tzinfo", None) is None:
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return value


class SessionConnection(SparkConnectionWrapper):
    def __init__(self, spark: SparkSession):
        self.spark = spark
        self._cursor: Optional[SessionCursor] = None

    def cursor(self) -> "SessionConnection":
        # this thread may be new to the JVM; the entries are brought up to date by execute()
        environments.current_registry().activate(refresh=False)
        self._cursor = SessionCursor(self.spark)
        return self

    def execute(self, sql: str, bindings: Optional[List[Any]] = None) -> None:
        sql = sql.strip()
        if sql.endswith(";"):
            sql = sql[:-1]
        assert self._cursor, "Cursor not available"
        environments.current_registry().activate(sql)
        sql = paimon_insert_target(sql) or sql
        self._cursor.execute(sql, *(bindings or []))

    def fetchall(self):
        assert self._cursor, "Cursor not available"
        return self._cursor.fetchall()

    def fetchone(self):
        assert self._cursor, "Cursor not available"
        return self._cursor.fetchone()

    @property
    def description(self):
        assert self._cursor, "Cursor not available"
        return self._cursor.description

    def cancel(self) -> None:
        logger.debug("NotImplemented: cancel")

    def close(self) -> None:
        if self._cursor:
            self._cursor.close()

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("NotImplemented: rollback")


class PaimonConnectionManager(SparkConnectionManager):
    TYPE = "paimon"

    def __init__(self, profile, mp_context) -> None:
        super().__init__(profile, mp_context)
        # the branches this invocation reads and writes (branch_config.py): the default
        # (`--vars '{paimon_branch: audit}'` or the profile's `branch`) and the tables whose
        # node config names one (set by the adapter from the manifest). The process's registry
        # may serve several invocations (dbt's programmatic runner), so each one's connection
        # manager sets them before each statement
        self.paimon_branch = default_branch(profile)
        self.paimon_table_branches: Dict[Tuple[str, str], Optional[str]] = {}
        # the schemas whose nodes name a catalogs.yml catalog (catalog_integrations.py), set
        # by the adapter from the manifest like the branches
        self.paimon_catalog_routes: Dict[str, CatalogRoute] = {}

    def use_branch(self) -> None:
        """Apply this invocation's catalogs and branches to the process's registry."""
        try:
            registry = environments.current_registry()
        except RuntimeError:  # not started yet: nothing to set
            return
        registry.use_catalogs(self.paimon_catalog_routes)
        registry.use_branches(self.paimon_branch, self.paimon_table_branches)

    @contextmanager
    def exception_handler(self, sql: str) -> Generator[None, None, None]:
        self.use_branch()
        try:
            yield
        except DbtRuntimeError:
            raise
        except Exception as exc:
            logger.debug(f"Error while running:\n{sql}")
            raise DbtRuntimeError(error_messages.spark_failure(exc)) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        creds = connection.credentials
        if creds.spark_state_dir is None:
            creds.resolve_paths(None)
        if creds.is_connect:
            if creds.spark_state_dir is not None:
                # before connecting: what the client logs while it connects goes there too
                spark_logs.use_log_file(spark_logs.log_path(creds.spark_state_dir), connect=True)
        try:
            early_start.wait()  # a start begun while dbt parsed (impl.py), or its failure
            registry = environments.create(creds).start()
        except (connect_client.ConnectSetupError, MetastoreTakenError) as exc:
            raise FailedToConnectError(str(exc)) from None
        if creds.is_connect and creds.warehouse is None:  # the server's: the profile names none
            creds.warehouse = registry.warehouse
            creds.resolve_paths(None)
            spark_logs.use_log_file(spark_logs.log_path(creds.spark_state_dir), connect=True)
        registry.on_activate = job_labels.apply
        registry.sync_once(get_invocation_id())
        environments.warm_up_python_workers_once()
        # the refresh here also brings up to date, before the invocation ends, the entries of
        # the tables its last nodes wrote: the next invocation's sync then finds nothing
        # changed and dbt's relation cache takes its listing (tests/connect/test_session_reuse)
        connection.handle = SessionConnection(registry.activate())
        connection.state = ConnectionState.OPEN
        return connection
