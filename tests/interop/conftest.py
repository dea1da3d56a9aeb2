"""Interop tests against a real Paimon Java (Apache Paimon 1.0).

Maven is unreachable, but the PyPI package ``paimon-python-ali==0.1.1`` ships
``paimon_python_java/java_dependencies/paimon-python-java-bridge.jar``, which bundles Paimon 1.0
Java (paimon-bundle 1.0-SNAPSHOT) with its formats and Hadoop classes. The ``paimon_java``
fixture downloads that wheel with ``pip download --no-deps`` into a cache OUTSIDE the repository
(``$DBT_PAIMON_JAVA_CACHE`` or ``~/.cache/dbt-paimon/java``; the jar is never committed),
extracts the jar, compiles ``java/PaimonPeer.java`` against it with ``javac`` and runs it in a
long-lived JVM per pytest process and class path (``PaimonPeer serve``: one command a line on
its standard input, each command opening its own catalog, so it sees every file written since
the last one; ``PaimonJava.run``): starting a JVM and loading Paimon's and Hadoop's classes took
~2.5 s of each call when every call started ``java``, a served call takes a few hundredths of a
second. The peers stop at the end of the session, and when the pytest process dies (their
standard input ends). No network (no PyPI) or no JDK = the fixture FAILS: CI has both.

These tests start a plain local[2] SparkSession (like tests/integration), so they can share a
pytest process with tests/integration (`make test-integration`), but never with tests/functional.
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

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
    """A PaimonPeer command failed; ``str()`` holds the Java exception lines."""


class _PeerGone(Exception):
    """The peer's JVM was not there (any more) to take the command."""


class _Peer:
    """One ``PaimonPeer serve`` JVM: ``call(args)`` sends one command line (a JSON array) and
    waits for its frame (``@@PaimonPeer <token> ok|error <n>``, then n bytes): ("ok", its standard
    output) or ("error", the trace the one-shot mode printed to standard error). A reader thread
    turns standard output into frames (skipping any line that is not a header with this peer's
    random token); another keeps the tail of standard error, reported if the JVM dies."""

    def __init__(self, command: List[str]):
        self.token = secrets.token_hex(16)
        self.command = [*command, "serve", self.token]
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.frames: "queue.Queue[Optional[Tuple[str, str]]]" = queue.Queue()
        self.stderr = collections.deque(maxlen=200)
        # stdin is the peer's lifeline: it exits when it reads end of file, which also comes
        # when this process dies
        self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        threading.Thread(target=self._read_frames, daemon=True,
                         name=f"paimon-peer-{self.process.pid}-out").start()
        threading.Thread(target=self._read_stderr, daemon=True,
                         name=f"paimon-peer-{self.process.pid}-err").start()

    def _read_frames(self) -> None:
        header = f"@@PaimonPeer {self.token} ".encode()
        stdout = self.process.stdout
        try:
            for line in iter(stdout.readline, b""):
                if not line.startswith(header):
                    self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
                    continue
                status, size = line[len(header):].split()
                payload = stdout.read(int(size))
                self.frames.put((status.decode(), payload.decode("utf-8")))
        finally:
            self.frames.put(None)  # end of output: the JVM is gone

    def _read_stderr(self) -> None:
        for line in iter(self.process.stderr.readline, b""):
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, args: List[str], timeout: float) -> Tuple[str, str]:
        """Raises ``_PeerGone`` when the JVM was gone before it took the command,
        ``JavaError`` when it died running it, ``subprocess.TimeoutExpired`` (the JVM killed)
        when no frame came within ``timeout`` seconds."""
        if not self.alive():
            raise _PeerGone()
        try:
            self.process.stdin.write((json.dumps(args) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _PeerGone()
        try:
            frame = self.frames.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise subprocess.TimeoutExpired(self.command + args, timeout)
        if frame is None:  # it died running the command (a crash, a kill): as a one-shot exit
            self.kill()
            raise JavaError(_java_error("\n".join(self.stderr))
                            or f"Paimon Java's peer died (exit {self.process.returncode})")
        return frame

    def stop(self) -> None:
        """End of input: the JVM exits; killed if it does not within 10 s."""
        if os.getpid() != self.owner:
            return  # a forked child's copy: the peer is its parent's
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


# this process's peers, by their JVM's command line (class path included)
_PEERS: Dict[Tuple[str, ...], _Peer] = {}
_PEERS_LOCK = threading.Lock()


def stop_peers() -> None:
    """Stop every peer this process started (the session's end; also at exit)."""
    with _PEERS_LOCK:
        peers = list(_PEERS.values())
        _PEERS.clear()
    for peer in peers:
        peer.stop()


atexit.register(stop_peers)


class PaimonJava:
    """Runs PaimonPeer commands: in the long-lived peer JVM of its class path (``run``), or in
    a JVM of their own (``run(..., fresh=True)``)."""

    def __init__(self, jar: Path, classes: Path, log_config: Path, extra_classpath=(),
                 before_jar=()):
        self.jar, self.classes = jar, classes
        self.classpath = os.pathsep.join([str(classes), *map(str, before_jar), str(jar),
                                          *map(str, extra_classpath)])
        self.log_config = log_config
        self.java = ["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                     f"-Dlog4j2.configurationFile={self.log_config}",
                     f"-Dlog4j.configurationFile={self.log_config}",
                     "-cp", self.classpath, "PaimonPeer"]

    def with_classpath(self, *jars, before_jar=()) -> "PaimonJava":
        """The same peer with more jars (a JDBC driver) on its class path; ``before_jar`` ones
        ahead of Paimon's jar, whose own classes they replace (a newer Hadoop). Its commands
        run in a peer JVM of that class path."""
        return PaimonJava(self.jar, self.classes, self.log_config, jars, before_jar)

    def run(self, *args: str, fresh: bool = False) -> str:
        """The command's standard output; ``JavaError`` (the Java exception lines) when it
        fails. ``fresh``: in a JVM of its own, started for this command, as every call ran
        before the peers (none of today's tests needs it)."""
        args = [str(a) for a in args]
        if fresh:
            proc = subprocess.run(self.java + args, capture_output=True, text=True,
                                  timeout=JAVA_TIMEOUT)
            if proc.returncode != 0:
                raise JavaError(_java_error(proc.stderr))
            return proc.stdout
        for attempt in range(2):
            peer = self._peer()
            with peer.lock:
                try:
                    status, text = peer.call(args, JAVA_TIMEOUT)
                except _PeerGone:
                    # killed or crashed since its last command (it took nothing of this one):
                    # once more in a fresh one
                    self._forget(peer)
                    if attempt:
                        raise JavaError("Paimon Java's peer exited at once:\n"
                                        + "\n".join(list(peer.stderr)[-20:]))
                    continue
                except BaseException:
                    self._forget(peer)  # timed out or died running it: the next call starts one
                    raise
            if status != "ok":
                raise JavaError(_java_error(text))
            return text
        raise AssertionError("unreachable")

    def _peer(self) -> _Peer:
        key = tuple(self.java)
        with _PEERS_LOCK:
            peer = _PEERS.get(key)
            if peer is None or peer.owner != os.getpid():
                peer = _PEERS[key] = _Peer(self.java)
            return peer

    def _forget(self, peer: _Peer) -> None:
        with _PEERS_LOCK:
            if _PEERS.get(tuple(self.java)) is peer:
                del _PEERS[tuple(self.java)]
        peer.kill()

    def batch(self, commands: List[List[str]], path) -> List[str]:
        """Run several PaimonPeer commands as one (``PaimonPeer batch``, in the peer); each
        command's standard output, in order. ``path``: where the command file goes."""
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
def paimon_java():
    cache = _cache_dir()
    jar = _fetch_jar(cache)
    try:
        yield PaimonJava(jar, _compile(cache, jar), quiet_log_config(cache))
    finally:
        stop_peers()


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
