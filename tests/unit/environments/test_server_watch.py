"""A Connect session's server on this machine that has gone is noticed at the first failed
request, not after pyspark's ten minutes of retries (environments/server_watch.py)."""
from __future__ import annotations

import socket
import subprocess

import grpc
import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.environments import server_watch
from dbt.adapters.paimon import error_messages


@pytest.fixture(autouse=True)
def no_loss(monkeypatch):
    monkeypatch.setattr(server_watch, "_loss", None)
    monkeypatch.setattr(server_watch, "_watch", None)


@pytest.fixture
def listening():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def gone_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


class Unavailable(grpc.RpcError):
    """What pyspark's DefaultPolicy retries: a gRPC error whose code is UNAVAILABLE."""

    def code(self):
        return grpc.StatusCode.UNAVAILABLE


def test_the_policy_retries_a_live_server_for_about_half_a_minute_at_most(listening):
    policy = server_watch.watched_policy(server_watch.port_watch("127.0.0.1", listening, "x"))
    error = Unavailable()
    assert policy.can_retry(error)
    state, waited = policy.to_state(), 0.0
    while True:
        wait = state.next_attempt()
        if wait is None:
            break
        waited += wait / 1000  # milliseconds
    # pyspark's own policy allows about ten minutes; jitter adds at most 0.5 s a retry
    assert 20 <= waited <= 30 + 0.5 * server_watch.MAX_RETRIES
    assert server_watch.server_loss() is None


def waited_seconds(policy) -> float:
    state, waited = policy.to_state(), 0.0
    while True:
        wait = state.next_attempt()
        if wait is None:
            return waited
        waited += wait / 1000  # milliseconds


def test_joining_a_live_port_that_answers_no_spark_connect_gives_up_within_seconds(listening):
    """The daemon's command falls back to Spark in its own process after these seconds."""
    joining = server_watch.watched_policy(server_watch.port_watch("127.0.0.1", listening, "x"),
                                          server_watch.JOIN_MAX_RETRIES)
    assert joining.can_retry(Unavailable())
    assert 3 <= waited_seconds(joining) <= 5 + 0.5 * server_watch.JOIN_MAX_RETRIES


def test_a_session_retries_briefly_while_joining_and_fully_once_joined(listening):
    class Client:
        def set_retry_policies(self, policies):
            self.policies = policies

    class Session:
        client = Client()

    watch = server_watch.port_watch("127.0.0.1", listening, "x")
    server_watch.watch_session(Session(), watch, joining=True)
    assert Session.client.policies[0].max_retries == server_watch.JOIN_MAX_RETRIES
    server_watch.watch_session(Session(), watch)
    assert Session.client.policies[0].max_retries == server_watch.MAX_RETRIES


def test_a_closed_port_stops_the_retries_and_says_why():
    port = closed_port()
    watch = server_watch.port_watch("127.0.0.1", port, "Restart it and run the command again.")
    with pytest.raises(DbtRuntimeError) as raised:  # in place of the gRPC error
        server_watch.watched_policy(watch).can_retry(Unavailable())
    assert raised.value.msg == server_watch.server_loss().message == (
        f"The Spark Connect server at 127.0.0.1:{port} stopped while this command ran (nothing "
        f"accepts connections on 127.0.0.1:{port} any more). Restart it and run the command "
        "again.")


def test_the_daemon_is_gone_when_one_of_its_processes_has_exited(listening):
    pid = gone_pid()
    watch = server_watch.process_watch("127.0.0.1", listening,
                                       {"watchdog": None, "Spark server": pid},
                                       "Run it again.", log="/w/.spark/daemon-spark.out")
    assert not watch.check()
    assert server_watch.server_loss().message == (
        f"The background Spark of this warehouse stopped while this command ran (its Spark "
        f"server process {pid} has exited). Run it again. Its output: "
        "/w/.spark/daemon-spark.out.")


def test_a_live_daemon_is_not_reported(listening):
    import os

    watch = server_watch.process_watch("127.0.0.1", listening, {"watchdog": os.getpid()}, "x")
    assert watch.check()
    assert server_watch.server_loss() is None


def test_dbt_reports_a_failed_statement_of_a_lost_server_in_one_line(monkeypatch):
    """Any statement failing once the watched server is gone (also a stream cut mid-answer,
    which no retry policy saw) gets the loss as its message, for a model as for SQL."""
    port = closed_port()
    server_watch._watch = server_watch.port_watch("127.0.0.1", port, "Restart it.")
    monkeypatch.setattr(error_messages, "record", lambda exc, title: None)
    failure = RuntimeError("<_MultiThreadedRendezvous of RPC that terminated with:\n"
                           "status = StatusCode.UNAVAILABLE\n details = \"Socket closed\">")
    expected = (f"The Spark Connect server at 127.0.0.1:{port} stopped while this command ran "
                f"(nothing accepts connections on 127.0.0.1:{port} any more). Restart it.")
    assert error_messages.spark_failure(failure) == expected
    assert error_messages.model_failure("orders", failure) == f"Model 'orders': {expected}"


def test_only_servers_on_this_machine_are_watched():
    assert server_watch.is_loopback("localhost") and server_watch.is_loopback("127.0.0.1")
    assert server_watch.is_loopback("[::1]")
    assert not server_watch.is_loopback("spark.example.com")


def test_a_watched_session_does_not_print_pyspark_s_retry_warning(listening, monkeypatch):
    import warnings

    class Client:
        def set_retry_policies(self, policies):
            self.policies = policies

    class Session:
        client = Client()

    monkeypatch.setattr(warnings, "filters", list(warnings.filters))
    server_watch.watch_session(Session(), server_watch.port_watch("127.0.0.1", listening, "x"))
    assert len(Session.client.policies) == 1
    with warnings.catch_warnings(record=True) as shown:
        warnings.filters[:] = [f for f in warnings.filters if f[0] == "ignore"]
        warnings.warn("[RETRIES_EXCEEDED] The maximum number of retries has been exceeded.")
        warnings.warn("another warning")
    assert [str(w.message) for w in shown] == ["another warning"]
