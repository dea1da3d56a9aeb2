"""A throwaway Hive Metastore for the Hive catalog tests (tests/integration/catalog): the Hive
Metastore 2.3 whose jars ship inside pyspark (``pyspark/jars/hive-metastore-2.3.*.jar`` with
Derby, DataNucleus, Hadoop's client), one server per pytest process (the session fixture
``hive_metastore`` in tests/conftest.py).

- ``java tests/java/HiveMetastoreLauncher.java`` (source-file mode: no build step) creates the
  transaction tables the lock API needs, then runs ``HiveMetaStore`` (the file says why).
- Its Derby database, its warehouse folder and its log live in a folder of its own, ``mkdtemp``
  under the system temp folder; DataNucleus creates the metastore's tables on start
  (``datanucleus.schema.autoCreateAll``, schema verification off), which is what Spark's
  embedded metastore does too. Settings are Java system properties (HiveConf reads them), so no
  hive-site.xml is needed.
- It is reached at 127.0.0.1 on a free port (Hive 2.3's metastore binds every interface: it
  has no bind-address setting). util-linux's ``setpriv --pdeathsig SIGKILL``
  ends the JVM when the pytest process dies without running its finalizers.
- A start takes ~5 s on a quiet machine. ``stop`` kills the JVM (Derby needs no clean
  shutdown: the folder goes), then removes the folder; the next start removes the folders of
  test processes that were killed.

Missing ``java`` or pyspark's Hive jars FAIL the test, naming what to install."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Dict, Optional

import pytest

from tests import server_folders

START_TIMEOUT = 90
START_ATTEMPTS = 3
FOLDER_PREFIX = "dbt-paimon-hms-"
LAUNCHER = os.path.join(os.path.dirname(__file__), "java", "HiveMetastoreLauncher.java")
LOG4J = """\
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d %p %c{{1}}: %m%n
"""


def _fail(message: str):
    pytest.fail(f"Hive Metastore test server: {message}", pytrace=False)


def pyspark_jars() -> str:
    import pyspark

    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


# What Paimon Java's HiveCatalog needs besides Paimon's bundled jar (tests/interop): the
# metastore client of Hive 2.3 and its dependencies, from pyspark's jars. Hadoop 3.5's client
# goes ahead of the bundled jar, whose Hadoop 2 classes lack what Hive's client calls
# (org.apache.hadoop.mapred, and htrace for its FileSystem).
HIVE_CLIENT_JARS = (
    "hive-metastore-2.3.*.jar", "hive-exec-2.3.*-core.jar", "hive-common-2.3.*.jar",
    "hive-serde-2.3.*.jar", "hive-shims-2.3.*.jar", "hive-shims-common-2.3.*.jar",
    "hive-shims-0.23-2.3.*.jar", "hive-storage-api-*.jar", "libthrift-*.jar",
    "libfb303-*.jar", "guava-*.jar", "failureaccess-*.jar", "commons-lang-2.*.jar",
    "commons-lang3-*.jar", "slf4j-api-*.jar")
HADOOP_JARS = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar")


def java_hive_client_classpath():
    """(jars ahead of Paimon's bundled jar, jars after it) for Paimon Java's HiveCatalog."""
    jars = pyspark_jars()

    def find(patterns):
        found = []
        for pattern in patterns:
            matches = sorted(glob.glob(os.path.join(jars, pattern)))
            if not matches:
                _fail(f"no {pattern} in {jars}: Paimon Java's Hive catalog needs it")
            found.append(matches[0])
        return found

    return find(HADOOP_JARS), find(HIVE_CLIENT_JARS)


@dataclass
class HiveMetastore:
    root: str  # the server's own folder: Derby's database, its warehouse, the log
    port: int
    process: subprocess.Popen

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        return os.path.join(self.root, "metastore.log")

    def catalog(self, warehouse: str, **options) -> Dict[str, str]:
        """The profile's ``catalog:`` mapping for a Hive catalog over ``warehouse``."""
        return {"type": "hive", "uri": self.uri, "warehouse": str(warehouse), **options}

    def client(self):
        """An open Thrift connection (catalog/hive_metastore.py); the caller closes it."""
        from dbt.adapters.paimon.catalog.hive_metastore import MetastoreConnection

        return MetastoreConnection(self.uri)

    def stop(self) -> None:
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
                self.process.wait(timeout=30)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start() -> HiveMetastore:
    """A metastore on a free port of 127.0.0.1, answering; the caller stops it."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        # (the launcher runs in Java's source-file mode, which needs the JDK's compiler)
        _fail("`java` or `javac` is missing: the Hive catalog tests run a Hive Metastore on a "
              "Java 17 JDK (Debian: apt-get install openjdk-17-jdk-headless)")
    jars = pyspark_jars()
    if not glob.glob(os.path.join(jars, "hive-metastore-2.3.*.jar")):
        _fail(f"no hive-metastore-2.3.*.jar in {jars}: the tests start the metastore pyspark "
              f"ships (pip install pyspark, as the dev install does)")
    with server_folders.server_folder(FOLDER_PREFIX) as root:
        log = os.path.join(root, "metastore.log")
        with open(os.path.join(root, "log4j2.properties"), "w") as f:
            f.write(LOG4J.format(log=log))
        server = server_folders.start_on_a_free_port(
            lambda port: _start_server(root, port, jars), START_ATTEMPTS)
        if server is None:
            _fail(f"the metastore did not start on a free port in {START_ATTEMPTS} tries; its "
                  f"log ({log}):\n{server_folders.tail(log)}")
        return server


def _start_server(root: str, port: int, jars: str) -> Optional[HiveMetastore]:
    """The metastore on ``port``, answering; None when the port was taken meanwhile."""
    derby = os.path.join(root, "metastore_db")
    settings = {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={derby};create=true",
        "hive.metastore.schema.verification": "false",
        "datanucleus.schema.autoCreateAll": "true",
        # BoneCP (Hive 2.3's default pool) is not in pyspark's jars; HikariCP is
        "datanucleus.connectionPoolingType": "HikariCP",
        "hive.metastore.warehouse.dir": "file:" + os.path.join(root, "hive-warehouse"),
        "derby.system.home": root,
        "derby.stream.error.file": os.path.join(root, "derby.log"),
        "log4j.configurationFile": os.path.join(root, "log4j2.properties"),
        # hive-exec's log4j2 setup asks for async loggers, whose library pyspark lacks
        "log4j2.contextSelector": "org.apache.logging.log4j.core.selector."
                                  "ClassLoaderContextSelector",
    }
    prefix = ["setpriv", "--pdeathsig", "SIGKILL", "--"] if shutil.which("setpriv") else []
    command = [*prefix, "java", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-cp", os.path.join(jars, "*"), *(f"-D{k}={v}" for k, v in settings.items()),
               LAUNCHER, "-p", str(port)]
    log_path = os.path.join(root, "metastore.log")
    with open(os.path.join(root, "stdout.log"), "a") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=root,
                                   stdin=subprocess.DEVNULL)
    server = HiveMetastore(root, port, process)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = server_folders.tail(log_path) + server_folders.tail(os.path.join(root, "stdout.log"))
            if "Address already in use" in text:
                return None
            _fail(f"the metastore exited ({process.returncode}) on start; its log:\n{text}")
        try:
            connection = server.client()
        except Exception:  # not listening yet
            time.sleep(0.2)
            continue
        try:
            connection.client.get_all_databases()  # answers, not just listens
            return server
        finally:
            connection.close()
    server.stop()
    _fail(f"the metastore did not answer within {START_TIMEOUT} s; its log:\n"
          f"{server_folders.tail(log_path)}")
