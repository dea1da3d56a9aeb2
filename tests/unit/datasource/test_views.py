"""The temporary views of datasource/views.py, without Spark: their names, the data-source
statement they run, which table or branch a read means, and the arguments refused before any
table is opened. The registry is a stand-in that records what it is asked."""

from types import SimpleNamespace

import pytest

from dbt.adapters.paimon.datasource import views


class _Registry:
    def __init__(self, branches=()):
        self.statements = []
        self.opened = []
        self._branches = set(branches)

    def table_location(self, schema, table):
        return SimpleNamespace(source_options=lambda: {"warehouse": "/w/it's", "table": table})

    def activate(self):
        return SimpleNamespace(sql=self.statements.append)

    def paimon_name(self, schema, table):
        return f"{table}$branch_audit" if schema == "on_branch" else table

    def open_table(self, schema, table):
        self.opened.append(table)
        manager = SimpleNamespace(branches=lambda: self._branches)
        return SimpleNamespace(branch_manager=lambda: manager)


def test_view_name_is_one_lower_case_part():
    assert views.view_name("db", "t$branch_b", "snapshot_3") == "db__t_branch_b__snapshot_3"
    assert views.view_name("Db", "T.x", "changes_a-1") == "db__t_x__changes_a_1"
    assert views.view_name("dbt_seed_rows", "1 Seed") == "dbt_seed_rows__1_seed"


def test_source_view_escapes_the_options():
    registry = _Registry()
    name = views.source_view(registry, "v", "db", "t", {"snapshot_id": "3"}, source="s")
    assert name == "`v`"
    assert registry.statements == [
        "create or replace temporary view `v` using s options (`warehouse` '/w/it\\'s', "
        "`table` 't', `snapshot_id` '3')"]


def test_table_or_branch():
    registry = _Registry(branches={"b"})
    assert views.table_or_branch(registry, "db", "t", None, "m", "`db`.`t`") == "t"
    assert views.table_or_branch(registry, "on_branch", "t", None, "m", "x") == "t$branch_audit"
    assert views.table_or_branch(registry, "db", "t", "b", "m", "x") == "t$branch_b"
    with pytest.raises(views.ViewError, match=r"m: `db`.`t` has no branch 'c' \(branches: "
                                              r"\['b'\]\)"):
        views.table_or_branch(registry, "db", "t", "c", "m", "`db`.`t`")


@pytest.mark.parametrize("arguments", [
    {"start": 1}, {"end": 2}, {"start_timestamp": "2024-01-01"},
    {"start": 1, "end": 2, "start_timestamp": "2024-01-01", "end_timestamp": "2024-01-02"},
])
def test_changes_between_needs_two_ends_of_one_kind(arguments):
    registry = _Registry()
    with pytest.raises(views.ViewError, match=r"paimon_changes_between\(x\): pass start and end"):
        views.changes_between_view(registry, "db", "t", "x", **arguments)
    assert registry.opened == [] and registry.statements == []


def test_changes_between_snapshot_ids_read_the_changes_source():
    registry = _Registry()
    assert views.changes_between_view(registry, "db", "t", "x", 2, 5) == "`db__t__changes_2_5`"
    assert registry.statements[0].endswith(
        "`changes_from` '2', `changes_to` '5', `changes_mode` 'auto')")


def test_an_unknown_system_table_is_refused_first():
    registry = _Registry()
    with pytest.raises(views.ViewError, match=r"paimon_system\(x, 'nope'\)"):
        views.system_view(registry, "db", "t", "x", "nope")
    assert registry.opened == []
