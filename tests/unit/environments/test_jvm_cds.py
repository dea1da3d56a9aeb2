"""jvm_cds.plan(): when a session start uses the class-data-sharing archive, writes it, or does
neither (no Spark here: the JVM's side is tests/functional/paimon/test_jvm_cds.py)."""

import os
import subprocess
import sys

import pytest

from dbt.adapters.paimon.environments import jvm_cds


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cds"
    monkeypatch.setenv(jvm_cds.DIR_ENV, str(directory))
    return directory


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_first_start_dumps_and_holds_the_lock(cache):
    first = jvm_cds.plan()
    assert first.use is None and first.dump.endswith(f".{os.getpid()}.tmp.jsa")
    assert f"-XX:ArchiveClassesAtExit={first.dump}" in first.java_options
    # while its JVM lives, another start neither dumps nor uses anything
    second = jvm_cds.plan()
    assert second.use is None and second.dump is None and second.java_options == ""


def test_a_finished_dump_becomes_the_archive(cache):
    first = jvm_cds.plan()
    first.jvm_started(dead_pid())  # the dumping JVM has exited
    with open(first.dump, "wb") as dump:
        dump.write(jvm_cds.MAGIC + b"\0" * 64)
    later = jvm_cds.plan()
    assert later.use == str(cache / f"{jvm_cds.archive_key()}.jsa") and later.dump is None
    assert "-XX:+VerifySharedSpaces" in later.java_options and "-Xshare:auto" in later.java_options
    assert sorted(os.listdir(cache)) == [f"{jvm_cds.archive_key()}.jsa"]  # lock released


def test_an_unfinished_dump_is_deleted_and_dumped_again(cache):
    first = jvm_cds.plan()
    first.jvm_started(dead_pid())
    with open(first.dump, "wb") as dump:
        dump.write(b"\0" * 68)  # killed before the JVM wrote the header
    later = jvm_cds.plan()
    assert later.use is None and later.dump is not None
    assert not os.path.exists(first.dump) or first.dump == later.dump


def test_a_dump_still_being_written_is_left_alone(cache):
    first = jvm_cds.plan()
    first.jvm_started(os.getpid())  # "its JVM" is alive
    with open(first.dump, "wb") as dump:
        dump.write(jvm_cds.MAGIC)
    later = jvm_cds.plan()
    assert later.java_options == "" and os.path.exists(first.dump)


def test_a_foreign_file_as_archive_is_not_used(cache):
    os.makedirs(cache)
    (cache / f"{jvm_cds.archive_key()}.jsa").write_bytes(b"not an archive")
    plan = jvm_cds.plan()
    assert plan.use is None and plan.dump is not None


def test_discard_drops_a_refused_archive(cache):
    first = jvm_cds.plan()
    first.jvm_started(dead_pid())
    with open(first.dump, "wb") as dump:
        dump.write(jvm_cds.MAGIC)
    used = jvm_cds.plan()
    used.discard()
    assert not os.path.exists(used.use)


def test_off_and_unwritable_mean_no_archive(cache, monkeypatch, tmp_path):
    monkeypatch.setenv(jvm_cds.DIR_ENV, "off")
    assert jvm_cds.plan().java_options == ""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(jvm_cds.DIR_ENV, str(blocker / "cds"))  # cannot be created
    assert jvm_cds.plan().java_options == ""
