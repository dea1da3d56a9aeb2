"""The background server's processes: the default profile's daemon, found, started, joined and
stopped by dbt commands.

- ``daemon``: the daemon of a warehouse (one Spark Connect server per warehouse that the first
  command starts and later ones join): its lock and records in the warehouse's Spark state
  folder, finding or starting it, joining it, stopping it when an in-process Spark needs the
  metastore or `dbt-paimon server stop` asks;
- ``daemon_process``: its watchdog, run as a script by path (``python .../daemon_process.py
  <state_dir>/daemon-spec.<pid>.json``, which is how ``daemon`` recognises a watchdog): it runs
  the server as its child and stops it when idle (standard library only);
- ``daemon_policy``: whether a command uses the daemon at all (a person at a terminal, not CI,
  a local master and warehouse, only settings a running server can still apply);
- ``processes``: whether a recorded pid still runs, and its command line.

What the daemon runs (a Spark Connect server's command line, settings and URL) and joining it
are the environments package's (environments/daemon_environment.py, the layer above); nothing
here imports Spark.
"""
