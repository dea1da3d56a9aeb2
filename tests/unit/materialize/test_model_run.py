"""ModelBuilder.build takes one ModelRun (materialize/model_builder.py), and the builds of one
table in a process take turns; no Spark: the build is a stand-in."""

import threading
import time
from types import SimpleNamespace

from dbt.adapters.paimon.materialize.model_builder import ModelBuilder, ModelRun


class Names:
    """The registry's naming, as the build asks it (a branch run names the branch)."""

    def warehouse_of(self, database):
        return "/warehouse"

    def paimon_name(self, database, table):
        return f"{table}$branch_audit" if database == "branched" else table


def builder_recording_runs(monkeypatch, build=None):
    runs = []
    builder = object.__new__(ModelBuilder)
    builder.registry = Names()
    monkeypatch.setattr(builder, "_build", build or (lambda run: runs.append(run)))  # no commit
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


def test_builds_of_one_table_take_turns_and_other_tables_do_not_wait(monkeypatch):
    """dbt --threads runs independent models at once; two that write one Paimon table (shared
    partial_update target) must not interleave, or the later commit is refused."""
    inside, overlaps, lock = {}, [], threading.Lock()

    def build(run):
        key = (run.database, run.table)
        with lock:
            if inside.get(key):
                overlaps.append(key)
            inside[key] = inside.get(key, 0) + 1
            others = sum(n for k, n in inside.items() if k != key)
        time.sleep(0.05)
        with lock:
            inside[key] -= 1
        return SimpleNamespace(snapshot_id=None, others=others)  # no commit: no maintenance

    builder, _ = builder_recording_runs(monkeypatch, build)
    runs = [ModelRun("d", "db", "wide", "q"), ModelRun("d", "db", "wide", "q"),
            ModelRun("d", "db", "wide", "q"), ModelRun("d", "db", "other", "q"),
            ModelRun("d", "branched", "wide", "q")]
    results = [None] * len(runs)

    def build_one(i):
        results[i] = builder.build(runs[i])

    threads = [threading.Thread(target=build_one, args=(i,)) for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == []
    # builds of other tables (another table, a branch of the same one) ran beside them
    assert any(result.others for result in results)
