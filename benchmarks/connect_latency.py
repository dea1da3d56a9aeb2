"""Latency of fresh dbt commands: a warm Spark Connect server vs session mode.

    flock /work/bench.lock .venv/bin/python benchmarks/connect_latency.py [--repeat 3] [--rows 500000]
        [--sections show,run,daemon,catalog,merge,build]

Every measurement is the wall time of a new `dbt` process, as a user types it, side by side:
* `dbt show --inline "select 1"`: connect, session (dbt-paimon's embedded Spark) and plain
  dbt-spark's session method (goal: connect <= 3 s);
* `dbt run` of a one-model project (a 10-row paimon_pk): connect vs session (goal <= 5 s);
* dbt-core's own floor beside both: the same show, and a run of a 10-row `table` model, with
  dbt-duckdb (an in-process engine: what remains is dbt itself), when the `bench` extra is
  installed;
* 4 fresh `dbt run`s each merging --rows rows into a 4-bucket paimon_pk table vs the same 4 runs
  of a parquet `table` model, both over connect (goal: paimon_pk <= 1.5x parquet);
* the default profile's background daemon (server/daemon.py): the first command of the
  day (no daemon running: it starts one), then the same show and run as above once it runs
  (goals: within 1.1x of session mode for the first, 1.3x of dbt-duckdb for the others), and
  the daemon's idle memory (its JVM, Python workers and watchdog);
* the same show and run in a project on Paimon's JDBC catalog (SQLite), through its daemon and
  in session mode (goal: the daemon within 1.3x of dbt-duckdb), each on its own warehouse: a
  session-mode command cannot open the Derby metastore of a warehouse whose daemon runs;
* `dbt build` of sample_project (seeds, models, snapshot, tests) over connect vs session mode, with
  the project's own profile (targets connect and dev): its first build (an empty warehouse, dbt's
  full parse) and its second (dbt's partial parse; every table merges the same rows again). Its
  tests hold after one or two builds (as in `make demo`), so each target gets exactly two.
The server (local[2], 4 shuffle partitions, as the session targets) is started and warmed before
the first measurement and stopped at the end. Prints a table and saves it, with the commit and
the machine, to benchmarks/results/connect_latency.txt (plot: connect_latency.png).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, Optional

from plots import BASELINE, FLOOR, PAIMON, RESULTS, save_bars  # same folder: run as a script

from dbt.adapters.paimon.environments import connect_server, jvm_cds
from dbt.adapters.paimon.server import daemon

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE_PROJECT = os.path.join(os.path.dirname(HERE), "sample_project")
# what a build leaves in the project folder: not copied
SAMPLE_PROJECT_OUTPUTS = ("paimon_warehouse", "target", "logs", "dbt_packages")
SECTIONS = ("show", "run", "daemon", "catalog", "merge", "build")
SHOW_WHAT, RUN_WHAT = 'show --inline "select 1"', "run: one 10-row paimon_pk"
FLOOR_RUN_WHAT = "run: one 10-row table (dbt-duckdb)"
FIRST_WHAT = 'show "select 1": first of the day'
DAEMON_ENV = {"DBT_PAIMON_DAEMON": "on"}  # the benchmark runs without a terminal
SESSION_ENV = {"DBT_PAIMON_DAEMON": "off"}
JDBC_DAEMON, JDBC_SESSION = "jdbc, daemon", "jdbc, session"
BUILD_WHATS = ("build sample_project: 1st (empty)", "build sample_project: 2nd")
DBT = [sys.executable, "-m", "dbt.cli.main"]
PK_ROWS = """{{{{ config(materialized='{materialized}'{extra}) }}}}
select cast(id % {keys} as bigint) as k, cast(id as bigint) as v_long,
       cast(id * 0.5 as double) as v_double, concat('name-', cast(id % 1000 as string)) as v_string
from range({{{{ var('batch', 0) }}}} * {rows}, ({{{{ var('batch', 0) }}}} + 1) * {rows})
"""


def profiles(url: str, warehouse: str, root: str) -> str:
    session = ("      spark_master: 'local[2]'\n      spark_conf:\n"
               "        spark.sql.shuffle.partitions: '4'\n        spark.driver.memory: '4g'\n")
    return (
        "bench:\n  target: connect\n  outputs:\n"
        f"    connect:\n      type: paimon\n      schema: bench\n      method: connect\n"
        f"      host: '{url}'\n"
        f"    session:\n      type: paimon\n      schema: bench\n      warehouse: {root}/session_wh\n"
        + session +
        # the default profile, as a user writes it: the daemon's case
        f"    daemon:\n      type: paimon\n      schema: bench\n      warehouse: {root}/daemon_wh\n"
        "      spark_master: 'local[2]'\n      spark_conf:\n"
        "        spark.sql.shuffle.partitions: '4'\n"
        + jdbc_output("jdbc_daemon", root) + jdbc_output("jdbc_session", root) +
        "    spark:\n      type: spark\n      method: session\n      host: NA\n      schema: bench\n"
        "      server_side_parameters:\n        spark.master: 'local[2]'\n"
        "        spark.sql.shuffle.partitions: '4'\n        spark.ui.showConsoleProgress: 'false'\n"
        f"    duckdb:\n      type: duckdb\n      path: {root}/floor.duckdb\n      schema: bench\n")


def jdbc_output(name: str, root: str) -> str:
    """A default profile whose tables are in Paimon's JDBC catalog on SQLite: ``name``'s own
    warehouse and catalog database."""
    return (f"    {name}:\n      type: paimon\n      schema: bench\n"
            f"      warehouse: {root}/{name}_wh\n      spark_master: 'local[2]'\n"
            "      spark_conf:\n        spark.sql.shuffle.partitions: '4'\n"
            f"      catalog:\n        type: jdbc\n"
            f"        uri: 'jdbc:sqlite:{root}/{name}_catalog.db'\n")


def write_project(root: str, url: str, warehouse: str, rows: int) -> None:
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(profiles(url, warehouse, root))
    models = {
        "one_pk.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}\n"
                      "select id, concat('v', id) as v from range(10)",
        # the floor's model: SQL both Spark and DuckDB parse
        "one_table.sql": "{{ config(materialized='table') }}\nselect * from (values "
                         + ", ".join(f"({i}, 'v{i}')" for i in range(10)) + ") as t(id, v)",
        "pk_model.sql": PK_ROWS.format(materialized="paimon_pk",
                                       extra=", primary_key='k', buckets=4", keys=rows,
                                       rows=rows),
        "parquet_model.sql": PK_ROWS.format(materialized="table", extra=", file_format='parquet'",
                                            keys=rows, rows=rows),
    }
    for name, sql in models.items():
        with open(os.path.join(root, "models", name), "w") as f:
            f.write(sql)


def dbt_environment(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The dbt processes' environment: this one, but with Python's bytecode cache on, as on a
    user's machine (an installed package's modules load from their cached bytecode; with
    PYTHONDONTWRITEBYTECODE set, this repository's modules would be compiled again by every
    command, and dbt-duckdb's, installed, would not)."""
    environment = {key: value for key, value in os.environ.items()
                   if key != "PYTHONDONTWRITEBYTECODE"}
    return {**environment, **(extra or {})}


def dbt_seconds(root: str, *args: str, env: Optional[Dict[str, str]] = None) -> float:
    start = time.perf_counter()
    result = subprocess.run(DBT + list(args) + ["--project-dir", root, "--profiles-dir", root],
                            cwd=root, capture_output=True, text=True,
                            env=dbt_environment(env))
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"dbt {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return seconds


def wait_for_cds_archive(timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while jvm_cds.dump_running() and time.monotonic() < deadline:
        time.sleep(1)


def cds_state() -> str:
    directory = jvm_cds.archive_dir()
    if directory is None:
        return "session mode without a CDS archive"
    archive = os.path.join(directory, f"{jvm_cds.archive_key()}.jsa")
    return ("session mode with its CDS archive" if jvm_cds.is_archive(archive)
            else "session mode without a CDS archive")


def copy_sample_project(root: str, source: str = SAMPLE_PROJECT) -> str:
    """sample_project without its build outputs, under ``root``: session mode's warehouse (the
    profile's default, inside the project) and dbt's files stay out of the repository."""
    project = os.path.join(root, os.path.basename(source))
    shutil.copytree(source, project, ignore=shutil.ignore_patterns(*SAMPLE_PROJECT_OUTPUTS))
    return project


def measure_builds(project: str, url: str, rows: list) -> None:
    """Two `dbt build`s of the project over connect (target connect: the server's warehouse),
    then two in session mode (target dev: the project's own paimon_warehouse)."""
    env = {"DBT_PAIMON_CONNECT_URL": url}  # the profile's connect host
    for target, label in (("connect", "connect"), ("dev", "session")):
        for what in BUILD_WHATS:
            seconds = dbt_seconds(project, "build", "--target", target, env=env)
            rows.append((what, label, seconds, [seconds]))


def measure_show_and_run(root: str, target: str, env: Dict[str, str], label: str, repeat: int,
                         rows: list) -> None:
    """``repeat`` fresh `dbt show` and one-model `dbt run` processes on ``target``, as ``label``."""
    for what, dbt_args in ((SHOW_WHAT, ("show", "--inline", "select 1")),
                           (RUN_WHAT, ("run", "-s", "one_pk"))):
        times = [dbt_seconds(root, *dbt_args, "--target", target, env=env)
                 for _ in range(repeat)]
        rows.append((what, label, statistics.median(times), times))


def measure_daemon(root: str, repeat: int, rows: list) -> float:
    """The daemon's rows; returns its idle memory in MiB."""
    state = os.path.join(root, "daemon_wh", ".spark")
    firsts = []
    for _ in range(repeat):
        daemon.stop(state)
        firsts.append(dbt_seconds(root, "show", "--inline", "select 1", "--target", "daemon",
                                  env=DAEMON_ENV))
    rows.append((FIRST_WHAT, "daemon", statistics.median(firsts), firsts))
    dbt_seconds(root, "run", "-s", "one_pk", "--target", "daemon", env=DAEMON_ENV)  # 1st model
    measure_show_and_run(root, "daemon", DAEMON_ENV, "daemon", repeat, rows)
    time.sleep(5)
    mib = tree_rss_mib([daemon.running(state)["pid"]])
    daemon.stop(state)
    return mib


def measure_catalog(root: str, repeat: int, rows: list) -> None:
    """The JDBC catalog project's show and run: through its daemon, then in session mode."""
    state = os.path.join(root, "jdbc_daemon_wh", ".spark")
    for label, target, env in ((JDBC_DAEMON, "jdbc_daemon", DAEMON_ENV),
                               (JDBC_SESSION, "jdbc_session", SESSION_ENV)):
        # the project's first run: the table's creation, and the daemon's start
        dbt_seconds(root, "run", "-s", "one_pk", "--target", target, env=env)
        measure_show_and_run(root, target, env, label, repeat, rows)
    daemon.stop(state)


def tree_rss_mib(roots: list) -> float:
    """Resident memory of processes and all their descendants (Linux /proc)."""
    children: Dict[int, list] = {}
    rss: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total / 2**20


def has_dbt_duckdb() -> bool:
    """dbt-duckdb (the `bench` extra) measures what a dbt command costs with no engine to reach."""
    import importlib.util

    return importlib.util.find_spec("dbt.adapters.duckdb") is not None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=500_000, help="rows of each merging run")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated, of {', '.join(SECTIONS)}")
    args = parser.parse_args()
    sections = [name.strip() for name in args.sections.split(",") if name.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")

    root = tempfile.mkdtemp(prefix="bench-connect-")
    warehouse = os.path.join(root, "connect_wh")
    port = free_port()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    server = connect_server.start(warehouse, port, master="local[2]",
                                  conf={"spark.sql.shuffle.partitions": "4",
                                        "spark.driver.memory": "4g"})
    server_start = time.perf_counter() - started
    write_project(root, server.url, warehouse, args.rows)
    rows = []  # (what, target, median seconds, every run)
    try:
        def measure(what, target, *dbt_args, repeat=args.repeat):
            times = [dbt_seconds(root, *dbt_args, "--target", target) for _ in range(repeat)]
            rows.append((what, target, statistics.median(times), times))

        if "show" in sections or "run" in sections:
            # first runs of a project (dbt's parse, Spark's first model) are not what is
            # measured; session mode's JVM class-data-sharing archive is built once per
            # machine: its first session start writes it when its JVM exits
            dbt_seconds(root, "run", "-s", "one_pk", "--target", "connect")
            dbt_seconds(root, "run", "-s", "one_pk", "--target", "session")
            wait_for_cds_archive()
        # dbt-core's floor, for the sections whose goals are ratios to it
        floor = has_dbt_duckdb() and bool({"show", "run", "daemon", "catalog"} & set(sections))
        if floor:
            dbt_seconds(root, "run", "-s", "one_table", "--target", "duckdb")
        if "show" in sections:
            for target in ("connect", "session", "spark"):
                measure(SHOW_WHAT, target, "show", "--inline", "select 1")
        if floor:
            measure(SHOW_WHAT, "duckdb", "show", "--inline", "select 1")
        if "run" in sections:
            for target in ("connect", "session"):
                measure(RUN_WHAT, target, "run", "-s", "one_pk")
        if floor:
            measure(FLOOR_RUN_WHAT, "duckdb", "run", "-s", "one_table")
        daemon_mib = None
        if "daemon" in sections:
            daemon_mib = measure_daemon(root, args.repeat, rows)
        if "catalog" in sections:
            measure_catalog(root, args.repeat, rows)
        if "merge" in sections:
            for model in ("pk_model", "parquet_model"):
                times = [dbt_seconds(root, "run", "-s", model, "--vars", f"{{batch: {i}}}",
                                     "--target", "connect") for i in range(args.runs)]
                rows.append((f"{args.runs} runs x {args.rows:,} rows: {model}", "connect",
                             sum(times), times))
        if "build" in sections:
            measure_builds(copy_sample_project(root), server.url, rows)
    finally:
        connect_server.stop(warehouse, port)
        shutil.rmtree(root, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                            capture_output=True, text=True).stdout.strip()
    lines = [f"# benchmarks/connect_latency.py, commit "
             f"{commit}, {platform.node()} ({os.cpu_count()} cores, {platform.machine()}), "
             f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; fresh dbt "
             f"processes (Python's bytecode cache on), local[2]; server start + warm-up "
             f"{server_start:.1f} s; "
             f"{cds_state()}; sections {','.join(sections)}",
             f"{'command':44}{'target':10}{'seconds':>9}   each run"]
    for what, target, seconds, times in rows:
        lines.append(f"{what:44}{target:10}{seconds:>9.1f}   "
                     + " ".join(f"{t:.1f}" for t in times))
    lines += summary(rows, args.runs, args.rows)
    if daemon_mib is not None:
        lines.append(f"daemon idle memory (JVM, its Python workers, watchdog): "
                     f"{daemon_mib:.0f} MiB resident")
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "connect_latency.txt"), "w") as f:
        f.write(text + "\n")
    by = {(what, target): seconds for what, target, seconds, _ in rows}
    bars = [("show\nconnect", (SHOW_WHAT, "connect"), PAIMON),
            ("show\nsession", (SHOW_WHAT, "session"), BASELINE),
            ("show\ndbt-spark", (SHOW_WHAT, "spark"), BASELINE),
            ("show\ndbt-duckdb", (SHOW_WHAT, "duckdb"), FLOOR),
            ("show\ndaemon", (SHOW_WHAT, "daemon"), PAIMON),
            ("show, 1st\nof the day", (FIRST_WHAT, "daemon"), PAIMON),
            ("run 10 rows\nconnect", (RUN_WHAT, "connect"), PAIMON),
            ("run 10 rows\ndaemon", (RUN_WHAT, "daemon"), PAIMON),
            ("run 10 rows\nsession", (RUN_WHAT, "session"), BASELINE),
            ("run 10 rows\ndbt-duckdb", (FLOOR_RUN_WHAT, "duckdb"), FLOOR),
            ("show, JDBC\ndaemon", (SHOW_WHAT, JDBC_DAEMON), PAIMON),
            ("show, JDBC\nsession", (SHOW_WHAT, JDBC_SESSION), BASELINE),
            ("run, JDBC\ndaemon", (RUN_WHAT, JDBC_DAEMON), PAIMON),
            ("run, JDBC\nsession", (RUN_WHAT, JDBC_SESSION), BASELINE),
            ("2nd build of\nsample, connect", (BUILD_WHATS[1], "connect"), PAIMON),
            ("2nd build of\nsample, session", (BUILD_WHATS[1], "session"), BASELINE)]
    bars = [(label, by[key], color) for label, key, color in bars if key in by]
    if bars:
        path = save_bars("connect_latency", [label for label, _, _ in bars],
                         [seconds for _, seconds, _ in bars], "fresh dbt processes (seconds)",
                         colors=[color for _, _, color in bars])
        print(f"plot: {path}")
    return 0


def summary(rows: list, runs: int, rows_per_run: int) -> list:
    """One line per goal whose measurements this run made."""
    by = {(what, target): seconds for what, target, seconds, _ in rows}
    lines = []
    if (SHOW_WHAT, "connect") in by:
        lines.append(f"show select 1 over connect: {by[(SHOW_WHAT, 'connect')]:.1f} s "
                     f"(goal <= 3 s); session mode {by[(SHOW_WHAT, 'session')]:.1f} s, dbt-spark session mode "
                     f"{by[(SHOW_WHAT, 'spark')]:.1f} s" + _floor(by, (SHOW_WHAT, "duckdb")))
    if (RUN_WHAT, "connect") in by:
        lines.append(f"run of a 10-row paimon_pk over connect: {by[(RUN_WHAT, 'connect')]:.1f} s "
                     f"(goal <= 5 s); session mode {by[(RUN_WHAT, 'session')]:.1f} s"
                     + _floor(by, (FLOOR_RUN_WHAT, "duckdb")))
    if (SHOW_WHAT, "daemon") in by:
        duck_show, duck_run = by.get((SHOW_WHAT, "duckdb")), by.get((FLOOR_RUN_WHAT, "duckdb"))
        lines.append(
            f"default profile with its daemon: show {by[(SHOW_WHAT, 'daemon')]:.1f} s"
            + (f" ({by[(SHOW_WHAT, 'daemon')] / duck_show:.2f}x dbt-duckdb)" if duck_show else "")
            + f", run {by[(RUN_WHAT, 'daemon')]:.1f} s"
            + (f" ({by[(RUN_WHAT, 'daemon')] / duck_run:.2f}x dbt-duckdb)" if duck_run else "")
            + " (goal <= 1.3x); first command of the day "
            f"{by[(FIRST_WHAT, 'daemon')]:.1f} s"
            + (f" ({by[(FIRST_WHAT, 'daemon')] / by[(SHOW_WHAT, 'session')]:.2f}x session mode,"
               f" goal <= 1.1x)" if (SHOW_WHAT, "session") in by else ""))
    if (SHOW_WHAT, JDBC_DAEMON) in by:
        lines.append(
            "JDBC catalog project with its daemon: "
            + ", ".join(f"{name} {by[(what, JDBC_DAEMON)]:.1f} s"
                        + (f" ({by[(what, JDBC_DAEMON)] / by[floor]:.2f}x dbt-duckdb)"
                           if floor in by else "")
                        for name, what, floor in (("show", SHOW_WHAT, (SHOW_WHAT, "duckdb")),
                                                  ("run", RUN_WHAT, (FLOOR_RUN_WHAT, "duckdb"))))
            + f" (goal <= 1.3x); in session mode show {by[(SHOW_WHAT, JDBC_SESSION)]:.1f} s, "
              f"run {by[(RUN_WHAT, JDBC_SESSION)]:.1f} s")
    pk = by.get((f"{runs} runs x {rows_per_run:,} rows: pk_model", "connect"))
    parquet = by.get((f"{runs} runs x {rows_per_run:,} rows: parquet_model", "connect"))
    if pk is not None and parquet is not None:
        lines.append(f"{runs} merging paimon_pk runs / parquet runs over connect = "
                     f"{pk / parquet:.2f}x (goal <= 1.5x)")
    first, second = BUILD_WHATS
    if (second, "connect") in by:
        lines.append(f"dbt build of sample_project over connect: {by[(first, 'connect')]:.1f} s "
                     f"first, {by[(second, 'connect')]:.1f} s second; session mode "
                     f"{by[(first, 'session')]:.1f} s, {by[(second, 'session')]:.1f} s")
    return lines


def _floor(by: dict, key: tuple) -> str:
    return (f"; dbt-core's floor (dbt-duckdb, in-process) {by[key]:.1f} s" if key in by
            else "")


if __name__ == "__main__":
    sys.exit(main())
