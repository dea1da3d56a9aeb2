"""Several dbt processes at once on one Spark Connect server: the server holds the one metastore
(an embedded session's Derby admits one process per warehouse)."""

import time
from pathlib import Path

from tests import dbt_fork_server
from tests.connect.connect_project import write_connect_project


MODELS = {
    "a.sql": ("{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
              "select id, 'a' as src from range(100)"),
    "b.sql": "{{ config(materialized='paimon_append') }}\nselect id, 'b' as src from range(50)",
    "c.sql": ("{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
              "select a.id, b.src from {{ ref('a') }} a join {{ ref('b') }} b on a.id = b.id"),
}


def write_project(root: Path, url: str, warehouse: str) -> Path:
    return write_connect_project(root, "parallel", url, warehouse, MODELS)


start = dbt_fork_server.start_in_project


def finish(started) -> str:
    process, output = started
    code = process.wait(timeout=600)
    assert code == 0, output.read_text()
    return output.read_text()


def test_runs_and_a_show_at_once_then_the_next_command_sees_both(tmp_path, connect_server_url,
                                                                  paimon_warehouse):
    project = write_project(tmp_path / "parallel", connect_server_url, paimon_warehouse)
    started = time.monotonic()
    commands = [start(project, "run", "-s", "a"), start(project, "run", "-s", "b"),
                start(project, "show", "--inline", "select 41 + 1 as answer")]
    outputs = [finish(p) for p in commands]
    assert "PASS=1" in outputs[0] and "PASS=1" in outputs[1]
    assert "42" in outputs[2]
    # a fresh process sees the tables both others created (one metastore, shared warehouse)
    out = finish(start(project, "run", "-s", "c"))
    assert "MERGE 50 rows" in out, out
    out = finish(start(project, "show", "--inline",
                       "select count(*) as n, min(src) as s from {{ ref('c') }}"))
    assert "| 50 | b " in out.replace("  ", " "), out
    assert time.monotonic() - started < 600
