"""What a Paimon table and its database look like in a Hive Metastore: the entries Paimon
Java's Hive catalog writes (paimon-hive-catalog org/apache/paimon/hive/HiveCatalog.java,
release 1.0), built from the metastore's Thrift types (catalog/hive_metastore.py).

- **database** (``convertToHiveDatabase``): the comment is the description, the owner the
  owner, ``location`` the location URI, the other properties the parameters.
- **table** (``newHmsTable``, ``updateHmsTable``): table type MANAGED_TABLE (EXTERNAL_TABLE
  with the table option ``external``/``EXTERNAL`` = true, plus the parameter
  ``EXTERNAL=TRUE``), the parameters ``table_type=PAIMON`` and ``storage_handler=
  org.apache.paimon.hive.PaimonStorageHandler``, the table options starting with ``hive.``
  (prefix removed), ``partition.expiration-time`` and ``data-file.path-directory``
  (``createHiveTable`` with ``sync-all-properties`` off, Java's default), the comment; a
  storage descriptor with Paimon's input/output formats and SerDe, the location, and every
  column with its Hive type (catalog/hive_types.py). Partition keys stay columns: with
  ``metastore.partitioned-table`` off (Java's default) the metastore lists no partitions.
- **a Paimon table** is an entry whose input and output formats are Paimon's
  (``isPaimonTable``).
"""

from __future__ import annotations

import time
from typing import Dict, Mapping

from dbt.adapters.paimon.catalog.hive_metastore import metastore_user
from dbt.adapters.paimon.catalog.hive_types import hive_type

# HiveCatalog.java's constants
TABLE_TYPE_PROP = "table_type"
PAIMON_TABLE_IDENTIFIER = "PAIMON"
INPUT_FORMAT_CLASS_NAME = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT_CLASS_NAME = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE_CLASS_NAME = "org.apache.paimon.hive.PaimonSerDe"
STORAGE_HANDLER_CLASS_NAME = "org.apache.paimon.hive.PaimonStorageHandler"
META_TABLE_STORAGE = "storage_handler"  # hive_metastoreConstants.META_TABLE_STORAGE
HIVE_PREFIX = "hive."
HIVE_EXTERNAL_TABLE_PROP = "EXTERNAL"
MANAGED_TABLE, EXTERNAL_TABLE = "MANAGED_TABLE", "EXTERNAL_TABLE"
# options Java copies into the entry's parameters besides the hive.* ones
COPIED_OPTIONS = ("partition.expiration-time", "data-file.path-directory")
INT_MAX = 2**31 - 1  # Java's retention value
# pypaimon's Catalog.COMMENT_PROP / OWNER_PROP / DB_LOCATION_PROP (Java's the same)
COMMENT_PROP, OWNER_PROP, DB_LOCATION_PROP = "comment", "owner", "location"


def database_entry(ttypes, name: str, properties: Mapping[str, str]):
    """convertToHiveDatabase."""
    database = ttypes.Database(name=name, parameters={})
    for key, value in properties.items():
        if key == COMMENT_PROP:
            database.description = value
        elif key == OWNER_PROP:
            database.ownerName = value
        elif key == DB_LOCATION_PROP:
            database.locationUri = value
        elif value is not None:
            database.parameters[key] = value
    return database


def database_properties(hms_database) -> Dict[str, str]:
    """getDatabaseImpl: the entry's parameters, comment, owner and location as properties."""
    properties = dict(hms_database.parameters or {})
    if hms_database.description is not None:
        properties[COMMENT_PROP] = hms_database.description
    if hms_database.ownerName is not None:
        properties[OWNER_PROP] = hms_database.ownerName
    if hms_database.locationUri is not None:
        properties[DB_LOCATION_PROP] = hms_database.locationUri
    return properties


def table_entry(ttypes, database: str, table: str, table_schema, location: str,
                external: bool):
    """newHmsTable + updateHmsTable for a new table."""
    now = int(time.time())
    parameters = hive_parameters(table_schema.options)
    parameters[TABLE_TYPE_PROP] = PAIMON_TABLE_IDENTIFIER
    parameters[META_TABLE_STORAGE] = STORAGE_HANDLER_CLASS_NAME
    if external:
        parameters[HIVE_EXTERNAL_TABLE_PROP] = "TRUE"
    entry = ttypes.Table(tableName=table, dbName=database, owner=metastore_user(),
                         createTime=now, lastAccessTime=now, retention=INT_MAX,
                         partitionKeys=[], parameters=parameters,
                         tableType=EXTERNAL_TABLE if external else MANAGED_TABLE)
    describe(ttypes, entry, table_schema, location)
    return entry


def describe(ttypes, entry, table_schema, location: str) -> None:
    """updateHmsTable: formats, SerDe, columns, comment and location of an entry."""
    sd = entry.sd if entry.sd is not None else ttypes.StorageDescriptor()
    sd.inputFormat = INPUT_FORMAT_CLASS_NAME
    sd.outputFormat = OUTPUT_FORMAT_CLASS_NAME
    serde = sd.serdeInfo if sd.serdeInfo is not None else ttypes.SerDeInfo()
    serde.parameters = {}
    serde.serializationLib = SERDE_CLASS_NAME
    sd.serdeInfo = serde
    sd.cols = [ttypes.FieldSchema(name=f.name, type=hive_type(f.type), comment=f.description)
               for f in table_schema.fields]
    sd.location = location
    entry.sd = sd
    if table_schema.comment is not None:
        entry.parameters[COMMENT_PROP] = table_schema.comment


def is_paimon_table(entry) -> bool:
    """isPaimonTable: Paimon's input and output formats."""
    sd = entry.sd
    return sd is not None and sd.inputFormat == INPUT_FORMAT_CLASS_NAME and \
        sd.outputFormat == OUTPUT_FORMAT_CLASS_NAME


def is_external(options: Mapping[str, str]) -> bool:
    """usingExternalTable, with the catalog's table.type at its default (managed)."""
    value = options.get(HIVE_EXTERNAL_TABLE_PROP.lower(), options.get(HIVE_EXTERNAL_TABLE_PROP))
    return str(value).upper() == "TRUE"


def hive_parameters(options: Mapping[str, str]) -> Dict[str, str]:
    """convertToPropertiesPrefixKey(options, "hive.") and the options Java copies as they are
    (updateHmsTablePars with sync-all-properties off, Java's default)."""
    options = options or {}
    parameters = {k[len(HIVE_PREFIX):]: v for k, v in options.items()
                  if k.startswith(HIVE_PREFIX)}
    for key in COPIED_OPTIONS:
        if key in options:
            parameters[key] = options[key]
    return parameters
