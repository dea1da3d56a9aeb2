"""Python models run in this process's Spark session (dbt-spark only submits to Databricks).

The compiled code is dbt's model module plus the epilogue of our ``py_write_table`` macro; it is
imported as a module with ``spark`` bound to the session, like dbt-duckdb's local environment.
"""

from __future__ import annotations

import importlib.util
import linecache
import sys
import traceback
from typing import Any, Dict

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon import environments, error_messages


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: Dict[str, Any], credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> Any:
        name = self.parsed_model.get("alias") or self.parsed_model["name"]
        module_name = f"dbt_paimon_model_{name}"
        spec = importlib.util.spec_from_loader(module_name, loader=None)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        # the model's code names the tables it refs: their choice of rows (docs/reads.md)
        module.__dict__["spark"] = environments.current_registry().activate(compiled_code)
        filename = f"<python model {name}>"
        model_id = self.parsed_model.get("unique_id", name)
        # tracebacks then show the model's source lines
        linecache.cache[filename] = (len(compiled_code), None,
                                     compiled_code.splitlines(True), filename)
        try:
            exec(compile(compiled_code, filename, "exec"), module.__dict__)
        except Exception as exc:
            error_messages.record(exc, f"Python model {model_id} failed")
            raise DbtRuntimeError(
                f"Python model {model_id} failed:\n{model_traceback(exc, filename)}"
            ) from exc
        finally:
            sys.modules.pop(module_name, None)
        return None


def model_traceback(exc: BaseException, filename: str) -> str:
    """The traceback's frames in the model's own code (not dbt-paimon's, pyspark's or py4j's)
    and the error's message (Spark's without its Java stack); the whole trace is logged."""
    from pyspark.errors import PythonException

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = "".join(traceback.format_list(frames))
    head = f"Traceback (the model's lines):\n{lines}" if frames else ""
    message = error_messages.summary(exc)  # a Python task's ends with its exception's type
    if not isinstance(exc, PythonException):
        message = f"{type(exc).__name__}: {message}"
    return head + message
