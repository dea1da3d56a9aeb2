"""ModelBuilder.build takes one ModelRun (materialize/model_builder.py), and the older call
with its inputs as arguments in ModelRun's field order; no Spark: the build is a stand-in."""

from dbt.adapters.paimon.materialize.model_builder import ModelBuilder, ModelRun


def builder_recording_runs(monkeypatch):
    runs = []
    builder = object.__new__(ModelBuilder)
    monkeypatch.setattr(builder, "_build", lambda run: runs.append(run))  # None: no commit
    return builder, runs


def test_a_model_run_names_each_input_with_dbt_s_defaults():
    run = ModelRun("definition", "db", "orders", "select 1")
    assert (run.full_refresh, run.on_schema_change, run.overwrite_partitions, run.request,
            run.local_rows) == (False, "ignore", False, None, None)


def test_build_takes_a_model_run_or_the_older_arguments(monkeypatch):
    builder, runs = builder_recording_runs(monkeypatch)
    run = ModelRun("definition", "db", "orders", "select 1", True, "fail", True, "request")
    assert builder.build(run) is None
    assert builder.build("definition", "db", "orders", "select 1", True, "fail", True,
                         "request", local_rows=None) is None
    assert runs == [run, run]
