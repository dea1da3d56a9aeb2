"""The session-mode Spark starts while dbt parses (environments/early_start.py): the first
connection waits for that start and gets its failure, once; a process whose Spark runs already
starts nothing."""
from __future__ import annotations

import threading

import pytest

from dbt.adapters.paimon.environments import base, early_start


class Catalog:
    def __init__(self):
        self.asked = []

    def databaseExists(self, name):
        self.asked.append(name)
        return True


class Session:
    def __init__(self):
        self.catalog = Catalog()


class Registry:
    def __init__(self):
        self.spark = Session()


class SlowEnvironment:
    """Starts when told to (the test holds it mid-start), or fails."""

    def __init__(self, failure=None):
        self.release = threading.Event()
        self.started = threading.Event()
        self.failure = failure
        self.registry = Registry()

    def start(self):
        self.started.set()
        assert self.release.wait(10)
        if self.failure is not None:
            raise self.failure
        return self.registry


@pytest.fixture(autouse=True)
def fresh_module(monkeypatch):
    monkeypatch.setattr(early_start, "_thread", None)
    monkeypatch.setattr(early_start, "_failure", None)
    monkeypatch.setattr(base, "_registry", None)


def test_the_first_connection_waits_for_the_start_and_the_metastore_is_touched():
    environment = SlowEnvironment()
    assert early_start.start(environment)
    assert environment.started.wait(10)
    waited = threading.Thread(target=early_start.wait)
    waited.start()
    waited.join(0.2)
    assert waited.is_alive(), "wait() returned before the start ended"
    environment.release.set()
    waited.join(10)
    assert not waited.is_alive()
    assert environment.registry.spark.catalog.asked == ["default"]
    assert not early_start.start(SlowEnvironment()), "a second start in one process"


def test_a_failed_start_fails_the_first_connection_only():
    environment = SlowEnvironment(RuntimeError("spark.driver.memory: bad value"))
    environment.release.set()
    assert early_start.start(environment)
    with pytest.raises(RuntimeError, match="spark.driver.memory"):
        early_start.wait()
    early_start.wait()  # the next connection starts Spark itself (and meets its own failure)


def test_nothing_starts_early_when_the_process_has_its_spark(monkeypatch):
    monkeypatch.setattr(base, "_registry", Registry())
    assert not early_start.start(SlowEnvironment())
    early_start.wait()
