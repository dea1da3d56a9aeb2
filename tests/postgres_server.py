"""A throwaway PostgreSQL server for the JDBC catalog tests (tests/integration/catalog,
tests/interop): Debian's PostgreSQL 15 binaries, one server per pytest process (the session
fixture ``postgres_server`` in tests/conftest.py), a fresh database per test.

- The server runs as the ``postgres`` user when the tests run as root (PostgreSQL refuses
  root), through util-linux's ``setpriv``, which also sets the server's parent-death signal to
  SIGQUIT (PostgreSQL's immediate shutdown): a pytest process killed without running its
  finalizers takes its server with it.
- Its files live in a folder of its own, ``mkdtemp`` under the system temp folder (``/tmp``)
  and owned by the server's user, never under pytest's temp folders: those are 0700 and owned
  by root (``--basetemp`` under the repository's .pytest-tmp included), so ``postgres``
  could not enter them.
- It listens on 127.0.0.1 only, on a free port, with password (scram-sha-256) authentication
  for TCP and its Unix socket in its own folder; fsync is off (a test server).
- ``stop`` is ``pg_ctl stop -m immediate``, then the folder is removed; the next start
  removes the folders of test processes that were killed (they hold the pid of their process).

Missing binaries FAIL the test, naming the Debian package (``DBT_PAIMON_PG_BIN`` names another
folder of PostgreSQL binaries)."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import pytest

from tests import server_folders

PG_BIN = os.environ.get("DBT_PAIMON_PG_BIN", "/usr/lib/postgresql/15/bin")
SERVER_USER = "postgres"  # the OS user the server runs as when the tests run as root
USER, PASSWORD = "paimon", "paimon-test-pw"  # the database superuser the tests connect as
START_TIMEOUT = 60
START_ATTEMPTS = 3
FOLDER_PREFIX = "dbt-paimon-pg-"


def _fail(message: str):
    pytest.fail(f"PostgreSQL test server: {message}", pytrace=False)


@dataclass
class PostgresServer:
    root: str  # the server's own folder: data/, the socket, the log
    port: int
    process: subprocess.Popen
    as_server_user: List[str]  # the command prefix that runs a program as the server's user
    databases: List[str] = field(default_factory=list)

    @property
    def data(self) -> str:
        return os.path.join(self.root, "data")

    @property
    def log(self) -> str:
        return os.path.join(self.root, "server.log")

    def jdbc_url(self, database: str) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{database}"

    def catalog(self, database: str, **options) -> Dict[str, str]:
        """The profile's ``catalog:`` mapping for a JDBC catalog in ``database``."""
        return {"type": "jdbc", "uri": self.jdbc_url(database), "jdbc.user": USER,
                "jdbc.password": PASSWORD, **options}

    def connect(self, database: str = "postgres"):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, user=USER,
                                password=PASSWORD, dbname=database)

    def new_database(self, prefix: str = "catalog") -> str:
        """A new empty database (one per test keeps tests apart on the one server)."""
        name = f"{prefix}_{len(self.databases) + 1}"
        connection = self.connect()
        try:
            connection.autocommit = True  # CREATE DATABASE refuses a transaction
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            connection.close()
        self.databases.append(name)
        return name

    def stop(self) -> None:
        """Stop the server at once (pg_ctl stop -m immediate) and remove its folder."""
        try:
            if self.process.poll() is None:
                subprocess.run([*self.as_server_user, f"{PG_BIN}/pg_ctl", "stop", "-D",
                                self.data, "-m", "immediate", "-w", "-t", "30"],
                               capture_output=True, timeout=60)
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.process.kill()  # the backends exit when their postmaster is gone
                    self.process.wait(timeout=30)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start() -> PostgresServer:
    """initdb + a server on a free port of 127.0.0.1; the caller stops it."""
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not os.access(f"{PG_BIN}/{tool}", os.X_OK):
            _fail(f"{PG_BIN}/{tool} is missing: the JDBC catalog tests on PostgreSQL need "
                  f"PostgreSQL 15's server binaries (Debian: apt-get install postgresql-15; "
                  f"or set DBT_PAIMON_PG_BIN to a folder holding initdb, pg_ctl and postgres)")
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        _fail("the psycopg2 driver is missing: pip install 'dbt-paimon[postgres]' (the dev "
              "install has it)")
    as_server_user: List[str] = []
    owner: Optional[pwd.struct_passwd] = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            _fail(f"the tests run as root and there is no `{SERVER_USER}` user to run "
                  f"PostgreSQL as (Debian's postgresql-common package creates it)")
        if shutil.which("setpriv") is None:
            _fail("the tests run as root and util-linux's `setpriv` is missing: it runs "
                  f"PostgreSQL as the `{SERVER_USER}` user")
        as_server_user = ["setpriv", "--reuid", SERVER_USER, "--regid", SERVER_USER,
                          "--clear-groups", "--"]
    with server_folders.server_folder(FOLDER_PREFIX) as root:
        if owner is not None:
            os.chown(root, owner.pw_uid, owner.pw_gid)
        password_file = os.path.join(root, "password")
        with open(password_file, "w") as f:
            f.write(PASSWORD + "\n")
        if owner is not None:
            os.chown(password_file, owner.pw_uid, owner.pw_gid)
        init = subprocess.run(
            [*as_server_user, f"{PG_BIN}/initdb", "-D", os.path.join(root, "data"), "-U", USER,
             f"--pwfile={password_file}", "--auth-local=trust", "--auth-host=scram-sha-256",
             "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"],
            capture_output=True, text=True, timeout=300, cwd=root)
        if init.returncode != 0:
            _fail(f"initdb in {root} failed ({init.returncode}); the folder must be "
                  f"writable by `{SERVER_USER}` and its parents enterable (set TMPDIR to "
                  f"such a folder):\n{init.stderr[-2000:]}")
        server = server_folders.start_on_a_free_port(
            lambda port: _start_server(root, port, as_server_user), START_ATTEMPTS)
        if server is None:
            _fail(f"the server did not start on a free port in {START_ATTEMPTS} tries; its "
                  f"log ({root}/server.log):\n"
                  f"{server_folders.tail(os.path.join(root, 'server.log'))}")
        return server


def _start_server(root: str, port: int, as_server_user: List[str]) -> Optional[PostgresServer]:
    """The server on ``port``, ready; None when the port was taken meanwhile."""
    log_path = os.path.join(root, "server.log")
    if as_server_user:
        prefix = [*as_server_user[:-1], "--pdeathsig", "SIGQUIT", "--"]
    elif shutil.which("setpriv"):
        prefix = ["setpriv", "--pdeathsig", "SIGQUIT", "--"]
    else:
        prefix = []
    command = [*prefix, f"{PG_BIN}/postgres", "-D", os.path.join(root, "data"),
               "-c", "listen_addresses=127.0.0.1", "-c", f"port={port}",
               "-c", f"unix_socket_directories={root}", "-c", "fsync=off",
               "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
               "-c", "max_connections=200", "-c", "shared_buffers=32MB"]
    with open(log_path, "a") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                                   stdin=subprocess.DEVNULL)
    server = PostgresServer(root, port, process, as_server_user)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            if "could not bind" in server_folders.tail(log_path) or "already in use" in server_folders.tail(log_path):
                return None
            _fail(f"the server exited ({process.returncode}) on start; its log:\n"
                  f"{server_folders.tail(log_path)}")
        try:
            server.connect().close()
            return server
        except Exception:  # not accepting connections yet
            time.sleep(0.2)
    server.stop()
    _fail(f"the server did not accept connections within {START_TIMEOUT} s; its log:\n"
          f"{server_folders.tail(log_path)}")
