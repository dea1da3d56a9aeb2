# Two entry points on a fresh machine: `make demo` and `make test`.
# Both create .venv and install everything they need from PyPI, pinned by constraints.txt.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip -q
# compat mode installs a plain path entry: dbt's pkgutil namespaces (dbt.adapters, dbt.include)
# only find this repository's dbt/ folder that way.
EDITABLE := --config-settings editable_mode=compat -e

.PHONY: demo test test-unit test-integration test-core test-functional test-paimon test-reliability test-cluster test-connect \
	unit functional connect coverage bench clean

# test_paimon_pk.py over Spark Connect: its classes whose code differs by session kind (a failed
# task's error, schema changes and several models writing one table through the registry, time
# travel's views, another writer's run read natively, partial_update models). Not its
# merge-engine classes (deduplicate, first-row, row-kind deletes, aggregation) nor its
# compile-time config errors: the same materialization, whose merge runs in Spark's Python tasks.
PK_OVER_CONNECT := $(addprefix tests/functional/paimon/test_paimon_pk.py::,\
	TestPartialUpdateSequenceGroups TestBadInputLeavesTableUntouched TestExistingTableChanges \
	TestOnSchemaChangeModes TestFailedRunKeepsSchema TestSharedPartialUpdateTarget \
	TestPaimonSnapshotTimeTravel TestAnotherWritersRunIsReadAsAChoiceOfRows)

# functional tests `make test` runs over Spark Connect too: those driving code that differs by
# session kind (tests/unit/test_connect_code_paths.py keeps the list of such code). Not again
# here: the tags, branches and rollbacks of test_tags_rollback.py (table operations act on files
# in every mode; the lifecycle walk-through of tests/reliability runs tags, time travel, a branch
# run, rollbacks and publish_branch over a Connect server) and the multi-schema conformance
# project (its node kinds are built over Connect by test_cross_schema_build.py and test_basic.py)
CONNECT_TESTS := $(PK_OVER_CONNECT) tests/functional/paimon/test_paimon_append.py \
	tests/functional/paimon/test_paimon_changes.py tests/functional/paimon/test_row_tracking.py \
	tests/functional/operations/test_operations.py \
	tests/functional/adapter/test_python_model.py tests/functional/paimon/test_python_models.py tests/connect \
	tests/functional/adapter/test_basic.py::TestSimpleMaterializationsPaimon \
	tests/functional/adapter/test_empty.py tests/functional/adapter/test_dbt_show.py \
	tests/functional/adapter/test_docs_generate.py \
	tests/functional/paimon/test_cross_schema_build.py tests/functional/adapter/test_seed_files.py \
	tests/functional/paimon/test_job_labels.py tests/functional/paimon/test_merge_deletes.py \
	tests/functional/paimon/test_clone.py::TestClonePaimonModels \
	tests/functional/paimon/test_variant_columns.py::TestShreddedVariantWrites

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: $(VENV)/bin/python pyproject.toml constraints.txt
	$(PIP) install -c constraints.txt $(EDITABLE) .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -c constraints.txt $(EDITABLE) ".[dev]"
	touch $@

demo: $(VENV)/.installed
	$(PY) sample_project/run_demo.py

# Seven pytest processes, two at a time (`make -j2`; each one's output is printed whole when it
# ends; docs/development.md says what each runs and how long it takes). Each process has one
# Spark session on its own warehouse, ports and pytest temp folder (pytest's default one keeps
# only the 3 newest folders of a user: a later process would delete a running one's), so they
# never meet:
# - test-unit: tests/unit, no Spark;
# - test-integration: integration and interop tests (a plain local[2] session; Paimon Java and
#   pypaimon-rust);
# - test-functional: dbt's own functional suites on Paimon (adapter, standard, contracts,
#   snapshots, docs, unit tests); the session is the adapter's (Hive metastore, registry);
# - test-paimon: the Paimon materializations, their console output and the table operations
#   through dbt (adapter's session, like test-functional);
# - test-reliability: crash, concurrency and hostile-input tests: most start dbt processes of
#   their own, the dbt-level ones use the adapter's session;
# - test-cluster: a standalone Spark cluster (master + 2 workers) driven from the process;
# - test-connect: the Paimon materializations and operations again through a Spark Connect
#   server (`make connect` runs every Paimon functional test that way).
# Most of a dbt test's time is one Python thread (dbt) waiting on a small Spark job, so two
# processes share the 2 cores of the CI machine well; a third slowed each of them by 1.75x.
# The longest first, so that the two lanes end close together (times: docs/development.md).
TEST_PROCESSES := test-integration test-reliability test-functional test-paimon test-connect \
	test-cluster test-unit
TEST_JOBS ?= 2
TEST_TMP := $(CURDIR)/.pytest-tmp
# pytest makes the basetemp folder itself, not its parent; each process's JUnit file feeds the
# summary `make test` prints at the end (scripts/test_report.py)
# The JVMs Spark starts for the tests (each test process's session, every dbt process a test
# starts, Spark Connect servers) compile with C1 only, as the Paimon Java and Hive Metastore JVMs
# of the tests do: a test's JVM lives seconds to minutes on small data, where the C2 compiler's
# threads only take CPU from the other test process (a fresh 120-node `dbt build` beside another
# busy process: 0.70x the wall time with C1 only). The one JVM that lives as long as its test
# process, that process's own Spark, gets C2 back (tests/conftest.py, LONG_LIVED_JVM_OPTIONS).
# Results do not depend on the JIT; a user's Spark keeps the JVM's defaults.
TEST_JVM_OPTS ?= -XX:TieredStopAtLevel=1
# These processes run pytest under `coverage run` ([tool.coverage.*] in pyproject.toml: the lines
# of dbt/adapters/paimon that the pytest process itself runs), each writing
# $(TEST_TMP)/<target>.coverage, which the summary combines. Python 3.11's line tracing slows a
# measured process by a quarter to three quarters (docs/development.md: test-functional took
# 19.1 min under it in `make test`, against 11.3 without), so the others run without it;
# `make coverage` measures test-unit, test-integration and test-functional.
COVERAGE_PROCESSES := test-unit
PYTEST = mkdir -p $(TEST_TMP) && rm -f $(TEST_TMP)/$@.processes.jsonl && \
	SPARK_SUBMIT_OPTS="$(TEST_JVM_OPTS)" DBT_PAIMON_TEST_LEDGER=$(TEST_TMP)/$@.processes.jsonl $(PY) \
	$(if $(filter $@,$(COVERAGE_PROCESSES)),-m coverage run --data-file=$(TEST_TMP)/$@.coverage) \
	-m pytest --basetemp=$(TEST_TMP)/$@ --junitxml=$(TEST_TMP)/$@.xml

# The summary: each process's time and share, the wall time, the 25 slowest tests, the dbt
# processes the tests started (each pytest process's ledger: tests/process_ledger.py), the line
# coverage of COVERAGE_PROCESSES combined, and a warning for a process 20% over its recorded time
# (docs/development.md), a run over 45 min, coverage below its recorded figure or a missing
# coverage data file.
test: $(VENV)/.installed-dev
	@mkdir -p $(TEST_TMP) && rm -f $(TEST_TMP)/test-*.xml $(TEST_TMP)/test-*.coverage
	@started=$$(date +%s); \
	$(MAKE) --no-print-directory -j$(TEST_JOBS) -k --output-sync=target $(TEST_PROCESSES); \
	status=$$?; $(PY) scripts/test_report.py $(TEST_TMP) $$started $(COVERAGE_PROCESSES); \
	exit $$status

# polars on one thread: the merge-runtime property tests (most of this process's time) merge
# frames of a few rows thousands of times, where a thread pool costs more than it saves and its
# spinning takes CPU from the process beside this one (test_collections_model.py: 50 s against
# 57 s, half the system time); results do not depend on the thread count
test-unit: export POLARS_MAX_THREADS = 1
test-unit: $(VENV)/.installed-dev
	$(PYTEST) tests/unit

test-integration: $(VENV)/.installed-dev
	$(PYTEST) tests/integration tests/interop

# unit, integration and interop tests in one process
test-core: $(VENV)/.installed-dev
	$(PYTEST) tests/unit tests/integration tests/interop

test-functional: $(VENV)/.installed-dev
	$(PYTEST) tests/functional/adapter tests/functional/standard tests/functional/contracts \
		tests/functional/snapshots tests/functional/docs tests/functional/unit_tests

test-paimon: $(VENV)/.installed-dev
	$(PYTEST) tests/functional/paimon tests/functional/operations tests/functional/conformance

test-reliability: $(VENV)/.installed-dev
	$(PYTEST) tests/reliability

test-cluster: $(VENV)/.installed-dev
	$(PYTEST) tests/cluster

test-connect: $(VENV)/.installed-dev
	$(PYTEST) --profile connect $(CONNECT_TESTS)

# line coverage of the unit, integration and functional processes, one after the other
coverage: $(VENV)/.installed-dev
	@mkdir -p $(TEST_TMP) && rm -f $(TEST_TMP)/test-*.coverage
	$(MAKE) --no-print-directory -j1 -k test-unit test-integration test-functional \
		COVERAGE_PROCESSES="test-unit test-integration test-functional"; \
	status=$$?; $(PY) scripts/test_report.py $(TEST_TMP) $$(date +%s) test-unit test-integration \
		test-functional; exit $$status

unit: $(VENV)/.installed-dev
	$(PY) -m pytest tests/unit

functional: $(VENV)/.installed-dev
	$(PY) -m pytest tests/functional

# the Paimon functional tests through a Spark Connect server (started for the pytest process)
connect: $(VENV)/.installed-dev
	$(PY) -m pytest --profile connect tests/functional/paimon tests/functional/operations \
		tests/functional/conformance tests/functional/adapter/test_python_model.py tests/connect

bench: $(VENV)/.installed-dev
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) $(TEST_TMP) build *.egg-info sample_project/target sample_project/logs sample_project/paimon_warehouse
