"""Where a warehouse is on this machine, and the folder its Spark keeps its state in
(metastore, spark-warehouse/, logs, a Connect server's pid file)."""

from __future__ import annotations

import os
from urllib.parse import urlparse

from dbt_common.exceptions import DbtRuntimeError

SPARK_STATE_DIRNAME = ".spark"


def is_local_path(location: str) -> bool:
    scheme = urlparse(location).scheme
    # A one-letter scheme is a Windows drive letter, not a URI.
    return scheme in ("", "file") or len(scheme) == 1


def local_path(location: str) -> str:
    """The folder of a local warehouse: ``file:///abs/path`` (or ``file:/abs/path``) is
    ``/abs/path``; a plain path stays as it is."""
    if not location.startswith("file:"):
        return location
    uri = urlparse(location)
    if uri.netloc not in ("", "localhost"):
        raise DbtRuntimeError(
            f"warehouse '{location}': a file:// URI names an absolute path after three slashes "
            f"(file:///{uri.netloc}{uri.path} for the folder /{uri.netloc}{uri.path}); for a "
            "folder relative to the dbt project, give the plain path.")
    return uri.path


def resolved_warehouse(location: str, base: str) -> str:
    """A warehouse as the process uses it: a local one as an absolute, normalised folder (a
    relative one relative to ``base``, the dbt project); a remote URI as it is."""
    if not is_local_path(location):
        return location
    folder = local_path(location)
    return os.path.normpath(folder if os.path.isabs(folder) else os.path.join(base, folder))
