"""Tags, time travel, rollback and undoing an invocation from a dbt project: `dbt run-operation
create_tag | rollback | rollback_invocation`, `paimon_snapshot(ref(...), tag=...)` in a model."""

import json
import os
import re

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.paimon.ops.invocations import INVOCATION_PROPERTY, NODE_PROPERTY
from dbt.adapters.paimon.ops.tags import create_tag
from tests.functional.paimon_tables import location, open_table, snapshots

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * {{ var('batch') }} as bigint) as v from range(0, 5)
"""

TOTALS = """
{{ config(materialized='paimon_pk', primary_key='k', buckets=1) }}
select 1 as k, sum(v) as total from {{ ref('orders') }}
"""

EVENTS = """
{{ config(materialized='paimon_append') }}
select cast(id + 100 * {{ var('batch') }} as bigint) as id from range(0, 3)
"""

CHANGED = """
{{ config(materialized='table') }}
select id, v, _row_kind from {{ paimon_changes_between(ref('orders'), 'v1', 'second') }}
union all
select id, v, concat('commit ', _row_kind) from {{ paimon_changes_between(ref('orders'), 1, 2) }}
union all
select id, v, concat('time ', _row_kind) from {{ paimon_changes_between(ref('orders'),
    start_timestamp=0, end_timestamp='2100-01-01 00:00:00') }}
union all
select id, -1 as v, concat('append ', _row_kind) from {{
    paimon_changes_between(ref('events'), 'e1', 'e2') }}
"""

ON_BRANCH = """
{{ config(materialized='table') }}
select sum(v) as total from {{ paimon_snapshot(ref('orders'), branch='audit') }}
"""

AS_OF = """
{{ config(materialized='table') }}
select sum(v) as total from {{ paimon_snapshot(ref('orders'), tag=var('tag')) }}
"""


def operation(name, args, expect_pass=True):
    return run_dbt_and_capture(["run-operation", name, "--args", args], expect_pass=expect_pass)


def stored_total(project, table, column="v", branch=None):
    """The sum of a column of main (or a branch) read with pypaimon: dbt's test helpers run SQL
    with the vars of the last `run_dbt`, which may name a branch."""
    name = table if branch is None else f"{table}$branch_{branch}"
    paimon_table = open_table(project, name)
    builder = paimon_table.new_read_builder()
    rows = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    return sum(rows.column(column).to_pylist())


def total(project, table):
    return project.run_sql(f"select sum(v) from {project.test_schema}.{table}", fetch="one")[0]


# rollback_invocation takes the run's invocation id from run_results.json
@pytest.mark.usefixtures("dbt_artifacts")
class TestTagsAndRollback:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": TOTALS, "as_of.sql": AS_OF,
                "on_branch.sql": ON_BRANCH, "changed.sql": CHANGED, "events.sql": EVENTS}

    def test_tags_time_travel_and_rollbacks(self, project):
        run_dbt(["run", "--select", "orders totals events", "--vars", "{batch: 1}"])  # sum 10
        create_tag(location(project, "events"), "e1")
        _, out = operation("create_tag", "{model: orders, tag: v1}")
        assert "created tag 'v1' of snapshot 1" in out
        _, out = operation("create_tag", "{model: orders, tag: v1}", expect_pass=False)
        assert "Tag 'v1' already exists" in out
        run_dbt(["run", "--select", "orders totals events", "--vars", "{batch: 2}"])  # sum 20
        assert total(project, "orders") == 20
        create_tag(location(project, "events"), "e2")

        # time travel by tag, and a branch made from it, in models
        _, out = operation("create_branch", "{model: orders, branch: audit, tag: v1}")
        assert "created branch 'audit' from tag 'v1'" in out
        run_dbt(["run", "--select", "as_of on_branch", "--vars", "{batch: 2, tag: v1}"])
        for model in ("as_of", "on_branch"):
            assert project.run_sql(f"select total from {project.test_schema}.{model}",
                                   fetch="one")[0] == 10
        run_dbt(["run", "--select", "as_of", "--vars", "{batch: 2, tag: nope}"],
                expect_pass=False)

        # what changed between two tags (by key: id 0 kept v = 0), two snapshot ids (the rows
        # commit 2 wrote), two times (every commit so far) and two tags of an append table (the
        # files the second tag has and the first has not: Paimon's readIncrementalDiff)
        operation("create_tag", "{model: orders, tag: second}")
        run_dbt(["run", "--select", "changed", "--vars", "{batch: 2}"])
        rows = sorted(tuple(r) for r in project.run_sql(
            f"select id, v, _row_kind from {project.test_schema}.changed", fetch="all"))
        assert rows == sorted([(i, 2 * i, "+U") for i in range(1, 5)] +
                              [(i, 2 * i, "commit +I") for i in range(5)] +
                              [(i, b * i, "time +I") for i in range(5) for b in (1, 2)] +
                              [(i, -1, "append +I") for i in (200, 201, 202)])

        # undo the latest invocation that wrote: both of its tables
        run_dbt(["run", "--select", "orders totals", "--vars", "{batch: 3}"])  # sum 30
        with open(os.path.join(project.project_root, "target", "run_results.json")) as f:
            invocation = json.load(f)["metadata"]["invocation_id"]
        latest = snapshots(project, "orders")[-1]
        assert (latest.properties[INVOCATION_PROPERTY], latest.properties[NODE_PROPERTY]) == \
            (invocation, "orders")
        _, out = operation("paimon_table_info", "{model: totals}")
        assert invocation in out and "totals" in out
        _, out = operation("rollback_invocation", "{dry_run: true}")
        assert f"invocation {invocation}" in out and "would roll back" in out
        assert total(project, "orders") == 30
        _, out = operation("rollback_invocation", "{}")
        assert "orders: rolled back to snapshot 2" in out
        assert total(project, "orders") == 20
        assert project.run_sql(f"select total from {project.test_schema}.totals",
                               fetch="one")[0] == 20

        # rollback by tag; the tag of a later snapshot goes with it
        _, out = operation("create_tag", "{model: orders, tag: v2}")
        _, out = operation("rollback", "{model: orders, tag: v1}")
        assert "rolled back from snapshot 2 to 1" in out and "tag(s) ['second', 'v2']" in out
        assert total(project, "orders") == 10
        assert [s.id for s in snapshots(project, "orders")] == [1]
        # a new run reuses snapshot id 2: reads see the new rows, not the removed ones
        run_dbt(["run", "--select", "orders", "--vars", "{batch: 4}"])
        assert total(project, "orders") == 40
        assert open_table(project, "orders").snapshot_manager().get_latest_snapshot().id == 2

        # that invocation's snapshots are gone from both tables now
        _, out = operation("rollback_invocation", f"{{invocation_id: {invocation}}}",
                           expect_pass=False)
        assert "committed to no retained snapshot" in out
        assert total(project, "orders") == 40


CHECK_TOTAL = """
select * from {{ ref('totals') }} where total > {{ var('limit', 1000) }}
"""

# a model kept on branch 'stage' by its config, whatever the invocation's branch
STAGED = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=1, paimon_branch='stage') }}
select id, v from {{ ref('orders') }}
"""

STAGED_TOTAL = """
{{ config(materialized='paimon_pk', primary_key='k', buckets=1) }}
select 1 as k, sum(v) as total from {{ ref('staged') }}
"""

ORDERS_HISTORY = """
snapshots:
  - name: orders_history
    relation: ref('orders')
    config:
      unique_key: id
      strategy: check
      check_cols: all
      paimon_branch: stage
"""

CHECK_STAGED = """
select * from {{ ref('staged') }} where v > {{ var('staged_limit', 1000) }}
"""


class TestWriteAuditPublish:
    """Build and test on a branch, publish to main only what passed."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": TOTALS, "staged.sql": STAGED,
                "staged_total.sql": STAGED_TOTAL}

    @pytest.fixture(scope="class")
    def tests(self):
        return {"check_total.sql": CHECK_TOTAL, "check_staged.sql": CHECK_STAGED}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"codes.csv": "code,label\n1,a\n2,b\n"}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"orders_history.yml": ORDERS_HISTORY}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"test": {"codes": {"+paimon_branch": "stage"}}}}

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target, unique_schema):
        """A second target whose profile puts every table on branch 'nightly'."""
        target = {**dbt_profile_target, "schema": unique_schema}
        return {"test": {"target": "default", "outputs": {
            "default": target, "nightly": {**target, "branch": "nightly"}}}}

    def test_write_audit_publish(self, project):
        run_dbt(["build", "--vars", "{batch: 1}"])
        assert stored_total(project, "orders") == 10
        # paimon_branch config: the model and the seed are written on branch 'stage' (their
        # tables created on main, empty), and a model on main reads that branch through ref()
        assert open_table(project, "staged").snapshot_manager().get_latest_snapshot() is None
        assert stored_total(project, "staged", branch="stage") == 10
        assert stored_total(project, "codes", "code", branch="stage") == 3
        assert open_table(project, "codes").snapshot_manager().get_latest_snapshot() is None
        assert stored_total(project, "staged_total", "total") == 10
        assert stored_total(project, "orders_history", branch="stage") == 10
        assert open_table(project, "orders_history").snapshot_manager() \
            .get_latest_snapshot() is None

        # write + audit on branch 'audit': main is untouched
        # (the seed and the snapshot on 'stage' were checked above: not built again)
        run_dbt(["build", "--vars", "{batch: 2, paimon_branch: audit}", "--exclude",
                 "codes orders_history"])
        assert stored_total(project, "orders") == 10
        on_branch = open_table(project, "orders$branch_audit")
        assert [s.id for s in on_branch.snapshot_manager().list_snapshots()] == [1, 2]
        assert stored_total(project, "orders", branch="audit") == 20
        # the config wins over the var: 'staged' stays on 'stage', reading orders on 'audit'
        assert sorted(open_table(project, "staged").branch_manager().branches()) == ["stage"]
        assert stored_total(project, "staged", branch="stage") == 20
        assert stored_total(project, "staged_total", "total", branch="audit") == 20
        # the branch's system tables, from a command on main
        _, out = run_dbt_and_capture([
            "show", "--inline", "select count(*) as snapshots_on_audit from "
            "{{ paimon_system(ref('orders'), 'snapshots', branch='audit') }}"])
        assert "snapshots_on_audit" in out and re.search(r"\|\s+2\s+\|", out)
        # an audit that fails: its branch holds the bad rows, main still does not
        results = run_dbt(["build", "--vars", "{batch: 9, paimon_branch: bad, limit: 50}",
                           "--exclude", "codes orders_history"],
                          expect_pass=False)
        assert [r.node.name for r in results if r.status == "fail"] == ["check_total"]
        assert stored_total(project, "orders") == 10
        assert stored_total(project, "totals", "total") == 10

        _, out = operation("publish_branch", "{branch: audit}")
        assert "published branch 'audit'" in out
        assert stored_total(project, "orders") == 20
        assert stored_total(project, "totals", "total") == 20
        table = open_table(project, "orders")
        assert sorted(table.branch_manager().branches()) == ["bad"]
        assert "dbt-branch-audit" not in table.tag_manager().list_tags()
        _, out = operation("delete_branch", "{model: orders, branch: bad}")
        _, out = operation("publish_branch", "{branch: audit}", expect_pass=False)
        assert "no table of the warehouse" in out

    def test_profile_branch_model_config_and_tests_on_a_branch(self, project):
        """After test_write_audit_publish (main: orders 20, staged only on 'stage')."""
        # the profile's branch for every table, the model's config over it; the test of a
        # model configured on a branch reads that branch (main of 'staged' holds no row)
        results = run_dbt(["build", "--target", "nightly", "--select", "orders staged "
                           "check_staged", "--vars", "{batch: 5, staged_limit: 15}"],
                          expect_pass=False)
        assert {r.node.name: r.status for r in results} == {
            "orders": "success", "staged": "success", "check_staged": "fail"}
        assert stored_total(project, "orders") == 20
        assert stored_total(project, "orders", branch="nightly") == 50
        assert stored_total(project, "staged", branch="stage") == 50
        assert open_table(project, "staged").snapshot_manager().get_latest_snapshot() is None

        # a rebuild cannot happen on the branch the config names
        _, out = run_dbt_and_capture(["run", "--select", "staged", "--full-refresh",
                                      "--vars", "{batch: 6}"], expect_pass=False)
        assert "would rebuild" in out and "on branch 'stage'" in out
        assert stored_total(project, "staged", branch="stage") == 50
