"""The table lifecycle as a scheduler runs it: every dbt command a fresh process, each one after
a lifecycle operation, in each of the three places Spark runs: in the dbt process (session
mode, no daemon: CI's and a scheduler's mode), in one Spark Connect server that
`dbt-paimon server start` runs for the whole walk-through (`method: connect`), and in the
default profile's background daemon. Whatever an operation leaves in Spark's catalog (a
branch's entries, whose hidden tables name the branch's data source; the temporary views of
time travel, system tables and `paimon_changes`, which a Connect server's shared session keeps
between commands) must serve every later command.

The walk-through: run, tag, run, branch from the tag, a whole run on the branch, then on main
`show` (the table now, at the tag and at the tag's snapshot id by time travel, and the
automatic tags through the `tags` system table) and `docs generate` (it compiles a model
reading `paimon_changes`), rollback to the tag's snapshot (named by the tag in session mode, by
its id over Connect, by its commit time through the daemon), run, undo that run's invocation,
run on the branch again, publish it (main becomes the branch, the branch is deleted), build (the
model, its data tests and the `paimon_changes` model).

Every state's rows are read by dbt-paimon's own reader (pypaimon, no Spark) in every mode;
Paimon 1.0 Java reads main, the tag and the branch in session mode only: a JVM start per read
batch costs more than a Connect or daemon command, and the files it reads are the same in
every mode."""
from __future__ import annotations

import importlib.util
import json
import re
import socket
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableLocation
from dbt.adapters.paimon.environments import connect_server, daemon
from dbt.adapters.paimon.environments.processes import alive

from reliability_helpers import read_rows, run_dbt

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1,
                     table_options={'tag.automatic-creation': 'batch'}) }}
select cast(id as bigint) as id, cast(id * {{ var('batch', 0) }} as bigint) as v from range(0, 5)
"""
CHANGES = """{{ config(materialized='table') }}
select count(*) as n, sum(v) as total from {{ paimon_changes(ref('m')) }}
"""
TESTS = """version: 2
models:
  - name: m
    columns:
      - name: id
        data_tests: [not_null, unique]
"""
SHOW = """select
  (select sum(v) from {{ ref('m') }}) as now_total,
  (select sum(v) from {{ paimon_snapshot(ref('m'), tag='t1') }}) as tag_total,
  (select sum(v) from {{ paimon_snapshot(ref('m'), SNAPSHOT) }}) as id_total,
  (select count(*) from {{ paimon_system(ref('m'), 'tags') }}
   where tag_name like 'batch-write-%') as automatic_tags"""
MODES = ("session", "connect", "daemon")


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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _profile(mode: str, warehouse: str, root: Path, port: int) -> str:
    """session: its own Spark state folder and a driver setting (only a fresh Spark applies
    it, as CI's profiles do); connect: the server; daemon: the default profile with only
    runtime settings, the daemon's case."""
    head = ("lifecycle:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
            f"      schema: lc\n      threads: 1\n      warehouse: {warehouse}\n")
    if mode == "connect":
        return head + f"      method: connect\n      host: 'sc://127.0.0.1:{port}'\n"
    body = (head + "      spark_master: 'local[2]'\n"
            "      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n")
    if mode == "session":
        body += (f"        spark.driver.memory: '512m'\n"
                 f"      spark_state_dir: {root / '.spark'}\n")
    return body


class Walk:
    """One mode's project, warehouse and Spark: ``dbt(...)`` runs a fresh dbt process."""

    def __init__(self, mode: str, folder: Path):
        self.mode = mode
        self.warehouse = str(folder / "warehouse")
        self.root = folder / "project"
        (self.root / "models").mkdir(parents=True)
        self.port = _free_port() if mode == "connect" else 0
        (self.root / "dbt_project.yml").write_text(
            "name: lifecycle\nversion: '1.0'\nprofile: lifecycle\nconfig-version: 2\n")
        (self.root / "profiles.yml").write_text(
            _profile(mode, self.warehouse, self.root, self.port))
        (self.root / "models" / "m.sql").write_text(MODEL)
        (self.root / "models" / "m.yml").write_text(TESTS)
        (self.root / "models" / "c.sql").write_text(CHANGES)
        self.env = {"DBT_PAIMON_DAEMON": "on" if mode == "daemon" else "off"}

    def dbt(self, *args) -> str:
        return run_dbt(self.root, *args, env=self.env)

    def operation(self, name, **arguments) -> str:
        return self.dbt("run-operation", name, "--args", json.dumps(arguments))

    def rows(self, table="m"):
        return values(read_rows(TableLocation(self.warehouse, "lc", table, {})))

    def tag(self, name):
        """The snapshot tag ``name`` holds (a tag file is the snapshot's JSON)."""
        with open(Path(self.warehouse) / "lc.db" / "m" / "tag" / f"tag-{name}") as handle:
            return json.load(handle)


@pytest.fixture(params=MODES)
def walk(request, process_tmp):
    made = Walk(request.param, process_tmp)
    state = str(Path(made.warehouse) / ".spark")
    if made.mode == "connect":
        connect_server.start(made.warehouse, made.port, master="local[2]",
                             conf={"spark.sql.shuffle.partitions": "2"})
    try:
        yield made
    finally:
        if made.mode == "connect":
            connect_server.stop(made.warehouse, made.port)
        elif made.mode == "daemon":
            running = daemon.running(state)
            daemon.stop(state)
            assert running is None or not (alive(running["pid"])
                                           or alive(running["server_pid"]))


def values(rows):
    return sorted(row["v"] for row in rows)


def batch(number):
    return [i * number for i in range(5)]


def test_each_lifecycle_operation_leaves_a_warehouse_every_later_command_uses(
        walk, paimon_java, tmp_path):
    dbt, operation = walk.dbt, walk.operation
    java_reads = walk.mode == "session"

    def java(*reads):
        """Each read's values, Paimon Java's reads in one JVM (its start is most of a call)."""
        outputs = paimon_java.batch([[kind, walk.warehouse, *args] for kind, *args in reads],
                                    tmp_path / "reads.jsonl")
        return [values(json.loads(line) for line in out.splitlines() if line.strip())
                for out in outputs]

    dbt("run", "-s", "m", "--vars", "{batch: 1}")
    operation("create_tag", model="m", tag="t1")
    tagged = walk.tag("t1")
    dbt("run", "-s", "m", "--vars", "{batch: 2}")
    operation("create_branch", model="m", branch="audit", tag="t1")
    dbt("run", "-s", "m", "--vars", "{batch: 3, paimon_branch: audit}")
    assert walk.rows() == batch(2) and walk.rows("m$branch_audit") == batch(3)
    if java_reads:
        assert java(("read", "lc.m"), ("readtag", "lc.m", "t1"),
                    ("read", "lc.m$branch_audit")) == [batch(2), batch(1), batch(3)]

    # main again, each command in a process of its own after the branch run; time travel and
    # the system table leave temporary views (kept by a Connect server's shared session)
    shown = dbt("show", "--inline", SHOW.replace("SNAPSHOT", str(tagged["id"])))
    expected = (sum(batch(2)), sum(batch(1)), sum(batch(1)), 1)  # one batch-write-<date> tag
    assert re.search(r"\|\s*" + r"\s*\|\s*".join(map(str, expected)) + r"\s*\|", shown), shown
    dbt("docs", "generate")

    # rollback to the tag's snapshot, named a different way in each mode
    how = {"session": {"tag": "t1"}, "connect": {"snapshot_id": tagged["id"]},
           "daemon": {"timestamp": tagged["timeMillis"]}}[walk.mode]
    operation("rollback", model="m", **how)
    assert walk.rows() == batch(1)
    if java_reads:
        assert java(("read", "lc.m")) == [batch(1)]

    dbt("run", "-s", "m", "--vars", "{batch: 4}")
    assert walk.rows() == batch(4)
    with open(walk.root / "target" / "run_results.json") as handle:
        invocation = json.load(handle)["metadata"]["invocation_id"]
    operation("rollback_invocation", invocation_id=invocation)
    assert walk.rows() == batch(1)

    # write-audit-publish: the branch's entries are the last the catalog holds when the
    # publish deletes the branch
    dbt("run", "-s", "m", "--vars", "{batch: 5, paimon_branch: audit}")
    operation("publish_branch", branch="audit")
    assert walk.rows() == batch(5)
    if java_reads:
        assert java(("read", "lc.m")) == [batch(5)]
    built = dbt("build", "--vars", "{batch: 6}")
    assert "PASS=4" in built, built
    assert walk.rows() == batch(6)
    # the changes model's first run reads every current row as an insert
    changes = read_rows(TableLocation(walk.warehouse, "lc", "c", {}))
    assert changes == [{"n": 5, "total": sum(batch(6))}]
    if java_reads:
        assert java(("read", "lc.m")) == [batch(6)]
