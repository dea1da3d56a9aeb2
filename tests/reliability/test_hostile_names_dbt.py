"""Hostile names through dbt (runs in the functional-test process: it uses dbt's `project`
fixture and the adapter's Spark session). Aliases and schemas with dots, `..`, slashes, quotes
or SQL fragments are refused with a compilation error naming the model before anything is
written; odd column names are quoted and round-trip."""
from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import CompilationError

from dbt.adapters.paimon.catalog import warehouse as wh

ROWS = "select cast(1 as bigint) as id, 'x' as v"
BAD_ALIASES = {
    "escape_up": "../../escaped",
    "slash": "a/b",
    "dotted": "a.b",
    "injection": "t; drop table victim; --",
    "quoted": "o'neil",
    "system_table": "t$snapshots",
}
ODD_COLUMNS_MODEL = """{{ config(materialized='paimon_pk', primary_key=['id', 'weird.col']) }}
select cast(1 as bigint) as id, 'k.1' as `weird.col`, 'it''s' as `it's`, 2 as `sp ace`,
       'ü' as `ünï`, 'drop' as `x; drop table victim; --`
"""


def _pk(alias: str) -> str:
    return (f"{{{{ config(materialized='paimon_pk', primary_key='id', alias={alias!r}) }}}}\n"
            + ROWS)


class TestHostileNames:
    @pytest.fixture(scope="class")
    def models(self):
        models = {f"{name}.sql": _pk(alias) for name, alias in BAD_ALIASES.items()}
        # enabled only when asked: dbt lists every enabled model's schema before any run
        models["bad_schema.sql"] = ("{{ config(materialized='paimon_pk', primary_key='id', "
                                    "schema='up/../../x', enabled=var('hostile_schema', "
                                    "false)) }}\n" + ROWS)
        models["victim.sql"] = "{{ config(materialized='paimon_pk', primary_key='id') }}\n" + ROWS
        models["odd_columns.sql"] = ODD_COLUMNS_MODEL
        return models

    def test_refused_before_anything_is_written(self, project):
        warehouse = project.adapter.config.credentials.warehouse
        outside_before = sorted(os.listdir(os.path.dirname(warehouse)))
        inside_before = sorted(os.listdir(warehouse))  # the process's warehouse is shared
        run_dbt(["run", "--select", "victim", "odd_columns"])
        for name, alias in BAD_ALIASES.items():
            _, output = run_dbt_and_capture(["run", "--select", name], expect_pass=False)
            assert f"Compilation Error in model {name}" in output, output
            assert f"name {alias!r} is not supported" in output, output
        # the schema is made before any model runs: dbt stops the invocation there
        with pytest.raises(CompilationError, match=r"schema name '.*up/\.\./\.\./x' is not "
                                                   r"supported"):
            run_dbt(["run", "--select", "bad_schema", "--vars", "{hostile_schema: true}"],
                    expect_pass=False)
        # nothing escaped the warehouse, no table but the two good ones, the victim intact
        assert sorted(os.listdir(os.path.dirname(warehouse))) == outside_before
        assert sorted(os.listdir(warehouse)) == inside_before
        assert wh.list_tables(warehouse, project.test_schema) == ["odd_columns", "victim"]
        assert project.run_sql(f"select id, v from {project.test_schema}.victim",
                               fetch="all") == [(1, "x")]
        rows = project.run_sql(f"select * from {project.test_schema}.odd_columns", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "k.1", "it's", 2, "ü", "drop")]
