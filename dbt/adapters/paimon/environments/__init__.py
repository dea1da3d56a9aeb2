"""Where Spark runs for dbt-paimon: three environments behind one interface.

- ``embedded`` (``method: session``): a Spark session in the dbt process's own JVM;
- ``connect`` (``method: connect``): the shared session of a Spark Connect server, which
  ``connect_server`` runs for a warehouse (the ``dbt-paimon server`` command, cli.py);
- ``daemon_environment`` (the default profile at a terminal): the warehouse's background
  daemon, a Spark Connect server that the server package (server/daemon.py) finds or starts,
  reached as ``connect`` is, and ``embedded`` when it is not available.

``create(credentials).start()`` gives the process's ``PaimonTableRegistry`` (its session and
Paimon tables); everything below this package takes the session it is given. The rest of the
package makes the three start fast, stay quiet and fail clearly: ``spark_conf`` (the settings
every dbt-paimon Spark starts with), ``connect_client`` (a Spark Connect URL and the server
check), ``server_watch`` (a command notices when its server on this machine has died),
``spark_logs`` (Spark's output to a log file), ``jvm_cds`` (the driver JVM's class-data
archive), ``worker_warm_up`` (Python workers started ahead of the first model), ``locations``
(where a warehouse and its Spark state folder are), ``state_folder`` (that folder writable, with
room, before any Spark starts), ``process_gc`` (the collector kept off
what lives as long as the process).
"""

from __future__ import annotations

from dbt.adapters.paimon.environments.base import (Environment, current_registry,
                                                   warm_up_python_workers_once)

__all__ = ["Environment", "create", "current_registry", "warm_up_python_workers_once"]


def create(credentials) -> Environment:
    """The environment a ``type: paimon`` profile (its ``PaimonCredentials``) names."""
    if credentials.is_connect:
        from dbt.adapters.paimon.environments.connect import ConnectEnvironment

        return ConnectEnvironment(credentials.connect_url, credentials.warehouse,
                                  dict(credentials.spark_conf or {}),
                                  credentials.pypaimon_catalog_options)
    from dbt.adapters.paimon.environments.embedded import EmbeddedEnvironment

    embedded = EmbeddedEnvironment(credentials.spark_master, credentials.warehouse,
                                   credentials.spark_state_dir,
                                   {**credentials.server_side_parameters,
                                    **credentials.spark_conf},
                                   credentials.pypaimon_catalog_options)
    plan = daemon_plan(credentials, embedded.spark_conf)
    if plan is None:
        return embedded
    from dbt.adapters.paimon.environments.daemon_environment import DaemonEnvironment

    return DaemonEnvironment(plan, embedded)


_logged_decision = [None]  # the daemon decision last written to dbt's debug log


def daemon_plan(credentials, spark_conf):
    """The background daemon the default profile runs Spark in (daemon_policy), or None."""
    import os
    import sys

    from dbt.adapters.paimon.environments.locations import is_local_path
    from dbt.adapters.paimon.server import daemon_policy

    decision = daemon_policy.decide(
        daemon=credentials.daemon, master=credentials.spark_master,
        warehouse_is_local=is_local_path(credentials.warehouse),
        spark_conf=spark_conf, environ=os.environ, interactive=_interactive(sys))
    from dbt.adapters.paimon.environments.spark_logs import _DbtDebug

    if decision != _logged_decision[0]:  # once per process, not at every connection
        _logged_decision[0] = decision
        _DbtDebug().debug(f"Background Spark daemon: {'yes' if decision.use else 'no'} "
                          f"({decision.reason})")
    if not decision.use:
        return None
    from dbt.adapters.paimon.environments.daemon_environment import ConnectDaemonServer
    from dbt.adapters.paimon.server.daemon import DaemonPlan

    return DaemonPlan(credentials.warehouse, credentials.spark_state_dir,
                      credentials.spark_master,
                      daemon_policy.idle_seconds(credentials.daemon_idle_minutes, os.environ),
                      ConnectDaemonServer())


def _interactive(sys_module) -> bool:
    """A person at a terminal: stdin or stderr is one (``dbt run | tee log`` still counts)."""
    for stream in (sys_module.stdin, sys_module.stderr):
        try:
            if stream is not None and stream.isatty():
                return True
        except (AttributeError, ValueError):
            continue
    return False
