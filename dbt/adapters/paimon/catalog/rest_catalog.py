"""Paimon's REST catalog: pypaimon's ``RESTCatalog`` with dbt-paimon's places and errors.

A REST catalog server (Paimon's REST catalog API, ``docs/static/rest-catalog-open-api.yaml`` in
Apache Paimon) says which databases and tables exist, creates, alters, renames and drops them,
hands out each table's path and publishes each snapshot (the ``/commit`` endpoint: pypaimon's
``CatalogSnapshotCommit``, under format/commit.py's guard). pypaimon 2.1's ``RESTCatalog``
(pypaimon/catalog/rest/rest_catalog.py) speaks it; this module adds what dbt-paimon needs:

- **one place for the files.** The rest of dbt-paimon finds a table's files at
  ``<warehouse>/<database>.db/<table>`` (Spark's native reads, the registry's snapshot checks),
  the layout Paimon's own servers give tables. The catalog's ``warehouse-path`` (default: the
  profile's ``warehouse``) names that folder or URI; its ``warehouse`` option is the server's
  name of the catalog. A database or
  table the server keeps elsewhere is refused with a message naming both places (and the
  profile's ``warehouse`` that would fit), before anything is written; databases elsewhere are
  not listed, as with the Hive catalog.
- **errors naming the server.** A server that does not answer, refuses the token or does not
  know the catalog's name stops the command with a CatalogUnreachableError naming the URI and
  the option to fix; the token never appears in messages.
"""

from __future__ import annotations

from typing import List, Mapping, Optional, Union

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.api.rest_exception import (ForbiddenException, NoSuchResourceException,
                                         NotAuthorizedException, RESTException)
from pypaimon.catalog.catalog import Catalog
from pypaimon.catalog.catalog_context import CatalogContext
from pypaimon.catalog.catalog_exception import DatabaseNotExistException
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.common.options import Options

from dbt.adapters.paimon.catalog.config import (TOKEN_PROVIDER_KEY, URI_KEY,
                                                WAREHOUSE_KEY, same_location)
from dbt.adapters.paimon.format.errors import CatalogLocationError, CatalogUnreachableError

DB_SUFFIX = Catalog.DB_SUFFIX


def open_rest_catalog(files_root: str, options: Mapping[str, str]) -> "RestCatalog":
    """pypaimon's REST catalog over ``options`` (``metastore: rest``, ``uri``, ``warehouse``:
    the server's catalog name, ``token.provider``, ...) whose tables' files are under
    ``files_root`` (its ``warehouse-path``, or the profile's warehouse). A server that cannot
    be used is a CatalogUnreachableError naming the URI."""
    options = {str(k): str(v) for k, v in options.items()}
    uri = options.get(URI_KEY, "")
    name = options.get(WAREHOUSE_KEY, "")
    try:
        return RestCatalog(CatalogContext.create_from_options(Options(options)), files_root)
    except NotAuthorizedException as exc:
        raise CatalogUnreachableError(
            f"the REST catalog at {uri} refused the credentials of token.provider "
            f"'{options.get(TOKEN_PROVIDER_KEY, '')}' (401 Unauthorized: {_reason(exc)}). Check "
            "the catalog's `token` (or the dlf.* options): it may be wrong or expired.") from None
    except ForbiddenException as exc:
        raise CatalogUnreachableError(
            f"the REST catalog at {uri} does not let these credentials use the catalog "
            f"'{name}' (403 Forbidden: {_reason(exc)}). Check the catalog's `token` and "
            "`warehouse`.") from None
    except NoSuchResourceException as exc:
        raise CatalogUnreachableError(
            f"the REST catalog at {uri} has no catalog named '{name}' (404: {_reason(exc)}). "
            "Check the catalog's `warehouse` option: the catalog's name on the server; or "
            "`uri`, which may not be a Paimon REST catalog server.") from None
    except RESTException as exc:
        raise CatalogUnreachableError(
            f"cannot reach the REST catalog at {uri}: {_reason(exc)}. Check the catalog's "
            "`uri` and that the server runs and answers Paimon's REST catalog API "
            "(GET /v1/config).") from None


def _reason(exc: BaseException) -> str:
    """What went wrong, in one line: the HTTP error's message, or the connection's error."""
    cause = exc.__cause__ or exc.__context__
    text = str(exc)
    if cause is not None and text in ("rest exception", ""):
        return f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}"
    return text.splitlines()[0] if text else type(exc).__name__


class RestCatalog(RESTCatalog):
    """pypaimon's REST catalog whose tables must live at ``<files_root>/<db>.db/<table>`` (see
    the module docstring)."""

    def __init__(self, context: CatalogContext, files_root: str):
        super().__init__(context)
        self.files_root = str(files_root)

    # -- places ------------------------------------------------------------------------------

    def get_database_path(self, name: str) -> str:
        return f"{self.files_root.rstrip('/')}/{name}{DB_SUFFIX}"

    def get_table_path(self, identifier: Identifier) -> str:
        return f"{self.get_database_path(identifier.get_database_name())}/" \
               f"{identifier.get_table_name()}"

    def list_databases(self) -> List[str]:
        """The server's databases whose location is ``<files_root>/<db>.db`` (or that name no
        location); one elsewhere holds tables dbt-paimon cannot place (``get_table`` names it)."""
        names = []
        for name in super().list_databases():
            try:
                location = self._database_location(name)
            except DatabaseNotExistException:  # dropped meanwhile
                continue
            if location is None or same_location(location, self.get_database_path(name)):
                names.append(name)
        return sorted(names)

    def _database_location(self, name: str) -> Optional[str]:
        return self.get_database(name).options.get(Catalog.DB_LOCATION_PROP) or None

    def create_table(self, identifier: Union[str, Identifier], schema, ignore_if_exists: bool
                     ) -> None:
        identifier = _as_identifier(identifier)
        database = identifier.get_database_name()
        location = self._database_location(database)
        if location is not None and not same_location(location, self.get_database_path(database)):
            raise self._elsewhere(f"database {database}", location,
                                  self.get_database_path(database), f"{database}{DB_SUFFIX}")
        super().create_table(identifier, schema, ignore_if_exists)

    def get_table(self, identifier: Union[str, Identifier]):
        identifier = _as_identifier(identifier)
        table = super().get_table(identifier)
        if identifier.is_system_table():
            return table
        expected = self.get_table_path(identifier)
        path = getattr(table, "table_path", None)
        if path is not None and not same_location(path, expected):
            raise self._elsewhere(
                f"table {identifier.get_database_name()}.{identifier.get_table_name()}", path,
                expected,
                f"{identifier.get_database_name()}{DB_SUFFIX}/{identifier.get_table_name()}")
        return table

    def _elsewhere(self, what: str, location: str, expected: str, tail: str
                   ) -> CatalogLocationError:
        root = location.rstrip("/")
        hint = ""
        if root.endswith("/" + tail):
            hint = f" Set the catalog's warehouse-path to {root[:-len(tail) - 1]}."
        return CatalogLocationError(
            f"the REST catalog at {self.context.options.to_map().get(URI_KEY, '')} keeps the "
            f"{what} at {location}, not at {expected} under the catalog's warehouse-path "
            f"(default: the profile's warehouse) {self.files_root}: dbt-paimon reads and writes "
            f"tables at <warehouse>/<database>.db/<table>.{hint}")



def _as_identifier(identifier) -> Identifier:
    return identifier if isinstance(identifier, Identifier) else Identifier.from_string(identifier)

