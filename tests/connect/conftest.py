"""Tests of Spark Connect itself (several dbt processes on one server, the dbt-paimon command).
They use the test process's server: run them with ``--profile connect`` (``make test`` does)."""

import pytest


@pytest.fixture(autouse=True)
def _needs_connect_profile(profile_type):
    if profile_type != "connect":
        pytest.skip("Spark Connect tests: run with --profile connect (make test does)")
