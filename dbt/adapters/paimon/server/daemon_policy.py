"""When the default profile runs its Spark in the background daemon (``daemon``) instead of in the
dbt process: pure decisions on the profile and the process's surroundings, no I/O.

The daemon is for a person typing dbt commands on a machine: interactive (a terminal on stdin or
stderr), not CI, a local master, a local warehouse, and only Spark settings a running server can
still apply to a session. Anything else keeps Spark in the dbt process, as ``method: session``
does.

Every catalog is served, the warehouse's folders as a JDBC, Hive Metastore or REST catalog: the
catalog is the dbt process's (pypaimon's clients, in Python), and the options of each relation's
catalog reach the daemon's Spark with the relation's catalog entry, as they reach an explicit
Spark Connect server. So a daemon is one warehouse's, whatever catalogs list its tables: the
Spark state it keeps (the warehouse's ``.spark/`` metastore of catalog entries) is the one an
in-process Spark of that warehouse keeps too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

# DBT_PAIMON_DAEMON=off turns the daemon off everywhere; =on uses it also where it would not
# be chosen (CI, no terminal), wherever it can run at all.
SWITCH_ENV = "DBT_PAIMON_DAEMON"
IDLE_ENV = "DBT_PAIMON_DAEMON_IDLE_MINUTES"
OFF_VALUES = ("0", "off", "false", "no")
ON_VALUES = ("1", "on", "true", "yes")
# An hour: the length of a working stretch of model edits and runs, and Spark Connect's own
# idle session timeout (spark.connect.session.manager.defaultSessionTimeout), after which the
# server's warm Python workers are gone anyway. Idle, the daemon holds a JVM (~0.5 GiB).
DEFAULT_IDLE_MINUTES = 60.0
_LOCAL_MASTER = re.compile(r"local(\[(\*|\d+)\])?")
# Spark's static SQL settings (StaticSQLConf): fixed when a Spark session's context starts, so
# a server that is already running cannot honour them for one dbt command.
STATIC_SQL_CONF = (
    "spark.sql.warehouse.dir", "spark.sql.catalogImplementation", "spark.sql.extensions",
    "spark.sql.globalTempDatabase", "spark.sql.queryExecutionListeners",
    "spark.sql.streaming.streamingQueryListeners", "spark.sql.cache.serializer",
    "spark.sql.hive.metastore.", "spark.sql.hive.thriftServer.", "spark.sql.ui.",
    "spark.sql.event.truncate.length", "spark.sql.legacy.sessionInitWithConfigDefaults",
    "spark.sql.sources.disabledJdbcConnProviderList", "spark.sql.broadcastExchange.",
    "spark.sql.subquery.maxThreadThreshold", "spark.sql.metadataCacheTTLSeconds",
    "spark.sql.defaultUrlStreamHandlerFactory.enabled", "spark.sql.streaming.ui.",
    "spark.sql.filesourceTableRelationCacheSize", "spark.sql.codegen.cache.maxEntries",
    "spark.sql.debug",
)


@dataclass(frozen=True)
class Decision:
    use: bool
    reason: str  # why not (or why), for dbt's debug log


def decide(*, daemon: Optional[bool], master: str, warehouse_is_local: bool,
           spark_conf: Mapping[str, str], environ: Mapping[str, str],
           interactive: bool) -> Decision:
    switch = environ.get(SWITCH_ENV, "").strip().lower()
    if switch in OFF_VALUES:
        return Decision(False, f"{SWITCH_ENV}={switch}")
    if daemon is False:
        return Decision(False, "the profile sets method: session or daemon: false")
    # what the daemon cannot serve, whoever asks for it
    if not _LOCAL_MASTER.fullmatch(master):
        return Decision(False, f"spark_master {master} is not local")
    if not warehouse_is_local:
        return Decision(False, "the warehouse is not a local folder")
    fresh_only = sorted(key for key in spark_conf if not runtime_conf(key))
    if fresh_only:
        return Decision(False, f"spark_conf {', '.join(fresh_only)} only applies to a fresh "
                               "Spark")
    if switch in ON_VALUES or daemon is True:
        return Decision(True, f"{SWITCH_ENV}={switch}" if switch else "the profile sets "
                                                                        "daemon: true")
    if environ.get("CI", "").strip().lower() not in ("", "0", "false"):
        return Decision(False, "CI is set")
    if not interactive:
        return Decision(False, "not run from a terminal")
    return Decision(True, "an interactive command with the default profile")


def runtime_conf(key: str) -> bool:
    """A setting a running server's session still applies: a Spark SQL setting that is not a
    static one, or a Paimon table option for reads (``spark.paimon.*``: a session setting
    that dbt-paimon's reads take, datasource/session_options.py)."""
    return (key.startswith("spark.sql.") and not key.startswith(STATIC_SQL_CONF)) \
        or key.startswith("spark.paimon.")


def idle_seconds(profile_minutes: Optional[float], environ: Mapping[str, str]) -> float:
    text = environ.get(IDLE_ENV, "").strip()
    if text:
        try:
            minutes = float(text)
        except ValueError:
            raise ValueError(f"{IDLE_ENV}={text!r} is not a number of minutes") from None
    else:
        minutes = DEFAULT_IDLE_MINUTES if profile_minutes is None else float(profile_minutes)
    if minutes <= 0:
        raise ValueError(f"the daemon's idle timeout must be more than 0 minutes, got {minutes:g}")
    return minutes * 60
