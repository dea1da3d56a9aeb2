"""Partition pruning from Spark's pushed filters (no Spark session: the filter objects are plain)."""

from pyspark.sql.datasource import EqualTo, GreaterThan, In, Not

from dbt.adapters.paimon.datasource.source import PaimonPushdownReader, combine_filters


class FakeLocation:
    name = "db.t"

    def open(self):
        class Table:
            partition_keys = ["dt", "hh"]

        return Table()


def pushed(filters):
    reader = PaimonPushdownReader(FakeLocation(), schema=None, snapshot_id=None)
    remaining = list(reader.pushFilters(filters))
    return reader.partition_filter, remaining


def test_equality_and_in_on_partition_columns_are_consumed():
    eq, isin = EqualTo(("dt",), "d1"), In(("hh",), ("08", "09"))
    consumed, remaining = pushed([eq, isin])
    assert consumed == [{"dt": "d1"}, {"hh": ["08", "09"]}]
    assert remaining == []


def test_other_filters_stay_with_spark():
    value_filter = EqualTo(("amount",), 3)
    negation = Not(EqualTo(("dt",), "d1"))
    range_filter = GreaterThan(("dt",), "d1")
    consumed, remaining = pushed([value_filter, negation, range_filter])
    assert consumed == []
    assert remaining == [value_filter, negation, range_filter]


def test_combined_filters_expand_to_partition_alternatives():
    assert combine_filters([]) is None
    assert combine_filters([{"dt": "d1"}, {"hh": ["08", "09"]}]) == [
        {"dt": "d1", "hh": "08"}, {"dt": "d1", "hh": "09"}]
    # dt = d1 AND dt IN (d1, d2) -> only d1; contradictory filters select nothing
    assert combine_filters([{"dt": "d1"}, {"dt": ["d1", "d2"]}]) == [{"dt": "d1"}]
    assert combine_filters([{"dt": "d1"}, {"dt": "d2"}]) == []
