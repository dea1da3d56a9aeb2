"""environments/state_folder.py: the Spark state folder is checked before any Spark starts.
Read-only and full file systems themselves: tests/reliability/test_state_folder_faults.py."""
import errno
import os
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

import pytest

from dbt.adapters.paimon.environments import state_folder
from dbt.adapters.paimon.environments.state_folder import StateDirError, check_usable

Usage = namedtuple("Usage", "total used free")


def test_a_writable_folder_with_room_passes_and_keeps_no_probe(tmp_path):
    folder = tmp_path / "state" / ".spark"
    check_usable(str(folder))
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_commands_checking_one_folder_at_once_all_pass(tmp_path):
    """The daemon's first commands start together on a new folder: each check writes and
    removes a probe of its own, never another's."""
    folder = tmp_path / ".spark"

    def check(_):
        for _ in range(50):
            check_usable(str(folder))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(check, range(4)))  # a StateDirError of any check is raised here
    assert list(folder.iterdir()) == []


def test_a_folder_that_cannot_be_made_names_itself_and_the_fix(tmp_path):
    (tmp_path / "file").write_text("")
    folder = tmp_path / "file" / ".spark"
    with pytest.raises(StateDirError) as raised:
        check_usable(str(folder))
    message = str(raised.value)
    assert f"Spark's state folder {folder}" in message and "is not writable" in message
    assert "spark_state_dir" in message and "no table was touched" in message


def test_a_write_refused_for_room_is_reported_as_full(tmp_path, monkeypatch):
    def no_room(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(state_folder.os, "fsync", no_room)
    with pytest.raises(StateDirError, match=r"has 0\.0 MiB free; Spark needs at least 64 MiB"):
        check_usable(str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_less_free_space_than_a_metastore_needs_is_full(tmp_path, monkeypatch):
    monkeypatch.setattr(state_folder.shutil, "disk_usage",
                        lambda _path: Usage(2**30, 2**30 - 10 * 2**20, 10 * 2**20))
    with pytest.raises(StateDirError, match=r"has 10\.0 MiB free"):
        check_usable(str(tmp_path))
    monkeypatch.setattr(state_folder.shutil, "disk_usage",
                        lambda _path: Usage(2**30, 0, state_folder.MIN_FREE_BYTES))
    check_usable(str(tmp_path))
