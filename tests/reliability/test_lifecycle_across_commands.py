"""The table lifecycle as a scheduler runs it: every dbt command a fresh process, each one after
a lifecycle operation, in the dbt process's own Spark (session mode, no daemon: CI's and a
scheduler's mode) and in the default profile's background daemon, a Spark Connect server.
Whatever an operation leaves in Spark's catalog (a branch's entries, whose hidden tables name
the branch's data source; the temporary views of time travel, system tables and
`paimon_changes`, which a Connect server's shared session keeps between commands) must serve
every later command.

Over a Connect server of `dbt-paimon server start` (`method: connect`) a command runs the code
it runs through the daemon, once it has the daemon's URL
(tests/unit/environments/test_daemon_environment.py): the walk-through through the daemon
covers it, and tests/connect/test_lifecycle_commands_state_machine.py runs lifecycle commands,
each a fresh dbt process, in random orders on such a server.

The model is a partial-update table (its rows are those of the latest batch, every value being
set) that makes automatic tags. Reading it before a compaction merges its snapshot once, into
Parquet files beside the snapshot's file list that every later command reads natively
(docs/reads.md): `show` and the data tests read such merges in every mode, made by this command
or an earlier one, after rollbacks that reuse snapshot ids.

The walk-through: run, tag, run, branch from the tag, a whole run on the branch, then on main
`show` and `docs generate`, rollback to the tag's snapshot (named by its id in session mode,
by its commit time through the daemon; by the tag in tests/functional/operations), build the
model (its data tests check its rows), undo that build's invocation, run on the branch again,
publish it (main becomes the branch, the branch is deleted), build (the model and its data
tests). The table operations (tag, branch, rollback, undo, publish) act on files and start no
Spark in any mode: no session, no daemon, no server connection. Through the daemon, `show` also
reads the table at the tag and at the tag's snapshot id by time travel and the automatic tags
through the `tags` system table, and the project has a model reading `paimon_changes` (compiled
by `docs generate`, built by `build`): their temporary views live on in the server's shared
session for the later commands. In session mode they end with their process, and they would
cost the slowest mode a Python worker's start in two commands.

Through the daemon the walk-through also meets the faults a daemon meets between commands (a
daemon restart in the middle of it also shows that a new server serves the entries an earlier
one left): a second warehouse's command starts a second daemon beside the first one; the
watchdog is killed with SIGKILL before `show` (its server follows it by the parent-death signal,
and daemon.json is left naming a pid that another process has taken since, as after a reboot:
`show` starts a new daemon and never signals that process); daemon.json is overwritten with
garbage before the rollback while its daemon runs (the rollback, a table operation, needs no
Spark; no later command can join that daemon, which holds the warehouse's Derby metastore: the
run after the rollback says so, stops it and starts a new one). Each such
command passes within a bound; the second warehouse's daemon serves its next command unchanged.

Every state's rows are read by dbt-paimon's own reader (pypaimon, no Spark) in every mode;
Paimon 1.0 Java reads main, the tag and the branch in session mode only: a JVM start per read
batch costs more than a daemon command, and the files it reads are the same in every mode."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource import native_read
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.server import daemon
from dbt.adapters.paimon.server.daemon_process import INFO_NAME
from dbt.adapters.paimon.server.processes import alive

from reliability_helpers import DbtProcess, read_rows, run_dbt

# Paimon Java's fixture (tests/interop/conftest.py, imported by its package path: pytest
# loads each folder's conftest as `conftest`)
from tests.interop.conftest import paimon_java  # noqa: F401

# the walk takes each run's invocation id from run_results.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1,
                     merge_engine='partial-update',
                     table_options={'tag.automatic-creation': 'batch'}) }}
select cast(id as bigint) as id, cast(id * {{ env_var('WALK_BATCH', '0') }} as bigint) as v
from range(0, 5)
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
# a singular data test: the table's rows are the batch's (sum(batch(n)) = 10 * n), not those of
# an earlier snapshot's merge (snapshot ids are reused after a rollback)
CURRENT_ROWS = """select total from (select sum(v) as total from {{ ref('m') }})
where total is null or total != 10 * {{ env_var('WALK_BATCH', '0') }}
"""
SHOW_SESSION = "select sum(v) as now_total from {{ ref('m') }}"
SHOW = """select
  (select sum(v) from {{ ref('m') }}) as now_total,
  (select sum(v) from {{ paimon_snapshot(ref('m'), tag='t1') }}) as tag_total,
  (select sum(v) from {{ paimon_snapshot(ref('m'), SNAPSHOT) }}) as id_total,
  (select count(*) from {{ paimon_system(ref('m'), 'tags') }}
   where tag_name like 'batch-write-%') as automatic_tags"""
MODES = ("session", "daemon")


def _profile(mode: str, warehouse: str, root: Path) -> str:
    """session: its own Spark state folder and a driver setting (only a fresh Spark applies
    it, as CI's profiles do); daemon: the default profile with only runtime settings, the
    daemon's case."""
    head = ("lifecycle:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
            f"      schema: lc\n      threads: 1\n      warehouse: {warehouse}\n")
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
        (self.root / "dbt_project.yml").write_text(
            "name: lifecycle\nversion: '1.0'\nprofile: lifecycle\nconfig-version: 2\n")
        (self.root / "profiles.yml").write_text(
            _profile(mode, self.warehouse, self.root))
        (self.root / "models" / "m.sql").write_text(MODEL)
        (self.root / "models" / "m.yml").write_text(TESTS)
        (self.root / "tests").mkdir()
        (self.root / "tests" / "current_rows.sql").write_text(CURRENT_ROWS)
        self.connect_session = mode != "session"  # the views of one command outlive it
        if self.connect_session:
            (self.root / "models" / "c.sql").write_text(CHANGES)
        self.env = {"DBT_PAIMON_DAEMON": "on" if mode == "daemon" else "off"}

    @property
    def state(self) -> str:
        return str(Path(self.warehouse) / ".spark")

    def dbt(self, *args, batch: int = 0) -> str:
        """``batch``: the rows' multiplier, an environment variable rather than a dbt var.
        dbt parses the whole project again after a change of `--vars` (4 CPU-s of a fresh
        process), only the files that read it after a change of an environment variable; how
        a command parses is not this test's subject. The branch runs' `paimon_branch` var still
        makes them and the commands after them parse the whole project."""
        return run_dbt(self.root, *args, env={**self.env, "WALK_BATCH": str(batch)})

    def operation(self, name, **arguments) -> str:
        """A table operation: it acts on the table's files and starts no Spark (no session,
        no daemon, no server connection: dbt's debug log says when one opens)."""
        output = self.dbt("--debug", "run-operation", name, "--args", json.dumps(arguments))
        assert "Opening a new connection" not in output, output
        return output

    def rows(self, table="m"):
        return values(read_rows(TableRef(self.warehouse, "lc", table, {})))

    def merged_at_latest(self) -> bool:
        """Whether the table's latest snapshot has its merge of values beside its file list
        (a ``merged-<id>.<mtime>-schema-<id>`` folder of the warehouse's reads folder)."""
        table = Path(self.warehouse) / "lc.db" / "m"
        latest = (table / "snapshot" / "LATEST").read_text().strip()
        folder = Path(native_read.reads_root(self.warehouse)) / "lc" / "m"
        return any(path.name.startswith(f"{native_read.MERGED_PREFIX}{latest}.")
                   for path in folder.glob(f"{native_read.MERGED_PREFIX}*"))

    def tag(self, name):
        """The snapshot tag ``name`` holds (a tag file is the snapshot's JSON)."""
        with open(Path(self.warehouse) / "lc.db" / "m" / "tag" / f"tag-{name}") as handle:
            return json.load(handle)


def stop_daemon(state: str) -> None:
    running = daemon.running(state)
    daemon.stop(state)
    assert running is None or not (alive(running["pid"]) or alive(running["server_pid"]))


@pytest.fixture(params=MODES)
def walk(request, process_tmp):
    made = Walk(request.param, process_tmp / "main")
    try:
        yield made
    finally:
        if made.mode == "daemon":
            stop_daemon(made.state)


def daemon_info(state):
    with open(os.path.join(state, INFO_NAME)) as handle:
        return json.load(handle)


def wait_until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


class DaemonFaults:
    """The daemon mode's faults, injected between the walk-through's commands (the module
    docstring); every method is a no-op in the other modes."""

    def __init__(self, walk: Walk, folder: Path):
        self.walk = walk
        self.on = walk.mode == "daemon"
        self.other = Walk("daemon", folder / "other") if self.on else None
        self.beside = None
        self.first = None
        self.squatter = None

    def start_second_warehouse(self):
        if self.on:
            self.beside = DbtProcess(self.other.root, "run", "-s", "m",
                                     env={**self.other.env, "WALK_BATCH": "7"})

    def second_warehouse_started(self, output: str):
        """Each warehouse's first command started a daemon of its own."""
        if not self.on:
            return
        assert self.beside.finish() == 0, self.beside.output()
        assert "Starting a background Spark" in self.beside.output()
        assert "Starting a background Spark" in output
        self.first, self.second = daemon_info(self.walk.state), daemon_info(self.other.state)
        assert self.first["port"] != self.second["port"]
        assert self.first["server_pid"] != self.second["server_pid"]
        assert self.other.rows() == batch(7)

    def kill_watchdog(self):
        """SIGKILL the watchdog; its recorded pid then taken by another process."""
        if not self.on:
            return
        running = daemon_info(self.walk.state)
        os.kill(running["pid"], signal.SIGKILL)
        assert wait_until(lambda: not alive(running["server_pid"]), 60), \
            "the Spark server outlived its watchdog"
        self.squatter = subprocess.Popen(["sleep", "600"])
        with open(os.path.join(self.walk.state, INFO_NAME), "w") as out:
            json.dump({**running, "pid": self.squatter.pid}, out)

    def garble_record(self):
        if not self.on:
            return
        self.garbled = daemon_info(self.walk.state)
        with open(os.path.join(self.walk.state, INFO_NAME), "w") as out:
            out.write("garbage{")

    def check_next(self, output: str, took: float, fault: str):
        """The command after ``fault`` passed (run_dbt asserts it) within a bound, on a new
        daemon."""
        if not self.on:
            return
        assert took < 120, f"the command after {fault} took {took:.0f} s:\n{output}"
        assert "Starting a background Spark" in output, output
        if fault == "the watchdog's kill":
            assert self.squatter.poll() is None, "the process that took the pid was signalled"
        else:
            assert "runs without its record" in output, output
            assert not alive(self.garbled["pid"]) and not alive(self.garbled["server_pid"])
            assert daemon_info(self.walk.state)["pid"] != self.garbled["pid"]

    def second_warehouse_kept(self):
        """The second warehouse's daemon served its next command, the same server throughout."""
        if not self.on:
            return
        self.other.dbt("run", "-s", "m", batch=8)
        assert daemon_info(self.other.state)["server_pid"] == self.second["server_pid"]
        assert self.other.rows() == batch(8)

    def close(self):
        if self.squatter is not None:
            self.squatter.kill()
            self.squatter.wait()
        if self.beside is not None and self.beside.process.poll() is None:
            self.beside.kill()
        if self.other is not None:
            stop_daemon(self.other.state)


@pytest.fixture
def faults(walk, process_tmp):
    made = DaemonFaults(walk, process_tmp)
    try:
        yield made
    finally:
        made.close()


def values(rows):
    return sorted(row["v"] for row in rows)


def batch(number):
    return [i * number for i in range(5)]


def timed(command, *args, **arguments):
    started = time.monotonic()
    output = command(*args, **arguments)
    return output, time.monotonic() - started


def test_each_lifecycle_operation_leaves_a_warehouse_every_later_command_uses(
        walk, faults, paimon_java, tmp_path):
    dbt, operation = walk.dbt, walk.operation
    java_reads = walk.mode == "session"

    def java(*reads):
        """Each read's values, Paimon Java's reads in one JVM (its start is most of a call)."""
        outputs = paimon_java.batch([[kind, walk.warehouse, *args] for kind, *args in reads],
                                    tmp_path / "reads.jsonl")
        return [values(json.loads(line) for line in out.splitlines() if line.strip())
                for out in outputs]

    faults.start_second_warehouse()
    faults.second_warehouse_started(dbt("run", "-s", "m", batch=1))
    operation("create_tag", model="m", tag="t1")
    tagged = walk.tag("t1")
    dbt("run", "-s", "m", batch=2)
    operation("create_branch", model="m", branch="audit", tag="t1")
    dbt("run", "-s", "m", "--vars", "{paimon_branch: audit}", batch=3)
    assert walk.rows() == batch(2) and walk.rows("m$branch_audit") == batch(3)
    if java_reads:
        assert java(("read", "lc.m"), ("readtag", "lc.m", "t1"),
                    ("read", "lc.m$branch_audit")) == [batch(2), batch(1), batch(3)]

    # main again, each command in a process of its own after the branch run; time travel and
    # the system table leave temporary views (kept by a Connect server's shared session)
    faults.kill_watchdog()
    views = walk.connect_session
    query = SHOW.replace("SNAPSHOT", str(tagged["id"])) if views else SHOW_SESSION
    shown, took = timed(dbt, "show", "--inline", query)
    faults.check_next(shown, took, "the watchdog's kill")
    # the table now; over Connect also at the tag, at its snapshot id, one batch-write-<date> tag
    expected = (sum(batch(2)), sum(batch(1)), sum(batch(1)), 1) if views else (sum(batch(2)),)
    assert re.search(r"\|\s*" + r"\s*\|\s*".join(map(str, expected)) + r"\s*\|", shown), shown
    assert walk.merged_at_latest(), "show's read of the uncompacted table merged nothing"
    dbt("docs", "generate")

    # rollback to the tag's snapshot, named a different way in each mode
    how = {"session": {"snapshot_id": tagged["id"]},
           "daemon": {"timestamp": tagged["timeMillis"]}}[walk.mode]
    faults.garble_record()
    operation("rollback", model="m", **how)
    assert walk.rows() == batch(1)
    if java_reads:
        assert java(("read", "lc.m")) == [batch(1)]

    # the first Spark command after the rollback (and, through the daemon, the garbled record):
    # the model's new snapshot takes the id of the one `show` merged; its data tests read it
    faults.check_next(*timed(dbt, "build", "-s", "m", batch=4),
                      "the garbled daemon.json")
    assert walk.rows() == batch(4)
    assert walk.merged_at_latest(), "the data tests' read of the table merged nothing"
    with open(walk.root / "target" / "run_results.json") as handle:
        invocation = json.load(handle)["metadata"]["invocation_id"]
    operation("rollback_invocation", invocation_id=invocation)
    assert walk.rows() == batch(1)

    # write-audit-publish: the branch's entries are the last the catalog holds when the
    # publish deletes the branch
    dbt("run", "-s", "m", "--vars", "{paimon_branch: audit}", batch=5)
    operation("publish_branch", branch="audit")
    assert walk.rows() == batch(5)
    built = dbt("build", batch=6)
    assert f"PASS={5 if views else 4}" in built, built
    assert walk.rows() == batch(6)
    assert walk.merged_at_latest(), "the data tests' read of the table merged nothing"
    if views:  # the changes model's first run reads every current row as an insert
        changes = read_rows(TableRef(walk.warehouse, "lc", "c", {}))
        assert changes == [{"n": 5, "total": sum(batch(6))}]
    if java_reads:
        assert java(("read", "lc.m")) == [batch(6)]
    faults.second_warehouse_kept()
