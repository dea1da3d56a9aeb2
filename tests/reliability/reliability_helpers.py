"""Helpers of the reliability tests: merged reads (no Spark) and dbt projects run as processes
that a test can pause and kill."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional

import pyarrow as pa

# the write-path tests' helpers (merged read, files on disk) serve here too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration" / "write"))
from write_helpers import files_on_disk, read_back  # noqa: E402

from dbt.adapters.paimon.format.pause_points import PAUSE_AT, PAUSE_DIR  # noqa: E402
from tests import dbt_fork_server  # noqa: E402

# dbt as a new executable, for a command that must start inside another program (unshare)
DBT = [sys.executable, "-m", "dbt.cli.main"]


def read_merged(location) -> pa.Table:
    """The table's rows as every reader sees them, sorted by primary key."""
    table = read_back(location)
    keys = list(location.open().primary_keys)
    return table.sort_by([(k, "ascending") for k in keys])


def read_rows(location) -> list:
    """The table's rows as dicts: merged and sorted by primary key, or an append table's rows in
    write order."""
    table = location.open()
    if table.primary_keys:
        return read_merged(location).to_pylist()
    from dbt.adapters.paimon.format import splits
    from dbt.adapters.paimon.format.kv_files import read_append_split

    return [row for split in splits.plan_splits(table)
            for row in read_append_split(table, split).to_pylist()]


def table_files(location):
    return files_on_disk(location)


def write_project(root: Path, name: str, warehouse: str, models: Dict[str, str],
                  schema: str = "crash", threads: int = 1) -> Path:
    """A dbt project with its own profile and Spark state folder (Derby admits one process per
    metastore), on a shared ``warehouse``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "models").mkdir(exist_ok=True)
    (root / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '1.0'\nprofile: {name}\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        f"{name}:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      schema: {schema}\n      threads: {threads}\n      warehouse: {warehouse}\n"
        f"      spark_master: 'local[2]'\n      spark_state_dir: {root / '.spark'}\n"
        f"      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n"
        f"        spark.driver.memory: '512m'\n")
    for model, sql in models.items():
        (root / "models" / f"{model}.sql").write_text(sql)
    return root


class DbtProcess:
    """``dbt <args>`` in ``project`` as its own process group, optionally pausing at a pause
    point (format/pause_points.py) so the test can kill it there."""

    def __init__(self, project: Path, *args: str, pause_at: Optional[str] = None,
                 pause_dir: Optional[Path] = None, env: Optional[Dict[str, str]] = None):
        env = {**os.environ, **(env or {})}
        env.pop(PAUSE_AT, None)
        if pause_at:
            env[PAUSE_AT] = pause_at
            env[PAUSE_DIR] = str(pause_dir)
        self.pause_dir = pause_dir
        self.log = project / f"dbt-{time.monotonic_ns()}.out"
        self.process = dbt_fork_server.popen(
            [*args, "--project-dir", str(project), "--profiles-dir", str(project)],
            project, env, self.log)

    def wait_for(self, point: str, timeout: float = 240) -> None:
        marker = self.pause_dir / f"{point}.reached"
        deadline = time.monotonic() + timeout
        while not marker.exists():
            if self.process.poll() is not None:
                raise AssertionError(f"dbt ended ({self.process.returncode}) before reaching "
                                     f"{point}:\n{self.output()}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"dbt did not reach {point} in {timeout} s")
            time.sleep(0.1)

    def release(self, point: str) -> None:
        (self.pause_dir / f"{point}.release").touch()

    def kill(self) -> None:
        """SIGKILL the whole process tree (dbt, Spark's JVM, its Python workers)."""
        dbt_fork_server.kill_group(self.process)

    def finish(self, timeout: float = 300) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def output(self) -> str:
        return self.log.read_text()


def run_dbt(project: Path, *args: str, env: Optional[Dict[str, str]] = None,
            timeout: float = 300) -> str:
    process = DbtProcess(project, *args, env=env)
    code = process.finish(timeout)
    assert code == 0, f"dbt {' '.join(args)} failed ({code}):\n{process.output()}"
    return process.output()
