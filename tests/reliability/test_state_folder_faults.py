"""The Spark state folder (`spark_state_dir`) read-only or full, met by fresh dbt processes.

Each faulty command runs in a mount namespace of its own (`unshare -rm`: a user namespace, so no
privilege is needed) in which the project's state folder is a tmpfs: mounted read-only, or of
1 MiB. Outside that namespace the folder is the ordinary one, so the next command meets it
writable, as after a user fixed it. Each faulty command (read-only in session mode, full
through the daemon, and `dbt-paimon server start` on the full folder) ends within seconds with one line naming the folder
(environments/state_folder.py) and starts no Spark; the table keeps the committed run's rows
and the next command passes.
"""
from __future__ import annotations

import shlex
import subprocess
import sys
import time

from dbt.adapters.paimon.datasource.source import TableRef

from reliability_helpers import DBT, read_rows, run_dbt, write_project

MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * {{ env_var('BATCH') }} as bigint) as v
from range(0, 5)"""
BOUND_S = 60  # dbt's start and parse; no Spark starts


def rows(batch):
    return [{"id": i, "v": i * batch} for i in range(5)]


def in_namespace(state_dir, mount_options, command, env):
    """``command`` in a new mount namespace whose ``state_dir`` is a tmpfs mounted with
    ``mount_options``."""
    script = (f"mount -t tmpfs -o {mount_options} tmpfs {shlex.quote(str(state_dir))} && "
              f"exec {shlex.join(command)}")
    started = time.monotonic()
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                          text=True, env=env, timeout=BOUND_S * 3)
    return done, time.monotonic() - started


def test_a_read_only_or_full_state_folder_fails_at_once_and_the_next_command_passes(
        process_tmp):
    import os

    warehouse = process_tmp / "warehouse"
    project = write_project(process_tmp / "project", "state_faults", str(warehouse),
                            {"m": MODEL}, schema="sf")
    state_dir = project / ".spark"
    location = TableRef(str(warehouse), "sf", "m", {})
    run_dbt(project, "run", env={"BATCH": "1"})
    assert read_rows(location) == rows(1)

    dbt_run = DBT + ["run", "--project-dir", str(project), "--profiles-dir", str(project)]
    # each fault once, in the two places the folder is checked: the in-process start and
    # the daemon's (which would otherwise fall back to the former)
    cases = [("ro,size=64m", "off", "is not writable (Read-only file system)"),
             ("size=1m", "on", "MiB free; Spark needs at least 64 MiB")]
    for options, daemon, says in cases:
        env = {**os.environ, "BATCH": "2", "DBT_PAIMON_DAEMON": daemon}
        done, seconds = in_namespace(state_dir, options, dbt_run, env)
        output = done.stdout + done.stderr
        where = f"{options}, DBT_PAIMON_DAEMON={daemon}"
        assert done.returncode != 0, f"{where}: dbt passed:\n{output}"
        assert f"Spark's state folder {state_dir} (the profile's spark_state_dir" in output, \
            f"{where}:\n{output}"
        assert says in output, f"{where}:\n{output}"
        # one clear line, no trace and no fallback line of the daemon
        assert "Traceback" not in output and "not available" not in output, output
        assert seconds < BOUND_S, f"{where}: {seconds:.0f} s"
        assert read_rows(location) == rows(1), where

    # `dbt-paimon server start` on the full folder says the same and starts nothing
    server = [sys.executable, "-m", "dbt.adapters.paimon.cli", "server", "start",
              "--warehouse", str(warehouse), "--state-dir", str(state_dir), "--port", "1"]
    done, _ = in_namespace(state_dir, "size=1m", server, dict(os.environ))
    assert done.returncode == 1 and "MiB free; Spark needs at least 64 MiB" in done.stderr, \
        done.stdout + done.stderr

    run_dbt(project, "run", env={"BATCH": "3"})
    assert read_rows(location) == rows(3)
