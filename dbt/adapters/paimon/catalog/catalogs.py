"""The Paimon catalogs behind one interface: which catalog the options name, opening it, and
the catalog environment of its tables.

``catalog_options`` (pypaimon's options: ``metastore`` names the kind, see catalog/config.py)
say which catalog lists the warehouse's tables, and catalog/warehouse.py ``open_catalog``
opens it as a pypaimon ``Catalog``; the rest of dbt-paimon knows only that interface:

- **filesystem** (the default): pypaimon's own, the warehouse's folders are the tables;
- **JDBC**: pypaimon's, with the catalog lock and a snapshot loader it lacks
  (catalog/jdbc_catalog.py);
- **Hive**: catalog/hive_catalog.py (pypaimon has none), with the metastore's connection and
  lock in catalog/hive_metastore.py;
- **REST**: pypaimon's, opened by catalog/rest_catalog.py; its server publishes snapshots
  itself (no lock here).

Each catalog's module is imported when a catalog of its kind opens. A JDBC or Hive table
carries a ``FileSnapshotsEnvironment``: neither catalog keeps snapshots, so the table reads
them from its files, and a commit publishes its snapshot under the lock the environment gives
(format/commit.py ``commit_lock``).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import ContextManager, Dict, Mapping, Optional
from urllib.parse import urlparse

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.catalog.catalog_context import CatalogContext
from pypaimon.catalog.catalog_environment import CatalogEnvironment
from pypaimon.common.options import Options

from dbt.adapters.paimon.catalog.config import (HIVE, JDBC, LOCK_ENABLED_KEY, METASTORE_KEY,
                                                REST, URI_KEY)

# schemes of object stores, where Java's catalogs lock by default (FileIO.isObjectStore)
OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n", "oss", "obs", "cos", "cosn", "gs", "abfs", "abfss",
                        "wasb", "wasbs")


def is_jdbc(catalog_options: Optional[Mapping[str, str]]) -> bool:
    """Whether these catalog options name Paimon's JDBC catalog."""
    return (catalog_options or {}).get(METASTORE_KEY) == JDBC


def is_hive(catalog_options: Optional[Mapping[str, str]]) -> bool:
    """Whether these catalog options name Paimon's Hive catalog."""
    return (catalog_options or {}).get(METASTORE_KEY) == HIVE


def is_rest(catalog_options: Optional[Mapping[str, str]]) -> bool:
    """Whether these catalog options name Paimon's REST catalog."""
    return (catalog_options or {}).get(METASTORE_KEY) == REST


def open_rest_catalog(files_root: str, options: Mapping[str, str]):
    """The REST catalog over ``options`` (``warehouse``: the server's catalog name), its
    tables' files under ``files_root``; a server that cannot be used is a
    CatalogUnreachableError naming the URI."""
    from dbt.adapters.paimon.catalog.rest_catalog import open_rest_catalog as open_rest

    return open_rest(files_root, options)


def open_hive_catalog(options: Dict[str, str]):
    """The Hive catalog over ``options`` (``warehouse`` and ``uri`` set); a metastore that does
    not answer is a CatalogUnreachableError naming the URI."""
    from dbt.adapters.paimon.catalog.hive_catalog import HiveCatalog

    return HiveCatalog(CatalogContext.create_from_options(Options(options)))


def open_jdbc_catalog(options: Dict[str, str]):
    """pypaimon's JDBC catalog over ``options`` (``warehouse`` and ``uri`` set); a database that
    cannot be opened is a CatalogUnreachableError naming the URI."""
    from dbt.adapters.paimon.catalog.jdbc_catalog import open_jdbc_catalog as open_jdbc

    return open_jdbc(options)


def lock_enabled(options: Mapping[str, str], warehouse: str) -> bool:
    """Java's ``AbstractCatalog.lockEnabled``: ``lock.enabled``, else whether the warehouse is
    an object store."""
    value = options.get(LOCK_ENABLED_KEY)
    if value is not None:
        return str(value).strip().lower() == "true"
    return urlparse(str(warehouse)).scheme.lower() in OBJECT_STORE_SCHEMES


class FileSnapshotsEnvironment(CatalogEnvironment):
    """A JDBC or Hive table's catalog environment: it reads snapshots from the table's files
    (neither catalog keeps snapshots), and gives the lock a commit of the table publishes its
    snapshot under (Java: ``CatalogEnvironment.lockFactory``)."""

    def snapshot_loader(self):
        return None

    def copy(self, identifier):
        return FileSnapshotsEnvironment(identifier, self.uuid, self.catalog_loader,
                                        self.supports_version_management,
                                        getattr(self, "rest_table_response", None))

    def commit_lock(self, identifier) -> ContextManager[None]:
        """The lock a commit of the table ``identifier`` publishes its snapshot under
        (format/commit.py takes it): the JDBC catalog's or the Hive Metastore's when the
        catalog locks, else none (the snapshot file's atomic creation is the commit)."""
        loader = self.catalog_loader
        context = loader.context() if loader is not None and hasattr(loader, "context") else None
        if context is None:
            return nullcontext()
        options = context.options.to_map()
        if not (is_jdbc(options) or is_hive(options)) or \
                not lock_enabled(options, options.get("warehouse", "")):
            return nullcontext()
        if is_hive(options):  # HiveCatalogLock: the metastore's lock of <db>.<table>
            from dbt.adapters.paimon.catalog.hive_metastore import MetastoreLock

            return MetastoreLock(options[URI_KEY], options).hold(identifier.get_database_name(),
                                                                 identifier.get_table_name())
        from dbt.adapters.paimon.catalog.jdbc_catalog import CatalogLock

        return CatalogLock(options).hold(identifier.get_database_name(),
                                         identifier.get_object_name())
