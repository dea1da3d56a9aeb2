"""VARIANT columns written by models (Spark 4's `parse_json`): a primary-key model keeps the
variant each key's latest run wrote, on both write paths; the table's schema says VARIANT, Spark
reads it back as VARIANT (`variant_get`), and pypaimon 2.1 reads exactly the value and metadata
bytes Spark encodes for the same JSON (Paimon stores a variant as that pair)."""

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.paimon import environments
from tests.functional.paimon_tables import open_table

MODEL = """{{{{ config(materialized='paimon_pk', primary_key='id', buckets=2,
                    write_path='{path}') }}}}
select cast(id as bigint) as id,
       parse_json(concat('{{"a":', cast(id * {{{{ var('k', 1) }}}} as string), ',"tag":"t"}}')) as v
from range({{{{ var('low', 0) }}}}, 4)
"""
APPEND = """{{ config(materialized='paimon_append') }}
select cast(id as bigint) as id, parse_json('[1, {"x": null}]') as v from range(2)
"""


def pypaimon_rows(project, table):
    read = open_table(project, table).new_read_builder()
    rows = read.new_read().to_arrow(read.new_scan().plan().splits())
    return rows.sort_by("id")


def spark_encoded(json_texts):
    """Spark's own encoding (value, metadata) of each JSON text, as one Arrow struct array."""
    spark = environments.current_registry().spark
    literals = ", ".join("parse_json('" + text.replace("'", "''") + "')" for text in json_texts)
    return spark.sql(f"select explode(array({literals})) as v").toArrow().column("v") \
        .combine_chunks()


class TestVariantColumns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"in_process.sql": MODEL.format(path="in_process"),
                "distributed.sql": MODEL.format(path="distributed"),
                "events.sql": APPEND}

    def test_variant_columns_merge_and_read_back(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{k: 10, low: 2}", "-s", "in_process", "distributed"])
        expected = [f'{{"a":{i * (10 if i >= 2 else 1)},"tag":"t"}}' for i in range(4)]
        encoded = spark_encoded(expected)
        for table in ("in_process", "distributed"):
            field = open_table(project, table).fields[1]
            assert str(field.type).upper().startswith("VARIANT"), field
            read = project.run_sql(
                f"select id, variant_get(v, '$.a', 'int') as a, variant_get(v, '$.tag', 'string')"
                f" as tag, typeof(v) as t from {project.test_schema}.{table} order by id",
                fetch="all")
            assert [tuple(r) for r in read] == [
                (i, i * (10 if i >= 2 else 1), "t", "variant") for i in range(4)], table
            stored = pypaimon_rows(project, table).column("v").combine_chunks()
            for part in ("value", "metadata"):
                assert stored.field(part).to_pylist() == encoded.field(part).to_pylist(), \
                    (table, part)

        rows = project.run_sql(
            f"select id, to_json(v) from {project.test_schema}.events order by id", fetch="all")
        assert [tuple(r) for r in rows] == [(0, '[1,{"x":null}]'), (1, '[1,{"x":null}]')]
