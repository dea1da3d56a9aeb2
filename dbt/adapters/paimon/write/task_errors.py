"""Carrying an exception from a Spark Python task to the driver, intact.

Spark re-raises a failed Python task on the driver as a ``PythonException`` whose text holds the
worker's traceback, not the exception object. Tasks that fail before any file is written (the
stages before the writing shuffle) raise ``TaskFailure``: its message embeds the pickled original
exception between markers, and ``recover`` finds it in whatever Spark raised. The writing stage
never raises (a task that raised would lose the commit messages of files it and its siblings
already wrote): it returns the exception in its result row instead (``encode`` / ``decode``).
"""
from __future__ import annotations

import base64
import pickle
import re
import traceback
from typing import List, Optional, Tuple

_MARK = "@@dbt-paimon-task-error@@"
_PATTERN = re.compile(re.escape(_MARK) + r"([A-Za-z0-9+/=]+)" + re.escape(_MARK))
# An exception pickles without its traceback; the task's one travels as this attribute, for the
# log file (the driver never shows it to the user).
WORKER_TRACEBACK = "dbt_paimon_worker_traceback"


def encode(exc: BaseException) -> bytes:
    """Pickled exception; unpicklable ones become a RuntimeError holding their traceback."""
    if exc.__traceback__ is not None and not hasattr(exc, WORKER_TRACEBACK):
        try:
            setattr(exc, WORKER_TRACEBACK, "".join(traceback.format_exception(exc)))
        except AttributeError:  # a class with __slots__: the message alone travels
            pass
    try:
        payload = pickle.dumps(exc)
        pickle.loads(payload)
        return payload
    except Exception:  # noqa: BLE001 - any pickling failure: fall back to the text
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}\n{text}"))


def decode(payload: bytes) -> BaseException:
    return pickle.loads(payload)


class TaskFailure(RuntimeError):
    """Raised in a task; the driver turns it back into ``original`` with ``recover``."""

    def __init__(self, original: BaseException):
        self.original = original
        token = base64.b64encode(encode(original)).decode("ascii")
        super().__init__(f"{type(original).__name__}: {original}\n{_MARK}{token}{_MARK}")

    def __reduce__(self):
        return (TaskFailure, (self.original,))


def without_payload(text: str) -> str:
    """Spark's text of a failed task without the pickled payload between the markers."""
    return _PATTERN.sub("", text)


def recover(spark_error: BaseException) -> Optional[BaseException]:
    """The exception a task wrapped in ``TaskFailure``, found in Spark's error text; else None."""
    seen = set()
    error: Optional[BaseException] = spark_error
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TaskFailure):
            return error.original
        texts = [str(error)]
        for attribute in ("desc", "stackTrace", "_desc"):
            value = getattr(error, attribute, None)
            if isinstance(value, str):
                texts.append(value)
        for text in texts:
            match = _PATTERN.search(text)
            if match:
                return decode(base64.b64decode(match.group(1)))
        error = error.__cause__ or error.__context__
    return None


def collect_results(stage) -> Tuple[List[dict], list, List[BaseException]]:
    """Run a writing stage (a DataFrame of one ``payload`` column, each a pickled dict with
    ``messages`` and ``error``) and return (payloads, all commit messages, task errors).
    A task that raised before writing anything is re-raised as its original exception."""
    try:
        rows = stage.collect()
    except Exception as exc:
        original = recover(exc)
        if original is not None:
            raise original from None
        raise
    payloads = [pickle.loads(bytes(row.payload)) for row in rows]
    messages = [m for p in payloads for m in p["messages"]]
    errors = [decode(p["error"]) for p in payloads if p["error"] is not None]
    return payloads, messages, errors
