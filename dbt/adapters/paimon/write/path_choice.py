"""Which executor writes a run: in this process (the run's Arrow here) or in Spark tasks.

Decided before any row is computed, from the bytes the model's query reads (plan_size.py:
Spark's own estimate from its optimized plan, with Paimon scans sized from their tables'
metadata). ``auto`` writes in-process when the estimate is known and within the budget and Spark
runs on this machine (a ``local`` master); anything else, and every run whose size cannot be
estimated (e.g. rows from a Python list), is written by Spark tasks.

Settings, most specific first: model config ``write_path`` / ``in_process_max_bytes``, then the
session conf (a profile's ``spark_conf``) ``spark.dbt.paimon.writePath`` /
``spark.dbt.paimon.inProcessMaxBytes``, then ``auto`` and 64 MiB (the Arrow in this process is
about 1-2x the estimate, and validation, sorting and merging hold a few copies of it: the budget
bounds the dbt process's memory).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from dbt.adapters.paimon.config.model_config import WRITE_PATHS
from dbt.adapters.paimon.write import plan_size

AUTO, IN_PROCESS, DISTRIBUTED = WRITE_PATHS
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
CONF_WRITE_PATH = "spark.dbt.paimon.writePath"
CONF_MAX_BYTES = "spark.dbt.paimon.inProcessMaxBytes"

_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


@dataclass(frozen=True)
class PathChoice:
    path: str                   # IN_PROCESS or DISTRIBUTED
    reason: str                 # why, for the run's message and logs
    estimated_bytes: Optional[int] = None

    @property
    def label(self) -> str:
        return "in-process" if self.path == IN_PROCESS else "distributed"


def check_write_path(value, model_name: str) -> Optional[str]:
    """A model's ``write_path`` config, or a ValueError naming it and the accepted values."""
    if value is None:
        return None
    if value not in WRITE_PATHS:
        raise ValueError(f"Model '{model_name}': config `write_path` is {value!r}; expected one "
                         f"of {list(WRITE_PATHS)}")
    return value


def check_max_bytes(value, what: str) -> Optional[int]:
    if value is None:
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0:
        raise ValueError(f"{what} is {value!r}; expected a whole number of bytes >= 0")
    return number


def choose_path(spark, frame, model_name: str, requested: Optional[str] = None,
                max_bytes: Optional[int] = None, supported: Optional[str] = None,
                table_bytes: Optional[plan_size.TableBytes] = None) -> PathChoice:
    """``frame``: the run's input rows (not computed here). ``supported``: None if the
    in-process executor can write this table, else why not. ``table_bytes``: sizes the Paimon
    tables the query scans (plan_size.py); without it their size is unknown."""
    def size():
        found = plan_size.estimate(frame, table_bytes)
        basis = (f" (Paimon metadata of {', '.join(found.paimon_tables)})"
                 if found.paimon_tables else "")
        return found.bytes, basis
    return choose_path_by(spark, model_name, size, requested, max_bytes, supported)


def choose_path_for_size(spark, what: str, size: int, requested: Optional[str] = None,
                         max_bytes: Optional[int] = None) -> PathChoice:
    """The executor of work whose input is ``size`` bytes of Paimon data files (e.g. the
    files a compaction rewrites); ``what`` names it in errors."""
    return choose_path_by(spark, what, lambda: (size, " of data files"), requested, max_bytes)


def choose_path_by(spark, what: str, size: Callable[[], Tuple[Optional[int], str]],
                   requested: Optional[str] = None, max_bytes: Optional[int] = None,
                   supported: Optional[str] = None) -> PathChoice:
    """The rules above with the size given by ``size()``: (bytes or None when unknown, what
    they are for the reason, e.g. " of data files"); called only when the rules get to it."""
    conf = _conf(spark)
    requested = check_write_path(requested or conf(CONF_WRITE_PATH) or AUTO, what)
    if max_bytes is None:
        max_bytes = check_max_bytes(conf(CONF_MAX_BYTES), CONF_MAX_BYTES)
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    if requested == DISTRIBUTED:
        return PathChoice(DISTRIBUTED, "write_path 'distributed'")
    if supported is not None:
        return PathChoice(DISTRIBUTED, supported)
    if requested == IN_PROCESS:
        return PathChoice(IN_PROCESS, "write_path 'in_process'")
    master = conf("spark.master") or ""
    if not master.startswith("local"):
        return PathChoice(DISTRIBUTED, f"Spark master {master!r} is not local")
    found, basis = size()
    if found is None:
        return PathChoice(DISTRIBUTED, "the input's size cannot be estimated")
    if found > max_bytes:
        return PathChoice(DISTRIBUTED, f"estimated {_human(found)}{basis} > in-process "
                                       f"budget {_human(max_bytes)}", found)
    return PathChoice(IN_PROCESS, f"estimated {_human(found)}{basis} <= in-process "
                                  f"budget {_human(max_bytes)}", found)


def estimated_bytes(frame, table_bytes: Optional[plan_size.TableBytes] = None) -> Optional[int]:
    """The bytes ``frame``'s query reads (plan_size.py), None when unknown."""
    return plan_size.estimate(frame, table_bytes).bytes


def warehouse_table_bytes(location) -> plan_size.TableBytes:
    """Sizes the Paimon tables of ``location``'s warehouse (a TableRef) for plan_size:
    their live data files' bytes, None for a table that is not there."""
    def table_bytes(database: str, table: str) -> Optional[int]:
        from dbt.adapters.paimon.catalog import warehouse
        from dbt.adapters.paimon.format.splits import data_file_bytes

        try:
            found = warehouse.open_table(location.warehouse, database, table,
                                         location.catalog_options)
        except warehouse.TableNotFoundError:
            return None
        return data_file_bytes(found)
    return table_bytes


def _conf(spark):
    def get(key: str) -> Optional[str]:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a conf the session does not expose is unset
            return None
        return None if value in (None, "") else str(value)
    return get


def _human(size: int) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f} {unit}"
    return f"{size} B"
