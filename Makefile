# Two entry points on a fresh machine: `make demo` and `make test`.
# Both create .venv and install everything they need from PyPI, pinned by constraints.txt.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip -q
# compat mode installs a plain path entry: dbt's pkgutil namespaces (dbt.adapters, dbt.include)
# only find this repository's dbt/ folder that way.
EDITABLE := --config-settings editable_mode=compat -e

.PHONY: demo test test-core test-functional test-cluster test-connect unit functional connect bench \
	clean

# functional tests `make test` runs over Spark Connect too
CONNECT_TESTS := tests/functional/paimon/test_paimon_pk.py tests/functional/paimon/test_paimon_append.py \
	tests/functional/paimon/test_paimon_changes.py tests/functional/paimon/test_row_tracking.py \
	tests/functional/paimon/test_seed_examples.py tests/functional/operations \
	tests/functional/adapter/test_python_model.py tests/connect \
	tests/functional/adapter/test_basic.py::TestSimpleMaterializationsPaimon \
	tests/functional/adapter/test_empty.py tests/functional/adapter/test_dbt_show.py \
	tests/functional/adapter/test_docs_generate.py

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

# Four pytest processes, two at a time (`make -j2`; each one's output is printed whole when it
# ends). Each process has one Spark session on its own warehouse and ports, so they never meet:
# - test-core: unit, integration and interop tests (a plain local[2] session);
# - test-functional: dbt's functional tests, whose session must be the adapter's (Hive
#   metastore, registry); tests/reliability runs with it: its dbt-level test uses the adapter's
#   session, the others start their own dbt / Spark processes (crash, concurrency) or need none;
# - test-cluster: a standalone Spark cluster (master + 2 workers) driven from the process;
# - test-connect: the Paimon materializations and operations again through a Spark Connect
#   server (`make connect` runs every Paimon functional test that way).
# Most of a dbt test's time is one Python thread (dbt) waiting on one Spark job, so two
# processes share the 2 cores of the CI machine well.
# the longest first: the functional process takes about as long as the three others together
TEST_PROCESSES := test-functional test-connect test-cluster test-core

test: $(VENV)/.installed-dev
	$(MAKE) --no-print-directory -j2 -k --output-sync=target $(TEST_PROCESSES)

test-core: $(VENV)/.installed-dev
	$(PY) -m pytest tests/unit tests/integration tests/interop

test-functional: $(VENV)/.installed-dev
	$(PY) -m pytest tests/functional tests/reliability

test-cluster: $(VENV)/.installed-dev
	$(PY) -m pytest tests/cluster

test-connect: $(VENV)/.installed-dev
	$(PY) -m pytest --profile connect $(CONNECT_TESTS)

unit: $(VENV)/.installed-dev
	$(PY) -m pytest tests/unit

functional: $(VENV)/.installed-dev
	$(PY) -m pytest tests/functional

# the Paimon functional tests through a Spark Connect server (started for the pytest process)
connect: $(VENV)/.installed-dev
	$(PY) -m pytest --profile connect tests/functional/paimon tests/functional/operations \
		tests/functional/adapter/test_python_model.py tests/connect

bench: $(VENV)/.installed-dev
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info sample_project/target sample_project/logs sample_project/paimon_warehouse
