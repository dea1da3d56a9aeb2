"""Which executor writes a run: in this process (the run's Arrow here) or in Spark tasks.

Decided before any row is computed, from Spark's own size estimate of the model's query (its
optimized plan's ``sizeInBytes``, read through ``DataFrame.explain``, which Spark Connect serves
too). ``auto`` writes in-process when the estimate is known and within the budget and Spark runs
on this machine (a ``local`` master); anything else, and every run whose size Spark cannot
estimate (e.g. a scan of a Python data source), is written by Spark tasks.

Settings, most specific first: model config ``write_path`` / ``in_process_max_bytes``, then the
session conf (a profile's ``spark_conf``) ``spark.dbt.paimon.writePath`` /
``spark.dbt.paimon.inProcessMaxBytes``, then ``auto`` and 64 MiB of Spark's estimate (the Arrow
in this process is about 1-2x the estimate, and validation, sorting and merging hold a few
copies of it: the budget bounds the dbt process's memory).
"""
from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from typing import Optional

from dbt.adapters.paimon.config.model_config import WRITE_PATHS

AUTO, IN_PROCESS, DISTRIBUTED = WRITE_PATHS
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
CONF_WRITE_PATH = "spark.dbt.paimon.writePath"
CONF_MAX_BYTES = "spark.dbt.paimon.inProcessMaxBytes"

_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "PiB": 1 << 50, "EiB": 1 << 60}
_SIZE = re.compile(r"Statistics\(sizeInBytes=([0-9.E+]+)\s*(B|KiB|MiB|GiB|TiB|PiB|EiB)")
# Spark's spark.sql.defaultSizeInBytes (Long.MaxValue, "8.0 EiB"): the size of a relation
# without statistics; anything this large is unknown, not big
_UNKNOWN = 1 << 62


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
                max_bytes: Optional[int] = None, supported: Optional[str] = None) -> PathChoice:
    """``frame``: the run's input rows (not computed here). ``supported``: None if the
    in-process executor can write this table, else why not."""
    conf = _conf(spark)
    requested = check_write_path(requested or conf(CONF_WRITE_PATH) or AUTO, model_name)
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
    estimate = estimated_bytes(frame)
    if estimate is None:
        return PathChoice(DISTRIBUTED, "Spark cannot estimate the input's size")
    if estimate > max_bytes:
        return PathChoice(DISTRIBUTED, f"estimated {_human(estimate)} > in-process budget "
                                       f"{_human(max_bytes)}", estimate)
    return PathChoice(IN_PROCESS, f"estimated {_human(estimate)} <= in-process budget "
                                  f"{_human(max_bytes)}", estimate)


def estimated_bytes(frame) -> Optional[int]:
    """Spark's size estimate of ``frame`` (its optimized plan's root), None when unknown."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        frame.explain(mode="cost")
    plan = text.getvalue()
    optimized = plan.find("== Optimized Logical Plan ==")
    match = _SIZE.search(plan, optimized if optimized >= 0 else 0)
    if match is None:
        return None
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    return None if size >= _UNKNOWN else size


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
