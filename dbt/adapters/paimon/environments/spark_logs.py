"""Spark's own output goes to a log file; dbt's terminal shows dbt's lines only.

The JVM prints its start-up lines to its stderr, log4j's console appender writes Spark's ERROR
logs there (a task that failed on bad input, whose error dbt-paimon reports itself), and Spark
copies the output of its Python processes (daemon, workers, data-source planner) into the JVM's
stderr too. pyspark starts the JVM as a child process that inherits the dbt process's stdout and
stderr, so all of it reached the terminal. Started here, the JVM's stdout and stderr are the log
file instead (``<spark_state_dir>/logs/spark.log``); the dbt process's own stdout and stderr are
never touched. pyspark's and py4j's Python loggers write to the same file.

In cluster mode the executors' output stays on the workers (Spark's work folders) and the
driver's output lands here. A Spark Connect server keeps its own log (``SPARK_LOG_DIR``); the
client has no JVM of its own and calls ``use_log_file(..., connect=True)`` only: its Python
loggers (pyspark's Spark Connect client logger too, which writes to stderr when
SPARK_CONNECT_LOG_LEVEL is set), the warnings pyspark's modules raise (e.g. the client's
"[RETRIES_EXCEEDED]" when the server went away) and the full traces ``error_messages`` writes.
dbt's debug log (and ``dbt --debug``) names the file.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import warnings
from typing import Dict, Optional

LOG_DIRNAME = "logs"
LOG_FILENAME = "spark.log"
# One earlier file is kept as spark.log.1 once the log grows past this size at start-up.
ROTATE_BYTES = 20 * 1024 * 1024
# Python loggers of pyspark and py4j: without a handler, Python's last-resort handler prints their
# warnings to stderr (py4j's "Exception while sending command" when the JVM goes away, pyspark's
# query-context loggers' JSON records with the Java stack of every failed query).
PYTHON_LOGGERS = ("py4j", "pyspark", "SQLQueryContextLogger", "DataFrameQueryContextLogger")
# pyspark's Spark Connect client logger (its own stderr handler, off unless SPARK_CONNECT_LOG_LEVEL)
CONNECT_LOGGER = "pyspark.sql.connect.logging"

_lock = threading.Lock()
_path: Optional[str] = None


def _adapter_logger():
    from dbt.adapters.events.logging import AdapterLogger

    return AdapterLogger("Paimon")


class _DbtDebug:
    """dbt's debug log (``dbt --debug`` prints it), looked up when first used."""

    def debug(self, message: str) -> None:
        try:
            _adapter_logger().debug(message)
        except Exception:  # noqa: BLE001 - outside dbt (a Spark task, a script): no dbt log
            pass


_logger = _DbtDebug()


def log_path(state_dir: str) -> str:
    return os.path.join(state_dir, LOG_DIRNAME, LOG_FILENAME)


def current_log_path() -> Optional[str]:
    """The log file of this process's Spark session; None before it started."""
    return _path


def launch_jvm(conf: Dict[str, str], path: str) -> None:
    """Start Spark's JVM with its stdout and stderr going to ``path`` (appended), unless this
    process already has one. A later ``SparkSession.builder...getOrCreate()`` with the same
    ``conf`` creates its context on this JVM; pyspark launches it with these settings as
    ``--conf`` arguments exactly as it would itself."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    use_log_file(path)
    with _lock:
        if SparkContext._gateway is not None:  # started by someone else: its output stays put
            return
        spark_conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))
        with _open_log(path) as log:
            start = log.tell()
            try:
                gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
            except Exception as exc:
                raise JvmStartError(_jvm_start_failure(path, start, exc)) from exc
        SparkContext._ensure_initialized(gateway=gateway)


class JvmStartError(RuntimeError):
    """Spark's JVM did not start; the message holds what it printed (e.g. no Java found)."""


def _jvm_start_failure(path: str, start: int, exc: BaseException) -> str:
    """The JVM's own last words, which now land in the log file rather than the terminal."""
    with open(path, "rb") as log:
        log.seek(start)
        printed = log.read().decode(errors="replace").strip().splitlines()[-10:]
    said = "\n".join(f"  {line}" for line in printed) or "  (nothing)"
    return (f"Spark's JVM did not start ({exc}). It printed:\n{said}\n"
            "Spark needs Java 17 or later: `java` on the PATH, or JAVA_HOME set to a JDK. "
            f"Spark's log: {path}")


def use_log_file(path: str, connect: bool = False) -> None:
    """Send pyspark's and py4j's Python loggers to ``path`` and make it the file ``record``
    writes to. ``launch_jvm`` calls it; a Spark Connect session (no JVM of its own) calls it
    alone, with ``connect``: then the Connect client's logger and pyspark's warnings go there
    too."""
    global _path
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError:
        pass  # the handlers report it when they write
    with _lock:
        _path = path
        names = PYTHON_LOGGERS
        if connect:
            import pyspark.sql.connect.logging  # noqa: F401 - its logger, with its stderr handler

            names += (CONNECT_LOGGER,)
            _route_pyspark_warnings()
        _route_python_loggers(path, names)
    _logger.debug(f"Spark's own output (and pyspark's log) goes to {path}")


def record(title: str, text: str) -> Optional[str]:
    """Append ``text`` (e.g. a full stack trace) to the log file under a dated title; returns
    the file's path, or None when there is none."""
    path = _path
    if path is None:
        return None
    try:
        with _lock, _open_log(path, rotate=False, header=False) as log:
            stamp = dt.datetime.now().strftime("%y/%m/%d %H:%M:%S")
            log.write(f"{stamp} dbt-paimon: {title}\n{text.rstrip()}\n".encode())
    except OSError:
        return None
    return path


def _open_log(path: str, rotate: bool = True, header: bool = True):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if rotate and os.path.exists(path) and os.path.getsize(path) > ROTATE_BYTES:
        os.replace(path, path + ".1")
    log = open(path, "ab")
    if header:
        stamp = dt.datetime.now().isoformat(sep=" ", timespec="seconds")
        log.write(f"\n===== {stamp} dbt-paimon: Spark starts (pid {os.getpid()}) =====\n".encode())
        log.flush()
    return log


def _route_pyspark_warnings() -> None:
    """Warnings raised in pyspark's modules are logged to pyspark's logger (the log file);
    every other warning is shown as before."""
    show = warnings.showwarning
    if getattr(show, "_dbt_paimon", False):
        return
    marker = f"{os.sep}pyspark{os.sep}"

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if marker in str(filename) and file is None:
            logging.getLogger("pyspark").warning(
                warnings.formatwarning(message, category, filename, lineno, line).rstrip())
        else:
            show(message, category, filename, lineno, file, line)

    showwarning._dbt_paimon = True
    warnings.showwarning = showwarning


def _route_python_loggers(path: str, names=PYTHON_LOGGERS) -> None:
    from pyspark.logger import PySparkLogger

    for name in names:
        # pyspark logs through its own logger class (keyword context, JSON records): a plain
        # logger of the same name would fail on those keywords.
        structured = name.endswith("ContextLogger")
        logger = PySparkLogger.getLogger(name) if structured else logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h, logging.StreamHandler)]:
            logger.removeHandler(old)  # its stderr handler, or ours of an earlier call
        handler = logging.FileHandler(path, delay=True)
        if not structured:  # PySparkLogger.addHandler sets its JSON formatter itself
            handler.setFormatter(logging.Formatter(
                "%(asctime)s %(levelname)s %(name)s: %(message)s", "%y/%m/%d %H:%M:%S"))
        logger.addHandler(handler)
        logger.propagate = False
        if structured:
            logger.setLevel(logging.ERROR)
