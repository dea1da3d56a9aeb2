"""Paimon types as the Hive type names Paimon Java's HiveTypeUtils gives a metastore's columns
(catalog/hive_types.py); the common types are also checked against a real metastore in
tests/integration/catalog/test_hive_catalog.py."""
import pytest
from pypaimon.schema.data_types import (ArrayType, AtomicType, DataField, DataTypeParser,
                                        MapType, MultisetType, RowType)

from dbt.adapters.paimon.catalog.hive_types import hive_type


@pytest.mark.parametrize("paimon, hive", [
    ("INT NOT NULL", "int"),
    ("BIGINT", "bigint"),
    ("DECIMAL(38, 10)", "decimal(38,10)"),
    ("CHAR(10)", "char(10)"),
    ("CHAR(256)", "string"),  # longer than Hive's char
    ("VARCHAR(65535)", "varchar(65535)"),
    ("VARCHAR(65536)", "string"),  # longer than Hive's varchar
    ("STRING", "string"),
    ("BYTES", "binary"),
    ("TIME", "string"),  # Hive has no time type
    ("TIMESTAMP(3)", "timestamp"),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", "timestamp"),  # Hive 2.3's client has no LTZ type
])
def test_hive_type_names(paimon, hive):
    assert hive_type(DataTypeParser.parse_data_type(paimon)) == hive


def test_a_type_hive_cannot_name_is_refused():
    with pytest.raises(ValueError, match="no Hive type for the Paimon type 'VARIANT'"):
        hive_type(DataTypeParser.parse_data_type("VARIANT"))


def test_nested_types():
    row = RowType(True, [DataField(0, "a", AtomicType("INT")), DataField(1, "b",
                                                                       AtomicType("DOUBLE"))])
    nested = ArrayType(True, MapType(True, AtomicType("STRING NOT NULL"), row))
    assert hive_type(nested) == "array<map<string,struct<a:int,b:double>>>"
    assert hive_type(MultisetType(True, AtomicType("STRING"))) == "map<string,int>"  # as Java
