"""ModelBuilder.build takes one ModelRun (materialize/model_builder.py); no Spark: the build is
a stand-in."""

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


def test_build_hands_the_model_run_to_the_build(monkeypatch):
    builder, runs = builder_recording_runs(monkeypatch)
    run = ModelRun("definition", "db", "orders", "select 1", True, "fail", True, "request")
    assert builder.build(run) is None  # no commit: no maintenance
    assert runs == [run]
