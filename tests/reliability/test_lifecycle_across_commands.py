"""The table lifecycle as a scheduler runs it: every dbt command a fresh process in session mode
(no daemon: CI's and a scheduler's mode), each one after a lifecycle operation. Whatever an
operation leaves in Spark's catalog (a branch's entries above all: their hidden tables name the
branch's data source, which only the process that made them had registered) must serve every
later command, and Paimon 1.0 Java reads each state the commands leave.

The walk-through: run, tag, run, branch from the tag, a whole run on the branch, then `show`
and `docs generate` on main, rollback to the tag, run, undo that run's invocation, run on the
branch again, publish it (main becomes the branch, the branch is deleted), build (the model and
its data tests)."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from reliability_helpers import run_dbt, write_project

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * {{ var('batch', 0) }} as bigint) as v from range(0, 5)
"""
TESTS = """version: 2
models:
  - name: m
    columns:
      - name: id
        data_tests: [not_null, unique]
"""


def _interop_conftest():
    """tests/interop/conftest.py's Paimon Java runner (its fixtures serve that folder only)."""
    path = Path(__file__).resolve().parents[1] / "interop" / "conftest.py"
    spec = importlib.util.spec_from_file_location("interop_paimon_java", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def paimon_java():
    interop = _interop_conftest()
    cache = interop._cache_dir()
    jar = interop._fetch_jar(cache)
    return interop.PaimonJava(jar, interop._compile(cache, jar), interop.quiet_log_config(cache))


@pytest.fixture
def project(process_tmp):
    warehouse = str(process_tmp / "warehouse")
    root = write_project(process_tmp / "project", "lifecycle", warehouse, {"m": MODEL},
                         schema="lc")
    (root / "models" / "m.yml").write_text(TESTS)
    return root, warehouse


def values(rows):
    return sorted(row["v"] for row in rows)


def batch(number):
    return [i * number for i in range(5)]


def test_each_lifecycle_operation_leaves_a_warehouse_every_later_command_uses(
        project, paimon_java, tmp_path):
    root, warehouse = project
    session = {"DBT_PAIMON_DAEMON": "off"}

    def dbt(*args):
        return run_dbt(root, *args, env=session)

    def operation(name, **arguments):
        return dbt("run-operation", name, "--args", json.dumps(arguments))

    def java(*reads):
        """Each read's values, Paimon Java's reads in one JVM (its start is most of a call)."""
        outputs = paimon_java.batch([[kind, warehouse, *args] for kind, *args in reads],
                                    tmp_path / "reads.jsonl")
        return [values(json.loads(line) for line in out.splitlines() if line.strip())
                for out in outputs]

    dbt("run", "--vars", "{batch: 1}")
    operation("create_tag", model="m", tag="t1")
    dbt("run", "--vars", "{batch: 2}")
    operation("create_branch", model="m", branch="audit", tag="t1")
    dbt("run", "--vars", "{batch: 3, paimon_branch: audit}")
    assert java(("read", "lc.m"), ("readtag", "lc.m", "t1"), ("read", "lc.m$branch_audit")) \
        == [batch(2), batch(1), batch(3)]

    # main again, each command in a process of its own after the branch run (the build at the
    # end runs the data tests)
    shown = dbt("show", "--inline", "select sum(v) as total from {{ ref('m') }}")
    assert re.search(rf"\|\s+{sum(batch(2))} \|", shown), shown
    dbt("docs", "generate")
    operation("rollback", model="m", tag="t1")
    assert java(("read", "lc.m")) == [batch(1)]

    dbt("run", "--vars", "{batch: 4}")
    with open(root / "target" / "run_results.json") as handle:
        invocation = json.load(handle)["metadata"]["invocation_id"]
    operation("rollback_invocation", invocation_id=invocation)
    assert java(("read", "lc.m")) == [batch(1)]

    # write-audit-publish: the branch's entries are the last the catalog holds when the
    # publish deletes the branch
    dbt("run", "--vars", "{batch: 5, paimon_branch: audit}")
    operation("publish_branch", branch="audit")
    assert java(("read", "lc.m")) == [batch(5)]
    built = dbt("build", "--vars", "{batch: 6}")
    assert "PASS=3" in built, built
    assert java(("read", "lc.m")) == [batch(6)]
