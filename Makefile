# Two entry points on a fresh machine: `make demo` and `make test`.
# Both create .venv and install everything they need from PyPI, pinned by constraints.txt.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip -q
# compat mode installs a plain path entry: dbt's pkgutil namespaces (dbt.adapters, dbt.include)
# only find this repository's dbt/ folder that way.
EDITABLE := --config-settings editable_mode=compat -e

.PHONY: demo test unit functional connect bench clean

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

# Unit and integration tests, then dbt's functional tests in a second process: each process has
# one Spark session, and the functional one must be the adapter's (Hive metastore, registry).
# tests/reliability runs with it: its dbt-level test uses the adapter's session, the others
# start their own dbt / Spark processes (crash, concurrency) or need no Spark.
# tests/cluster starts a standalone Spark cluster (master + 2 workers) and drives it from a third.
# The last process runs the Paimon materializations and operations again through a Spark Connect
# server (`make connect` runs every Paimon functional test that way).
test: $(VENV)/.installed-dev
	$(PY) -m pytest tests/unit tests/integration tests/interop
	$(PY) -m pytest tests/functional tests/reliability
	$(PY) -m pytest tests/cluster
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
