"""Where Spark runs for dbt-paimon: two environments behind one interface.

- ``embedded`` (``method: session``, the default): a Spark session in the dbt process's own JVM;
- ``connect`` (``method: connect``): the shared session of a Spark Connect server, which
  ``connect_server`` runs for a warehouse (``dbt-paimon server``, ``cli``).

``create(credentials).start()`` gives the process's ``PaimonTableRegistry`` (its session and
Paimon tables); everything below this package takes the session it is given. The rest of the
package makes either kind start fast and stay quiet: ``spark_conf`` (the settings both start
with), ``spark_logs`` (Spark's output to a log file), ``jvm_cds`` (the driver JVM's class-data
archive), ``worker_warm_up`` (Python workers started ahead of the first model), ``process_gc``.
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

    return EmbeddedEnvironment(credentials.spark_master, credentials.warehouse,
                               credentials.spark_state_dir,
                               {**credentials.server_side_parameters, **credentials.spark_conf},
                               credentials.pypaimon_catalog_options)
