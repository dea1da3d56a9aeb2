"""Python models that build Paimon tables: the model's DataFrame is written as SQL models' rows
are (one Paimon commit, the table's merge engine), for the Paimon materializations and for
dbt's table and incremental; `dbt.ref()` reads Paimon tables; a Python model keeps a Spark
format only where file_format names one."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import commit_kinds, open_table

SOURCE = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * {{ var('batch', 1) }} as bigint) as v
from range(0, 4)
"""

KEYED = """
def model(dbt, session):
    dbt.config(materialized="paimon_pk", primary_key="id", buckets=2,
               merge_engine="aggregation", aggregations={"total": "sum"})
    return dbt.ref("source_rows").selectExpr("id", "v as total")
"""

APPENDED = """
import pandas as pd

def model(dbt, session):
    dbt.config(materialized="paimon_append")
    return pd.DataFrame({"id": [1, 2], "note": ["a", "b"]})
"""

REPLACED = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.ref("source_rows").groupBy().sum("v").withColumnRenamed("sum(v)", "total")
"""

GROWING = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id")
    rows = dbt.ref("source_rows")
    if dbt.is_incremental:
        # only the keys not stored yet, read from the model's own Paimon table
        stored = session.table(str(dbt.this)).selectExpr("max(id) as top").first().top
        rows = rows.where(rows.id > stored - 2)
    return rows.selectExpr("id", "v")
"""

# two Python writers of one partial-update table, each owning its columns
NAMED = """
def model(dbt, session):
    dbt.config(materialized="partial_update", primary_key="id", buckets=1, target="wide")
    return dbt.ref("source_rows").selectExpr("id", "concat('n', cast(v as string)) as name")
"""

SCORED = """
def model(dbt, session):
    dbt.config(materialized="partial_update", primary_key="id", buckets=1, target="wide")
    return dbt.ref("source_rows").where("id < 2").selectExpr("id", "v * 10 as score")
"""

PARQUET = """
def model(dbt, session):
    dbt.config(materialized="table", file_format="parquet")
    return session.range(3)
"""


def stored(project, name):
    table = open_table(project, name)
    read = table.new_read_builder()
    return read.new_read().to_arrow(read.new_scan().plan().splits()).to_pylist()


class TestPythonModelsBuildPaimonTables:
    @pytest.fixture(scope="class")
    def models(self):
        return {"source_rows.sql": SOURCE, "keyed.py": KEYED, "appended.py": APPENDED,
                "replaced.py": REPLACED, "growing.py": GROWING, "as_parquet.py": PARQUET,
                "named.py": NAMED, "scored.py": SCORED}

    def test_each_run_is_one_paimon_commit_of_the_dataframe(self, project):
        assert len(run_dbt(["run"])) == 8
        run_dbt(["run", "--vars", "{batch: 2}"])
        # aggregation engine: each run's v summed per key (1x + 2x)
        assert sorted((r["id"], r["total"]) for r in stored(project, "keyed")) == \
            [(i, 3 * i) for i in range(4)]
        assert commit_kinds(project, "keyed") == ["APPEND", "APPEND"]
        assert sorted(r["id"] for r in stored(project, "appended")) == [1, 1, 2, 2]
        assert [r["total"] for r in stored(project, "replaced")] == [2 * 6]
        assert commit_kinds(project, "replaced")[-1] == "OVERWRITE"
        # incremental: the second run merged ids 2-3 again (v 2x) by key
        assert sorted((r["id"], r["v"]) for r in stored(project, "growing")) == \
            [(0, 0), (1, 1), (2, 4), (3, 6)]
        # partial update: each writer's columns, the other's kept (2x: the second run)
        assert sorted((r["id"], r["name"], r["score"]) for r in stored(project, "wide")) == \
            [(0, "n0", 0), (1, "n2", 20), (2, "n4", None), (3, "n6", None)]
        # SQL reads the Python models' Paimon tables like any other
        total = project.run_sql(f"select total from {project.test_schema}.replaced",
                                fetch="one")[0]
        assert total == 12
        # file_format='parquet': a Spark table, no Paimon table
        assert project.run_sql(f"select count(*) from {project.test_schema}.as_parquet",
                               fetch="one")[0] == 3
        with pytest.raises(Exception):
            open_table(project, "as_parquet")
