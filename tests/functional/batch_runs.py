"""dbt commands of a functional test that run a project's models on a numbered batch of rows.

The batch number reaches the models as an environment variable (``{{ env_var('DBT_TEST_BATCH',
'0') }}``), not as a dbt var: after a change of ``--vars`` dbt parses the whole project again
(a tiny project's in-process command: about 0.3 s with its partial parse, 1.4 s parsing the whole
project, dbt's and the adapter's 600 macros included, on the loaded 2-core CI machine); after a
change of an environment variable it parses again only the files that read it. How a command
parses is not what these tests check."""
from __future__ import annotations

import contextlib
import os

from dbt.tests.util import run_dbt

BATCH = "DBT_TEST_BATCH"
# what a model reads the batch number with
BATCH_SQL = "{{ env_var('" + BATCH + "', '0') }}"


@contextlib.contextmanager
def batch_env(batch):
    """The models' batch number for the commands run inside the block."""
    os.environ[BATCH] = str(batch)
    try:
        yield
    finally:
        del os.environ[BATCH]


def run_batch(args, batch, expect_pass=True):
    """``run_dbt(args)`` with the models' batch number ``batch``."""
    with batch_env(batch):
        return run_dbt(list(args), expect_pass=expect_pass)
