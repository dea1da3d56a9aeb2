"""A model written for dbt-databricks / dbt-spark on Delta, run with file_format='paimon': the
configs such a project sets either build the Paimon table (merge on unique_key, partition_by,
clustered_by + buckets as the bucket key, tblproperties as Paimon options, on_schema_change,
incremental_predicates, merge_update_columns, persist_docs) or fail before anything is written
with an error saying what to change (Delta's layout configs, file_format='delta' on a Spark
without Delta)."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds, open_table

# as in a dbt-databricks project, file_format switched from delta to paimon
DELTA_STYLE = """
{{ config(materialized='incremental', file_format='paimon', incremental_strategy='merge',
          unique_key=['id', 'region'], partition_by=['region'], clustered_by=['id'], buckets=2,
          tblproperties={'snapshot.num-retained.max': '20'},
          on_schema_change='append_new_columns', merge_update_columns=['amount'],
          incremental_predicates=["DBT_INTERNAL_DEST.region = 'eu'"],
          persist_docs={'relation': true, 'columns': true}) }}
select cast(id as bigint) id, region, cast(amount as int) amount, note
from values {{ var('rows', "(1, 'eu', 10, 'first'), (2, 'eu', 20, 'first')") }}
    as t(id, region, amount, note)
"""
STILL_DELTA = """
{{ config(materialized='table', file_format='delta') }}
select 1 as id
"""
LIQUID = """
{{ config(materialized='incremental', file_format='paimon', unique_key='id',
          liquid_clustered_by=['id'], location_root='/mnt/lake') }}
select 1 as id
"""
SCHEMA_YML = """
models:
  - name: delta_style
    description: "Sales, merged by id"
    columns:
      - {name: id, description: "The sale"}
"""


class TestDeltaProjectOnPaimon:
    @pytest.fixture(scope="class")
    def models(self):
        return {"delta_style.sql": DELTA_STYLE, "still_delta.sql": STILL_DELTA,
                "liquid.sql": LIQUID, "schema.yml": SCHEMA_YML}

    def test_delta_configs_work_or_say_what_to_change(self, project):
        results, output = run_dbt_and_capture(["run"], expect_pass=False)
        status = {r.node.name: r.status for r in results}
        assert status == {"delta_style": "success", "still_delta": "error",
                          "liquid": "error"}
        # Spark here has no Delta data source: the fix is named, nothing is created
        assert "Model 'still_delta'" in output and "file_format='delta'" in output
        assert "file_format='paimon'" in output and "spark.jars.packages" in output
        # Delta-only layout configs: each named with why and what to do
        assert "Model 'liquid'" in output and "`liquid_clustered_by`" in output
        assert "`location_root`" in output and "warehouse" in output
        from dbt.adapters.paimon.catalog import warehouse as wh
        credentials = project.adapter.config.credentials
        assert not wh.table_exists(credentials.warehouse, project.test_schema, "liquid",
                                   credentials.catalog_options)

        table = open_table(project, "delta_style")
        assert list(table.primary_keys) == ["id", "region"]
        assert list(table.partition_keys) == ["region"]
        options = dict(table.table_schema.options)
        assert options["bucket"] == "2" and options["bucket-key"] == "id"
        assert options["snapshot.num-retained.max"] == "20"
        assert table.table_schema.comment == "Sales, merged by id"

        # a merge run: amount updated, note kept (merge_update_columns), key 3 inserted
        run_dbt(["run", "-s", "delta_style", "--vars",
                 "{rows: \"(1, 'eu', 11, 'second'), (3, 'eu', 30, 'second')\"}"])
        rows = sorted(tuple(r) for r in project.run_sql(
            f"select id, region, amount, note from {project.test_schema}.delta_style",
            fetch="all"))
        assert rows == [(1, "eu", 11, "first"), (2, "eu", 20, "first"), (3, "eu", 30, "second")]
        assert commit_kinds(project, "delta_style") == ["APPEND", "APPEND"]
