"""dbt's table materialization and seeds with file_format='paimon' (the default): Paimon tables,
replaced by one OVERWRITE commit per run; file_format='parquet' keeps dbt-spark's table."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import commit_kinds, open_table

PLAIN = """
{{ config(materialized='table', partition_by=var('partition_by', none)) }}
select cast(id as bigint) as id, name {{ var('extra', '') }}
from values {{ var('rows', "(1, 'a'), (2, 'b')") }} as t(id, name)
"""
KEYED = """
{{ config(materialized='table', primary_key='id', buckets=2) }}
select cast(id as bigint) as id, name from values (1, 'a'), (2, 'b'), (2, 'c') as t(id, name)
"""
PARQUET = """
{{ config(materialized='table', file_format='parquet') }}
select 1 as id
"""
SEED = """id,name,note
1,alice,"it's"
2,bob,
"""


def rows(project, table):
    return sorted(tuple(r) for r in project.run_sql(
        f"select * from {project.test_schema}.{table}", fetch="all"))


class TestTableMaterialization:
    @pytest.fixture(scope="class")
    def models(self):
        return {"plain.sql": PLAIN, "keyed.sql": KEYED, "parquet_model.sql": PARQUET}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": SEED}

    def test_paimon_tables_one_commit_per_run(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        assert rows(project, "plain") == [(1, "a"), (2, "b")]
        assert open_table(project, "plain").primary_keys == []
        assert list(open_table(project, "keyed").primary_keys) == ["id"]
        assert rows(project, "keyed") == [(1, "a"), (2, "c")]
        assert rows(project, "people") == [(1, "alice", "it's"), (2, "bob", None)]
        # a parquet model keeps dbt-spark's table (no Paimon table)
        assert not project.adapter.config.credentials.warehouse is None
        from dbt.adapters.paimon.catalog import warehouse as wh
        credentials = project.adapter.config.credentials
        assert not wh.table_exists(credentials.warehouse, project.test_schema, "parquet_model",
                                   credentials.catalog_options)

        run_dbt(["run", "--vars", "{rows: \"(3, 'c')\"}"])
        run_dbt(["seed"])
        assert rows(project, "plain") == [(3, "c")]
        assert commit_kinds(project, "plain") == ["APPEND", "OVERWRITE"]
        assert commit_kinds(project, "keyed") == ["APPEND", "OVERWRITE"]
        assert commit_kinds(project, "people") == ["APPEND", "OVERWRITE"]
        assert rows(project, "keyed") == [(1, "a"), (2, "c")]
        assert rows(project, "people") == [(1, "alice", "it's"), (2, "bob", None)]

        # a new column: the schema evolves, still one OVERWRITE commit
        run_dbt(["run", "-s", "plain", "--vars", "{extra: ', id * 10 as score'}"])
        assert rows(project, "plain") == [(1, "a", 10), (2, "b", 20)]
        assert commit_kinds(project, "plain") == ["APPEND", "OVERWRITE", "OVERWRITE"]
        # partitioning changes: rebuilt beside the table and swapped in
        run_dbt(["run", "-s", "plain", "--vars", "{partition_by: name}"])
        assert rows(project, "plain") == [(1, "a"), (2, "b")]
        assert list(open_table(project, "plain").partition_keys) == ["name"]


class TestBadFileFormat:
    @pytest.fixture(scope="class")
    def models(self):
        return {"bad.sql": "{{ config(materialized='table', file_format='paimonn') }} select 1 as id"}

    def test_unknown_file_format(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'bad'" in output and "file_format='paimonn'" in output
        assert "Expected 'paimon'" in output
        from dbt.adapters.paimon.catalog import warehouse as wh
        credentials = project.adapter.config.credentials
        assert not wh.table_exists(credentials.warehouse, project.test_schema, "bad",
                                   credentials.catalog_options)
