"""Shared pytest setup. Nothing here starts Spark: the session starts when a functional test's
``project`` fixture opens the first dbt connection, so tests/unit stays Spark-free."""

import os

import pytest

from tests import behavior_flag_sources, process_ledger

# No background Spark daemon (server/daemon.py) for the suite's dbt commands: each test
# process owns its Spark; tests/reliability/test_daemon_dbt.py turns it on for its commands.
os.environ["DBT_PAIMON_DAEMON"] = "off"
# Nor the background warm-up of Spark's Python workers (environments/worker_warm_up.py): most of
# the suite's dbt processes run no Python task, and with two test processes on two cores its CPU
# (~3 s per fresh session) slows the other one. The tests of the warm-up and of what a command
# prints with it (tests/functional/paimon/test_session_output.py) turn it on.
os.environ["DBT_PAIMON_WARM_UP_WORKERS"] = "off"
# Nor dbt's JSON artifacts (manifest.json, semantic_manifest.json, run_results.json...:
# DBT_WRITE_JSON, dbt's --no-write-json), which the adapter never reads: writing them is dbt-core's
# work, ~0.22 s of each in-process command and ~0.8 s of a fresh one (the manifest, and the
# semantic layer's converters imported anew) on the 2-core machine, over a thousand commands.
# dbt still writes partial_parse.msgpack (dbt.tests.util.get_manifest reads it), catalog.json and
# the run's files under target/. The modules whose tests read an artifact (run_results.json's
# invocation ids, --state, `dbt retry`, docs) turn it back on with the dbt_artifacts fixture;
# among them the sample project's `dbt build` (tests/interop/test_sample_project_on_catalogs.py),
# whose run_results.json holds the adapter response of every kind of node the project has.
os.environ["DBT_WRITE_JSON"] = "false"

# The JVM options of a test process's own Spark (its session, or the Connect server of
# `--profile connect`), which lives as long as the process: 10-20 minutes of small jobs, where the
# C2 compiler pays for itself, unlike in the short JVMs of the dbt processes tests start (the
# Makefile's TEST_JVM_OPTS keeps every JVM to C1; the JVM takes the last of a repeated flag).
# test_snapshot_suites.py and test_basic.py alone on the quiet 2-core machine: 178 s and 281
# CPU-s with these, 217 s and 317 CPU-s with C1 only.
LONG_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=4 -XX:+UseSerialGC"

# Behavior flags rendered without reading every frame's source (tests/behavior_flag_sources.py)
behavior_flag_sources.install()

# dbt's functional-test fixtures (project, run_sql, unique_schema...); all are lazy.
pytest_plugins = ["dbt.tests.fixtures.project"]


def pytest_addoption(parser):
    parser.addoption(
        "--profile", action="store", default="local", type=str,
        help="paimon profile for functional tests: local (embedded Spark, local[2]) or "
             "connect (a Spark Connect server, local[2], started for the test process)",
    )
    parser.addoption(
        "--reverse", action="store_true", default=False,
        help="run the collected tests in reverse order (modules, classes, functions; a test "
             "class's methods stay in their order: a class sharing one dbt project is a "
             "scenario, as in dbt-tests-adapter's suites): a test that passes only after "
             "another one (shared state, leftovers) fails one of the two orders",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--reverse"):
        items[:] = reversed_keeping_classes(items)


def reversed_keeping_classes(items):
    """``items`` in reverse order, each test class's methods kept together and in order."""
    groups, index = [], {}
    for item in items:
        cls = getattr(item, "cls", None)
        key = (item.module.__name__, cls.__name__) if cls is not None else id(item)
        if key not in index:
            index[key] = len(groups)
            groups.append([])
        groups[index[key]].append(item)
    return [item for group in reversed(groups) for item in group]


@pytest.fixture(scope="session")
def profile_type(request):
    return request.config.getoption("--profile")


@pytest.fixture(scope="session")
def paimon_warehouse(tmp_path_factory) -> str:
    """The one warehouse of this test process: the first dbt connection starts the process's
    Spark session on it, and a session serves exactly one warehouse."""
    return str(tmp_path_factory.mktemp("warehouse"))


@pytest.fixture(scope="session")
def connect_event_log(tmp_path_factory):
    """The Spark event log folder of the --profile connect server (what a history server
    reads): a Connect client cannot read the server's job list itself."""
    return tmp_path_factory.mktemp("eventlog")


@pytest.fixture(scope="session")
def connect_server_url(profile_type, paimon_warehouse, connect_event_log):
    """--profile connect: a Spark Connect server on the process's warehouse (as `dbt-paimon
    server start` runs it), stopped when the test process ends."""
    import socket

    from dbt.adapters.paimon.environments import connect_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.MonkeyPatch.context() as env:
        # started from a Spark Connect user's shell: the server must not become a client
        env.setenv("SPARK_REMOTE", "sc://127.0.0.1:1")
        env.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
        with process_ledger.server_start("spark-connect"):
            server = connect_server.start(paimon_warehouse, port, master="local[2]",
                                          conf={"spark.sql.shuffle.partitions": "4",
                                                "spark.driver.extraJavaOptions":
                                                    LONG_LIVED_JVM_OPTIONS,
                                                "spark.eventLog.enabled": "true",
                                                "spark.eventLog.dir": str(connect_event_log),
                                                # plain JSON lines (Spark 4 compresses by default)
                                                "spark.eventLog.compress": "false"})
    yield server.url
    connect_server.stop(paimon_warehouse, port)


# dbt's project fixture sets `schema` (a unique one per test class) on this dict.
@pytest.fixture(scope="session")
def dbt_profile_target(profile_type, paimon_warehouse, request):
    if profile_type == "connect":
        return {
            "type": "paimon",
            "method": "connect",
            "host": request.getfixturevalue("connect_server_url"),
            "threads": 1,
            "warehouse": paimon_warehouse,
        }
    if profile_type != "local":
        raise ValueError(f"Invalid profile type '{profile_type}' (known: local, connect)")
    return {
        "type": "paimon",
        "threads": 1,
        "warehouse": paimon_warehouse,
        "spark_master": "local[2]",
        "spark_conf": {"spark.sql.shuffle.partitions": "4",
                       "spark.driver.extraJavaOptions": LONG_LIVED_JVM_OPTIONS},
    }


@pytest.fixture(scope="session")
def spark():
    """A plain local[2] Spark session for tests/integration and tests/interop, with the `paimon`
    data source registered. Lazy: only tests asking for it start Spark. Never used by
    tests/functional, whose session is the adapter's own (a separate pytest process)."""
    import os
    import sys

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from dbt.adapters.paimon.datasource.source import PaimonDataSource

    session = (SparkSession.builder.master("local[2]")
               .appName("dbt-paimon-tests")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g")
               .config("spark.driver.extraJavaOptions", LONG_LIVED_JVM_OPTIONS)
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    # The adapter's reads (option filter_pushdown, catalog entries) implement pushFilters, which
    # Spark refuses unless this is on (the adapter's session sets it too); a runtime setting,
    # so it holds whichever test started the session.
    session.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    session.dataSource.register(PaimonDataSource)
    return session


@pytest.fixture(scope="module")
def dbt_artifacts():
    """dbt writes its JSON artifacts again (DBT_WRITE_JSON above) for the rest of the module
    whose tests read them (``pytestmark = pytest.mark.usefixtures("dbt_artifacts")``):
    module-scoped, so that pytest sets it up before the class-scoped fixtures that run dbt
    (dbt-tests-adapter's ``project`` and its suites' autouse ``setup``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_WRITE_JSON", "true")
        yield


@pytest.fixture(autouse=True)
def skip_by_profile_type(request, profile_type):
    """``@pytest.mark.skip_profile("connect")``: a test of one profile's own behaviour."""
    marker = request.node.get_closest_marker("skip_profile")
    if marker and profile_type in marker.args:
        pytest.skip(f"not for profile {profile_type}")


@pytest.fixture(scope="session")
def postgres_server():
    """A throwaway PostgreSQL 15 server for this test process (tests/postgres_server.py),
    stopped when the session ends, also after failures; ``new_database()`` gives a test its
    own database."""
    from tests import postgres_server

    with process_ledger.server_start("postgresql"):
        server = postgres_server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hive_metastore():
    """A throwaway Hive Metastore 2.3 for this test process (tests/hive_metastore_server.py),
    stopped when the session ends, also after failures."""
    from tests import hive_metastore_server

    with process_ledger.server_start("hive-metastore"):
        server = hive_metastore_server.start()
    try:
        yield server
    finally:
        server.stop()
