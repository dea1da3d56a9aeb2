"""Interop tests against a real Paimon Java (Apache Paimon 1.0).

Maven is unreachable, but the PyPI package ``paimon-python-ali==0.1.1`` ships
``paimon_python_java/java_dependencies/paimon-python-java-bridge.jar``, which bundles Paimon 1.0
Java (paimon-bundle 1.0-SNAPSHOT) with its formats and Hadoop classes. The ``paimon_java``
fixture downloads that wheel with ``pip download --no-deps`` into a cache OUTSIDE the repository
(``$DBT_PAIMON_JAVA_CACHE`` or ``~/.cache/dbt-paimon/java``; the jar is never committed),
extracts the jar, compiles ``java/PaimonPeer.java`` against it with ``javac`` and runs it with
``java`` per call. No network (no PyPI) or no JDK = the fixture FAILS: CI has both.

These tests start a plain local[2] SparkSession (like tests/integration), so they can share a
pytest process with tests/integration (`make test-integration`), but never with tests/functional.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

import pytest

PACKAGE = "paimon-python-ali==0.1.1"
JAR_IN_WHEEL = "paimon_python_java/java_dependencies/paimon-python-java-bridge.jar"
PEER_SOURCE = Path(__file__).parent / "java" / "PaimonPeer.java"
JAVA_TIMEOUT = 300


def _cache_dir() -> Path:
    root = os.environ.get("DBT_PAIMON_JAVA_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "dbt-paimon", "java")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fetch_jar(cache: Path) -> Path:
    jar = cache / "paimon-python-java-bridge.jar"
    if jar.exists() and jar.stat().st_size > 0:
        return jar
    downloads = cache / "download"
    downloads.mkdir(exist_ok=True)
    archives = sorted(downloads.glob("paimon_python_ali-0.1.1*"))
    if not archives:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
             PACKAGE, "-d", str(downloads)],
            capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.fail(
                f"interop tests need Paimon Java: `pip download --no-deps {PACKAGE}` failed "
                f"(no network / no PyPI?). Exit {proc.returncode}:\n{proc.stderr[-3000:]}",
                pytrace=False)
        archives = sorted(downloads.glob("paimon_python_ali-0.1.1*"))
    if not archives:
        pytest.fail(f"pip download of {PACKAGE} left no archive in {downloads}", pytrace=False)
    archive = archives[0]
    partial = jar.with_suffix(".jar.part")
    if archive.suffix == ".whl" or zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.endswith(JAR_IN_WHEEL)]
            if not names:
                pytest.fail(f"{archive.name} holds no {JAR_IN_WHEEL}", pytrace=False)
            with zf.open(names[0]) as src, open(partial, "wb") as dst:
                shutil.copyfileobj(src, dst)
    else:  # an sdist (.tar.gz)
        import tarfile

        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if m.name.endswith(JAR_IN_WHEEL)]
            if not members:
                pytest.fail(f"{archive.name} holds no {JAR_IN_WHEEL}", pytrace=False)
            with tf.extractfile(members[0]) as src, open(partial, "wb") as dst:
                shutil.copyfileobj(src, dst)
    os.replace(partial, jar)
    shutil.rmtree(downloads, ignore_errors=True)  # the 87 MB wheel is not needed any more
    return jar


def _compile(cache: Path, jar: Path) -> Path:
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            pytest.fail(f"interop tests need a JDK (17): `{tool}` is not on PATH", pytrace=False)
    digest = hashlib.sha256(PEER_SOURCE.read_bytes()).hexdigest()[:16]
    classes = cache / f"classes-{digest}"
    if (classes / "PaimonPeer.class").exists():
        return classes
    building = cache / f"classes-{digest}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    proc = subprocess.run(["javac", "-nowarn", "-cp", str(jar), "-d", str(building),
                           str(PEER_SOURCE)], capture_output=True, text=True, timeout=JAVA_TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(f"javac PaimonPeer.java failed:\n{proc.stderr[-3000:]}", pytrace=False)
    try:
        os.replace(building, classes)
    except OSError:  # another process compiled it first
        shutil.rmtree(building, ignore_errors=True)
    return classes


class JavaError(RuntimeError):
    """PaimonPeer exited non-zero; ``str()`` holds the Java exception lines."""


class PaimonJava:
    """Runs PaimonPeer (one JVM per call)."""

    def __init__(self, jar: Path, classes: Path, log_config: Path, extra_classpath=(),
                 before_jar=()):
        self.jar, self.classes = jar, classes
        self.classpath = os.pathsep.join([str(classes), *map(str, before_jar), str(jar),
                                          *map(str, extra_classpath)])
        self.log_config = log_config

    def with_classpath(self, *jars, before_jar=()) -> "PaimonJava":
        """The same peer with more jars (a JDBC driver) on its class path; ``before_jar`` ones
        ahead of Paimon's jar, whose own classes they replace (a newer Hadoop)."""
        return PaimonJava(self.jar, self.classes, self.log_config, jars, before_jar)

    def run(self, *args: str) -> str:
        cmd = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               f"-Dlog4j2.configurationFile={self.log_config}",
               f"-Dlog4j.configurationFile={self.log_config}",
               "-cp", self.classpath, "PaimonPeer", *[str(a) for a in args]]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=JAVA_TIMEOUT)
        if proc.returncode != 0:
            raise JavaError(_java_error(proc.stderr))
        return proc.stdout

    def batch(self, commands: List[List[str]], path) -> List[str]:
        """Run several PaimonPeer commands in one JVM (start-up is most of a call's time);
        each command's standard output, in order. ``path``: where the command file goes."""
        with open(path, "w", encoding="utf-8") as f:
            for command in commands:
                f.write(json.dumps([str(a) for a in command]) + "\n")
        outputs = self.run("batch", str(path)).split("BATCH_END\n")
        return outputs[:len(commands)]

    def read(self, warehouse, table: str, snapshot: Optional[int] = None) -> List[Dict]:
        args = ["read", warehouse, table] + ([str(snapshot)] if snapshot is not None else [])
        return [json.loads(line) for line in self.run(*args).splitlines() if line.strip()]

    def tables(self, warehouse, database: str) -> List[str]:
        """The tables Catalog.listTables finds in ``database``."""
        return sorted(line for line in self.run("tables", warehouse, database).splitlines()
                      if line.strip())

    def read_tag(self, warehouse, table: str, tag: str) -> List[Dict]:
        return [json.loads(line) for line in self.run("readtag", warehouse, table, tag)
                .splitlines() if line.strip()]

    def read_with(self, warehouse, table: str, **options: str) -> List[Dict]:
        """A batch read with dynamic options (``incremental_between='t1,t2'`` for
        ``incremental-between``), each row with its ``_row_kind``."""
        args = [f"{k.replace('_', '-')}={v}" for k, v in options.items()]
        return [json.loads(line) for line in self.run("readopts", warehouse, table, *args)
                .splitlines() if line.strip()]

    def create_tag(self, warehouse, table: str, tag: str, snapshot: int) -> None:
        self.run("tag", warehouse, table, tag, str(snapshot))

    def tags(self, warehouse, table: str) -> Dict[str, int]:
        """Tag name -> snapshot id, as Paimon Java's TagManager lists them."""
        return {name: int(sid) for name, sid in (line.split() for line in
                self.run("tags", warehouse, table).splitlines() if line.strip())}

    def create_branch(self, warehouse, table: str, branch: str, tag: Optional[str] = None):
        self.run("branch", warehouse, table, branch, *([tag] if tag else []))

    def rollback(self, warehouse, table: str, to) -> None:
        """FileStoreTable.rollbackTo(snapshot id | tag name)."""
        self.run("rollback", warehouse, table, str(to))

    def buckets(self, warehouse, table: str) -> List[Dict]:
        return [json.loads(line) for line in self.run("bucket", warehouse, table).splitlines()
                if line.strip()]

    def write(self, warehouse, table: str, rows: List[Dict], path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        self.run("write", warehouse, table, str(path))

    def compact(self, warehouse, table: str) -> None:
        self.run("compact", warehouse, table)

    def create(self, warehouse, table: str, fields, primary_keys=(), partition_keys=(),
               options: Optional[Dict[str, str]] = None) -> None:
        """Create the table with Paimon Java; ``fields``: [(name, Paimon SQL type)]."""
        spec = {"fields": [list(f) for f in fields], "primaryKeys": list(primary_keys),
                "partitionKeys": list(partition_keys), "options": dict(options or {})}
        self.run("create", warehouse, table, json.dumps(spec))

    def dv_delete(self, warehouse, table: str, column: str, values) -> None:
        """Delete rows of an append table with deletion vectors (Paimon Spark's DELETE)."""
        self.run("dvdelete", warehouse, table, column, *[str(v) for v in values])


def _java_error(stderr: str) -> str:
    """The exception lines of a Java stack trace (first line + every 'Caused by')."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    picked = [ln for ln in lines
              if ln.startswith(("Exception", "Caused by", "java.", "org.")) and " at " not in ln]
    return "\n".join(picked or lines[-20:])


@pytest.fixture(scope="session")
def paimon_java() -> PaimonJava:
    cache = _cache_dir()
    jar = _fetch_jar(cache)
    return PaimonJava(jar, _compile(cache, jar), quiet_log_config(cache))


def quiet_log_config(cache: Path) -> Path:
    """Paimon Java's log4j settings for the tests: errors only, to standard error."""
    log_config = cache / "log4j2-quiet.properties"
    if not log_config.exists():
        log_config.write_text("rootLogger.level = ERROR\n"
                              "rootLogger.appenderRef.stderr.ref = stderr\n"
                              "appender.stderr.type = Console\n"
                              "appender.stderr.name = stderr\n"
                              "appender.stderr.target = SYSTEM_ERR\n"
                              "appender.stderr.layout.type = PatternLayout\n"
                              "appender.stderr.layout.pattern = %-5p %c - %m%n\n")
    return log_config


@pytest.fixture(scope="session")
def java_read(paimon_java):
    """``java_read(warehouse, "db.table", snapshot=None) -> list[dict]``: Paimon Java's batch
    read (merged for primary-key tables), one dict per row, values as PaimonPeer renders them."""
    return paimon_java.read


# The JDBC drivers Paimon Java's JdbcCatalog needs, from Debian's packages (nothing is downloaded
# for them): libxerial-sqlite-jdbc-java, libpostgresql-jdbc-java.
JDBC_DRIVER_JARS = {
    "sqlite": ("libxerial-sqlite-jdbc-java", ["/usr/share/java/sqlite-jdbc.jar",
                                              "/usr/share/java/xerial-sqlite-jdbc.jar"]),
    "postgresql": ("libpostgresql-jdbc-java", ["/usr/share/java/postgresql.jar"]),
}


def jdbc_driver_jar(kind: str) -> Path:
    """The Debian package's driver jar for ``jdbc:<kind>:`` URLs, installed with apt-get when it
    is missing (as the Paimon jar is fetched from PyPI); the test FAILS, naming the package,
    when it cannot be installed."""
    package, candidates = JDBC_DRIVER_JARS[kind]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    commands = [["apt-get", "install", "-y", "-q", package],
                ["sh", "-c", f"apt-get update -q && apt-get install -y -q {package}"]]
    for command in [None] + commands:  # installed already? else install (the index may be old)
        if command is not None:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
        for candidate in candidates:
            if Path(candidate).exists():
                return Path(candidate)
    pytest.fail(f"Paimon Java's JDBC catalog on {kind} needs the {kind} JDBC driver of the "
                f"Debian package {package} ({' or '.join(candidates)}); `apt-get install "
                f"{package}` failed ({proc.returncode}): {proc.stderr[-2000:]}", pytrace=False)


def catalog_spec(options: Dict[str, str], warehouse) -> str:
    """PaimonPeer's <warehouse> argument opening the catalog of ``options`` (pypaimon's
    catalog options, e.g. ``metastore: jdbc``, ``uri``) over ``warehouse``."""
    return json.dumps({**options, "warehouse": str(warehouse)})
