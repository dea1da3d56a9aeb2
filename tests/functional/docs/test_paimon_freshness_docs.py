"""`dbt source freshness` from Paimon metadata (no loaded_at_field: the latest snapshot's commit
time), catalog stats in `dbt docs generate`, and persist_docs as Paimon comments."""

import json
import os
from datetime import datetime, timezone

import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import open_table, snapshots

# `dbt source freshness` results are read from sources.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=2,
          persist_docs={'relation': true, 'columns': true}) }}
select cast(1 as int) id, 'a' as name union all select 2, 'b'
"""

SCHEMA_YML = """
models:
  - name: orders
    description: "Orders, one row per id"
    columns:
      - name: id
        description: "The order's id"
      - name: name
        description: "Who ordered"
sources:
  - name: lake
    schema: "{{ target.schema }}"
    freshness:
      warn_after: {count: 1, period: day}
    tables:
      - name: orders
"""


class TestPaimonFreshnessAndDocs:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "schema.yml": SCHEMA_YML}

    def test_freshness_catalog_and_comments(self, project):
        run_dbt(["run"])
        table = open_table(project, "orders")
        # persist_docs: Paimon's own schema holds the comments (schema files any engine reads)
        assert table.table_schema.comment == "Orders, one row per id"
        assert {f.name: f.description for f in table.table_schema.fields} == {
            "id": "The order's id", "name": "Who ordered"}
        # ... in the schema file Paimon Java reads (SchemaSerializer: "comment", field "description")
        warehouse = project.adapter.config.credentials.warehouse
        schema_dir = os.path.join(warehouse, f"{project.test_schema}.db", "orders", "schema")
        newest = max(os.listdir(schema_dir), key=lambda name: int(name.rsplit("-", 1)[1]))
        with open(os.path.join(schema_dir, newest)) as fh:
            stored = json.load(fh)
        assert stored["comment"] == "Orders, one row per id"
        assert [f.get("description") for f in stored["fields"]] == ["The order's id", "Who ordered"]
        # a second run with unchanged docs adds no schema version
        schema_id = table.table_schema.id
        run_dbt(["run"])
        assert open_table(project, "orders").table_schema.id == schema_id

        results = run_dbt(["source", "freshness"])
        assert [r.status for r in results] == ["pass"]
        with open(os.path.join(project.project_root, "target", "sources.json")) as fh:
            result = json.load(fh)["results"][0]
        latest = snapshots(project, "orders")[-1]
        loaded = datetime.fromisoformat(result["max_loaded_at"].replace("Z", "+00:00"))
        assert abs(loaded - datetime.fromtimestamp(latest.time_millis / 1000, timezone.utc)
                   ).total_seconds() < 1

        catalog = run_dbt(["docs", "generate"])
        stats = catalog.nodes["model.test.orders"].stats
        assert stats["paimon_primary_key"].value == "id"
        assert stats["paimon_merge_engine"].value == "deduplicate"
        assert int(float(stats["paimon_buckets"].value)) == 2
        assert stats["paimon_snapshot_id"].value == latest.id
        assert stats["paimon_rows"].value == 4       # two runs of two records, not compacted
        assert stats["paimon_files"].value >= 1 and stats["paimon_bytes"].value > 0
        assert stats["paimon_snapshot_time"].value
        # the catalog shows the persisted comments (read from the Paimon schema)
        node = catalog.nodes["model.test.orders"]
        assert node.metadata.comment == "Orders, one row per id"
        assert {c.name: c.comment for c in node.columns.values()} == {
            "id": "The order's id", "name": "Who ordered"}
