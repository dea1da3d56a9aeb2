"""A run's rows in the stored table's column order (materialize/model_builder.py _align): one
SQL projection, stored columns the query lacks as NULL, narrower types cast to the stored one
by its SQL name, the row kind column carried."""

from types import SimpleNamespace

import pyarrow as pa

from dbt.adapters.paimon.materialize import model_builder
from dbt.adapters.paimon.materialize.schema_changes import SchemaPlan
from tests.unit.recording_frame import RecordingFrame


def test_the_rows_are_aligned_in_one_sql_projection(monkeypatch):
    stored = pa.schema([("id", pa.int64()), ("amount", pa.decimal128(12, 2)),
                        ("gone", pa.string()), ("ratio", pa.float64())])
    monkeypatch.setattr(model_builder, "arrow_schema_of", lambda table: stored)
    builder = object.__new__(model_builder.ModelBuilder)
    builder.registry = SimpleNamespace(open_table=lambda database, table: None)
    frame = RecordingFrame(["ratio", "id", "amount", "kind"])
    plan = SchemaPlan(cast_columns={"id": "BIGINT", "amount": "DECIMAL(12, 2)"})
    builder._align(frame, "db", "t", SimpleNamespace(row_kind_column="kind"), plan)
    assert frame.projections == [("cast(`id` as bigint) as `id`",
                                  "cast(`amount` as decimal(12,2)) as `amount`",
                                  "null as `gone`", "`ratio`", "`kind`")]
