"""A Paimon REST catalog server for the REST catalog tests: the endpoints pypaimon 2.1's
``RESTCatalog`` calls, as Paimon's OpenAPI spec (``docs/static/rest-catalog-open-api.yaml`` in
Apache Paimon) describes them, over local filesystem warehouses. Test code only.

- One server per pytest process (``shared()``): the standard library's ``ThreadingHTTPServer``
  on 127.0.0.1, a port the OS picks, in a daemon thread of the test process; dbt processes the
  tests start reach it over TCP. It stops with the process.
- It serves several catalogs (``add_catalog``): each a name (the client's ``warehouse``, which
  ``GET /v1/config`` turns into the path ``prefix``) and a local folder where its tables live,
  as Paimon's filesystem catalog lays them out (``<folder>/<db>.db/<table>``): pypaimon's
  ``FileSystemCatalog`` keeps the schemas, as the REST server Paimon tests with keeps them in its
  own filesystem catalog. The server hands each table's path to the client, which reads and
  writes the data files there itself.
- Every request needs ``Authorization: Bearer <token>`` (the OpenAPI spec's ``BearerAuth``);
  anything else is a 401 ``ErrorResponse``.
- ``POST .../commit`` publishes the client's snapshot as ``snapshot-<id>`` in the table's
  folder, created only if absent (a hard link of a complete temporary file, so a snapshot is
  never replaced) and then the ``LATEST`` hint, and answers ``{"success": false}`` when that id
  exists; ``GET .../snapshot`` reads the latest one back. Commits and every other change run one
  at a time.
- Endpoints pypaimon calls that dbt-paimon does not need (tags, branches, partitions, views,
  functions, permissions, data tokens) answer 501, which pypaimon reads as not implemented.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlparse

from pypaimon.catalog.catalog_exception import (DatabaseAlreadyExistException,
                                                DatabaseNotExistException,
                                                TableAlreadyExistException,
                                                TableNotExistException)
from pypaimon.catalog.filesystem_catalog import FileSystemCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.common.json_util import JSON
from pypaimon.common.options import Options
from pypaimon.schema import schema_change
from pypaimon.schema.data_types import DataTypeParser
from pypaimon.schema.schema import Schema
from pypaimon.snapshot.snapshot import Snapshot

TOKEN = "dbt-paimon-rest-test-token"


@dataclass
class Catalog:
    name: str
    folder: str
    catalog: FileSystemCatalog


class RestCatalogServer:
    """The server (see the module docstring); ``uri`` is its address."""

    def __init__(self, token: str = TOKEN):
        self.token = token
        self.catalogs: Dict[str, Catalog] = {}
        self.lock = threading.RLock()  # one change at a time
        self.requests = []  # (method, path) of every request, for the tests
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="rest-catalog",
                                       daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add_catalog(self, folder: str, name: Optional[str] = None) -> str:
        """A new catalog whose tables live in ``folder``; returns its name."""
        name = name or f"catalog_{uuid.uuid4().hex[:8]}"
        os.makedirs(folder, exist_ok=True)
        fs = FileSystemCatalog(Options({"warehouse": folder}))
        with self.lock:
            self.catalogs[name] = Catalog(name, folder, fs)
        return name

    def options(self, name: str, token: Optional[str] = None) -> Dict[str, str]:
        """A profile's ``catalog:`` for catalog ``name``."""
        return {"type": "rest", "uri": self.uri, "warehouse": name, "token.provider": "bear",
                "token": token or self.token}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


_shared: Optional[RestCatalogServer] = None
_shared_lock = threading.Lock()


def shared() -> RestCatalogServer:
    """This test process's server, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = RestCatalogServer()
        return _shared


class _Error(Exception):
    def __init__(self, code: int, message: str, resource_type: Optional[str] = None,
                 resource_name: Optional[str] = None):
        super().__init__(message)
        self.body = {"message": message, "resourceType": resource_type,
                     "resourceName": resource_name, "code": code}
        self.code = code


_ROUTES = [  # (method, path under /v1/{prefix}, handler name)
    ("GET", r"/databases", "list_databases"),
    ("POST", r"/databases", "create_database"),
    ("GET", r"/databases/(?P<db>[^/]+)", "get_database"),
    ("DELETE", r"/databases/(?P<db>[^/]+)", "drop_database"),
    ("POST", r"/databases/(?P<db>[^/]+)", "alter_database"),
    ("GET", r"/databases/(?P<db>[^/]+)/tables", "list_tables"),
    ("POST", r"/databases/(?P<db>[^/]+)/tables", "create_table"),
    ("GET", r"/databases/(?P<db>[^/]+)/tables/(?P<table>[^/]+)", "get_table"),
    ("POST", r"/databases/(?P<db>[^/]+)/tables/(?P<table>[^/]+)", "alter_table"),
    ("DELETE", r"/databases/(?P<db>[^/]+)/tables/(?P<table>[^/]+)", "drop_table"),
    ("POST", r"/tables/rename", "rename_table"),
    ("POST", r"/databases/(?P<db>[^/]+)/tables/(?P<table>[^/]+)/commit", "commit_table"),
    ("GET", r"/databases/(?P<db>[^/]+)/tables/(?P<table>[^/]+)/snapshot", "table_snapshot"),
]


class _Handler(BaseHTTPRequestHandler):
    server_state: RestCatalogServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - quiet: the tests' output stays dbt's
        pass

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_DELETE(self):
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        state = self.server_state
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        state.requests.append((method, url.path))
        try:
            if self.headers.get("Authorization") != f"Bearer {state.token}":
                raise _Error(401, "Not authorized: a valid bearer token is required")
            body = json.loads(raw) if raw else {}
            self._reply(200, self._dispatch(method, url.path, parse_qs(url.query), body))
        except _Error as exc:
            self._reply(exc.code, exc.body)
        except Exception as exc:  # noqa: BLE001 - the client gets the server's error
            self._reply(500, {"message": f"{type(exc).__name__}: {exc}", "code": 500})

    def _reply(self, code: int, body: Optional[Any]) -> None:
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str, path: str, query: Dict, body: Dict) -> Optional[Dict]:
        state = self.server_state
        if path == "/v1/config" and method == "GET":
            name = unquote(query.get("warehouse", [""])[0])
            if name not in state.catalogs:
                raise _Error(404, f"no catalog named {name!r} on this server", "UNKNOWN", name)
            return {"defaults": {"prefix": name}, "overrides": {}}
        match = re.match(r"^/v1/(?P<prefix>[^/]+)(?P<rest>/.*)$", path)
        if not match:
            raise _Error(501, f"{method} {path} is not implemented by this server")
        catalog = state.catalogs.get(unquote(match.group("prefix")))
        if catalog is None:
            raise _Error(404, f"no catalog {match.group('prefix')!r}", "UNKNOWN")
        for route_method, pattern, name in _ROUTES:
            found = re.fullmatch(pattern, match.group("rest"))
            if route_method == method and found:
                args = {k: unquote(v) for k, v in found.groupdict().items()}
                with state.lock:
                    return getattr(_Endpoints(catalog), name)(body=body, **args)
        raise _Error(501, f"{method} {path} is not implemented by this server")


class _Endpoints:
    """The endpoints over one catalog: the OpenAPI spec's request and response objects."""

    def __init__(self, catalog: Catalog):
        self.fs = catalog.catalog

    # -- databases ---------------------------------------------------------------------------

    def list_databases(self, body) -> Dict:
        return {"databases": sorted(self.fs.list_databases()), "nextPageToken": None}

    def create_database(self, body) -> None:
        try:
            self.fs.create_database(body["name"], ignore_if_exists=False)
        except DatabaseAlreadyExistException:
            raise _Error(409, f"database {body['name']} exists", "DATABASE", body["name"])

    def get_database(self, body, db) -> Dict:
        self._database(db)
        return {"id": db, "name": db, "location": self.fs.get_database_path(db), "options": {}}

    def drop_database(self, body, db) -> None:
        self._database(db)
        self.fs.drop_database(db, ignore_if_not_exists=False, cascade=True)

    def alter_database(self, body, db) -> Dict:
        self._database(db)
        return {"removed": [], "updated": [], "missing": list(body.get("removals") or []) +
                list((body.get("updates") or {}).keys())}

    def _database(self, db: str) -> None:
        try:
            self.fs.get_database(db)
        except DatabaseNotExistException:
            raise _Error(404, f"database {db} does not exist", "DATABASE", db)

    # -- tables ------------------------------------------------------------------------------

    def list_tables(self, body, db) -> Dict:
        self._database(db)
        return {"tables": self.fs.list_tables(db), "nextPageToken": None}

    def create_table(self, body, db) -> None:
        self._database(db)
        name = body["identifier"]["object"]
        schema = JSON.from_json(json.dumps(body["schema"]), Schema)
        try:
            self.fs.create_table(Identifier.create(db, name), schema, ignore_if_exists=False)
        except TableAlreadyExistException:
            raise _Error(409, f"table {db}.{name} exists", "TABLE", name)

    def get_table(self, body, db, table) -> Dict:
        identifier, loaded = self._table(db, table)
        schema = loaded.table_schema
        return {"id": self._table_id(loaded), "name": identifier.get_table_name(),
                "path": loaded.table_path, "isExternal": False, "schemaId": schema.id,
                "schema": json.loads(JSON.to_json(schema.to_schema()))}

    def alter_table(self, body, db, table) -> None:
        identifier, _ = self._table(db, table)
        changes = [_schema_change(change) for change in body.get("changes") or []]
        try:
            self.fs.alter_table(identifier, changes)
        except RuntimeError as exc:
            raise _Error(400, str(exc), "TABLE", table)

    def drop_table(self, body, db, table) -> None:
        identifier, _ = self._table(db, table)
        self.fs.drop_table(identifier)

    def rename_table(self, body) -> None:
        source, target = body["source"], body["destination"]
        source_id, _ = self._table(source["database"], source["object"])
        self._database(target["database"])
        try:
            self.fs.rename_table(source_id, Identifier.create(target["database"],
                                                              target["object"]))
        except TableAlreadyExistException:
            raise _Error(409, f"table {target['database']}.{target['object']} exists", "TABLE",
                         target["object"])

    def commit_table(self, body, db, table) -> Dict:
        _, loaded = self._table(db, table)
        table_id = body.get("tableId")
        if table_id is not None and table_id != self._table_id(loaded):
            raise _Error(404, f"table {db}.{table} was replaced since it was loaded", "TABLE",
                         table)
        snapshot = JSON.from_json(json.dumps(body["snapshot"]), Snapshot)
        manager = loaded.snapshot_manager()
        return {"success": _publish(manager, snapshot)}

    def table_snapshot(self, body, db, table) -> Dict:
        _, loaded = self._table(db, table)
        latest = loaded.snapshot_manager().get_latest_snapshot()
        if latest is None:
            raise _Error(404, f"table {db}.{table} has no snapshot", "SNAPSHOT", "latest")
        snapshot = json.loads(JSON.to_json(latest))
        return {"snapshot": {"snapshot": snapshot, "recordCount": latest.total_record_count or 0,
                             "fileSizeInBytes": 0, "fileCount": 0,
                             "lastFileCreationTime": latest.time_millis}}

    def _table(self, db: str, table: str) -> Tuple[Identifier, Any]:
        self._database(db)
        identifier = Identifier.from_string(f"{db}.{table}")
        try:
            return identifier, self.fs.get_table(identifier)
        except TableNotExistException:
            raise _Error(404, f"table {db}.{table} does not exist", "TABLE", table)

    @staticmethod
    def _table_id(table) -> str:
        """Stable while the table lives; another table at the same place gets another id."""
        first = os.path.join(table.table_path, "schema", "schema-0")
        stamp = os.stat(first).st_mtime_ns if os.path.exists(first) else 0
        return hashlib.sha1(f"{table.table_path}:{stamp}".encode()).hexdigest()


def _publish(manager, snapshot: Snapshot) -> bool:
    """``snapshot-<id>`` created only if absent (see the module docstring), then ``LATEST``."""
    target = manager.file_io.to_filesystem_path(manager.get_snapshot_path(snapshot.id))
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    temporary = os.path.join(folder, f".{os.path.basename(target)}.{uuid.uuid4()}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(JSON.to_json(snapshot, indent=2))
    try:
        os.link(temporary, target)
    except FileExistsError:
        return False
    finally:
        os.unlink(temporary)
    latest = manager.file_io.to_filesystem_path(manager.latest_file)
    hint = f"{latest}.{uuid.uuid4()}.tmp"
    with open(hint, "w", encoding="utf-8") as out:
        out.write(str(snapshot.id))
    os.replace(hint, latest)
    return True


_CHANGES = {cls.__dataclass_fields__["action"].default: cls
            for cls in vars(schema_change).values()
            if isinstance(cls, type) and issubclass(cls, schema_change.SchemaChange)
            and "action" in getattr(cls, "__dataclass_fields__", {})}


def _schema_change(change: Dict) -> schema_change.SchemaChange:
    """A SchemaChange of the OpenAPI spec (``action`` names its kind) as pypaimon's object."""
    kind = _CHANGES.get(change.get("action"))
    if kind is None:
        raise _Error(400, f"unknown schema change {change.get('action')!r}")
    parsed = JSON.from_json(json.dumps(change), kind)
    for attribute in ("data_type", "new_data_type"):
        value = getattr(parsed, attribute, None)
        if isinstance(value, (str, dict)):
            setattr(parsed, attribute, DataTypeParser.parse_data_type(value))
    move = getattr(parsed, "move", None)
    if isinstance(move, dict):
        parsed.move = JSON.from_json(json.dumps(move), schema_change.Move)
    return parsed
