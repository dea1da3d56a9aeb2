"""MergeSpec.from_table_options: every configuration error names the option and the fix."""
import pyarrow as pa
import pytest

from dbt.adapters.paimon.runtime import MergeSpec, PaimonConfigError, parse_type

PU = {"merge-engine": "partial-update"}


def test_contract_example():
    spec = MergeSpec.from_table_options(
        schema=[("k", "INT"), ("a", "INT"), ("g_1", "INT")], primary_keys=["k"],
        options={"merge-engine": "partial-update", "fields.g_1.sequence-group": "a"},
    )
    assert spec.engine == "partial-update"
    assert spec.sequence_groups[0].order_fields == ("g_1",)
    assert issubclass(PaimonConfigError, ValueError)


@pytest.mark.parametrize(
    "text, arrow",
    [
        ("INT", pa.int32()), ("integer not null", pa.int32()), ("BIGINT", pa.int64()), ("SMALLINT", pa.int16()),
        ("TINYINT", pa.int8()), ("FLOAT", pa.float32()), ("DOUBLE", pa.float64()), ("STRING", pa.string()),
        ("VARCHAR(20)", pa.string()), ("CHAR(3)", pa.string()), ("BOOLEAN", pa.bool_()),
        ("DECIMAL(12, 3)", pa.decimal128(12, 3)), ("DATE", pa.date32()), ("TIMESTAMP(3)", pa.timestamp("ms")),
        ("TIMESTAMP(6)", pa.timestamp("us")), ("TIMESTAMP_LTZ(3)", pa.timestamp("ms", tz="UTC")),
        ("TIMESTAMP_LTZ(9)", pa.timestamp("us", tz="UTC")), ("BYTES", pa.binary()), ("VARBINARY(8)", pa.binary()),
        ("ARRAY<INT>", pa.list_(pa.field("element", pa.int32()))),
        # Paimon 1.4's VECTOR: a fixed-size list, as pypaimon holds it
        ("VECTOR<FLOAT, 3>", pa.list_(pa.field("item", pa.float32()), 3)),
        ("MAP<STRING, BIGINT>", pa.map_(pa.string(), pa.int64())),
        ("ROW<a INT, b STRING>", pa.struct([("a", pa.int32()), ("b", pa.string())])),
        # a variant as Paimon (and Spark's Arrow output) holds it: its encoded value and metadata
        ("VARIANT", pa.struct([pa.field("value", pa.binary(), nullable=False),
                               pa.field("metadata", pa.binary(), nullable=False)])),
    ],
)
def test_types(text, arrow):
    assert parse_type(text).arrow == arrow


def test_not_null_suffix():
    assert parse_type("BIGINT NOT NULL").nullable is False


@pytest.mark.parametrize(
    "schema, pks, options, match",
    [
        ([("k", "INT")], ["k"], {"merge-engine": "upsert"}, "merge-engine"),
        ([("k", "INT"), ("v", "INT")], ["x"], {}, "Primary key 'x'"),
        ([("k", "INT"), ("v", "WEIRD")], ["k"], {}, "Unsupported Paimon type"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"merge-engine": "aggregation", "fields.v.aggregate-function": "avg"},
         "Unknown aggregate function"),
        ([("k", "INT"), ("v", "STRING")], ["k"], {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
         "fields.v.aggregate-function"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"merge-engine": "aggregation", "fields.w.aggregate-function": "sum"},
         "Field 'w'"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{"fields.g.sequence-group": "zz"}),
         "Field 'zz'"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{"fields.gg.sequence-group": "a"}),
         "Field 'gg'"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT"), ("h", "INT")], ["k"],
         dict(PU, **{"fields.g.sequence-group": "a", "fields.h.sequence-group": "a"}), "multiple sequence groups"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{"fields.g.sequence-group": "k"}),
         "primary key"),
        ([("k", "INT"), ("v", "INT"), ("ts", "BIGINT")], ["k"],
         {"sequence.field": "ts", "merge-engine": "aggregation", "fields.ts.aggregate-function": "max"},
         "sequence field"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"],
         dict(PU, **{"fields.g.sequence-group": "a", "fields.g.aggregate-function": "max"}), "sequence-group field"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"sequence.field": "nope"}, "sequence.field"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"sequence.field": "v,v"}, "repeatedly"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"sequence.field.sort-order": "up"}, "sequence.field.sort-order"),
        ([("k", "INT"), ("v", "INT")], ["k"], dict(PU, **{"ignore-delete": "true",
                                                          "partial-update.remove-record-on-delete": "true"}),
         "ignore-delete"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{
            "fields.g.sequence-group": "a", "partial-update.remove-record-on-delete": "true"}),
         "partial-update.remove-record-on-sequence-group"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{
            "fields.g.sequence-group": "a", "partial-update.remove-record-on-sequence-group": "g",
            "ignore-delete": "true"}), "ignore-delete"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], dict(PU, **{
            "fields.g.sequence-group": "a", "partial-update.remove-record-on-sequence-group": "a"}),
         "must be part of sequence groups"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"merge-engine": "aggregation", "aggregation.remove-record-on-delete":
                                               "true", "fields.v.ignore-retract": "true"}, "conflicting"),
        ([("k", "INT"), ("v", "INT")], ["k"], dict(PU, **{"fields.v.aggregate-function": "sum"}),
         "Must use sequence group"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"fields.v.aggregate-function": "sum"}, "merge-engine"),
        ([("k", "INT"), ("a", "INT"), ("g", "INT")], ["k"], {"fields.g.sequence-group": "a"}, "partial-update"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"partial-update.remove-record-on-delete": "true"}, "partial-update"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"ignore-delete": "yes"}, "ignore-delete"),
        ([("k", "INT"), ("v", "INT")], ["k"], {"fields.v.aggregate-functon": "sum"}, "Unknown field option"),
        ([("k", "INT"), ("v", "ARRAY<ROW<a INT>>")], ["k"], {"merge-engine": "aggregation",
                                                             "fields.v.aggregate-function": "nested_update",
                                                             "fields.v.nested-sequence-field": "a"},
         "requires .fields.v.nested-key."),
        ([("k", "INT"), ("v", "INT")], ["k"], {"changelog-producer.row-deduplicate-ignore-fields": "x"},
         "row-deduplicate-ignore-fields"),
        ([], ["k"], {}, "schema is empty"),
        ([("k", "INT")], [], {}, "at least one primary key"),
    ],
)
def test_config_errors(schema, pks, options, match):
    with pytest.raises(PaimonConfigError, match=match):
        MergeSpec.from_table_options(schema=schema, primary_keys=pks, options=options)


def test_unrelated_options_are_ignored():
    spec = MergeSpec.from_table_options([("k", "INT"), ("v", "INT")], ["k"], {
        "bucket": "4", "file.format": "parquet", "fields.v.stats-mode": "full", "fields.v.default-value": "1"})
    assert spec.engine == "deduplicate"


def test_sequence_group_on_unorderable_type():
    with pytest.raises(PaimonConfigError, match="Sequence-group field"):
        MergeSpec.from_table_options([("k", "INT"), ("a", "INT"), ("g", "BOOLEAN")], ["k"],
                                     dict(PU, **{"fields.g.sequence-group": "a"}))


@pytest.mark.parametrize("text", ["VARCHAR(2147483647)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "ROW<`a` INT, `b` STRING>",
                                  "DECIMAL(38, 18) NOT NULL", "ARRAY<ROW<id INT NOT NULL, v STRING>>", "TIME(3)"])
def test_type_spellings_from_pypaimon_schemas(text):
    parse_type(text)


@pytest.mark.parametrize("key_type", ["VARIANT", "ARRAY<INT>", "VECTOR<FLOAT, 2>",
                                      "MAP<STRING, INT>", "ROW<a INT>"])
def test_a_key_of_a_type_paimon_cannot_key_by_is_refused_naming_it(key_type):
    with pytest.raises(PaimonConfigError, match=r"type .* in primary key field 'k' is unsupported"):
        MergeSpec.from_table_options(schema=[("k", key_type), ("v", "INT")], primary_keys=["k"])
    # elsewhere in the row they are values like any other
    spec = MergeSpec.from_table_options(schema=[("k", "INT"), ("v", key_type)], primary_keys=["k"])
    assert spec.primary_keys == ("k",) or list(spec.primary_keys) == ["k"]
