"""A hypothesis state machine over the table lifecycle operations of ``ops/`` on one
primary-key table: merge writes on main and on branches, tags, branches, rollback (to a
snapshot id, a tag, a timestamp), fast-forward and publish, snapshot expiry.

A plain Python model holds what each line should read: main's retained snapshots (id -> rows),
its tags (name -> snapshot id and rows), each branch's snapshots and tags. After every step the
table is opened again from disk, as a later process would, and read with dbt-paimon's own
Spark-free reader: main, every retained snapshot, every tag and every branch read exactly the
model's rows. An operation the ops modules refuse raises a ValueError naming the reason and
leaves every file of the table as it was.

Writes go through the write path's in-process executor (``make_plan``, ``write_in_process``,
``_commit``: what clone.py does without Spark), on main and on ``<table>$branch_<name>``.
"""
import hashlib
import itertools
import os
from dataclasses import dataclass
from typing import Dict, Tuple

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, initialize, invariant, precondition,
                                 rule, run_state_machine_as_test)

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.format.splits import list_snapshots
from dbt.adapters.paimon.ops.branches import (branch_table_name, branches, create_branch,
                                              delete_branch, fast_forward, publish_branch)
from dbt.adapters.paimon.ops.expire import expire_snapshots
from dbt.adapters.paimon.ops.rollback import rollback
from dbt.adapters.paimon.ops.tags import create_tag, delete_tag
from dbt.adapters.paimon.write.in_process import write_in_process
from dbt.adapters.paimon.write.plan import SEQ
from dbt.adapters.paimon.write.spark_job import _commit, make_plan
from tests.integration.ops.ops_helpers import make_table, read_back

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])
TAGS = ("ta", "tb", "tc")
BRANCHES = ("bx", "by")

Rows = Tuple[Tuple[int, int], ...]   # (id, v) sorted by id: a snapshot's merged rows


@dataclass(frozen=True)
class Snap:
    token: int      # which commit made it (a copy on a branch keeps the token)
    rows: Rows


run_rows = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 99)), min_size=1, max_size=4)


def _write(location: TableRef, rows) -> int:
    """One merge commit of ``rows`` (a later row of a key wins, by its order number)."""
    table = location.open()
    plan = make_plan(None, table, location, "lifecycle", None)
    data = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                     "v": pa.array([r[1] for r in rows], pa.int64())})
    data = plan.to_spark_names(data).append_column(
        SEQ, pa.array(np.arange(len(rows), dtype=np.int64)))
    messages, records = write_in_process(plan, table, data, threads=1)
    return _commit(table, plan, messages, records).snapshot_id


def _merged(base: Rows, rows) -> Rows:
    merged = dict(base)
    merged.update(dict(rows))
    return tuple(sorted(merged.items()))


def _read(location: TableRef, snapshot_id=None) -> Rows:
    table = read_back(location, snapshot_id)
    return tuple(sorted(zip(table.column("id").to_pylist(), table.column("v").to_pylist())))


def _disk(location: TableRef) -> Dict[str, str]:
    root = os.path.join(location.warehouse, f"{location.database}.db", location.table)
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = hashlib.sha1(handle.read()).hexdigest()
    return found


class Lifecycle(RuleBasedStateMachine):
    tmp_factory = None  # set by the test: pytest's tmp_path_factory

    def __init__(self):
        super().__init__()
        tmp = self.tmp_factory.mktemp("lifecycle")
        self.location = make_table(tmp, "t", SCHEMA, ["id"], [], {"bucket": "1"})
        self.tokens = itertools.count(1)
        self.main: Dict[int, Snap] = {}                 # retained snapshots of main
        self.latest = None                              # main's latest snapshot id
        self.tags: Dict[str, Tuple[int, Snap]] = {}     # main's tags
        self.branch: Dict[str, Dict[int, Snap]] = {}    # branch -> its snapshots
        self.branch_tags: Dict[str, Dict[str, Tuple[int, Snap]]] = {}

    # -- helpers ---------------------------------------------------------------------------
    def on_branch(self, name: str) -> TableRef:
        loc = self.location
        return TableRef(loc.warehouse, loc.database, branch_table_name(loc.table, name),
                             loc.catalog_options)

    def snap(self, sid):
        """The model's snapshot ``sid`` of main: retained, or kept by a tag."""
        if sid in self.main:
            return self.main[sid]
        for tag_sid, snap in self.tags.values():
            if tag_sid == sid:
                return snap
        return None

    def refused(self, match, call, *args, **kwargs):
        before = _disk(self.location)
        with pytest.raises(ValueError, match=match):
            call(self.location, *args, **kwargs)
        assert _disk(self.location) == before, f"refused {call.__name__} changed files"

    def moved(self, name: str) -> bool:
        """Whether main has a retained snapshot from the branch's start on that the branch
        does not share (what fast_forward refuses without force)."""
        own = self.branch[name]
        earliest = min(own)
        return any(sid >= earliest and (sid not in own or own[sid].token != snap.token)
                   for sid, snap in self.main.items())

    def roll_back_to(self, target: int) -> None:
        snap = self.snap(target)
        self.main = {sid: s for sid, s in self.main.items() if sid <= target}
        self.main[target] = snap
        self.tags = {n: t for n, t in self.tags.items() if t[0] <= target}
        self.latest = target

    def known(self):
        """Snapshot ids main can still name: retained ones and those its tags keep."""
        return sorted(set(self.main) | {sid for sid, _ in self.tags.values()})

    # -- main ------------------------------------------------------------------------------
    @initialize(first=run_rows, second=run_rows, branch=st.booleans())
    def first_runs(self, first, second, branch):
        # an empty table: nothing to tag or roll back yet
        self.refused("no snapshot to tag", create_tag, "ta")
        self.refused("has no snapshot: nothing to roll back", rollback, snapshot_id=1)
        self.commit_main(first)
        if branch:  # half the examples start with a branch of snapshot 1
            create_tag(self.location, "ta")
            create_branch(self.location, "bx", tag="ta")
            self.tags["ta"] = (1, self.main[1])
            self.branch["bx"] = {1: self.main[1]}
            self.branch_tags["bx"] = {"ta": (1, self.main[1])}
        self.commit_main(second)

    @rule(runs=st.lists(run_rows, min_size=1, max_size=3))
    def write_main(self, runs):
        for rows in runs:
            self.commit_main(rows)
        event(f"write: {len(runs)} run(s)")

    def commit_main(self, rows):
        sid = _write(self.location, rows)
        assert sid == (self.latest or 0) + 1
        base = self.main[self.latest].rows if self.latest is not None else ()
        self.main[sid] = Snap(next(self.tokens), _merged(base, rows))
        self.latest = sid

    # -- tags ------------------------------------------------------------------------------
    @precondition(lambda self: len(self.tags) < len(TAGS))
    @rule(data=st.data(), of_latest=st.booleans())
    def tag(self, data, of_latest):
        name = data.draw(st.sampled_from([n for n in TAGS if n not in self.tags]))
        sid = None if of_latest else data.draw(st.sampled_from(self.known()))
        target = self.latest if sid is None else sid
        assert create_tag(self.location, name, snapshot_id=sid).snapshot_id == target
        self.tags[name] = (target, self.snap(target))
        event("tag: of the latest" if of_latest else
              "tag: of an expired snapshot" if target not in self.main else
              "tag: of an earlier snapshot")

    @precondition(lambda self: self.tags)
    @rule(data=st.data())
    def untag(self, data):
        name = data.draw(st.sampled_from(sorted(self.tags)))
        assert delete_tag(self.location, name).tags == [name]
        sid = self.tags.pop(name)[0]
        event("delete tag: a branch's base" if any(
            name in t for t in self.branch_tags.values()) else "delete tag")
        event("delete tag: of an expired snapshot" if sid not in self.main else
              "delete tag: of a retained snapshot")

    # -- branches --------------------------------------------------------------------------
    @precondition(lambda self: self.tags and len(self.branch) < len(BRANCHES))
    @rule(data=st.data())
    def branch_from_tag(self, data):
        name = data.draw(st.sampled_from([b for b in BRANCHES if b not in self.branch]))
        tag = data.draw(st.sampled_from(sorted(self.tags)))
        sid, snap = self.tags[tag]
        if sid not in self.main:
            self.refused(f"snapshot {sid} expired on main.*nothing was changed", create_branch,
                         name, tag=tag)
            event("refused: branch from a tag of an expired snapshot")
            return
        create_branch(self.location, name, tag=tag)
        self.branch[name] = {sid: snap}
        self.branch_tags[name] = {tag: (sid, snap)}
        event("branch from a tag")

    @precondition(lambda self: self.branch)
    @rule(data=st.data(), rows=run_rows)
    def write_branch(self, data, rows):
        name = data.draw(st.sampled_from(sorted(self.branch)))
        own = self.branch[name]
        sid = _write(self.on_branch(name), rows)
        assert sid == max(own) + 1
        own[sid] = Snap(next(self.tokens), _merged(own[max(own)].rows, rows))
        event("branch write")

    @precondition(lambda self: self.branch)
    @rule(data=st.data())
    def drop_branch(self, data):
        name = data.draw(st.sampled_from(sorted(self.branch)))
        delete_branch(self.location, name)
        del self.branch[name], self.branch_tags[name]
        event("delete branch")

    @precondition(lambda self: self.branch)
    @rule(data=st.data(), force=st.booleans(), publish=st.booleans())
    def fast_forward(self, data, force, publish):
        name = data.draw(st.sampled_from(sorted(self.branch)))
        moved = self.moved(name)
        if moved and not force:
            match = rf"commits made after branch '{name}' started .*nothing was changed"
            if publish:
                self.refused(match, lambda loc: publish_branch([loc], name))
            else:
                self.refused(match, fast_forward, name)
            return
        if publish:
            publish_branch([self.location], name, force=force)
        else:
            fast_forward(self.location, name, force=force)
        own = self.branch[name]
        earliest = min(own)
        self.main = {sid: s for sid, s in self.main.items() if sid < earliest}
        self.main.update(own)
        self.latest = max(own)
        self.tags = {n: t for n, t in self.tags.items() if t[0] < earliest}
        self.tags.update(self.branch_tags[name])
        if publish:
            del self.branch[name], self.branch_tags[name]
        event(("publish" if publish else "fast-forward") +
              (": forced past main's commits" if moved else ""))

    # -- rollback --------------------------------------------------------------------------
    @rule(data=st.data())
    def rollback_to_snapshot(self, data):
        sid = data.draw(st.sampled_from(self.known()))
        result = rollback(self.location, snapshot_id=sid)
        assert result.snapshot_id == sid
        assert result.removed_tags == sorted(n for n, t in self.tags.items() if t[0] > sid)
        event("rollback to snapshot: " + ("expired, tagged" if sid not in self.main else
                                          "latest" if sid == self.latest else "earlier"))
        self.roll_back_to(sid)

    @precondition(lambda self: self.tags)
    @rule(data=st.data())
    def rollback_to_tag(self, data):
        tag = data.draw(st.sampled_from(sorted(self.tags)))
        sid = self.tags[tag][0]
        assert rollback(self.location, tag=tag).snapshot_id == sid
        event("rollback to tag" + (": expired snapshot" if sid not in self.main else ""))
        self.roll_back_to(sid)

    @rule(data=st.data())
    def rollback_to_timestamp(self, data):
        snapshots = list_snapshots(self.location.open())
        chosen = data.draw(st.sampled_from(snapshots))
        # the latest snapshot committed at or before the time (Java's earlierOrEqualTimeMills)
        target = max(s.id for s in snapshots if s.time_millis <= chosen.time_millis)
        assert rollback(self.location, timestamp=chosen.time_millis).snapshot_id == target
        event("rollback to timestamp")
        self.roll_back_to(target)

    # -- expiry ----------------------------------------------------------------------------
    @rule(retain=st.integers(1, 3))
    def expire(self, retain):
        result = expire_snapshots(self.location, retain_last=retain, older_than="0 ms")
        kept = sorted(self.main)[-retain:]
        assert result.expired_snapshots == sorted(set(self.main) - set(kept))
        self.main = {sid: self.main[sid] for sid in kept}
        event("expire: some" if result.expired_snapshots else "expire: none")

    # -- what must be refused ----------------------------------------------------------------
    @rule(data=st.data())
    def refused_operation(self, data):
        """One operation the ops modules refuse, of those the state allows."""
        missing = [sid for sid in range(1, self.latest + 3) if self.snap(sid) is None]
        absent_tags = [n for n in TAGS if n not in self.tags]
        absent_branches = [b for b in BRANCHES if b not in self.branch]
        moved = [b for b in sorted(self.branch) if self.moved(b)]
        earliest = list_snapshots(self.location.open())[0].time_millis
        cases = {
            "rollback to a missing snapshot": lambda: self.refused(
                "doesn't exist", rollback, snapshot_id=data.draw(st.sampled_from(missing))),
            "tag of a missing snapshot": lambda: self.refused(
                "has no snapshot", create_tag, absent_tags[0] if absent_tags else "tnew",
                snapshot_id=data.draw(st.sampled_from(missing))),
            "rollback before the earliest snapshot": lambda: self.refused(
                "no snapshot .* earlier than or equal to timestamp", rollback,
                timestamp=earliest - 1),
            "rollback to no or two targets": lambda: self.refused(
                "exactly one", rollback, snapshot_id=self.latest, tag="ta"),
        }
        if self.tags:
            cases["tag name taken"] = lambda: self.refused(
                "already exists", create_tag, data.draw(st.sampled_from(sorted(self.tags))))
        if absent_tags:
            cases["rollback to a missing tag"] = lambda: self.refused(
                "has no tag", rollback, tag=data.draw(st.sampled_from(absent_tags)))
        if absent_tags and absent_branches:
            cases["branch from a missing tag"] = lambda: self.refused(
                "has no tag", create_branch, absent_branches[0],
                tag=data.draw(st.sampled_from(absent_tags)))
        if self.branch and self.tags:
            cases["branch name taken"] = lambda: self.refused(
                "already exists", create_branch, data.draw(st.sampled_from(sorted(self.branch))),
                tag=sorted(self.tags)[0])
        if absent_branches:
            cases["missing branch"] = lambda: self.refused(
                "doesn't exist", fast_forward, data.draw(st.sampled_from(absent_branches)))
            cases["delete a missing branch"] = lambda: self.refused(
                "don't exist", delete_branch, absent_branches[0])
            cases["publish a missing branch"] = lambda: self.refused(
                "no table of the warehouse has branch",
                lambda loc: publish_branch([loc], absent_branches[0]))
        if moved:
            cases["fast-forward past main's commits"] = lambda: self.refused(
                "nothing was changed", fast_forward, data.draw(st.sampled_from(moved)))
        case = data.draw(st.sampled_from(sorted(cases)))
        cases[case]()
        event(f"refused: {case}")

    # -- what every step leaves --------------------------------------------------------------
    @invariant()
    def warehouse_reads_as_the_model(self):
        table = self.location.open()   # a later process: everything from disk
        latest = table.snapshot_manager().get_latest_snapshot()
        assert (latest.id if latest else None) == self.latest
        assert [s.id for s in list_snapshots(table)] == sorted(self.main)
        assert _read(self.location) == (self.main[self.latest].rows if self.latest else ())
        for sid, snap in self.main.items():
            assert _read(self.location, sid) == snap.rows, f"snapshot {sid}"
        on_disk = {n: t.id for n, t in time_travel.tags(table).items()}
        assert on_disk == {n: t[0] for n, t in self.tags.items()}
        for name, (sid, snap) in self.tags.items():
            assert time_travel.travel(table, tag=name).id == sid
            assert _read(self.location, sid) == snap.rows, f"tag {name}"
        assert branches(table) == sorted(self.branch)
        for name, own in self.branch.items():
            on_branch = self.on_branch(name)
            assert [s.id for s in list_snapshots(on_branch.open())] == sorted(own)
            assert _read(on_branch) == own[max(own)].rows, f"branch {name}"


def test_lifecycle_operations_leave_a_usable_warehouse(tmp_path_factory):
    Lifecycle.tmp_factory = tmp_path_factory
    run_state_machine_as_test(Lifecycle, settings=settings(
        max_examples=12, stateful_step_count=20, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow]))


def test_a_branch_from_a_tag_of_an_expired_snapshot_is_refused_and_leaves_nothing(tmp_path):
    location = make_table(tmp_path, "t", SCHEMA, ["id"], [], {"bucket": "1"})
    _write(location, [(1, 1)])
    create_tag(location, "old")
    _write(location, [(2, 2)])
    assert expire_snapshots(location, retain_last=1, older_than="0 ms").expired_snapshots == [1]
    before = _disk(location)
    with pytest.raises(ValueError, match="snapshot 1 expired on main"):
        create_branch(location, "b", tag="old")
    assert _disk(location) == before
    assert branches(location.open()) == []
    assert _read(location, time_travel.travel(location.open(), tag="old").id) == ((1, 1),)
