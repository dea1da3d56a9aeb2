"""A hypothesis state machine over the table lifecycle as a scheduler runs it: every step is a
fresh dbt process (tests/dbt_fork_server.py) on the test process's Spark Connect server, in
random orders: runs on main and on a branch, tags, a branch from a tag, rollback to a tag,
undoing the last run's invocation, publishing the branch, and `dbt show` reading the table now,
at a tag (time travel) and through the `tags` system table.

Over Connect the server's shared session keeps what each command leaves in Spark's catalog
(a branch's entries, the temporary views of time travel and system tables) for the next
command: the property is that no sequence of operations leaves an entry a later command cannot
use, and that every command reads what the model says. A plain Python model holds main's rows,
each tag's and the branch's; after every step the table is read from disk by dbt-paimon's own
Spark-free reader. tests/reliability/test_lifecycle_across_commands.py walks one fixed order in
session mode and through the daemon (whose commands run this mode's code);
tests/unit/ops/test_lifecycle_state_machine.py checks the operations' own semantics
(expiry, fast-forward, refusals) in-process, without dbt."""
import itertools
import json
import re
from pathlib import Path
from typing import Dict, List, Optional

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule, run_state_machine_as_test)
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from tests.connect.connect_project import write_connect_project
from tests.functional.console_output import run_dbt_process
from tests.integration.write.write_helpers import read_back

# rollback_invocation takes a run's invocation id from run_results.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * {{ env_var('LCSM_BATCH', '0') }} as bigint) as v
from range(0, 5)
"""
TAGS = ("t1", "t2", "t3")
BRANCH = "audit"


def batch(number: int) -> List[int]:
    return [i * number for i in range(5)]


class LifecycleCommands(RuleBasedStateMachine):
    url: str = ""
    warehouse: str = ""
    folder: Path = Path()
    counter = itertools.count()

    @initialize(first=st.integers(1, 9))
    def first_run(self, first):
        self.schema = f"lcsm{next(self.counter)}"  # each example its own table
        self.root = write_connect_project(self.folder / self.schema, self.schema, self.url,
                                          self.warehouse, {"m.sql": MODEL})
        self.main: List[int] = []
        self.tags: Dict[str, List[int]] = {}
        self.branch: Optional[List[int]] = None
        self.undo: Optional[tuple] = None   # (the last main run's invocation, main before it)
        self.run_main(first)

    # -- commands -----------------------------------------------------------------------------
    def dbt(self, *args: str, batch: int = 0) -> str:
        """``batch``, the rows' multiplier, is an environment variable rather than a dbt var:
        after a change of `--vars` dbt parses the whole project again (4 CPU-s of each fresh
        process), after one of an environment variable only the files that read it."""
        result = run_dbt_process(self.root, *args, env={"LCSM_BATCH": str(batch)})
        assert result.returncode == 0, f"dbt {' '.join(args)}:\n{result.stdout}"
        return result.stdout

    def operation(self, name: str, **arguments) -> str:
        return self.dbt("run-operation", name, "--args", json.dumps(arguments))

    def on_disk_tags(self) -> List[str]:
        folder = Path(self.warehouse) / f"{self.schema}.db" / "m" / "tag"
        return sorted(p.name[len("tag-"):] for p in folder.glob("tag-*")) \
            if folder.exists() else []

    def forget_removed_tags(self) -> None:
        """A rollback or publish may delete tags of snapshots it removes (Paimon's rule)."""
        kept = set(self.on_disk_tags())
        self.tags = {n: rows for n, rows in self.tags.items() if n in kept}

    @rule(number=st.integers(1, 9))
    def run_main(self, number):
        before = self.main
        self.dbt("run", "-s", "m", batch=number)
        with open(self.root / "target" / "run_results.json") as handle:
            invocation = json.load(handle)["metadata"]["invocation_id"]
        # the first run made the table: no earlier state to undo it to (refused)
        self.undo = (invocation, before) if before else None
        self.main = batch(number)

    @precondition(lambda self: self.branch is not None)
    @rule(number=st.integers(1, 9))
    def run_branch(self, number):
        self.dbt("run", "-s", "m", "--vars", f"{{paimon_branch: {BRANCH}}}", batch=number)
        self.branch = batch(number)

    @precondition(lambda self: len(self.tags) < len(TAGS))
    @rule(data=st.data())
    def tag(self, data):
        name = data.draw(st.sampled_from([t for t in TAGS if t not in self.tags]))
        self.operation("create_tag", model="m", tag=name)
        self.tags[name] = self.main

    @precondition(lambda self: self.branch is None and self.tags)
    @rule(data=st.data())
    def branch_from_tag(self, data):
        name = data.draw(st.sampled_from(sorted(self.tags)))
        self.operation("create_branch", model="m", branch=BRANCH, tag=name)
        self.branch = self.tags[name]

    @precondition(lambda self: self.tags)
    @rule(data=st.data())
    def rollback_to_tag(self, data):
        name = data.draw(st.sampled_from(sorted(self.tags)))
        self.operation("rollback", model="m", tag=name)
        self.main, self.undo = self.tags[name], None
        self.forget_removed_tags()

    @precondition(lambda self: self.undo is not None)
    @rule()
    def rollback_invocation(self):
        invocation, before = self.undo
        self.operation("rollback_invocation", invocation_id=invocation)
        self.main, self.undo = before, None
        self.forget_removed_tags()

    def snapshots(self, folder: Path) -> Dict[int, int]:
        return {int(p.name.split("-")[1]): json.loads(p.read_text())["timeMillis"]
                for p in folder.glob("snapshot-*")}

    def main_moved_since_branch(self) -> bool:
        """Whether main has commits of its own since the branch started, which a publish (a
        fast-forward) would drop."""
        table = Path(self.warehouse) / f"{self.schema}.db" / "m"
        main = self.snapshots(table / "snapshot")
        own = self.snapshots(table / "branch" / f"branch-{BRANCH}" / "snapshot")
        start = min(own)
        return any(i >= start and own.get(i) != millis for i, millis in main.items())

    @precondition(lambda self: self.branch is not None)
    @rule()
    def publish(self):
        moved = self.main_moved_since_branch()
        published = run_dbt_process(self.root, "run-operation", "publish_branch", "--args",
                                    json.dumps({"branch": BRANCH}))
        if moved:  # refused, nothing changed (the invariant reads both lines as before)
            assert published.returncode != 0, published.stdout
            assert "fast-forwarding would drop them; nothing was changed" in \
                published.stdout.replace("\n", " "), published.stdout
            return
        assert published.returncode == 0, published.stdout
        self.main, self.branch, self.undo = self.branch, None, None
        self.forget_removed_tags()

    @rule(data=st.data())
    def show(self, data):
        """The table now, at a tag by time travel and the tags system table, in one command."""
        query = "select (select coalesce(sum(v), -1) from {{ ref('m') }}) as now_total"
        expected = [sum(self.main) if self.main else -1]
        if self.tags:
            name = data.draw(st.sampled_from(sorted(self.tags)))
            query += (f", (select sum(v) from {{{{ paimon_snapshot(ref('m'), tag='{name}') }}}})"
                      f" as tag_total, (select count(*) from "
                      f"{{{{ paimon_system(ref('m'), 'tags') }}}}) as tags")
            expected += [sum(self.tags[name]), len(self.tags)]
        shown = self.dbt("show", "--inline", query)
        pattern = r"\|\s*" + r"\s*\|\s*".join(map(str, expected)) + r"\s*\|"
        assert re.search(pattern, shown), f"expected {expected}:\n{shown}"

    # -- what every step leaves ---------------------------------------------------------------
    def rows(self, table: str) -> List[int]:
        data = read_back(TableRef(self.warehouse, self.schema, table, {}))
        return [row["v"] for row in data.sort_by("id").to_pylist()]

    @invariant()
    def reads_as_the_model(self):
        assert self.rows("m") == self.main
        assert sorted(self.on_disk_tags()) == sorted(self.tags)
        if self.branch is not None:
            assert self.rows(f"m$branch_{BRANCH}") == self.branch


def test_any_order_of_lifecycle_commands_leaves_every_later_command_working(
        tmp_path, connect_server_url, paimon_warehouse):
    LifecycleCommands.url = connect_server_url
    LifecycleCommands.warehouse = paimon_warehouse
    LifecycleCommands.folder = tmp_path
    # each step is a dbt process (~2-4 s over Connect): few, long-enough sequences (3
    # examples of 8 steps took 137 s on the 2-core machine), a new draw of them on every run
    run_state_machine_as_test(LifecycleCommands, settings=settings(
        max_examples=2, stateful_step_count=10, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow]))
