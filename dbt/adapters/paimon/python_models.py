"""Python models run in this process's Spark session (dbt-spark only submits to Databricks).

The compiled code is dbt's model module plus the epilogue of our ``py_write_table`` macro; it is
imported as a module with ``spark`` bound to the session, like dbt-duckdb's local environment.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from typing import Any, Dict

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon import session


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: Dict[str, Any], credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> Any:
        name = self.parsed_model.get("alias") or self.parsed_model["name"]
        module_name = f"dbt_paimon_model_{name}"
        spec = importlib.util.spec_from_loader(module_name, loader=None)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        module.__dict__["spark"] = session.current_registry().spark
        try:
            exec(compile(compiled_code, f"<python model {name}>", "exec"), module.__dict__)
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python model {self.parsed_model.get('unique_id', name)} failed:\n"
                + "".join(traceback.format_exception(exc))
            ) from exc
        finally:
            sys.modules.pop(module_name, None)
        return None
