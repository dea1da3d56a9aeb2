"""The dbt process's side of Spark Connect (``method: connect``): the server's URL, reaching it,
the session every dbt process shares on it, and checking that its Python can run dbt-paimon.

Why one shared server session: Spark Connect gives every client session its own artifact
space, and with it its own Python daemon, workers and data-source planner, so each fresh
client session pays a Python start and the imports of pyarrow, polars, pypaimon and dbt-paimon
(5-10 s on the 2-core machine) before its first Python task, and each leaves those processes
behind until it expires. dbt processes instead join one session (a fixed ``session_id``): its
Python processes stay warm, its registered data sources serve every later command. A session
the server closed (idle timeout) cannot be joined again, so the id has generations: a client
finding generation n closed moves to n+1, and every client takes the same steps.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Dict, Optional, Tuple
from urllib.parse import urlparse

from dbt.adapters.paimon.server import ports

SCHEME = "sc://"
DEFAULT_PORT = 15002
DEFAULT_URL = f"{SCHEME}127.0.0.1:{DEFAULT_PORT}"
# Spark's own URL parameters (pyspark ChannelBuilder); others go to the server as gRPC headers.
KNOWN_PARAMS = ("token", "user_id", "user_agent", "use_ssl", "session_id",
                "grpc_max_message_size")
_SESSION_NAMESPACE = uuid.UUID("6f0c2c55-5d4a-4c1e-8f65-2f1d3c0b9a10")
MAX_SESSION_GENERATIONS = 64
# Confs a server started by `dbt-paimon server start` carries (read by clients).
WAREHOUSE_CONF = "spark.dbt.paimon.warehouse"
# Set in the shared session once its Python passed the check: later clients skip the probe.
CHECKED_CONF = "spark.dbt.paimon.serverCheck"


class ConnectSetupError(RuntimeError):
    """The profile's Spark Connect server cannot serve this dbt process (message says why and
    how to fix it)."""


@dataclass(frozen=True)
class ConnectUrl:
    host: str
    port: int
    params: Tuple[Tuple[str, str], ...]

    def param(self, key: str) -> Optional[str]:
        return dict(self.params).get(key)

    def with_params(self, **params: str) -> "ConnectUrl":
        merged: Dict[str, str] = dict(self.params)
        merged.update(params)
        return ConnectUrl(self.host, self.port, tuple(merged.items()))

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        tail = "".join(f";{k}={v}" for k, v in self.params)
        return f"{SCHEME}{host}:{self.port}" + (f"/{tail}" if tail else "")

    @property
    def redacted(self) -> str:
        """For messages: the token replaced."""
        if self.param("token") is None:
            return str(self)
        return str(self.with_params(token="***"))


def parse_connect_url(url: str, token: Optional[str] = None,
                      use_ssl: bool = False) -> ConnectUrl:
    """``sc://host[:port][/;key=value;...]`` as Spark Connect reads it, checked; ``token`` and
    ``use_ssl`` (profile fields) are added unless the URL already sets them."""
    url = str(url or "").strip()
    if not url.startswith(SCHEME):
        raise ValueError(
            f"host '{url}' is not a Spark Connect URL: method 'connect' needs "
            f"host: sc://host:port (e.g. {DEFAULT_URL}), optionally with parameters "
            "as sc://host:port/;token=...;use_ssl=true")
    parsed = urlparse("http://" + url[len(SCHEME):])
    path, _, param_text = parsed.path.partition(";")
    if parsed.params:
        param_text = parsed.params
    if path not in ("", "/") or parsed.query or parsed.fragment:
        raise ValueError(
            f"host '{url}': a Spark Connect URL has no path; parameters follow '/;' as "
            "sc://host:port/;token=...")
    try:
        port = parsed.port or DEFAULT_PORT
    except ValueError:
        raise ValueError(f"host '{url}': the port must be a number") from None
    if not parsed.hostname:
        raise ValueError(f"host '{url}' names no server host (sc://host:port)")
    params = []
    for item in filter(None, param_text.split(";")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"host '{url}': parameter '{item}' is not key=value")
        params.append((key, value))
    result = ConnectUrl(parsed.hostname, port, tuple(params))
    if result.param("use_ssl") not in (None, "true", "false"):
        raise ValueError(f"host '{url}': use_ssl must be true or false")
    session_id = result.param("session_id")
    if session_id is not None:
        try:
            uuid.UUID(session_id)
        except ValueError:
            raise ValueError(f"host '{url}': session_id must be a UUID") from None
    extra = {}
    if token and result.param("token") is None:
        extra["token"] = token
    if use_ssl and result.param("use_ssl") is None:
        extra["use_ssl"] = "true"
    return result.with_params(**extra) if extra else result


def shared_session_id(generation: int) -> str:
    return str(uuid.uuid5(_SESSION_NAMESPACE, f"dbt-paimon shared session {generation}"))


def start_command(warehouse: Optional[str], port: int) -> str:
    command = f"dbt-paimon server start --warehouse {warehouse or '<warehouse folder>'}"
    return command if port == DEFAULT_PORT else f"{command} --port {port}"


def restart_remedy(warehouse: Optional[str], port: int) -> str:
    """What a user does when the server at ``port`` has stopped."""
    return f"Restart it (`{start_command(warehouse, port)}`) and run the command again."


def check_reachable(url: ConnectUrl, warehouse: Optional[str], timeout: float = 3.0) -> None:
    """Fail fast (instead of gRPC's minutes of retries) when nothing listens at the URL."""
    reason = ports.connect_error(url.host, url.port, timeout)
    if reason is None:
        return
    raise ConnectSetupError(
        f"No Spark Connect server answers at {url.redacted} ({reason}). Start one with "
        f"`{start_command(warehouse, url.port)}`, or fix `host` in the profile.")


def is_session_closed(exc: BaseException) -> bool:
    text = str(exc)
    return "SESSION_CLOSED" in text or "SESSION_NOT_SAME" in text


def expected_versions() -> str:
    """What a server's Python must run: this dbt-paimon and this pyspark."""
    import pyspark

    from dbt.adapters.paimon.__version__ import version

    return f"dbt-paimon {version}, pyspark {pyspark.__version__}"


def probe_server_python(batches):
    """Runs in one of the server's Python workers: which Python, dbt-paimon and pyspark."""
    import sys

    import pyarrow as pa

    for _ in batches:
        pass
    try:
        import pyspark

        from dbt.adapters.paimon.__version__ import version
        import dbt.adapters.paimon.write.tasks  # noqa: F401 - the task code must import
        found = f"dbt-paimon {version}, pyspark {pyspark.__version__}"
        error = ""
    except Exception as exc:  # noqa: BLE001 - reported to the client
        found, error = "", f"{type(exc).__name__}: {exc}"
    yield pa.RecordBatch.from_pydict(
        {"python": [sys.executable], "found": [found], "error": [error]})


def check_server(spark, url: ConnectUrl) -> None:
    """The server's Spark and its Python workers must match this dbt process: Spark's version
    (the client's protocol), and dbt-paimon + pyspark importable in the server's Python (its
    tasks run dbt-paimon's code). Probed once per shared session, then remembered there."""
    expected = expected_versions()
    if spark.conf.get(CHECKED_CONF, None) == expected:
        return
    import pyspark

    server_spark = spark.version
    if server_spark.split(".")[:2] != pyspark.__version__.split(".")[:2]:
        raise ConnectSetupError(
            f"The Spark Connect server at {url.redacted} runs Spark {server_spark}; this dbt "
            f"process has pyspark {pyspark.__version__}. Run the server from this installation "
            f"(`dbt-paimon server start`) or install pyspark {server_spark} here.")
    try:
        row = spark.range(1).mapInArrow(
            probe_server_python, "python string, found string, error string").collect()[0]
        python, found, error = row.python, row.found, row.error
    except Exception as exc:  # noqa: BLE001 - e.g. a Python without pyarrow cannot run it
        python, found, error = "its Python", "", _last_line(exc)
    if error or found != expected:
        problem = f"cannot import dbt-paimon ({error})" if error else f"runs {found}"
        raise ConnectSetupError(
            f"The Spark Connect server at {url.redacted} runs its Python tasks with "
            f"{python}, which {problem}; this dbt process runs {expected}. Install this "
            f"dbt-paimon version into that Python, or restart the server from this "
            f"installation (`dbt-paimon server stop ...`, then `dbt-paimon server start ...`: "
            f"it runs the workers with the Python that runs the command).")
    spark.conf.set(CHECKED_CONF, expected)


def _last_line(exc: BaseException) -> str:
    """A Python worker's failure arrives as the worker's traceback: its last line says what."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    errors = [line for line in lines if "Error:" in line or "Exception:" in line]
    return (errors or lines or [repr(exc)])[-1]
