"""The Spark state folder (``spark_state_dir``, ``<warehouse>/.spark`` by default) is checked
before any Spark starts on it: Spark's Derby metastore, its log, the Python reads' scratch
files and the background daemon's record all live there. A read-only or full folder otherwise
fails each of them in its own words (a raw ``OSError`` from the log set-up, a Derby boot error
buried in Spark's log, a daemon that never starts) after seconds of start-up; checked first,
the command ends at once with one line that names the folder and the fix, before any table is
touched.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile

from dbt_common.exceptions import DbtRuntimeError

# Room a command needs in the folder: a new Derby metastore takes ~5 MiB and grows with the
# catalog, Spark's log rolls at 10 MiB, and Derby's transaction log needs headroom on top.
MIN_FREE_BYTES = 64 * 1024 * 1024
_PROBE_NAME = ".dbt-paimon-write-check"
_FULL = (errno.ENOSPC, errno.EDQUOT)


class StateDirError(DbtRuntimeError):
    pass


def check_usable(state_dir: str, min_free: int = MIN_FREE_BYTES) -> None:
    """Raise ``StateDirError`` when ``state_dir`` cannot be made, written or has less than
    ``min_free`` bytes free. The probe file is removed again."""
    try:
        os.makedirs(state_dir, exist_ok=True)
        # a probe of this check's own: commands starting at once on one folder (the daemon's
        # first commands) must not delete each other's probe between its write and removal
        descriptor, probe = tempfile.mkstemp(prefix=_PROBE_NAME, dir=state_dir)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(b"\0" * 4096)
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            os.remove(probe)
    except OSError as exc:
        if exc.errno in _FULL:
            raise _full(state_dir, 0, min_free) from None
        raise StateDirError(
            f"Spark's state folder {state_dir} (the profile's spark_state_dir; by default "
            f"<warehouse>/.spark) is not writable ({exc.strerror or exc}): Spark keeps its "
            "metastore, its log and the background daemon's record there, so no Spark can "
            "start, and no table was touched. Make the folder writable, or set "
            "spark_state_dir to a writable local folder (a new folder starts an empty metastore, "
            "which the next command fills with the warehouse's Paimon tables).") from None
    free = shutil.disk_usage(state_dir).free
    if free < min_free:
        raise _full(state_dir, free, min_free)


def _full(state_dir: str, free: int, min_free: int) -> StateDirError:
    return StateDirError(
        f"Spark's state folder {state_dir} (the profile's spark_state_dir; by default "
        f"<warehouse>/.spark) has {free / 2**20:.1f} MiB free; Spark needs at least "
        f"{min_free // 2**20} MiB there for its metastore and log, so no Spark was started "
        "and no table was touched. Free space on its file system, or set "
        "spark_state_dir to a folder on another one.")
