"""Two dbt processes committing to the same Paimon table through one Spark Connect server keep
session mode's guarantee: the run that commits second, having read the table before the other's
commit, is refused with the retryable conflict error and leaves no trace; the table stays
readable, with the winner's rows, and the refused run lands when it runs again.

The first run is held at the pause point ``before-commit`` (format/pause_points.py: its files
are written, its commit not started) while the second runs whole."""

import time
from pathlib import Path

from dbt.adapters.paimon.format.pause_points import PAUSE_AT, PAUSE_DIR
from tests import dbt_fork_server
from tests.connect.connect_project import write_connect_project


# the writer's name is an environment variable, not a dbt var: after a change of `--vars` dbt
# parses the whole project again, after one of an environment variable only the model
SHARED_MODEL = ("{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
                "select id, '{{ env_var('WRITER', 'none') }}' as writer from range(10)")


def write_project(root: Path, url: str, warehouse: str) -> Path:
    return write_connect_project(root, "same_table", url, warehouse, {"shared.sql": SHARED_MODEL})


dbt = dbt_fork_server.start_in_project


def finish(started) -> tuple:
    process, output = started
    return process.wait(timeout=600), output.read_text()


def writers(project: Path) -> str:
    code, out = finish(dbt(project, "show", "--inline",
                           "select writer, count(*) as n from {{ ref('shared') }} group by writer"))
    assert code == 0, out
    return " ".join(out.split())


def test_the_later_commit_is_refused_and_the_table_stays_whole(tmp_path, connect_server_url,
                                                               paimon_warehouse):
    project = write_project(tmp_path / "same_table", connect_server_url, paimon_warehouse)
    code, out = finish(dbt(project, "run", env={"WRITER": "init"}))
    assert code == 0, out
    pauses = tmp_path / "pauses"
    pauses.mkdir()
    held = dbt(project, "run",
               env={"WRITER": "a", PAUSE_AT: "before-commit", PAUSE_DIR: str(pauses)})
    deadline = time.monotonic() + 600
    while not (pauses / "before-commit.reached").exists():
        assert held[0].poll() is None, held[1].read_text()
        assert time.monotonic() < deadline, "the held run never reached its commit"
        time.sleep(0.5)
    code, out = finish(dbt(project, "run", env={"WRITER": "b"}))
    assert code == 0, out
    (pauses / "before-commit.release").touch()
    code, out = finish(held)
    assert code == 1, out
    assert "another writer committed to" in out and "Run the model again" in out, out
    rows = writers(project)
    assert "| b | 10 |" in rows and "| a |" not in rows and "| init |" not in rows, rows
    code, out = finish(dbt(project, "run", env={"WRITER": "a"}))
    assert code == 0, out
    rows = writers(project)
    assert "| a | 10 |" in rows and "| b |" not in rows, rows
