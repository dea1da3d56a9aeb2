"""Bad input and failures: a clear PaimonDataError, and the table stays as it was (snapshots and
files on disk)."""
import pyarrow as pa
import pytest

from dbt.adapters.paimon.format import CommitConflictError
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.write import write_primary_key_run
from write_helpers import make_table, read_back, sorted_rows, state

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("qty", pa.int32()),
                    ("name", pa.string())])
KEYS = ["dt", "id"]


@pytest.fixture(params=["distributed", "in_process"])
def write_path(request, spark):
    """Every test on both executors (write/path_choice.py), chosen by the session conf."""
    spark.conf.set("spark.dbt.paimon.writePath", request.param)
    yield request.param
    spark.conf.unset("spark.dbt.paimon.writePath")


@pytest.fixture(params=["2", "-1"], ids=["fixed", "dynamic"])
def seeded(request, spark, tmp_path, write_path):
    """A partitioned table with one good run already committed."""
    location = make_table(tmp_path, "orders", SCHEMA, KEYS, ["dt"], {"bucket": request.param})
    good = spark.createDataFrame(
        [("d1", i, i, f"n{i}") for i in range(20)], "dt string, id long, qty int, name string")
    write_primary_key_run(spark, good, location, model_name="orders")
    return location


def _fails(spark, location, rows, ddl, match, row_kind_column=None):
    before = state(location)
    content = sorted_rows(read_back(location), KEYS)
    df = spark.createDataFrame(rows, ddl)
    with pytest.raises(PaimonDataError) as info:
        write_primary_key_run(spark, df, location, row_kind_column=row_kind_column,
                              model_name="orders")
    message = str(info.value)
    assert "'orders'" in message and "db.orders" in message
    for part in match:
        assert part in message, message
    assert state(location) == before
    assert sorted_rows(read_back(location), KEYS) == content
    return message


def test_null_primary_key(spark, seeded):
    rows = [("d1", i, i, "ok") for i in range(100)] + [("d1", None, 7, "bad-1"),
                                                       (None, 5, 8, "bad-2")]
    message = _fails(spark, seeded, rows, "dt string, id long, qty int, name string",
                     ["column 'id'", "column 'dt'", "NULL", "bad-1", "bad-2"])
    assert "(1 row(s)" in message


def test_unknown_row_kind(spark, seeded):
    rows = [("d1", i, i, "ok", "+I") for i in range(50)] + \
        [("d1", 60 + i, 1, f"bad-{i}", "X") for i in range(7)] + [("d1", 99, 1, "nul", None)]
    message = _fails(spark, seeded, rows, "dt string, id long, qty int, name string, op string",
                     ["column 'op'", "unknown row kind", "'X'", "(8 row(s)"], "op")
    assert message.count("'op': 'X'") == 5  # a sample of 5 rows, not all 8


def test_value_that_does_not_fit(spark, seeded):
    rows = [("d1", i, str(i), "ok") for i in range(30)] + [("d1", 31, "abc", "bad-str")]
    _fails(spark, seeded, rows, "dt string, id long, qty string, name string",
           ["column 'qty'", "do not fit", "bad-str", "'abc'"])
    rows = [("d1", i, i, "ok") for i in range(30)] + [("d1", 31, 2**40, "too-big")]
    _fails(spark, seeded, rows, "dt string, id long, qty long, name string",
           ["column 'qty'", "do not fit", "too-big", str(2**40)])


def test_key_that_does_not_fit(spark, seeded):
    # fixed buckets compute the bucket from the key columns before the shuffle: a key that does
    # not cast must still fail the run (in the writing task) with its row, and write nothing
    rows = [("d1", str(i), i, "ok") for i in range(40)] + [("d1", "x7", 1, "bad-key")]
    _fails(spark, seeded, rows, "dt string, id string, qty int, name string",
           ["column 'id'", "do not fit", "bad-key", "'x7'"])


def test_missing_or_unknown_columns(spark, seeded):
    _fails(spark, seeded, [("d1", 1, 1)], "dt string, id long, qty int",
           ["missing ['name']"])


def test_delete_on_engine_that_rejects_it(spark, tmp_path, write_path):
    """The retraction fails one write task while the other tasks wrote their buckets: every
    file goes."""
    location = make_table(tmp_path, "orders", SCHEMA, KEYS, ["dt"],
                          {"bucket": "4", "merge-engine": "partial-update"})
    write_primary_key_run(spark, spark.createDataFrame(
        [("d1", i, i, "x", "+I") for i in range(50)],
        "dt string, id long, qty int, name string, op string"), location,
        row_kind_column="op", model_name="orders")
    rows = [(d, i, i, "y", "+I") for d in ("d1", "d2", "d3") for i in range(50)] + \
        [("d1", 3, None, None, "-D")]
    _fails(spark, location, rows, "dt string, id long, qty int, name string, op string",
           ["column 'op'", "Partial update can not accept delete", "'op': '-D'"], "op")
    # a lone delete too: Paimon would store it and then fail on every later read of the key
    _fails(spark, location, [("d2", 1, None, None, "-D")],
           "dt string, id long, qty int, name string, op string",
           ["Partial update can not accept delete"], "op")


def test_commit_conflict_deletes_the_files(spark, seeded, monkeypatch):
    from dbt.adapters.paimon.format import commit as commit_mod

    def conflict(table, messages, **kwargs):
        raise CommitConflictError("simulated conflict")

    monkeypatch.setattr(commit_mod, "commit_append", conflict)
    before = state(seeded)
    df = spark.createDataFrame([("d1", i, i, "z") for i in range(30)],
                               "dt string, id long, qty int, name string")
    with pytest.raises(CommitConflictError):
        write_primary_key_run(spark, df, seeded, model_name="orders")
    assert state(seeded) == before


def test_concurrent_commit_is_detected(spark, seeded, monkeypatch):
    """Another writer commits to the same buckets between planning and committing."""
    from dbt.adapters.paimon.format import commit as commit_mod

    real = commit_mod.commit_append

    def racing(table, messages, **kwargs):
        other = spark.createDataFrame([("d1", 1, 1, "other")],
                                      "dt string, id long, qty int, name string")
        monkeypatch.setattr(commit_mod, "commit_append", real)
        write_primary_key_run(spark, other, seeded, model_name="other")
        return real(table, messages, **kwargs)

    monkeypatch.setattr(commit_mod, "commit_append", racing)
    df = spark.createDataFrame([("d1", i, i, "z") for i in range(30)],
                               "dt string, id long, qty int, name string")
    with pytest.raises(CommitConflictError):
        write_primary_key_run(spark, df, seeded, model_name="orders")
    got = {r["id"]: r["name"] for r in read_back(seeded).to_pylist()}
    assert got[1] == "other" and got[2] == "n2"
