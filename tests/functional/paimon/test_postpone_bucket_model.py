"""A `paimon_pk` model with `buckets=-2` (a postpone-bucket table): each dbt run writes straight
into fixed buckets (visible at once), rows a streaming writer (pypaimon 2.1 here, as Flink)
left in the postpone bucket stay invisible until `dbt run-operation compact` moves them into
real buckets; pypaimon reads the result. The write and compaction rules:
tests/integration/write/test_paimon_2x_writes.py."""

import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt

from tests.functional.paimon_tables import location, open_table

MODEL = """
{{ config(materialized='paimon_pk', primary_key=['id', 'dt'], partition_by='dt', buckets=-2,
          table_options={'postpone.default-bucket-num': '2'}) }}
select cast(id as bigint) id, dt, concat('model', id) v
from values (1, 'a'), (2, 'a'), (3, 'b') as t(id, dt)
"""


def stream_write(project, rows):
    from pypaimon import CatalogFactory

    where = location(project, "events")
    catalog = CatalogFactory.create({"warehouse": where.warehouse})
    table = catalog.get_table(f"{where.database}.events")
    builder = table.new_stream_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(pa.Table.from_pylist(rows, schema=_arrow_schema(table)))
    committer.commit(writer.prepare_commit(1), 1)
    writer.close()
    committer.close()


def _arrow_schema(table):
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


def pypaimon_rows(project):
    table = open_table(project, "events")
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sorted((r["id"], r["dt"], r["v"]) for r in data.to_pylist())


class TestPostponeBucketModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": MODEL}

    def test_runs_are_visible_and_compact_publishes_streaming_rows(self, project):
        run_dbt(["run"])
        assert str(open_table(project, "events").options.bucket()) == "-2"
        stream_write(project, [{"id": 2, "dt": "a", "v": "flink2"},
                               {"id": 4, "dt": "c", "v": "flink4"}])
        schema = project.test_schema
        assert project.run_sql(f"select id, v from {schema}.events order by id",
                               fetch="all") == [(1, "model1"), (2, "model2"), (3, "model3")]
        run_dbt(["run-operation", "compact", "--args", "{model: events}"])
        want = [(1, "a", "model1"), (2, "a", "flink2"), (3, "b", "model3"), (4, "c", "flink4")]
        assert pypaimon_rows(project) == want
        assert project.run_sql(f"select id, dt, v from {schema}.events order by id",
                               fetch="all") == want
