"""Paimon column types as the Hive type names Paimon's Hive catalog writes into a metastore's
column list (paimon-hive-common org/apache/paimon/hive/HiveTypeUtils.java, release 1.0:
``PaimonToHiveTypeVisitor``, then ``TypeInfo.getTypeName()``).

Hive engines read a Paimon table's columns from its schema files, not from these; the column
list is what the metastore's own clients (``DESCRIBE``, Trino's Hive connector listing, data
catalogs) show.
"""

from __future__ import annotations

import re

from pypaimon.schema.data_types import (ArrayType, AtomicType, DataType, MapType,
                                        MultisetType, RowType)

# Hive's HiveChar.MAX_CHAR_LENGTH and HiveVarchar.MAX_VARCHAR_LENGTH: longer ones are `string`
MAX_CHAR_LENGTH = 255
MAX_VARCHAR_LENGTH = 65535
_SIMPLE = {
    "BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int",
    "INTEGER": "int", "BIGINT": "bigint", "FLOAT": "float", "DOUBLE": "double",
    "DATE": "date", "STRING": "string", "BYTES": "binary", "BINARY": "binary",
    "VARBINARY": "binary",
    # Java maps TIME to string (Hive has no time type)
    "TIME": "string",
}
_ATOMIC = re.compile(r"^\s*([A-Z_]+(?: [A-Z_]+)*?)\s*(?:\(([^)]*)\))?\s*(.*?)\s*$")


def hive_type(data_type: DataType) -> str:
    """The Hive type name of a pypaimon data type (nullability is not part of it)."""
    if isinstance(data_type, ArrayType):
        return f"array<{hive_type(data_type.element)}>"
    if isinstance(data_type, MultisetType):  # Java: MAP<element, INT>
        return f"map<{hive_type(data_type.element)},int>"
    if isinstance(data_type, MapType):
        return f"map<{hive_type(data_type.key)},{hive_type(data_type.value)}>"
    if isinstance(data_type, RowType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}"
                                    for f in data_type.fields) + ">"
    if isinstance(data_type, AtomicType):
        return _atomic(data_type.type)
    raise ValueError(f"no Hive type for the Paimon type {data_type}")


def _atomic(text: str) -> str:
    upper = text.upper().replace(" NOT NULL", "").strip()
    match = _ATOMIC.match(upper)
    if not match:
        raise ValueError(f"no Hive type for the Paimon type {text!r}")
    name, args, rest = match.group(1), match.group(2), match.group(3)
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ") or name.startswith("TIMESTAMP"):
        # TIMESTAMP WITH LOCAL TIME ZONE: Java writes `timestamp with local time zone` only
        # where its Hive client is 3.x; with the Hive 2.3 client it writes `timestamp`
        return "timestamp"
    if name == "DECIMAL":
        precision, scale = ([a.strip() for a in args.split(",")] + ["0"])[:2] if args else \
            ("10", "0")
        return f"decimal({precision},{scale})"
    if name == "CHAR":
        length = int(args) if args else 1
        return f"char({length})" if length <= MAX_CHAR_LENGTH else "string"
    if name == "VARCHAR":
        length = int(args) if args else 1
        return f"varchar({length})" if length <= MAX_VARCHAR_LENGTH else "string"
    if name in _SIMPLE and not rest:
        return _SIMPLE[name]
    raise ValueError(f"no Hive type for the Paimon type {text!r}")
