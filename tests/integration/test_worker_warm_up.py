"""The background warm-up of Spark's Python processes after the session starts (worker_warm_up)."""
from dbt.adapters.paimon import worker_warm_up
from dbt.adapters.paimon.worker_warm_up import CONF_KEY, WarmUpSource, start_in_background


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


def test_a_failed_warm_up_does_not_raise(caplog):
    caplog.set_level("DEBUG", logger=worker_warm_up.__name__)
    worker_warm_up.warm_up(object())  # no sparkContext: the warm-up gives up quietly
    assert "warming up Spark's Python processes failed" in caplog.text
