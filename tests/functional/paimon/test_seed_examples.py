"""The seed documents' merge-engine examples as dbt models, with the results the documents print.

Every `INSERT INTO` of a document is one dbt run (one Paimon commit): each model reads the rows
of the run's batch (tests/functional/batch_runs.py) from its seed, and the project runs batch 1,
2, 3, 4 in turn. Expected rows are the documents' printed outputs, copied verbatim (seed 001:
partial update and sequence groups; seeds 002/003: one example per merge engine). Seed 001's
first sequence-group example and seed 002's deduplicate-with-delete example are in
test_paimon_pk.py.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.batch_runs import BATCH_SQL, run_batch


def model(config: str, columns: str, seed: str) -> str:
    return ("{{ config(" + config + ") }}\nselect " + columns +
            "\nfrom {{ ref('" + seed + "') }} where batch = " + BATCH_SQL + "\n")


INT7 = ("cast(k as int) k, cast(a as int) a, cast(b as int) b, cast(g_1 as int) g_1, "
        "cast(c as int) c, cast(d as int) d, cast(g_2 as int) g_2")

SEEDS = {
    # seed 001, 'fields.g_2,g_3.sequence-group' = 'c,d' (several fields compared in order)
    "sg_input.csv": "batch,k,a,b,g_1,c,d,g_2,g_3\n"
                    "1,1,1,1,1,1,1,1,1\n"
                    "2,1,2,2,2,2,2,1,\n"
                    "3,1,3,3,1,3,3,3,1\n",
    # seed 001, aggregation for partial update: b first_value in group a, d sum in group c
    "pu_agg_input.csv": "batch,k,a,b,c,d\n"
                        "1,1,1,1,,\n"
                        "2,1,,,1,1\n"
                        "3,1,2,2,,\n"
                        "4,1,,,2,2\n",
    # seed 001, table AGG: a sum in group (g_1, g_3), c in group g_2 without aggregate
    "agg_input.csv": "batch,k,a,b,g_1,c,g_2,g_3\n"
                     "1,1,1,1,1,1,1,1\n"
                     "2,1,2,2,2,2,,2\n"
                     "3,1,3,3,2,3,3,1\n",
    # seeds 002/003: one record per INSERT
    "fruit_input.csv": "batch,k,v1,v2\n"
                       "1,1,2.0,apple\n"
                       "2,1,4.0,banana\n"
                       "3,1,8.0,cherry\n",
    "product_input.csv": "batch,product_id,price,sales\n"
                         "1,1,23.0,15\n"
                         "2,1,30.2,20\n",
    "book_input.csv": "batch,k,v1,v2,v3\n"
                      "1,1,23.0,10,\n"
                      "2,1,,,This is a book\n"
                      "3,1,25.2,,\n",
    # seeds 002/003 give this table (groups with max and sum) without data: in-order records,
    # so the result is what the documents describe: a and c the latest, b the max, d the sum
    "group_agg_input.csv": "batch,k,a,b,g_1,c,d,g_2\n"
                           "1,1,a1,5,1,c1,10,1\n"
                           "2,1,a2,3,2,c2,20,2\n"
                           "3,1,a3,7,3,c3,5,3\n",
    # seeds 002/003 'sequence.field': records merge in the field's order, not arrival order
    "late_input.csv": "batch,k,v,ts\n"
                      "1,1,newest,30\n"
                      "2,1,oldest,10\n"
                      "3,1,middle,20\n",
}

MODELS = {
    "sg.sql": model(
        "materialized='partial_update', primary_key='k', "
        "sequence_groups={'g_1': ['a', 'b'], 'g_2,g_3': ['c', 'd']}",
        INT7 + ", cast(g_3 as int) g_3", "sg_input"),
    "pu_agg.sql": model(
        "materialized='partial_update', primary_key='k', "
        "sequence_groups={'a': ['b'], 'c': ['d']}, "
        "aggregations={'b': 'first_value', 'd': 'sum'}",
        "cast(k as int) k, cast(a as int) a, cast(b as int) b, cast(c as int) c, "
        "cast(d as int) d", "pu_agg_input"),
    "pu_default_agg.sql": model(
        "materialized='partial_update', primary_key='k', "
        "sequence_groups={'a': ['b'], 'c': ['d']}, aggregations={'d': 'sum'}, "
        "default_aggregate_function='last_non_null_value'",
        "cast(k as int) k, cast(a as int) a, cast(b as int) b, cast(c as int) c, "
        "cast(d as int) d", "pu_agg_input"),
    "agg.sql": model(
        "materialized='partial_update', primary_key='k', aggregations={'a': 'sum'}, "
        "sequence_groups={'g_1,g_3': ['a'], 'g_2': ['c']}",
        "cast(k as int) k, cast(a as int) a, cast(b as int) b, cast(g_1 as int) g_1, "
        "cast(c as string) c, cast(g_2 as int) g_2, cast(g_3 as int) g_3", "agg_input"),
    "fruit_dedup.sql": model(
        "materialized='paimon_pk', primary_key='k', merge_engine='deduplicate'",
        "cast(k as int) k, cast(v1 as double) v1, cast(v2 as string) v2", "fruit_input"),
    "fruit_first.sql": model(
        "materialized='paimon_pk', primary_key='k', merge_engine='first-row'",
        "cast(k as int) k, cast(v1 as double) v1, cast(v2 as string) v2", "fruit_input"),
    "product_agg.sql": model(
        "materialized='paimon_pk', primary_key='product_id', merge_engine='aggregation', "
        "aggregations={'price': 'max', 'sales': 'sum'}",
        "cast(product_id as bigint) product_id, cast(price as double) price, "
        "cast(sales as bigint) sales", "product_input"),
    "book_partial.sql": model(
        "materialized='partial_update', primary_key='k'",
        "cast(k as int) k, cast(v1 as double) v1, cast(v2 as bigint) v2, "
        "cast(v3 as string) v3", "book_input"),
    "group_agg.sql": model(
        "materialized='partial_update', primary_key='k', "
        "sequence_groups={'g_1': ['a', 'b'], 'g_2': ['c', 'd']}, "
        "aggregations={'b': 'max', 'd': 'sum'}",
        "cast(k as int) k, cast(a as string) a, cast(b as int) b, cast(g_1 as int) g_1, "
        "cast(c as string) c, cast(d as int) d, cast(g_2 as int) g_2", "group_agg_input"),
    "late.sql": model(
        "materialized='paimon_pk', primary_key='k', sequence_field='ts'",
        "cast(k as int) k, cast(v as string) v, cast(ts as bigint) ts", "late_input"),
}


class TestSeedDocumentExamples:
    @pytest.fixture(scope="class")
    def seeds(self):
        return SEEDS

    @pytest.fixture(scope="class")
    def models(self):
        return MODELS

    def test_examples_print_the_documented_rows(self, project):
        def rows(name):
            table = f"{project.test_schema}.{name}"
            return [tuple(r) for r in project.run_sql(f"select * from {table}", fetch="all")]

        run_dbt(["seed"])
        after = {}
        for batch in (1, 2, 3, 4):
            run_batch(["run"], batch)
            after[batch] = {name[:-4]: rows(name[:-4]) for name in MODELS}

        # seed 001, SG: "output 1, 2, 2, 2, 1, 1, 1, 1" then "output 1, 2, 2, 2, 3, 3, 3, 1"
        assert after[2]["sg"] == [(1, 2, 2, 2, 1, 1, 1, 1)]
        assert after[3]["sg"] == [(1, 2, 2, 2, 3, 3, 3, 1)]
        # seed 001, aggregation for partial update: "output 1, 2, 1, 2, 3"
        assert after[4]["pu_agg"] == [(1, 2, 1, 2, 3)]
        # seed 001, fields.default-aggregate-function: "output 1, 2, 2, 2, 3"
        assert after[4]["pu_default_agg"] == [(1, 2, 2, 2, 3)]
        # seed 001, AGG: 'output 1, 3, 2, 2, "1", 1, 2' then 'output 1, 6, 3, 2, "3", 3, 2'
        assert after[2]["agg"] == [(1, 3, 2, 2, "1", 1, 2)]
        assert after[3]["agg"] == [(1, 6, 3, 2, "3", 3, 2)]
        # seeds 002/003, one example per engine
        assert after[3]["fruit_dedup"] == [(1, 8.0, "cherry")]
        assert after[3]["fruit_first"] == [(1, 2.0, "apple")]
        assert after[2]["product_agg"] == [(1, 30.2, 35)]
        assert after[3]["book_partial"] == [(1, 25.2, 10, "This is a book")]
        assert after[3]["group_agg"] == [(1, "a3", 7, 3, "c3", 35, 3)]
        # sequence.field: the record with the largest ts wins whatever the arrival order
        assert [after[b]["late"] for b in (1, 2, 3)] == [[(1, "newest", 30)]] * 3
        # a run without rows for a model changes nothing
        assert after[4]["sg"] == after[3]["sg"] and after[4]["agg"] == after[3]["agg"]
