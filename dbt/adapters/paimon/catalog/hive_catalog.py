"""Paimon's Hive catalog as a pypaimon ``Catalog``: a Hive Metastore says which tables exist.

pypaimon 2.1 has no Hive catalog. This one registers, changes and reads metastore entries as
Paimon Java's does (paimon-hive-catalog org/apache/paimon/hive/HiveCatalog.java, release 1.0),
so Spark, Flink, Hive and Trino with Paimon's connectors find dbt's tables by name, and dbt
finds theirs:

- **database**: a metastore database whose location is ``<warehouse>/<db>.db``
  (``newDatabasePath``; ``StorageLocationHelper`` keeps it in ``locationUri``).
- **table** (``createTableImpl``): the schema is written to ``<database location>/<table>/
  schema`` first, then the entry (catalog/hive_entries.py); a failed registration deletes the
  folder again (not for external tables). Only entries that are Paimon tables are listed and
  opened.
- **drop** (``dropTableImpl``): the entry, then a managed table's folder. **rename**
  (``renameTableImpl``): the entry, then the folder if the metastore did not move it.
  **alter** (``alterTableImpl``): the schema file first, then the entry (columns, ``hive.``
  options, comment) with ``CASCADE``; a refused entry change deletes the new schema file.
- **lock** (``lock(identifier)``, ``HiveCatalogLock``): with ``lock.enabled`` (default: the
  warehouse is an object store), creating and altering a table's schema and each commit hold
  the metastore's table lock (catalog/hive_metastore.py).

What dbt-paimon does not do that Java can: tables outside ``<warehouse>/<db>.db/<table>`` (a
database at another location, a table ``path`` option) are not listed, and opening, creating
or renaming one is refused with a message, because the rest of dbt-paimon finds a table's
files by that layout (a metastore shared with other warehouses keeps working);
``metastore.partitioned-table`` (partitions registered on every commit) is refused; names
with upper-case letters are refused (the metastore stores names lower-case, so the entry and
the folder would differ).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import ContextManager, Dict, List, Optional, Union

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.catalog.catalog import Catalog
from pypaimon.catalog.catalog_context import CatalogContext
from pypaimon.catalog.catalog_exception import (DatabaseAlreadyExistException,
                                                DatabaseNotExistException,
                                                TableAlreadyExistException,
                                                TableNotExistException)
from pypaimon.catalog.catalog_loader import CatalogLoader
from pypaimon.catalog.database import Database
from pypaimon.common.file_io import FileIO
from pypaimon.common.identifier import Identifier
from pypaimon.common.options.config import CatalogOptions
from pypaimon.common.options.core_options import CoreOptions
from pypaimon.schema.schema import Schema
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.table.file_store_table import FileStoreTable

from dbt.adapters.paimon.catalog.catalogs import FileSnapshotsEnvironment, lock_enabled
from dbt.adapters.paimon.catalog.config import URI_KEY, same_location
from dbt.adapters.paimon.catalog.hive_entries import (DB_LOCATION_PROP, EXTERNAL_TABLE, describe,
                                                      database_entry, database_properties,
                                                      hive_parameters, is_external,
                                                      is_paimon_table, table_entry)
from dbt.adapters.paimon.catalog.hive_metastore import (MetastoreConnection, MetastoreLock,
                                                        thrift_api)
from dbt.adapters.paimon.format.errors import PaimonFormatError

DEFAULT_TABLE_BATCH_SIZE = 300  # getTableObjectsByName per call, as Java
# table options whose tables dbt-paimon cannot register as Java would (see the docstring)
REFUSED_TABLE_OPTIONS = {
    "metastore.partitioned-table": "partitions registered in the metastore on every commit",
    "metastore.tag-to-partition": "tags mapped to metastore partitions",
    "path": "a table folder outside <warehouse>/<db>.db/<table>",
}


class HiveCatalogLoader(CatalogLoader):
    """What a table of this catalog keeps to reopen it (catalog/catalogs.py
    ``FileSnapshotsEnvironment.commit_lock`` reads the options from its context)."""

    def __init__(self, context: CatalogContext):
        self._context = context

    def context(self) -> CatalogContext:
        return self._context

    def load(self) -> "HiveCatalog":
        return HiveCatalog(self._context)


class HiveCatalog(Catalog):
    """Paimon's Hive catalog over one metastore connection (see the module docstring)."""

    def __init__(self, context: CatalogContext):
        options = context.options
        if not options.contains(CatalogOptions.WAREHOUSE):
            raise ValueError(f"Paimon '{CatalogOptions.WAREHOUSE.key()}' path must be set")
        self.context = context
        self.catalog_options = options
        self.options = options.to_map()
        self.warehouse = options.get(CatalogOptions.WAREHOUSE)
        self.uri = self.options[URI_KEY]
        self.file_io = FileIO.get(self.warehouse, self.catalog_options)
        _, self.ttypes = thrift_api()
        self._connection = MetastoreConnection(self.uri)
        self.client = self._connection.client

    def close(self) -> None:
        self._connection.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
        return False

    # -- databases ---------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        """The metastore's databases at their place in this warehouse (``<warehouse>/<db>.db``).
        Java lists every database; a shared metastore also holds databases of other
        warehouses (and Hive's ``default``) whose tables dbt-paimon cannot read, and listing
        them would make every dbt command walk them."""
        names = []
        for name in self.client.get_all_databases():
            try:
                location = self._hms_database(name).locationUri
            except DatabaseNotExistException:  # dropped meanwhile
                continue
            if location is not None and same_location(location, self.get_database_path(name)):
                names.append(name)
        return sorted(names)

    def get_database(self, name: str) -> Database:
        hms = self._hms_database(name)
        return Database(name, database_properties(hms), hms.description)

    def create_database(self, name: str, ignore_if_exists: bool,
                        properties: Optional[Dict[str, str]] = None) -> None:
        _check_lower_case("database", name)
        try:
            self._hms_database(name)
            if not ignore_if_exists:
                raise DatabaseAlreadyExistException(name)
            return
        except DatabaseNotExistException:
            pass
        database = database_entry(self.ttypes, name, properties or {})
        if database.locationUri is None:
            database.locationUri = self.get_database_path(name)
        try:
            self.client.create_database(database)
        except self.ttypes.AlreadyExistsException:
            if not ignore_if_exists:  # created by another writer meanwhile
                raise DatabaseAlreadyExistException(name) from None

    def drop_database(self, name: str, ignore_if_not_exists: bool = False,
                      cascade: bool = False) -> None:
        try:
            self._hms_database(name)
        except DatabaseNotExistException:
            if ignore_if_not_exists:
                return
            raise
        tables = self.list_tables(name)
        if tables and not cascade:
            raise ValueError(f"Database {name} is not empty. Use cascade=True to drop all "
                             "tables first.")
        for table in tables:  # AbstractCatalog.dropDatabase: each table as dropTable does
            self.drop_table(Identifier.create(name, table), True)
        # dropDatabaseImpl: deleteData and cascade (entries of other engines go with it)
        self.client.drop_database(name, True, True)

    def alter_database(self, name: str, changes) -> None:
        from pypaimon.catalog.rest.property_change import PropertyChange

        current = self.get_database(name).options
        set_properties, remove_keys = PropertyChange.get_set_properties_to_remove_keys(changes)
        merged = {k: v for k, v in {**current, **set_properties}.items() if k not in remove_keys}
        self.client.alter_database(name, database_entry(self.ttypes, name, merged))

    def _hms_database(self, name: str):
        try:
            return self.client.get_database(name)
        except self.ttypes.NoSuchObjectException:
            raise DatabaseNotExistException(name) from None

    # -- tables ------------------------------------------------------------------------------

    def list_tables(self, database_name: str) -> List[str]:
        """The database's Paimon tables (listTablesImpl) at their place in this warehouse; one
        elsewhere is left out, as in ``list_databases`` (``get_table`` names it with a
        message)."""
        self._hms_database(database_name)
        names = self.client.get_all_tables(database_name)
        paimon = []
        for start in range(0, len(names), DEFAULT_TABLE_BATCH_SIZE):
            batch = names[start:start + DEFAULT_TABLE_BATCH_SIZE]
            paimon += [t.tableName for t in
                       self.client.get_table_objects_by_name(database_name, batch)
                       if is_paimon_table(t) and same_location(
                           t.sd.location or "",
                           self.get_table_path(Identifier.create(database_name, t.tableName)))]
        return sorted(paimon)

    def get_table(self, identifier: Union[str, Identifier]):
        identifier = _as_identifier(identifier)
        if identifier.is_system_table():
            from pypaimon.table.system import system_table_loader

            base = self.get_table(Identifier.create(identifier.get_database_name(),
                                                    identifier.get_table_name(),
                                                    branch=identifier.get_branch_name()))
            table = system_table_loader.load(identifier.get_system_table_name(), base)
            if table is None:
                raise TableNotExistException(identifier)
            return table
        hms = self._paimon_hms_table(identifier)
        location = self._checked_location(identifier, hms.sd.location)
        schema = SchemaManager(self.file_io, location,
                               branch=identifier.get_branch_name_or_default()).latest()
        if schema is None:  # getDataTableSchema: an entry without a schema is no table
            raise TableNotExistException(identifier)
        environment = FileSnapshotsEnvironment(identifier, None, HiveCatalogLoader(self.context),
                                               False, None)
        return FileStoreTable(self.file_io, identifier, location, schema, environment)

    def get_table_schema(self, identifier: Identifier):
        return self.get_table(identifier).table_schema

    def create_table(self, identifier: Union[str, Identifier], schema: Schema,
                     ignore_if_exists: bool) -> None:
        identifier = _as_identifier(identifier)
        database, name = identifier.get_database_name(), identifier.get_table_name()
        _check_lower_case("database", database)
        _check_lower_case("table", name)
        options = dict(schema.options or {})
        if str(options.get(CoreOptions.AUTO_CREATE.key(), "false")).lower() == "true":
            raise ValueError(f"The value of {CoreOptions.AUTO_CREATE.key()} property should be "
                             "False.")
        if options.get(CoreOptions.TYPE.key(), "table") != "table":
            raise ValueError(f"Table Type: {options.get(CoreOptions.TYPE.key())}")
        for key, what in REFUSED_TABLE_OPTIONS.items():
            if key in options and not (key.startswith("metastore.") and
                                       str(options[key]).lower() == "false"):
                raise PaimonFormatError(
                    f"cannot create Paimon table {database}.{name} in the Hive catalog with the "
                    f"table option {key}: dbt-paimon does not support {what}. Remove the option.")
        db_location = self.get_database(database).options.get(DB_LOCATION_PROP)
        self._check_database_location(database, db_location)
        try:
            self.client.get_table(database, name)
            if ignore_if_exists:
                return
            raise TableAlreadyExistException(identifier)
        except self.ttypes.NoSuchObjectException:
            pass
        external = is_external(options)
        location = self.get_table_path(identifier)
        with self.lock(identifier):
            table_schema = SchemaManager(self.file_io, location).create_table(schema)
        try:
            self.client.create_table(table_entry(self.ttypes, database, name, table_schema,
                                                 location, external))
        except BaseException:
            if not external:  # createTableImpl: the folder goes with the failed entry
                self.file_io.delete_directory_quietly(location)
            raise

    def _hms_table_unless_missing(self, identifier: Identifier, ignore_if_not_exists: bool):
        """The table's metastore entry; None for a missing table the caller may ignore."""
        try:
            return self._paimon_hms_table(identifier)
        except TableNotExistException:
            if ignore_if_not_exists:
                return None
            raise

    def drop_table(self, identifier: Union[str, Identifier],
                   ignore_if_not_exists: bool = False) -> None:
        identifier = _as_identifier(identifier)
        hms = self._hms_table_unless_missing(identifier, ignore_if_not_exists)
        if hms is None:
            return
        external = hms.tableType == EXTERNAL_TABLE
        location = self._checked_location(identifier, hms.sd.location)
        self.client.drop_table(identifier.get_database_name(), identifier.get_table_name(),
                               not external)
        if not external:
            # dropTableImpl: the metastore may not reach the files (deleteData is best effort)
            if self.file_io.exists(location):
                self.file_io.delete_directory_quietly(location)

    def rename_table(self, source_identifier: Union[str, Identifier],
                     target_identifier: Union[str, Identifier]) -> None:
        source = _as_identifier(source_identifier)
        target = _as_identifier(target_identifier)
        _check_lower_case("database", target.get_database_name())
        _check_lower_case("table", target.get_table_name())
        hms = self._paimon_hms_table(source)
        target_db = self.get_database(target.get_database_name())
        self._check_database_location(target.get_database_name(),
                                      target_db.options.get(DB_LOCATION_PROP))
        try:
            self.client.get_table(target.get_database_name(), target.get_table_name())
            raise TableAlreadyExistException(target)
        except self.ttypes.NoSuchObjectException:
            pass
        from_path = self._checked_location(source, hms.sd.location)
        # renameHiveTable: the same entry under the new name (a metastore moves a managed
        # table's folder when it sits at its default place)
        hms.dbName, hms.tableName = target.get_database_name(), target.get_table_name()
        self.client.alter_table(source.get_database_name(), source.get_table_name(), hms)
        renamed = self.client.get_table(target.get_database_name(), target.get_table_name())
        to_path = self.get_table_path(target)
        if renamed.tableType != EXTERNAL_TABLE and not same_location(from_path, to_path) \
                and SchemaManager(self.file_io, from_path)._list_versioned_files():
            self.file_io.rename(from_path, to_path)
        if not same_location(renamed.sd.location, to_path):
            renamed.sd.location = to_path
            self.client.alter_table(target.get_database_name(), target.get_table_name(), renamed)

    def alter_table(self, identifier: Union[str, Identifier], changes,
                    ignore_if_not_exists: bool = False) -> None:
        identifier = _as_identifier(identifier)
        hms = self._hms_table_unless_missing(identifier, ignore_if_not_exists)
        if hms is None:
            return
        location = self._checked_location(identifier, hms.sd.location)
        manager = SchemaManager(self.file_io, location,
                                branch=identifier.get_branch_name_or_default())
        with self.lock(identifier):
            new_schema = manager.commit_changes(changes)
        if identifier.get_branch_name_or_default() != "main":
            return  # only the main branch's schema is in the metastore
        try:
            hms.parameters.update(hive_parameters(new_schema.options))
            describe(self.ttypes, hms, new_schema, location)
            context = self.ttypes.EnvironmentContext(
                properties={"CASCADE": "true", "DO_NOT_UPDATE_STATS": "false"})
            self.client.alter_table_with_environment_context(
                identifier.get_database_name(), identifier.get_table_name(), hms, context)
        except BaseException:
            # alterTableImpl: schemaManager.deleteSchema(schema.id())
            self.file_io.delete_quietly(manager._to_schema_path(new_schema.id))
            raise

    def _paimon_hms_table(self, identifier: Identifier):
        try:
            hms = self.client.get_table(identifier.get_database_name(),
                                        identifier.get_table_name())
        except self.ttypes.NoSuchObjectException:
            raise TableNotExistException(identifier) from None
        if not is_paimon_table(hms):
            raise TableNotExistException(identifier)
        return hms

    # -- paths and locks ---------------------------------------------------------------------

    def get_database_path(self, name: str) -> str:
        return f"{str(self.warehouse).rstrip('/')}/{name}{Catalog.DB_SUFFIX}"

    def get_table_path(self, identifier: Identifier) -> str:
        return f"{self.get_database_path(identifier.get_database_name())}/" \
               f"{identifier.get_table_name()}"

    def _check_database_location(self, database: str, location: Optional[str]) -> None:
        expected = self.get_database_path(database)
        if location is None or not same_location(location, expected):
            raise PaimonFormatError(
                f"the Hive Metastore's database {database} is at {location}, not at {expected} "
                f"under the profile's warehouse {self.warehouse}: dbt-paimon keeps a database's "
                "tables under <warehouse>/<database>.db. Use another schema, or point the "
                "profile's warehouse at the folder holding this database's folder.")

    def _checked_location(self, identifier: Identifier, location: Optional[str]) -> str:
        expected = self.get_table_path(identifier)
        if location is None or not same_location(location, expected):
            raise PaimonFormatError(
                f"the Hive Metastore's table {identifier.get_database_name()}."
                f"{identifier.get_table_name()} is at {location}, not at {expected} under the "
                f"profile's warehouse {self.warehouse}: dbt-paimon reads and writes tables at "
                "<warehouse>/<database>.db/<table> only. Point the profile's warehouse at the "
                "folder holding this table's database folder.")
        return expected

    def lock(self, identifier: Identifier) -> ContextManager:
        """The metastore's lock of the table when the catalog locks, else no lock."""
        if not lock_enabled(self.options, self.warehouse):
            return nullcontext()
        return MetastoreLock(self.uri, self.options).hold(identifier.get_database_name(),
                                                          identifier.get_table_name())

    # -- what a Hive catalog does not do -----------------------------------------------------

    def load_snapshot(self, identifier: Identifier):
        raise NotImplementedError("the Hive catalog keeps no snapshots: they are files")

    def commit_snapshot(self, identifier, table_uuid, base_snapshot_uuid, snapshot, statistics):
        raise NotImplementedError("the Hive catalog does not commit snapshots")



def _check_lower_case(kind: str, name: str) -> None:
    if name != name.lower():
        raise PaimonFormatError(
            f"Paimon {kind} name {name!r} has upper-case letters: a Hive Metastore stores names "
            f"lower-case, so its entry and the {kind}'s folder would have different names. Use "
            f"{name.lower()!r}.")


def _as_identifier(identifier) -> Identifier:
    return identifier if isinstance(identifier, Identifier) else Identifier.from_string(identifier)
