"""dbt catalog integrations (``catalogs.yml``) for Paimon catalogs, and which catalog holds
each of the project's databases.

A ``catalogs.yml`` entry names a Paimon catalog kind and its options, with Paimon's own option
names (the profile's ``catalog:`` takes the same: catalog/config.py)::

    catalogs:                               # dbt's v1 form
      - name: shop_hive
        write_integrations:
          - name: shop_hive_metastore
            catalog_type: hive              # filesystem | jdbc | hive | rest
            adapter_properties: {uri: "thrift://metastore:9083", warehouse: /data/warehouse}

or, with the project flag ``use_catalogs_v2: true``, dbt's v2 form (``type: hive``,
``table_format: default``, the options under ``config: {paimon: {...}}``). A model, seed,
snapshot or source whose config sets ``catalog_name: shop_hive`` lives in that catalog, every
other one in the profile's (``catalog:``, the warehouse's folders by default).

Spark names a table ``<schema>.<table>``, without a catalog, so a schema belongs to one catalog
in a project: the nodes of one schema that name two catalogs are refused (catalog_routes).
The profile's file-system options (``catalog_options``: fs.s3.*, ...) apply to every catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, Mapping, Optional, Tuple

from dbt.adapters.catalogs import CatalogIntegration, CatalogIntegrationConfig
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon.catalog.config import (FILESYSTEM, HIVE, JDBC, REST,
                                                CatalogConfigError, CatalogRoute,
                                                PaimonCatalog, parse_catalog)
from dbt.adapters.paimon.environments.locations import resolved_warehouse

CATALOG_NAME_CONFIG = "catalog_name"  # dbt's model config (dbt.adapters.catalogs._constants)
TABLE_FORMATS = ("paimon", "default")  # v1 may say paimon; v2 allows default or iceberg only
# the nodes that live in a catalog: what they write or read
PLACED_NODES = ("model", "seed", "snapshot", "source")


@dataclass(frozen=True)
class PaimonCatalogRelation:
    """What dbt's ``build_catalog_relation`` returns for a node of a Paimon catalog."""

    catalog_name: Optional[str]
    table_format: Optional[str] = "paimon"
    external_volume: Optional[str] = None
    file_format: Optional[str] = None


class PaimonCatalogIntegration(CatalogIntegration):
    """A Paimon catalog of one kind (``catalog_type``), its options checked when dbt loads
    ``catalogs.yml``: a bad option fails the command before anything runs."""

    catalog_type = FILESYSTEM
    table_format = "paimon"
    allows_writes = True

    def __init__(self, config: CatalogIntegrationConfig) -> None:
        super().__init__(config)
        where = f"catalogs.yml catalog '{config.name}'"
        if (self.table_format or "").lower() not in TABLE_FORMATS:
            raise DbtRuntimeError(
                f"{where}: table_format '{self.table_format}' is not a Paimon table format; "
                f"leave it out (v1) or write `table_format: default` (v2)")
        self.table_format = "paimon"
        if config.external_volume:
            raise DbtRuntimeError(
                f"{where}: external_volume is not used by Paimon catalogs: the tables' files "
                f"live under the catalog's `warehouse` (adapter_properties)")
        if config.file_format:
            raise DbtRuntimeError(
                f"{where}: file_format is a table option in Paimon: set it per model, e.g. "
                f"`table_options: {{'file.format': 'orc'}}`")
        properties = dict(getattr(config, "adapter_properties", None) or {})
        if getattr(config, "catalog_database", None) is not None:
            raise DbtRuntimeError(
                f"{where}: catalog_database has no meaning for Paimon catalogs: a model's "
                f"schema is its Paimon database")
        if "type" in properties or "metastore" in properties:
            raise DbtRuntimeError(
                f"{where}: name the Paimon catalog kind with catalog_type (v1) or type (v2), "
                f"not in its properties")
        try:
            self.paimon_catalog = parse_catalog({"type": self.catalog_type, **properties})
        except CatalogConfigError as exc:
            raise DbtRuntimeError(f"{where}: {exc}".replace(" catalog option ", " option ")
                                  ) from None

    def build_relation(self, config) -> PaimonCatalogRelation:
        return PaimonCatalogRelation(catalog_name=self.name)

    def route(self, project_root: str, default_warehouse: Optional[str],
              filesystem_options: Mapping[str, str]) -> CatalogRoute:
        """Where this catalog's tables are: its warehouse (a REST catalog's `warehouse-path`, its
        `warehouse` being its name on the server; its hive-site.xml's, else the profile's when
        it names none; a relative folder, or SQLite file, is relative to the dbt project, as the
        profile's are) and the options pypaimon's catalog takes."""
        try:
            catalog: PaimonCatalog = self.paimon_catalog.with_paths_under(project_root)
        except CatalogConfigError as exc:
            raise DbtRuntimeError(f"catalogs.yml catalog '{self.name}': {exc}") from None
        warehouse = catalog.warehouse or catalog.site_warehouse or default_warehouse
        if warehouse is None:
            raise DbtRuntimeError(
                f"catalogs.yml catalog '{self.name}' names no warehouse, and neither does the "
                "profile: add `warehouse` to its properties")
        return CatalogRoute(self.name, resolved_warehouse(warehouse, project_root),
                            {**filesystem_options, **catalog.pypaimon_options()})


class FilesystemCatalogIntegration(PaimonCatalogIntegration):
    catalog_type = FILESYSTEM


class JdbcCatalogIntegration(PaimonCatalogIntegration):
    catalog_type = JDBC


class HiveCatalogIntegration(PaimonCatalogIntegration):
    catalog_type = HIVE


class RestCatalogIntegration(PaimonCatalogIntegration):
    catalog_type = REST


CATALOG_INTEGRATIONS = [FilesystemCatalogIntegration, JdbcCatalogIntegration,
                        HiveCatalogIntegration, RestCatalogIntegration]


def node_catalog(node) -> Optional[str]:
    """The catalog a node's config names (``catalog_name``, or dbt's legacy ``catalog``)."""
    config = getattr(node, "config", None)
    get = getattr(config, "get", None)
    if not callable(get):
        return None
    value = get(CATALOG_NAME_CONFIG) or get("catalog")
    return None if value in (None, "") else str(value)


def catalog_routes(nodes: Iterable, integration_of, route_of) -> Dict[str, CatalogRoute]:
    """database -> the catalog that holds it, for every schema whose nodes name a catalog
    (``catalog_name``). ``integration_of(name)`` is the adapter's catalog integration (dbt's
    error for an unknown name is replaced by one naming the node), ``route_of`` makes its
    route. CompilationError when the nodes of one schema name different catalogs, or some
    name one and others none: Spark names a table by schema and table only."""
    placed: Dict[str, Tuple[Optional[str], str]] = {}  # schema -> (catalog, first node)
    made: Dict[str, CatalogRoute] = {}  # catalog name -> its route
    routes: Dict[str, CatalogRoute] = {}
    for node in nodes:
        kind = str(getattr(node, "resource_type", ""))
        if kind not in PLACED_NODES:
            continue
        if kind != "source" and getattr(getattr(node, "config", None), "materialized",
                                        None) == "ephemeral":
            continue
        name = node_catalog(node)
        schema = str(getattr(node, "schema", "") or "").lower()
        label = f"{kind} {getattr(node, 'unique_id', None) or getattr(node, 'name', '?')}"
        if name is not None and name not in made:
            made[name] = route_of(_integration(integration_of, name, label))
        earlier = placed.setdefault(schema, (name, label))
        if earlier[0] != name:
            raise CompilationError(
                f"Schema '{schema}' is in two catalogs: {earlier[1]} places it in "
                f"{_catalog_label(earlier[0])}, {label} in {_catalog_label(name)}. Spark names "
                f"a table by schema and table, so each schema of a project lives in one "
                f"catalog: give these nodes the same `{CATALOG_NAME_CONFIG}`, or different "
                f"schemas.")
        if name is not None:
            routes[schema] = made[name]
    return routes


def _integration(integration_of, name: str, label: str) -> PaimonCatalogIntegration:
    try:
        integration = integration_of(name)
    except Exception as exc:  # noqa: BLE001 - dbt's not-found error lists the known names
        raise CompilationError(
            f"{label} sets {CATALOG_NAME_CONFIG}: '{name}', which catalogs.yml does not "
            f"define ({exc}). Define it there (docs/catalogs.md) or remove the config.") from None
    if not isinstance(integration, PaimonCatalogIntegration):
        raise CompilationError(f"{label}: catalog '{name}' is not a Paimon catalog")
    return integration


def _catalog_label(name: Optional[str]) -> str:
    return "the profile's catalog" if name is None else f"catalog '{name}'"
