"""The bytes a query reads, from Spark's explain(mode="cost") text (write/plan_size.py).

The plans below are Spark 4's own output for queries on Paimon catalog tables (Python data
source scans, which carry no statistics) and on relations Spark can size.
"""
from __future__ import annotations

from dbt.adapters.paimon.write.plan_size import estimate_explained, optimized_plan

JOIN_OF_PAIMON_SCANS = """== Optimized Logical Plan ==
Project [id#26, v#29], Statistics(sizeInBytes=2.84E+37 B)
+- Join Inner, (id#26 = id#28), Statistics(sizeInBytes=3.19E+37 B)
   :- Project [id#26], Statistics(sizeInBytes=3.0 EiB)
   :  +- Filter (id#26 > 3), Statistics(sizeInBytes=8.0 EiB)
   :     +- RelationV2[id#26, v#27] spark_catalog.db.orders, Statistics(sizeInBytes=8.0 EiB)
   +- Filter (id#28 > 3), Statistics(sizeInBytes=8.0 EiB)
      +- RelationV2[id#28, v#29] spark_catalog.db.customers, Statistics(sizeInBytes=8.0 EiB)

== Physical Plan ==
AdaptiveSparkPlan isFinalPlan=false
+- Project [id#26, v#29]
   +- BatchScan paimon.db.orders[id#26, v#27] (Python) RuntimeFilters: []
"""

UNION_WITH_SELF = """== Optimized Logical Plan ==
Union false, false, Statistics(sizeInBytes=16.0 EiB)
:- Filter (id#30 > 3), Statistics(sizeInBytes=8.0 EiB)
:  +- RelationV2[id#30, v#31] spark_catalog.db.orders, Statistics(sizeInBytes=8.0 EiB)
+- RelationV2[id#32, v#33] spark_catalog.db.orders, Statistics(sizeInBytes=8.0 EiB)

== Physical Plan ==
*(1) Union
"""

# Spark sizes a range itself; a join of two ranges is the product of their sizes in Spark
JOIN_OF_RANGES = """== Optimized Logical Plan ==
Join Inner, (id#0L = id#2L), Statistics(sizeInBytes=62.5 MiB)
:- Range (0, 1000, step=1, splits=Some(2)), Statistics(sizeInBytes=7.8 KiB, rowCount=1.00E+3)
+- Filter (id#2L > 5), Statistics(sizeInBytes=7.8 KiB)
   +- Range (0, 1000, step=1, splits=Some(2)), Statistics(sizeInBytes=7.8 KiB, rowCount=1.00E+3)

== Physical Plan ==
"""

SEMI_JOIN = """== Optimized Logical Plan ==
Join LeftSemi, (id#26 = id#28), Statistics(sizeInBytes=8.0 EiB)
:- RelationV2[id#26, v#27] spark_catalog.db.orders, Statistics(sizeInBytes=8.0 EiB)
+- RelationV2[id#28] spark_catalog.db.customers, Statistics(sizeInBytes=8.0 EiB)

== Physical Plan ==
"""

FORMAT_READ = """== Optimized Logical Plan ==
RelationV2[id#34, v#35] paimon, Statistics(sizeInBytes=8.0 EiB)

== Physical Plan ==
"""

ONLY_SPARK_SIZED = """== Optimized Logical Plan ==
Project [cast(id#0L as int) AS id#2], Statistics(sizeInBytes=3.9 KiB)
+- Range (0, 1000, step=1, splits=Some(2)), Statistics(sizeInBytes=7.8 KiB, rowCount=1.00E+3)

== Physical Plan ==
"""

SIZES = {("db", "orders"): 1000, ("db", "customers"): 300}


def sizes(database, table):
    return SIZES.get((database, table))


def test_the_tree_is_parsed_with_each_nodes_statistics():
    root = optimized_plan(JOIN_OF_PAIMON_SCANS)
    assert root.name == "Project"
    (join,) = root.children
    assert join.name == "Join" and [c.name for c in join.children] == ["Project", "Filter"]
    assert join.children[0].children[0].children[0].text.startswith("RelationV2[id#26")
    assert join.children[1].children[0].spark_bytes is None     # 8 EiB: no statistics
    assert optimized_plan("no plan here") is None


def test_paimon_scans_are_sized_from_metadata_and_joins_add_their_inputs():
    found = estimate_explained(JOIN_OF_PAIMON_SCANS, sizes)
    assert found.bytes == 1000 + 300
    assert found.paimon_tables == ("db.customers", "db.orders")


def test_a_table_read_twice_counts_twice_but_is_looked_up_once():
    calls = []

    def counting(database, table):
        calls.append(table)
        return sizes(database, table)

    assert estimate_explained(UNION_WITH_SELF, counting).bytes == 2000
    assert calls == ["orders"]


def test_a_semi_join_weighs_its_left_side():
    assert estimate_explained(SEMI_JOIN, sizes).bytes == 1000


def test_spark_figures_stand_where_spark_knows_them_except_a_joins_product():
    assert estimate_explained(ONLY_SPARK_SIZED).bytes == int(3.9 * 1024)
    # Spark says 62.5 MiB (the product); the sum of the inputs is 15.6 KiB
    assert estimate_explained(JOIN_OF_RANGES).bytes == 2 * int(7.8 * 1024)


def test_any_scan_without_a_size_leaves_the_estimate_unknown():
    assert estimate_explained(JOIN_OF_PAIMON_SCANS).bytes is None          # no metadata lookup
    assert estimate_explained(JOIN_OF_PAIMON_SCANS, lambda d, t: None).bytes is None
    assert estimate_explained(
        JOIN_OF_PAIMON_SCANS, lambda d, t: 5 if t == "orders" else None).bytes is None
    assert estimate_explained(FORMAT_READ, sizes).bytes is None   # which table is not in the plan


HIDDEN_ENTRY_SCAN = """== Optimized Logical Plan ==
Filter (id#26 > 3), Statistics(sizeInBytes=8.0 EiB)
+- RelationV2[id#26, v#27] spark_catalog.db__paimon.read_orders, Statistics(sizeInBytes=8.0 EiB)

== Physical Plan ==
"""


def test_a_view_read_through_the_python_source_is_sized_as_its_paimon_table():
    # the view db.orders reads the hidden table db__paimon.read_orders (registry.py)
    asked = []

    def table_bytes(database, table):
        asked.append((database, table))
        return 1234

    found = estimate_explained(HIDDEN_ENTRY_SCAN, table_bytes)
    assert asked == [("db", "orders")]
    assert found.bytes == 1234 and found.paimon_tables == ("db.orders",)
