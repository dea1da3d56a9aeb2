"""A test hook, not part of the format: pause points in the write and commit paths, for the
crash and concurrency tests (tests/reliability, tests/connect).

It lives in format/, the lowest layer that pauses (format/commit.py), so that every layer
that pauses (write/, ops/) may import it; it imports nothing of dbt-paimon. It is inert unless
the environment sets ``DBT_PAIMON_TEST_PAUSE_AT`` (a comma-separated list of points), which
only tests do. At a listed point the process (the dbt driver, or a Spark worker for
``task-file-written``) writes ``<DBT_PAIMON_TEST_PAUSE_DIR>/<point>.reached`` holding its pid,
then waits until ``<point>.release`` appears in that folder (at most
``DBT_PAIMON_TEST_PAUSE_TIMEOUT`` seconds, default 600). A test kills the process there
(crash safety) or lets another writer commit first (concurrency).

Points, in the order a primary-key run reaches them:

- ``task-file-written``: a write task has written a data file, not yet reported it;
- ``before-commit``: every task's files are written, the driver has not started the commit;
- ``commit-manifests-written``: the commit wrote its manifests and manifest lists, not the
  snapshot file (the step that makes it visible);
- ``commit-snapshot-written``: the snapshot file is written, the run has not finished.

After the commit, the run's compaction (deletion-vector tables: the lookup compaction):

- ``compact-index-written``: a compaction unit has written its data files and the bucket's new
  deletion-vector index file, not yet reported them;
- ``compact-manifests-written``: the COMPACT commit wrote its manifests, not the snapshot file
  (``commit-manifests-written`` is reached just before it too).

Table lifecycle operations (ops/rollback.py, ops/branches.py):

- ``rollback-first-snapshot-removed``: the LATEST hint names the target, the newest snapshot
  file is deleted, the others not yet;
- ``rollback-snapshots-removed``: every later snapshot and tag is gone, their files not yet;
- ``fast-forward-main-cut``: main's snapshots and tags from the branch's start are gone;
- ``fast-forward-schemas-copied``: the branch's schemas and tags are copied, its snapshots not.
"""
from __future__ import annotations

import os
import threading
import time

PAUSE_AT = "DBT_PAIMON_TEST_PAUSE_AT"
PAUSE_DIR = "DBT_PAIMON_TEST_PAUSE_DIR"
PAUSE_TIMEOUT = "DBT_PAIMON_TEST_PAUSE_TIMEOUT"
POINTS = ("task-file-written", "before-commit", "commit-manifests-written",
          "commit-snapshot-written", "compact-index-written", "compact-manifests-written",
          "rollback-first-snapshot-removed", "rollback-snapshots-removed",
          "fast-forward-main-cut", "fast-forward-schemas-copied")


def pause_at(point: str) -> None:
    wanted = os.environ.get(PAUSE_AT)
    if not wanted or point not in wanted.split(","):
        return
    folder = os.environ.get(PAUSE_DIR) or os.getcwd()
    marker = os.path.join(folder, point)
    # threads of one process (the in-process executor's buckets) may reach a point together
    temporary = f"{marker}.reached.{os.getpid()}.{threading.get_ident()}"
    with open(temporary, "w") as out:
        out.write(str(os.getpid()))
    os.replace(temporary, f"{marker}.reached")  # a test never sees a half-written marker
    deadline = time.monotonic() + float(os.environ.get(PAUSE_TIMEOUT, "600"))
    while not os.path.exists(f"{marker}.release") and time.monotonic() < deadline:
        time.sleep(0.05)
