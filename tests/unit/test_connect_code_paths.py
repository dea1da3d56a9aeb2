"""Which functional tests run again over Spark Connect (`make test-connect`, CONNECT_TESTS in
the Makefile) follows from where the code differs by session kind: a test runs in both modes
when the code it drives asks which kind of session it has, in one mode when it does not.

This test keeps that reasoning true: the code asks the session's kind (or uses the classic
session's JVM gateway) in the modules below only. Adding a module here means deciding which
tests must then run over Connect too. The Paimon merge engines' documented examples
(tests/functional/paimon/test_seed_examples.py) run in session mode only: they drive the same
materialization and write path as test_paimon_pk.py, which runs in both, and their subject,
the merge runtime, never sees the session."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dbt" / "adapters" / "paimon"
# a use of the session's kind: spark_env.is_connect, or the classic session's JVM gateway
SESSION_KIND = re.compile(r"(?<!def )\bis_connect\(|\._jvm\b|\bsparkContext\b|\._jsparkSession\b"
                          r"|\._jsc\b")
ASKS_THE_SESSION_KIND = {
    "datasource/registry.py",        # the thread's active session
    "datasource/session_sources.py",  # data-source registration: once per shared session
    "datasource/spark_arrow.py",     # a DataFrame's Arrow before pyspark's cast (NULL variants)
    "datasource/spark_env.py",       # is_connect itself; task slots
    "environments/base.py",          # Python workers warmed in-process only
    "environments/embedded.py",      # the in-process session itself
    "environments/worker_warm_up.py",
    "job_labels.py",                 # a job's description: classic sessions only
}


def test_the_session_kind_is_asked_in_known_modules_only():
    asking = {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
              if SESSION_KIND.search(path.read_text())}
    assert asking == ASKS_THE_SESSION_KIND, (
        "a module now asks which kind of Spark session it has (or uses the JVM gateway): "
        "decide which functional tests must run over Spark Connect too (CONNECT_TESTS in the "
        f"Makefile), then list it here. Changed: {sorted(asking ^ ASKS_THE_SESSION_KIND)}")


def test_the_seed_examples_drive_no_session_dependent_code_of_their_own():
    """Their models are paimon_pk / partial_update models, built by the code test_paimon_pk.py
    runs over Connect; the examples add merge semantics only."""
    makefile = (ROOT / "Makefile").read_text()
    connect = makefile.split("CONNECT_TESTS :=")[1].split("\n\n")[0]
    pk_classes = makefile.split("PK_OVER_CONNECT :=")[1].split("\n\n")[0]
    assert "$(PK_OVER_CONNECT)" in connect
    assert "tests/functional/paimon/test_paimon_pk.py::" in pk_classes
    assert "TestPartialUpdateSequenceGroups" in pk_classes  # its partial_update models
    examples = (ROOT / "tests/functional/paimon/test_seed_examples.py").read_text()
    materialized = set(re.findall(r"materialized\s*=\s*'(\w+)'", examples))
    assert materialized and materialized <= {"paimon_pk", "partial_update"}, materialized
