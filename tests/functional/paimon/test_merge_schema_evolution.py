"""dbt-databricks' `merge_with_schema_evolution` on a Paimon table: Delta's MERGE WITH SCHEMA
EVOLUTION. A run's new columns are added to the table (ALTER TABLE ... ADD COLUMNS, in Paimon's
schema), stored rows the run does not match read them as NULL; a column the run lacks keeps its
stored value in the rows the run matches and is NULL in the rows it inserts, as Delta's
`UPDATE SET *` / `INSERT *` with schema evolution do. Without it (on_schema_change's default
ignore) a new column is left out, as dbt documents."""

import pytest
from dbt.tests.util import run_dbt

# run 1: id, a; run 2 (cols 'ab'): id, a, b for ids 2-3; run 3 (cols 'b'): id, b for ids 3-4
QUERY = """select cast(id as bigint) as id
{%- if 'a' in var('cols', 'a') %}, concat('a', cast(id as string), '-', '{{ var('run', 1) }}') as a{% endif %}
{%- if 'b' in var('cols', 'a') %}, id * 10 + {{ var('run', 1) }} as b{% endif %}
from range({{ var('low', 1) }}, {{ var('high', 3) }})"""

EVOLVING = """{{ config(materialized='incremental', unique_key='id',
                  merge_with_schema_evolution=true) }}
""" + QUERY

IGNORING = """{{ config(materialized='incremental', unique_key='id') }}
""" + QUERY

NOT_A_MERGE = """{{ config(materialized='incremental', incremental_strategy='append',
                  merge_with_schema_evolution=true) }}
select 1 as id"""


def rows(project, name, columns):
    return sorted(tuple(r) for r in project.run_sql(
        f"select {columns} from {project.test_schema}.{name}", fetch="all"))


class TestMergeWithSchemaEvolution:
    @pytest.fixture(scope="class")
    def models(self):
        return {"evolving.sql": EVOLVING, "ignoring.sql": IGNORING}

    def test_new_columns_join_and_missing_ones_keep_their_values(self, project):
        run_dbt(["run"])  # ids 1-2
        run_dbt(["run", "--vars", "{cols: ab, run: 2, low: 2, high: 4}"])  # ids 2-3
        assert rows(project, "evolving", "id, a, b") == [
            (1, "a1-1", None), (2, "a2-2", 22), (3, "a3-2", 32)]
        columns = [r[0] for r in project.run_sql(
            f"describe {project.test_schema}.ignoring", fetch="all")]
        assert "b" not in columns  # on_schema_change's ignore: the new column is left out
        assert rows(project, "ignoring", "id, a") == [(1, "a1-1"), (2, "a2-2"), (3, "a3-2")]

        run_dbt(["run", "--select", "evolving", "--vars", "{cols: b, run: 3, low: 3, high: 5}"])
        assert rows(project, "evolving", "id, a, b") == [
            (1, "a1-1", None), (2, "a2-2", 22), (3, "a3-2", 33), (4, None, 43)]


class TestSchemaEvolutionOutsideAMerge:
    @pytest.fixture(scope="class")
    def models(self):
        return {"not_a_merge.sql": NOT_A_MERGE}

    def test_is_refused_before_anything_is_written(self, project):
        result = run_dbt(["run"], expect_pass=False)
        message = result.results[0].message
        assert "Model 'not_a_merge'" in message
        assert "`merge_with_schema_evolution` applies to incremental models with " \
               "incremental_strategy='merge'" in message
        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        assert [t for t in tables if not t[2]] == []  # isTemporary: a view of another test
