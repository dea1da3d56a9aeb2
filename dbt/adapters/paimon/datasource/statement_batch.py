"""Several catalog statements sent to Spark as one: a SQL script (``BEGIN s1; s2; END``, Spark
4's SQL scripting), which runs them in order and fails at the first that fails, with that
statement's own error, as separate calls would.

Why: over Spark Connect each statement is a round trip that the server runs on a thread of its
own, and each new thread opens its own Hive metastore store (Hive's HMSHandler keeps one per
thread: two HiveConf copies and a DataNucleus ObjectStore, ~16 ms on the 2-core test machine
beside ~12 ms of the round trip itself). A catalog entry's change is two to five statements
(entry_statements.py); as one script it pays both once. In a session in the dbt process the
statements run on the calling thread either way, and a script changes nothing measurable.

A Spark without SQL scripting (before 4.0, or ``spark.sql.scripting.enabled`` = false) gets
the statements one by one."""

from __future__ import annotations

from typing import List

SCRIPTING_CONF = "spark.sql.scripting.enabled"


def run_statements(spark, statements: List[str], scripts: bool) -> None:
    """Run ``statements`` in order on ``spark``: as one SQL script when there are several and
    the session runs scripts (``scripts``: runs_scripts, which the caller asks once),
    otherwise one call each."""
    if len(statements) > 1 and scripts:
        spark.sql(as_script(statements))
        return
    for statement in statements:
        spark.sql(statement)


def as_script(statements: List[str]) -> str:
    """The statements as one SQL script. Each is complete SQL text whose string literals are
    quoted (entry_names.sql_text), so a ';' inside a location stays part of its literal."""
    return "begin\n" + "".join(f"{statement};\n" for statement in statements) + "end"


def runs_scripts(spark) -> bool:
    """Whether the session runs SQL scripts (one round trip over Spark Connect)."""
    try:
        # no default given: with one, Spark returns it for a setting left at its own default
        value = spark.conf.get(SCRIPTING_CONF)
    except Exception:  # noqa: BLE001 - a Spark that does not know the setting has no scripts
        value = "false"
    return str(value).strip().lower() == "true"
