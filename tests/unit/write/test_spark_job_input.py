"""The projection a primary-key run's rows get before the write job (write/spark_job.py
_select_input): one SQL projection, Spark names for columns that are no plain identifiers, the
row kind as a string, a sequence number per row; a column mismatch names the model."""

from types import SimpleNamespace

import pytest

from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write.spark_job import _select_input
from tests.unit.recording_frame import RecordingFrame


def plan(names, spark_names=()):
    mapping = dict(spark_names)
    return SimpleNamespace(names=names, spark_name=lambda n: mapping.get(n, n),
                           model_name="m", table_name="db.t")


def test_the_rows_are_projected_in_one_sql_projection():
    frame = RecordingFrame(["id", "a b", "kind"])
    _select_input(frame, plan(["id", "a b"], [("a b", "_col1")]), "kind")
    assert frame.projections == [("`id` as `id`", "`a b` as `_col1`",
                                  "cast(`kind` as string) as `_row_kind`",
                                  "monotonically_increasing_id() as `_seq`")]


def test_without_a_row_kind_column_no_row_kind_is_carried():
    frame = RecordingFrame(["id"])
    _select_input(frame, plan(["id"]), None)
    assert frame.projections == [("`id` as `id`", "monotonically_increasing_id() as `_seq`")]


@pytest.mark.parametrize("columns, kind, message", [
    (["id", "extra"], None, r"missing \[\], unknown \['extra'\]"),
    (["id"], "kind", "row_kind_column 'kind' is not a column"),
])
def test_a_column_mismatch_names_the_model(columns, kind, message):
    with pytest.raises(PaimonDataError, match=message):
        _select_input(RecordingFrame(columns), plan(["id"]), kind)
