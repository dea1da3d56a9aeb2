"""What dbt shows of an exception that reached the adapter: a message, never a stack.

Spark's exceptions carry more than their message: an analysis error its query plan, a failed
job the Java stack of its task, a failed Python task the worker's traceback (with, for a task of
ours, the pickled original between markers, see write/task_errors.py). dbt prints an exception's
text as the model's error, so that text is cut to what the user needs, and the whole of it goes
to Spark's log file (``spark_logs``) and dbt's debug log, for a bug report.

Errors dbt-paimon reports itself (bad rows, bad config, commit conflicts) never come here with
a stack: they are raised as dbt errors with their own message.
"""
from __future__ import annotations

import contextlib
import os
import re
import traceback
from typing import Dict, List, Optional, Tuple

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.paimon.environments import server_watch, spark_logs
from dbt.adapters.paimon.write import task_errors

logger = AdapterLogger("Paimon")
# Errors dbt-paimon raises on purpose in Spark tasks (e.g. a Paimon read finding bad data);
# a Python task's traceback names them with their module, and a TaskFailure wraps them.
HANDLED_IN_TASKS = ("TaskFailure: PaimonDataError", "TaskFailure: PaimonConfigError",
                    "PaimonDataError", "PaimonConfigError", "CommitConflictError")
_OUR_MODULES = re.compile(r"^(?:dbt\.adapters\.paimon\.[\w.]*\.)(?=\w+: )")
_FRAME = re.compile(r'^  File "([^"]*)", line \d+', re.MULTILINE)
_OUR_CODE = "/dbt/adapters/paimon/"
# Spark Connect ends a failed Python task's text with the SQL state of Spark's PYTHON_EXCEPTION
# error class: it says "a Python worker raised", which the message says already.
_PYTHON_SQLSTATE = re.compile(r"\s*SQLSTATE: 38000\s*$")
# Hive's error when Spark's Derby metastore cannot be opened (another process holds its lock)
METASTORE_UNAVAILABLE = ("Unable to instantiate "
                         "org.apache.hadoop.hive.ql.metadata.SessionHiveMetaStoreClient")
# Spark's error for a relation it cannot resolve, with the schema and name it looked for
_NOT_FOUND = re.compile(r"\[TABLE_OR_VIEW_NOT_FOUND\] The table or view `([^`]+)`\.`([^`]+)`")
# The relations the dbt project builds: (schema, name) in lower case -> (kind, node name);
# set by the adapter from dbt's manifest (manifest_hooks.apply).
_PROJECT_RELATIONS: Dict[Tuple[str, str], Tuple[str, str]] = {}


def set_project_relations(relations: Dict[Tuple[str, str], Tuple[str, str]]) -> None:
    _PROJECT_RELATIONS.clear()
    _PROJECT_RELATIONS.update(relations)


def not_found_hint(message: str) -> str:
    """For a relation Spark cannot find that a seed, model or snapshot of the project builds:
    why (the node reading it ran first: dbt orders nodes by ref(), never by source()) and
    what to do. Empty otherwise."""
    found = _NOT_FOUND.search(message)
    if not found:
        return ""
    schema, name = found.group(1), found.group(2)
    builder = _PROJECT_RELATIONS.get((schema.lower(), name.lower()))
    if builder is None:
        return ""
    kind, node = builder
    return (f" `{schema}`.`{name}` is built by {kind} '{node}' of this project, which had not "
            f"built it when this ran: dbt runs a node after the nodes it ref()s, never after "
            f"the node that builds a source() it reads. Read it with {{{{ ref('{node}') }}}}, or "
            f"keep the source() and add `-- depends_on: {{{{ ref('{node}') }}}}` to the SQL.")


# Spark's error for a data file a native read's file list names that is gone
_FILE_GONE = re.compile(r"FILE_NOT_EXIST\][^\n]*?reading file (\S+?)\.? File does not exist")
_TABLE_FOLDER = re.compile(r"/([^/]+)\.db/([^/]+)/")


def expired_file_message(text: str) -> str:
    """For a Paimon data file a read did not find: the file, its table, why (another writer
    expired or compacted the snapshot the read's file list names, after the list was made) and
    what to do. Empty for any other error."""
    found = _FILE_GONE.search(text)
    folder = _TABLE_FOLDER.search(found.group(1)) if found else None
    if folder is None:
        return ""
    table = f"{folder.group(1)}.{folder.group(2)}"
    return (f"Data file {found.group(1)} of Paimon table {table} is gone: another writer "
            f"expired or compacted the snapshot this read's file list names after the list was "
            f"made. Run the command again: it reads {table} at its latest snapshot "
            f"(docs/reads.md).")


_FILE_UNREADABLE = re.compile(r"FAILED_READ_FILE\.\w+\][^\n]*?reading file (\S+?)\.?\s+SQLSTATE")
_CAUSE = re.compile(r"^Caused by: (?:[\w.$]+(?:Exception|Error): )?(.+)$", re.MULTILINE)


def unreadable_file_message(text: str) -> str:
    """For a Paimon data file Spark's own reader failed on (a native read, docs/reads.md): the
    file, its table, the reader's reason and what to do. Empty for any other error."""
    found = _FILE_UNREADABLE.search(text)
    folder = _TABLE_FOLDER.search(found.group(1)) if found else None
    if folder is None:
        return ""
    table = f"{folder.group(1)}.{folder.group(2)}"
    causes = [c.strip() for c in _CAUSE.findall(text) if "FAILED_READ_FILE" not in c]
    why = f" ({causes[-1]})" if causes else ""
    return (f"Data file {found.group(1)} of Paimon table {table} cannot be read{why}: it is "
            f"damaged, or is not the file Paimon wrote. Restore it, or roll {table} back to a "
            f"snapshot written before it (docs/tags_and_rollback.md).")


def _file_message(text: str) -> str:
    return expired_file_message(text) or unreadable_file_message(text)


def summary(exc: BaseException) -> str:
    """The message of ``exc`` without plans, stacks, tracebacks or task-error payloads."""
    from pyspark.errors import PythonException

    text = task_errors.without_payload(str(exc)).strip()
    if isinstance(exc, PythonException):
        return _task_error(text)[0]
    lines: List[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("at ", "... ", "JVM stacktrace:")):
            break
        if not stripped:
            continue
        lines.append(line)
        # an analysis error's message ends with ';' and the query plan follows it
        if stripped.endswith(";") and "SQLSTATE" in stripped:
            lines[-1] = line.rstrip().rstrip(";")
            break
    return "\n".join(lines).strip() or type(exc).__name__


def spark_failure(exc: BaseException) -> str:
    """dbt's message for a statement Spark refused or failed; the whole text goes to the logs."""
    where = record(exc, "a statement failed")
    lost = server_watch.server_loss()
    if lost is not None:
        return lost.message
    if METASTORE_UNAVAILABLE in str(exc):
        return _metastore_unavailable(where)
    gone = _file_message(str(exc))
    if gone:
        return gone
    message = summary(exc)
    if where and _is_unexpected(exc):
        return f"{_unexpected(exc, message)} The full trace is in {where}."
    return message + not_found_hint(message)


def model_failure(model: str, exc: BaseException) -> str:
    """dbt's message for a model whose build raised an exception dbt-paimon does not handle:
    Spark's own verdict on the query (an unresolved column, a raise_error, a failed cast) as
    Spark states it; anything else as an unexpected error, with its type and where its full
    trace was written."""
    where = record(exc, f"model '{model}' failed")
    lost = server_watch.server_loss()
    if lost is not None:
        return f"Model '{model}': {lost.message}"
    gone = _file_message(str(exc))
    if gone:
        return f"Model '{model}': {gone}"
    message = summary(exc)
    if not _is_unexpected(exc):
        return f"Model '{model}': {message}{not_found_hint(message)}"
    trace = f"its full trace is in {where}" if where else "its full trace is in dbt's log"
    return (f"Model '{model}': {_unexpected(exc, message)} Nothing was written; {trace} "
            "(please include it when reporting this as a dbt-paimon bug).")


@contextlib.contextmanager
def model_errors(model: str, conflict: Optional[str] = None):
    """A model's (or snapshot's) build failing, as dbt's error: a config error is a compilation
    error, bad data or an unsupported case names the model, a commit conflict says what the
    other writer did (``conflict``) and that nothing of the run is visible, anything else
    (Spark's errors on the query, or a dbt-paimon bug) is the model's failure (model_failure)."""
    from dbt_common.exceptions import CompilationError, DbtRuntimeError

    from dbt.adapters.paimon.format.errors import CommitConflictError
    from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

    try:
        yield
    except PaimonConfigError as exc:
        raise CompilationError(str(exc)) from exc
    except (PaimonDataError, NotImplementedError) as exc:
        message = str(exc)  # most of ours name the model (or snapshot) already
        if not message.startswith((f"Model '{model}'", f"Snapshot '{model}'")):
            message = f"Model '{model}': {message}"
        raise DbtRuntimeError(message) from exc
    except CommitConflictError as exc:
        if conflict is None:
            raise DbtRuntimeError(model_failure(model, exc)) from exc
        raise DbtRuntimeError(
            f"Model '{model}': another writer {conflict}; nothing of this run is visible. Run "
            f"the model again. ({exc})") from exc
    except DbtRuntimeError:
        raise
    except Exception as exc:  # noqa: BLE001 - see the docstring
        raise DbtRuntimeError(model_failure(model, exc)) from exc


def record(exc: BaseException, title: str) -> Optional[str]:
    """Write ``exc``'s full text (driver trace, Spark's text, a task's own traceback) to dbt's
    debug log and Spark's log file; returns the log file's path (None without one)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    worker = getattr(exc, task_errors.WORKER_TRACEBACK, None)
    if worker:
        text += f"\nIn the Spark task:\n{worker}"
    logger.debug(f"dbt-paimon: {title}:\n{text}")
    return spark_logs.record(title, text)


def _metastore_unavailable(where: Optional[str]) -> str:
    state_dir = os.path.dirname(os.path.dirname(where)) if where else "spark_state_dir"
    return (f"Spark could not open its metastore (a Derby database in {state_dir}). Derby "
            "admits one process at a time: most likely another dbt process on this warehouse "
            "is running. Wait for it to end, or give each process its own `spark_state_dir` "
            "in the profile (see docs/troubleshooting.md)."
            + (f" Spark's log: {where}" if where else ""))


def _is_unexpected(exc: BaseException) -> bool:
    from pyspark.errors import PySparkException, PythonException

    if isinstance(exc, spark_logs.JvmStartError):  # says what went wrong and what to do
        return False
    if isinstance(exc, PythonException):
        return not _task_error(str(exc))[1]
    return not isinstance(exc, PySparkException)


def _task_error(text: str) -> Tuple[str, bool]:
    """(message, whether dbt-paimon raised it on purpose) of a failed Python task's text."""
    text = _PYTHON_SQLSTATE.sub("", task_errors.without_payload(text)).strip()
    raised = _OUR_MODULES.sub("", _raised_line(text))
    for name in HANDLED_IN_TASKS:  # our own error: its message says it all
        if raised.startswith(f"{name}: "):
            return raised[len(name) + 2:], True
    # dbt-paimon's code refuses bad options and input with ValueError (the Paimon errors
    # subclass it) or NotImplementedError; the same raised elsewhere is a bug
    frames = _FRAME.findall(text)
    if frames and _OUR_CODE in frames[-1].replace("\\", "/"):
        for name in ("ValueError", "NotImplementedError"):
            if raised.startswith(f"{name}: "):
                return raised[len(name) + 2:], True
    return raised, False


def _unexpected(exc: BaseException, message: str) -> str:
    from pyspark.errors import PythonException

    if isinstance(exc, PythonException):
        return f"unexpected error in a Spark Python task: {message.rstrip('.')}."
    return f"unexpected error {type(exc).__name__}: {message.rstrip('.')}."


def _raised_line(text: str) -> str:
    """The exception line(s) at the end of a Python traceback's text."""
    lines = text.splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith("  File ")]
    if not frames:
        return text
    rest = lines[frames[-1] + 1:]
    while rest and rest[0].startswith("    "):  # the frame's source line and its ^^^ marks
        rest = rest[1:]
    return "\n".join(rest).strip() or text
