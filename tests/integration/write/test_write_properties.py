"""Property tests of the write path: random record streams (random row kinds, NULL sequence
fields, duplicate keys within a run, NaN, unicode and long strings, empty runs) written as
several runs through the real Spark write path read back exactly as the merge runtime applied
to the same stream, one commit per run. A run the write path refuses (PaimonDataError) leaves
the table as it was and is left out of the expected stream.
"""
from __future__ import annotations

import math
import uuid

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import write_primary_key_run
from write_helpers import expected_after, make_table, read_back, snapshot_ids

SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False),
                    pa.field("tag", pa.string(), nullable=False),
                    ("ts", pa.int64()), ("amount", pa.float64()), ("note", pa.string())])
KEYS = ["id", "tag"]
# key strings inline (<= 7 bytes) and in the variable part of Paimon's BinaryRow, multi-byte
TAGS = ["", "a", "é", "日本語のキー", "emoji-\U0001F600", "x" * 40]
ENGINES = {
    "deduplicate-sequence-field": {"bucket": "2", "sequence.field": "ts"},
    "aggregation-sum": {"bucket": "3", "merge-engine": "aggregation",
                        "fields.amount.aggregate-function": "sum",
                        "fields.ts.aggregate-function": "last_value"},
}

records = st.fixed_dictionaries({
    "id": st.integers(0, 4),
    "tag": st.sampled_from(TAGS),
    "ts": st.one_of(st.none(), st.integers(-3, 3)),
    "amount": st.one_of(st.none(), st.just(math.nan), st.floats(-1e6, 1e6, allow_nan=False)),
    "note": st.one_of(st.none(), st.text(max_size=8), st.text(min_size=200, max_size=600)),
    "op": st.sampled_from(["+I", "+I", "+U", "-U", "-D"]),
})
streams = st.lists(st.lists(records, max_size=12), min_size=1, max_size=3)


def _run_table(rows) -> pa.Table:
    schema = SCHEMA.append(pa.field("op", pa.string()))
    return pa.Table.from_pylist(rows, schema=schema)


def _comparable(table: pa.Table):
    """Rows sorted by key, NaN made equal to itself."""
    rows = table.sort_by([(k, "ascending") for k in KEYS]).to_pylist()
    return [{k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in rows]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(stream=streams)
def test_random_streams_read_back_as_the_runtime_merges_them(spark, tmp_path, engine, stream):
    location = make_table(tmp_path / uuid.uuid4().hex, "t", SCHEMA, KEYS,
                          options=ENGINES[engine])
    accepted = []
    for rows in stream:
        run = _run_table(rows)
        before = snapshot_ids(location)
        try:
            result = write_primary_key_run(spark, spark.createDataFrame(run), location,
                                           row_kind_column="op", model_name="prop")
        except PaimonDataError:
            assert snapshot_ids(location) == before, "a refused run changed the table"
            continue
        accepted.append(run)
        if run.num_rows == 0:
            assert result.snapshot_id is None and snapshot_ids(location) == before
        else:
            assert result.snapshot_id == (before[-1] + 1 if before else 1)
    got = read_back(location)
    if not accepted:
        assert got.num_rows == 0
        return
    expected = expected_after(location, accepted, row_kind_column="op")
    assert _comparable(got) == _comparable(expected)
