"""The ``dbt-paimon`` command: ``dbt-paimon server start|status|stop --warehouse PATH``, a Spark
Connect server for profiles with ``method: connect`` (see environments/connect_server.py,
docs/connect.md); ``status`` and ``stop`` also cover the warehouse's background daemon
(server/daemon.py). The console script of pyproject.toml's ``[project.scripts]``; also
``python -m dbt.adapters.paimon.cli``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Optional

from dbt.adapters.paimon.environments.connect_client import DEFAULT_PORT, ConnectSetupError
from dbt.adapters.paimon.environments.state_folder import StateDirError


def parse_conf(items: List[str]) -> Dict[str, str]:
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"dbt-paimon: --conf takes key=value, got {item!r}")
        conf[key.strip()] = value
    return conf


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dbt-paimon", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    server = commands.add_parser("server", help="a Spark Connect server for method: connect")
    actions = server.add_subparsers(dest="action", required=True)
    for action, text in (("start", "start the server; returns once it accepts connections"),
                         ("status", "is the server running (exit code 0) or not (3)"),
                         ("stop", "stop the server")):
        sub = actions.add_parser(action, help=text)
        sub.add_argument("--warehouse", required=True,
                         help="the Paimon warehouse folder (or URI, with --state-dir)")
        sub.add_argument("--port", type=int, default=DEFAULT_PORT,
                         help=f"port on 127.0.0.1 (default {DEFAULT_PORT})")
        sub.add_argument("--state-dir", default=None,
                         help="metastore, log and pid files (default <warehouse>/.spark)")
        if action == "start":
            sub.add_argument("--master", default="local[*]",
                             help="Spark master: local[*] (default), spark://host:7077, yarn, "
                                  "k8s://https://host:443")
            sub.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                             help="a Spark setting of the server (repeatable)")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    from dbt.adapters.paimon.environments import connect_server
    from dbt.adapters.paimon.server import daemon

    args = build_parser().parse_args(argv)
    try:
        if args.action == "start":
            server = connect_server.start(args.warehouse, args.port, args.master,
                                          parse_conf(args.conf), args.state_dir)
            print(f"Spark Connect server for {server.warehouse} running at {server.url} "
                  f"(pid {server.pid()}, log {server.log_file}).\n"
                  f"Profile: method: connect, host: {server.url}")
            return 0
        server = connect_server.server_for(args.warehouse, args.port, args.state_dir)
        background = daemon.running(server.state_dir)
        if args.action == "status":
            found = 3
            if background is not None:
                print(f"background daemon running at 127.0.0.1:{background['port']} (server pid "
                      f"{background['server_pid']}, stops after "
                      f"{float(background['idle_seconds']) / 60:g} min idle, log "
                      f"{os.path.join(server.state_dir, daemon.LOG_NAME)})")
                found = 0
            pid = server.pid()
            if pid is not None and server.accepts_connections():
                print(f"running at {server.url} (pid {pid}, log {server.log_file})")
                return 0
            if found:
                print(f"not running{' (starting)' if pid is not None else ''}: {server.url} "
                      f"for {server.warehouse}")
            return found
        if background is not None:
            daemon.stop(server.state_dir)
            print(f"stopped the background daemon of {server.warehouse}")
        stopped = connect_server.stop(args.warehouse, args.port, args.state_dir)
        if stopped:
            print(f"stopped the server at {server.url}")
        elif background is None:
            print(f"no server was running at {server.url} for {server.warehouse}")
        return 0
    except (connect_server.ServerError, ConnectSetupError, StateDirError) as exc:
        print(f"dbt-paimon server {args.action}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
