"""A class-data-sharing (CDS) archive for the embedded Spark driver JVM, so a session-mode dbt
command starts Spark in less time.

A fresh driver JVM loads and verifies ~20,000 classes of Spark, Hive and their libraries before
the session exists, a large part of session mode's start. Java 17 can write the classes a run
loaded to an archive when the JVM exits (``-XX:ArchiveClassesAtExit``) and map that archive at
the next start (``-XX:SharedArchiveFile``) instead of loading them again. Spark Connect servers
(`dbt-paimon server start`, the background daemon) map the archive once a session start has
built it (``archive_options_if_built``), and never write it.

Built once per machine and user: the archive is a per-user cache (``$XDG_CACHE_HOME`` or
``~/.cache``, ``dbt-paimon/jvm-cds``; ``DBT_PAIMON_JVM_CDS_DIR`` elsewhere, ``off`` to turn it off),
keyed by the Java and Spark installations. Safety, each case tried here:
- One dump at a time: the first session start without an archive takes ``dump.lock`` (O_EXCL) and
  its JVM writes ``<key>.<pid>.tmp.jsa`` at exit; others start without CDS meanwhile. The next
  start that finds the dumping JVM gone and the file complete (the JVM writes the archive's magic
  number last) renames it to ``<key>.jsa`` (atomic); an incomplete one is deleted.
- The JVM checks a mapped archive itself: another JVM, other jars on the class path, a truncated
  or foreign file make it start without the archive (``-Xshare:auto``), and
  ``-XX:+VerifySharedSpaces`` checks its regions' checksums, so a corrupted file is not mapped.
- A JVM that fails to start with the archive is started again without it, and the archive is
  deleted (embedded.EmbeddedEnvironment).
- The JVM's CDS messages (thousands of lines while dumping) are turned off; whatever it prints
  goes to Spark's log file, never to dbt's output (spark_logs).
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import time
from typing import Optional

from dbt.adapters.paimon.server.processes import alive

DIR_ENV = "DBT_PAIMON_JVM_CDS_DIR"
LOCK_NAME = "dump.lock"
# A dump lock older than this is taken over (its JVM hung or its pid was reused).
STALE_LOCK_SECONDS = 30 * 60
MAGIC = (0xF00BABA8).to_bytes(4, "little")  # a dynamic archive's header (JDK 17)
QUIET = "-Xlog:cds*=off"


def archive_dir() -> Optional[str]:
    configured = os.environ.get(DIR_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "false", "0") else configured
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "dbt-paimon", "jvm-cds")


def archive_key() -> str:
    """The Java and Spark installations the archive belongs to (the JVM refuses an archive of
    another JVM or class path anyway; the key keeps one file per installation)."""
    import pyspark

    java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) \
        if os.environ.get("JAVA_HOME") else shutil.which("java")
    parts = [os.path.realpath(java) if java else "java", os.path.dirname(pyspark.__file__),
             pyspark.__version__]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


class Plan:
    """What one session start does: use the archive, write it at exit, or neither."""

    def __init__(self, directory: Optional[str], key: str, use: Optional[str] = None,
                 dump: Optional[str] = None):
        self.directory, self.key, self.use, self.dump = directory, key, use, dump

    @property
    def java_options(self) -> str:
        if self.use:
            return f"-XX:SharedArchiveFile={self.use} -Xshare:auto -XX:+VerifySharedSpaces {QUIET}"
        if self.dump:
            return f"-XX:ArchiveClassesAtExit={self.dump} {QUIET}"
        return ""

    def jvm_started(self, jvm_pid: Optional[int]) -> None:
        """Record the dumping JVM in the lock: the archive is complete once that JVM is gone."""
        if self.dump and jvm_pid:
            try:
                with open(os.path.join(self.directory, LOCK_NAME), "w") as lock:
                    lock.write(f"{jvm_pid}\n")
            except OSError:
                pass

    def discard(self) -> None:
        """The JVM did not start with this plan: drop the archive (or the dump) and its lock."""
        for path in (self.use, self.dump):
            _remove(path)
        if self.dump:
            _remove(os.path.join(self.directory, LOCK_NAME))


def plan() -> Plan:
    """Decide, before the JVM starts; any file-system trouble means no CDS, never an error."""
    directory = archive_dir()
    if directory is None:
        return Plan(None, "")
    try:
        key = archive_key()
        os.makedirs(directory, exist_ok=True)
        final = os.path.join(directory, f"{key}.jsa")
        _promote_finished_dumps(directory, key, final)
        if is_archive(final):
            return Plan(directory, key, use=final)
        if _take_lock(directory):
            return Plan(directory, key, dump=os.path.join(directory, f"{key}.{os.getpid()}.tmp.jsa"))
    except OSError:
        pass
    return Plan(directory, "")


def archive_options_if_built() -> str:
    """The JVM options that map the archive when one is built, else none: for a long-lived JVM
    (a Spark Connect server: `dbt-paimon server start`'s, the background daemon's), which should
    not be the one that dumps it at its exit hours later. Same class path as the embedded driver
    (pyspark's jars), so it maps."""
    directory = archive_dir()
    if directory is None:
        return ""
    try:
        final = os.path.join(directory, f"{archive_key()}.jsa")
        return Plan(directory, "", use=final).java_options if is_archive(final) else ""
    except OSError:
        return ""


def dump_running() -> bool:
    """A JVM is writing the archive (benchmarks and tests wait for it)."""
    directory = archive_dir()
    return directory is not None and _lock_holder(directory) is not None


def is_archive(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False


def _lock_holder(directory: str) -> Optional[int]:
    """The pid in the dump lock while it is held; None when there is no lock or it is stale."""
    path = os.path.join(directory, LOCK_NAME)
    try:
        age = time.time() - os.path.getmtime(path)
        with open(path) as lock:
            pid = int(lock.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if age > STALE_LOCK_SECONDS or not pid or not alive(pid):
        return None
    return pid


def _take_lock(directory: str) -> bool:
    path = os.path.join(directory, LOCK_NAME)
    if os.path.exists(path) and _lock_holder(directory) is None:
        _remove(path)  # stale: its JVM is gone
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as lock:
        lock.write(f"{os.getpid()}\n")
    return True


def _promote_finished_dumps(directory: str, key: str, final: str) -> None:
    """Dumps whose JVM has exited become the archive if complete; others are deleted."""
    if _lock_holder(directory) is not None:
        return  # a JVM may still be writing its dump
    for dump in glob.glob(os.path.join(directory, f"{key}.*.tmp.jsa")):
        if is_archive(dump) and not is_archive(final):
            try:
                os.replace(dump, final)
                continue
            except OSError:
                pass
        _remove(dump)
    _remove(os.path.join(directory, LOCK_NAME))


def _remove(path: Optional[str]) -> None:
    if path:
        try:
            os.remove(path)
        except OSError:
            pass
