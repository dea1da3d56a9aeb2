"""The background warm-up of Spark's Python processes after the session starts (worker_warm_up)."""
import threading

import pytest

from dbt.adapters.paimon.environments import worker_warm_up
from dbt.adapters.paimon.environments.worker_warm_up import (CONF_KEY, ENV_SWITCH, WarmUpSource,
                                                              start_in_background)


@pytest.fixture(autouse=True)
def users_default(monkeypatch):
    """The suite turns the warm-up off for its dbt processes (tests/conftest.py); not here."""
    monkeypatch.delenv(ENV_SWITCH, raising=False)


def test_runs_in_the_background_and_registers_its_source(spark):
    thread = start_in_background(spark)
    assert thread is not None and thread.daemon
    thread.join(timeout=300)
    assert not thread.is_alive()
    # the warm-up swallows its errors: read its source here, where a broken reader would raise
    rows = spark.read.format(WarmUpSource.name()).option("tasks", 3).load().collect()
    assert sorted(r.task for r in rows) == [0, 1, 2]


def test_profile_can_turn_it_off(spark):
    # the profile's spark_conf reaches the session's conf, where the warm-up reads it
    try:
        spark.conf.set(CONF_KEY, "false")
        assert start_in_background(spark) is None
        spark.conf.set(CONF_KEY, " False ")
        assert start_in_background(spark) is None
    finally:
        spark.conf.unset(CONF_KEY)


@pytest.mark.parametrize("value", ["off", " OFF ", "false", "0"])
def test_the_environment_turns_it_off_for_every_profile(spark, monkeypatch, value):
    monkeypatch.setenv(ENV_SWITCH, value)
    spark.conf.set(CONF_KEY, "true")  # a profile asking for it
    try:
        assert start_in_background(spark) is None
    finally:
        spark.conf.unset(CONF_KEY)


def test_a_failed_warm_up_does_not_raise(caplog):
    caplog.set_level("DEBUG", logger=worker_warm_up.__name__)
    worker_warm_up.warm_up(object())  # no sparkContext: the warm-up gives up quietly
    assert "warming up Spark's Python processes failed" in caplog.text


def test_stop_ends_a_running_warm_up_without_starting_more(spark):
    # what the atexit hook does when a command ends while the warm-up still runs
    stopping = threading.Event()
    thread = threading.Thread(target=worker_warm_up.warm_up, args=(spark, stopping), daemon=True)
    thread.start()
    worker_warm_up.stop(spark, thread, stopping, wait_seconds=120)
    assert stopping.is_set() and not thread.is_alive()
    # the session stays usable: the cancelled job does not leak its tag into this thread
    assert spark.range(3).count() == 3
