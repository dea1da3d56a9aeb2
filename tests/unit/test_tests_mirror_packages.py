"""The tests mirror the packages: a module `dbt/adapters/paimon/<package>/.../<module>.py` has
its own test file `tests/unit/<package>/.../test_<module>[_*].py` or
`tests/integration/<package>/.../test_<module>[_*].py` (a top-level module:
`tests/unit/test_<module>[_*].py`), so a newcomer finds a module's tests by its name.

A module tested another way sits in TESTED_ELSEWHERE, with the reason and the test files that
exercise it: dbt's glue runs only under dbt commands (the functional tests), a module of
constants is checked through its users, and a merge engine's aggregators are tested through
the engine. Each named test file must exist, and an entry must go once the module gets a test
of its own or is removed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt" / "adapters" / "paimon"

GLUE = "dbt glue, run only under dbt commands:"
TESTED_ELSEWHERE = {
    # dbt glue (top-level modules)
    "adapter_operations": f"{GLUE} tests/functional/operations/test_operations.py, "
                          "tests/functional/operations/test_tags_rollback.py",
    "adapter_reads": f"{GLUE} tests/functional/paimon/test_paimon_changes.py, "
                     "tests/functional/paimon/test_row_tracking.py",
    "catalog_integrations": "catalogs.yml to catalog options: "
                            "tests/unit/config/test_catalog_integrations.py",
    "cli": "the `dbt-paimon` command as a user runs it: tests/connect/test_server_command.py, "
           "tests/reliability/test_daemon_dbt.py",
    "connections": f"{GLUE} tests/functional/adapter/test_basic.py, "
                   "tests/connect/test_connect_output.py",
    "credentials": "the profile's fields: tests/unit/catalog/test_catalog_profile.py, "
                   "tests/unit/environments/test_connect_profile.py, tests/cluster/test_profile.py",
    "impl": f"{GLUE} every file of tests/functional, e.g. tests/functional/paimon/test_paimon_pk.py",
    "plugin": f"{GLUE} tests/functional/adapter/test_basic.py",
    "python_models": f"{GLUE} tests/functional/paimon/test_python_models.py, "
                     "tests/functional/adapter/test_python_model.py",
    "relation": f"{GLUE} tests/functional/paimon/test_paimon_relations.py",
    # catalog/
    "catalog/catalogs": "the one catalog interface, through each catalog: "
                        "tests/integration/catalog/test_jdbc_catalog.py, "
                        "tests/integration/catalog/test_hive_catalog.py",
    "catalog/config": "the profile's `catalog:`: tests/unit/catalog/test_catalog_profile.py",
    "catalog/hive_entries": "the entries a Hive catalog writes: "
                            "tests/integration/catalog/test_hive_catalog.py",
    "catalog/hive_metastore": "its Thrift connection and lock against a real metastore: "
                              "tests/integration/catalog/test_hive_catalog.py",
    # config/
    "config/constraints": "dbt contracts' constraints: tests/unit/config/test_contract_constraints.py",
    "config/option_keys": "constants, checked through their users: "
                          "tests/unit/config/test_model_config.py",
    # datasource/
    "datasource/catalog_entry": "an entry as Spark lists it: tests/unit/datasource/test_registry.py",
    "datasource/changes": "changes reads: tests/integration/write/test_changes_read.py, "
                          "tests/integration/write/test_lookup_changelog.py",
    "datasource/entry_statements": "the SQL that makes or moves an entry: "
                                   "tests/unit/datasource/test_registry.py",
    "datasource/entry_names": "hidden-table and provider names: "
                              "tests/unit/datasource/test_registry.py",
    "datasource/native_read": "native reads: tests/integration/datasource/test_native_reads.py",
    "datasource/row_tracking_source": "row-tracking reads: "
                                      "tests/integration/ops/test_row_executors.py",
    "datasource/session_sources": "sources registered once per shared Connect session: "
                                  "tests/connect/test_session_reuse.py",
    "datasource/spark_env": "the data source's Spark environment: "
                            "tests/unit/datasource/test_register_data_source.py",
    "datasource/spark_types": "Paimon types as Spark types: "
                              "tests/integration/ops/test_system_tables.py, "
                              "tests/integration/write/test_types.py",
    "datasource/system_reads": "system tables in Spark: tests/integration/ops/test_system_tables.py",
    # environments/
    "environments/base": "the Environment interface, through its implementations: "
                         "tests/unit/environments/test_early_start.py",
    "environments/connect_client": "a Connect URL and its checks: "
                                   "tests/unit/environments/test_connect_profile.py",
    "environments/connect_server": "a real Connect server: tests/connect/test_server_command.py, "
                                   "tests/connect/test_exit_after_server_gone.py",
    "environments/embedded": "session mode: tests/unit/environments/test_metastore_wait.py, "
                             "tests/functional/paimon/test_session_output.py",
    "environments/locations": "where a warehouse and its state folder are: "
                              "tests/unit/environments/test_state_folder.py",
    "environments/spark_logs": "Spark's output to a file: "
                               "tests/unit/environments/test_spark_log_routing.py",
    # format/
    "format/data_evolution": "tests/unit/write/test_data_evolution_writes.py, "
                             "tests/integration/datasource/test_paimon_2x_tables.py",
    "format/deletion_vectors": "tests/unit/format/test_deletion_vector_encoding.py, "
                               "tests/interop/test_deletion_vector_tables.py",
    "format/errors": "exception types, raised by the catalogs: "
                     "tests/integration/catalog/test_jdbc_catalog.py",
    "format/file_stats": "a data file's statistics, through compaction and rescale: "
                         "tests/integration/ops/test_append_compact.py, "
                         "tests/integration/ops/test_rescale.py",
    "format/pause_points": "the crash tests' hook itself: tests/reliability/test_crash_points.py",
    "format/postpone_buckets": "tests/functional/paimon/test_postpone_bucket_model.py, "
                               "tests/integration/write/test_paimon_2x_writes.py",
    "format/postpone_merge": "postpone.merge-on-read reads, before and after compact: "
                             "tests/integration/datasource/test_postpone_merge_on_read.py",
    "format/bucketed_append": "bucketed append (queue) tables: tests/integration/datasource/test_queue_tables.py, "
                    "tests/integration/write/test_append_paths.py",
    "format/row_groups": "row-group splits and skipping: "
                         "tests/integration/datasource/test_file_skipping.py",
    "format/row_tracking": "tests/integration/ops/test_row_ops.py, "
                           "tests/integration/ops/test_append_compact.py",
    "format/sorted_runs": "tests/integration/datasource/test_paimon_data_source.py, "
                          "tests/unit/ops/test_compaction_strategy.py",
    "format/system_tables": "tests/integration/ops/test_system_tables.py, "
                            "tests/interop/test_system_tables_java.py",
    "format/time_travel": "tests/integration/ops/test_tags_and_rollback.py, "
                          "tests/unit/ops/test_lifecycle_state_machine.py",
    # materialize/
    "materialize/consumption": "paimon_changes positions: tests/unit/format/test_consumers.py, "
                               "tests/functional/paimon/test_paimon_changes.py",
    "materialize/snapshot_rows": "dbt snapshots: tests/functional/snapshots/test_paimon_snapshot.py",
    "materialize/standard_writes": "dbt's own materializations: "
                                   "tests/functional/standard/test_incremental.py, "
                                   "tests/integration/write/test_append_paths.py",
    # ops/
    "ops/branches": "tests/integration/ops/test_tags_and_rollback.py, "
                    "tests/unit/ops/test_lifecycle_state_machine.py",
    "ops/catalog_stats": "dbt docs' table statistics: tests/functional/adapter/test_docs_generate.py",
    "ops/invocations": "rollback_invocation: tests/integration/ops/test_tags_and_rollback.py, "
                       "tests/functional/operations/test_tags_rollback.py",
    "ops/postpone": "postpone compaction: tests/functional/paimon/test_postpone_bucket_model.py",
    "ops/rollback": "tests/integration/ops/test_tags_and_rollback.py, "
                    "tests/unit/ops/test_lifecycle_state_machine.py",
    "ops/table_info": "tests/integration/ops/test_tags_and_rollback.py, "
                      "tests/functional/operations/test_operations.py",
    # runtime/: the merge engines and their aggregators, tested through the engine
    "runtime/aggregators/base": "tests/unit/runtime/test_aggregation.py",
    "runtime/aggregators/hll": "tests/unit/runtime/test_sketches.py",
    "runtime/aggregators/numeric": "tests/unit/runtime/test_aggregation.py",
    "runtime/aggregators/strings": "tests/unit/runtime/test_aggregation.py",
    "runtime/aggregators/values": "tests/unit/runtime/test_aggregation.py",
    "runtime/engines/base": "every engine's tests, e.g. tests/unit/runtime/test_deduplicate.py",
    "runtime/errors": "tests/unit/runtime/test_spec_validation.py, tests/unit/test_error_messages.py",
    "runtime/kernel": "the merge kernel against Paimon's semantics: "
                      "tests/unit/runtime/test_paimon_exact.py, "
                      "tests/unit/runtime/test_properties.py",
    "runtime/options": "table options parsed: tests/unit/runtime/test_spec_validation.py",
    "runtime/types": "tests/unit/runtime/test_spec_validation.py, "
                     "tests/unit/runtime/test_arrow_output.py",
    # server/
    "server/daemon_policy": "whether a command uses the daemon: tests/unit/server/test_daemon.py",
    "server/daemon_process": "the watchdog, as a process: tests/unit/server/test_daemon.py, "
                             "tests/reliability/test_daemon_dbt.py",
    # write/
    "write/append_run": "tests/integration/write/test_append_paths.py",
    "write/dynamic_index": "tests/integration/write/test_dynamic_buckets.py",
    "write/in_process": "tests/integration/write/test_write_paths.py",
    "write/path_choice": "tests/integration/write/test_write_paths.py",
    "write/task_errors": "tests/unit/test_error_messages.py",
    "write/tasks": "the Spark tasks of a distributed write: "
                   "tests/integration/write/test_write_paths.py",
    "write/validation": "a run's rows checked before a write: "
                        "tests/integration/write/test_bad_input.py",
}


def modules() -> list:
    """Every module of the package, as `<package>/.../<module>` (no `__init__`, no version)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).with_suffix("").as_posix()
        if path.stem != "__init__" and name != "__version__":
            found.append(name)
    return found


def mirror_tests(module: str) -> list:
    parts = module.split("/")
    names = (f"test_{parts[-1]}.py", f"test_{parts[-1]}_*.py")
    if len(parts) == 1:
        return [p for n in names for p in (REPO / "tests" / "unit").glob(n)]
    return [p for lane in ("unit", "integration") for n in names
            for p in (REPO / "tests" / lane / parts[0]).rglob(n)]


@pytest.mark.parametrize("module", modules())
def test_every_module_has_its_tests(module):
    own = mirror_tests(module)
    if module in TESTED_ELSEWHERE:
        assert not own, (f"{module} has its own tests ({own[0].relative_to(REPO)}): "
                         "remove it from TESTED_ELSEWHERE")
        return
    assert own, (f"{module} has no tests/unit/... or tests/integration/... test_{module.split('/')[-1]}"
                 ".py: add one, or list it in TESTED_ELSEWHERE with the tests that exercise it")


@pytest.mark.parametrize("module", sorted(TESTED_ELSEWHERE))
def test_every_reason_names_tests_that_exist(module):
    assert module in modules(), f"{module} is no module of the package: remove its entry"
    named = re.findall(r"tests/[\w/]+\.py", TESTED_ELSEWHERE[module])
    assert named, f"the reason for {module} names no test file"
    missing = [n for n in named if not (REPO / n).is_file()]
    assert not missing, f"the reason for {module} names missing test files: {missing}"


def test_the_check_finds_a_module_without_tests():
    """The mirror rule itself: a module with neither its own test nor an entry fails."""
    assert mirror_tests("write/no_such_module") == []
    assert mirror_tests("format/bucket")  # tests/unit/format/test_bucket.py
    assert mirror_tests("job_labels")  # tests/unit/test_job_labels.py
