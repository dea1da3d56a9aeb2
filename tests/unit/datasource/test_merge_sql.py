"""Which partial-update and aggregation merges Spark SQL aggregates give (merge_sql.py), from the
table's options alone (a real table's schema and options; no Spark session)."""
import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.merge_sql import merge_aggregates, merged_rows_sql
from dbt.adapters.paimon.format import warehouse as wh

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()),
                    ("d", pa.float64()), ("s", pa.string())])


@pytest.fixture
def table(tmp_path):
    names = iter(range(100))

    def make(**options):
        return wh.create_table(str(tmp_path), "db", f"t{next(names)}", SCHEMA,
                               primary_keys=["id"], options={"bucket": "1", **options})
    return make


def test_partial_update_takes_each_fields_last_non_null_value_by_sequence_number(table):
    aggregates, why = merge_aggregates(table(**{"merge-engine": "partial-update"}))
    assert why == ""
    assert dict(aggregates) == {
        c: f"max_by(`{c}`, _SEQUENCE_NUMBER) filter (where `{c}` is not null)"
        for c in ("v", "d", "s")}


def test_aggregation_functions_by_sequence_number_or_skipping_nulls(table):
    aggregates, _ = merge_aggregates(table(**{
        "merge-engine": "aggregation", "fields.v.aggregate-function": "max",
        "fields.d.aggregate-function": "first_value", "fields.s.aggregate-function": "min",
        "fields.v.ignore-retract": "true"}))
    assert dict(aggregates) == {"v": "max(`v`)", "d": "min_by(`d`, _SEQUENCE_NUMBER)",
                                "s": "min(`s`)"}
    # a field without a function: the table's default, else last_non_null_value
    aggregates, _ = merge_aggregates(table(**{
        "merge-engine": "aggregation", "fields.default-aggregate-function": "last_value",
        "fields.s.aggregate-function": "first_non_null_value"}))
    assert dict(aggregates) == {
        "v": "max_by(`v`, _SEQUENCE_NUMBER)", "d": "max_by(`d`, _SEQUENCE_NUMBER)",
        "s": "min_by(`s`, _SEQUENCE_NUMBER) filter (where `s` is not null)"}


@pytest.mark.parametrize("options, reason", [
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
     "aggregate function sum of column v"),  # Paimon checks each running sum for overflow
    ({"merge-engine": "aggregation", "fields.d.aggregate-function": "max"},
     "aggregate function max of column d"),  # Java orders NaN and -0.0 its own way
    ({"merge-engine": "aggregation", "fields.s.aggregate-function": "listagg"},
     "aggregate function listagg of column s"),
    ({"merge-engine": "partial-update", "sequence.field": "v"},
     "records ordered by a sequence field"),
    ({"merge-engine": "partial-update", "fields.v.sequence-group": "s"}, "sequence groups"),
    ({}, "a deduplicate table's merge is a choice of records"),
    ({"merge-engine": "first-row"}, "a first-row table's merge is a choice of records"),
])
def test_merges_the_runtime_keeps(table, options, reason):
    assert merge_aggregates(table(**options)) == (None, reason)


def test_the_merged_rows_query_keeps_the_columns_order():
    sql = merged_rows_sql("select * from r", ["v", "id", "dt"], ["id", "dt"],
                          (("v", "max(`v`)"),))
    assert sql == ("select max(`v`) as `v`, `id`, `dt` from (select * from r) records "
                   "group by `id`, `dt`")
