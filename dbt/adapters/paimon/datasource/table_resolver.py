"""Which Paimon table a name means: the catalog that holds a database (the profile's, or a
catalogs.yml catalog its nodes name), the tables there, and the branch a table is read and
written on (write-audit-publish). Files and catalogs only, no Spark:
the table operations (tags, branches, rollback, expiry) act on a table's files, so a
`dbt run-operation` of them resolves its table here and never starts Spark; the registry
(registry.py) resolves through the same object for the entries it makes."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog.config import CatalogRoute


class TableResolver:
    """The profile's catalog (``warehouse`` with pypaimon ``catalog_options``) and the databases
    routed to other catalogs (``routes``); the branches in use: a table's own in
    ``table_branches`` (None there meaning main), else the default ``branch``."""

    def __init__(self, warehouse: str, catalog_options: Dict[str, str],
                 routes: Optional[Dict[str, CatalogRoute]] = None):
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options)
        self.routes: Dict[str, CatalogRoute] = dict(routes or {})
        self.branch: Optional[str] = None
        self.table_branches: Dict[Tuple[str, str], Optional[str]] = {}

    def warehouse_of(self, database: str) -> str:
        """The warehouse of the catalog that holds ``database``."""
        route = self.routes.get(database)
        return self.warehouse if route is None else route.warehouse

    def options_of(self, database: str) -> Dict[str, str]:
        """The pypaimon catalog options of the catalog that holds ``database``."""
        route = self.routes.get(database)
        return self.catalog_options if route is None else route.options

    def catalog_name_of(self, database: str) -> Optional[str]:
        """The catalogs.yml name of the catalog that holds ``database``; None: the profile's."""
        route = self.routes.get(database)
        return None if route is None else route.name

    def is_paimon_table(self, database: str, table: str) -> bool:
        database = database.lower()
        return listing.latest_schema_id(self.warehouse_of(database), database, table.lower(),
                                        self.options_of(database)) is not None

    def branch_of(self, database: str, table: str) -> Optional[str]:
        """The branch ``database.table`` is read and written on; None for main."""
        return self.table_branches.get((database, table), self.branch)

    def paimon_name(self, database: str, table: str) -> str:
        """The Paimon table a name ``database.table`` stands for: ``table``, or pypaimon's
        name of its branch ``table$branch_<branch>`` (branch_of) when it has that branch."""
        if listing.BRANCH_SEPARATOR in table:
            return table
        branch = self.branch_of(database, table)
        if not branch:
            return table
        warehouse = self.warehouse_of(database)
        if listing.local_folder(warehouse) is not None:
            present = listing.has_branch(warehouse, database, table, branch)
        else:
            from dbt.adapters.paimon.catalog import warehouse as wh

            present = wh.open_table(warehouse, database, table, self.options_of(database)) \
                .branch_manager().branch_exists(branch)
        return f"{table}{listing.BRANCH_SEPARATOR}{branch}" if present else table

    def location(self, database: str, table: str):
        """Where a write of ``database.table`` goes (its branch, when one is in use)."""
        return self.table_location(database, self.paimon_name(database, table))

    def table_location(self, database: str, table: str):
        """The Paimon table named ``table`` in ``database``, in the catalog holding ``database``:
        the table itself, or one of its branches when ``table`` is a branch's name
        (``orders$branch_audit``)."""
        from dbt.adapters.paimon.datasource.source import TableRef

        return TableRef(self.warehouse_of(database), database, table,
                             self.options_of(database))

    def databases(self) -> List[str]:
        """The databases of the profile's catalog not routed elsewhere, and the routed ones
        their catalogs have."""
        databases = [d for d in listing.list_databases(self.warehouse, self.catalog_options)
                     if d not in self.routes]
        by_catalog: Dict[str, List[str]] = {}
        for database, route in self.routes.items():
            by_catalog.setdefault(route.name, []).append(database)
        for routed in by_catalog.values():
            route = self.routes[routed[0]]
            present = set(listing.list_databases(route.warehouse, route.options))
            databases += sorted(d for d in routed if d in present)
        return databases

    def locations(self) -> list:
        """Every Paimon table these catalogs hold: the profile's catalog's databases and, of
        every other catalog, the databases routed to it (a shared catalog's other databases
        belong to other projects)."""
        return [self.table_location(database, table) for database in self.databases()
                for table in listing.list_tables(self.warehouse_of(database), database,
                                                 self.options_of(database))]
