"""`dbt run-operation remove_orphan_files` with `older_than: 0` deletes what a killed run leaves
(data files and manifests no snapshot references) and nothing the table needs. Runs in the
functional-test process (dbt's `project` fixture); test_crash_points.py makes real debris by
killing runs and calls the same operation in-process."""
from __future__ import annotations

import os
import shutil

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}
select cast(id as bigint) as id, 'v' as v from range(0, 20)
"""


class TestRemoveOrphanFilesThroughDbt:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orphans.sql": MODEL}

    def test_older_than_zero_deletes_unreferenced_files_only(self, project):
        run_dbt(["run"])
        warehouse = project.adapter.config.credentials.warehouse
        root = os.path.join(warehouse, f"{project.test_schema}.db", "orphans")
        bucket = os.path.join(root, "bucket-0")
        live = sorted(os.listdir(bucket))
        debris = [os.path.join(bucket, "data-killed-run-0.parquet"),
                  os.path.join(root, "manifest", "manifest-killed-run-0")]
        shutil.copy(os.path.join(bucket, live[0]), debris[0])
        shutil.copy(debris[0], debris[1])
        _, output = run_dbt_and_capture(["run-operation", "remove_orphan_files", "--args",
                                         "{model: orphans, older_than: 0}"])
        assert "deleted 2 orphan file(s)" in output, output
        assert not any(os.path.exists(p) for p in debris)
        assert sorted(os.listdir(bucket)) == live
        rows = project.run_sql(f"select count(*) from {project.test_schema}.orphans",
                               fetch="one")
        assert rows[0] == 20
