"""The class-data-sharing archive of the embedded Spark driver (jvm_cds.py) with real dbt
processes: the first session start writes it when its JVM exits, the next one uses it, and a
damaged archive never breaks a command or prints anything."""

import os
import time
from pathlib import Path

import pytest
from test_session_output import assert_dbt_lines_only, dbt

from dbt.adapters.paimon.environments import jvm_cds


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cds")
    (root / "models").mkdir()
    (root / "dbt_project.yml").write_text(
        "name: cds\nversion: '1.0'\nprofile: cds\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        "cds:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n      schema: cds\n"
        "      threads: 1\n      warehouse: paimon_warehouse\n      spark_master: 'local[1]'\n"
        "      spark_conf:\n        spark.dbt.paimon.warmUpWorkers: 'false'\n")
    (root / "models" / "keyed.sql").write_text(
        "{{ config(materialized='paimon_pk', primary_key='id') }}\n"
        "select id, id * 2 as twice from range(5)")
    return root


def wait_for_dump(timeout: float = 600) -> None:
    """The dumping JVM writes the archive after its dbt process has ended."""
    deadline = time.monotonic() + timeout
    while jvm_cds.dump_running():
        assert time.monotonic() < deadline, "the dumping JVM did not exit"
        time.sleep(1)


def test_the_archive_is_written_once_then_used_and_damage_is_harmless(project, tmp_path,
                                                                       monkeypatch):
    cache = tmp_path / "jvm-cds"
    monkeypatch.setenv(jvm_cds.DIR_ENV, str(cache))
    key = jvm_cds.archive_key()
    ran = dbt(project, "run")
    assert ran.returncode == 0, ran.stdout
    assert_dbt_lines_only(ran)
    wait_for_dump()
    dumps = list(cache.glob(f"{key}.*.tmp.jsa"))
    assert len(dumps) == 1 and jvm_cds.is_archive(str(dumps[0]))

    shown = dbt(project, "show", "--inline", "select sum(twice) as s from {{ ref('keyed') }}")
    assert shown.returncode == 0 and "| 20 |" in shown.stdout, shown.stdout
    assert_dbt_lines_only(shown)
    archive = cache / f"{key}.jsa"
    assert sorted(p.name for p in cache.iterdir()) == [archive.name]  # used, nothing dumped

    # damaged in the middle (the header intact): the JVM's checksums refuse its regions
    os.chmod(archive, 0o644)
    with open(archive, "r+b") as handle:
        handle.seek(archive.stat().st_size // 2)
        handle.write(os.urandom(4096))
    again = dbt(project, "show", "--inline", "select count(*) as n from {{ ref('keyed') }}")
    assert again.returncode == 0 and "| 5 |" in again.stdout, again.stdout
    assert_dbt_lines_only(again)
