"""The Connect-mode environment variables: the Connect server's process never inherits a
client's, and a process that joined a Connect session for a while gets its own back."""

import os

import pytest

from dbt.adapters.paimon.environments import connect, connect_server


def test_the_server_never_inherits_client_mode_variables(monkeypatch, tmp_path):
    # a user's shell that uses Spark Connect, or a process that has joined a Connect session
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15002")
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    monkeypatch.setenv("SPARK_LOCAL_REMOTE", "1")
    monkeypatch.setenv("SPARK_API_MODE", "connect")
    monkeypatch.setenv("DBT_PAIMON_UNRELATED", "kept")
    server = connect_server.server_for(str(tmp_path), 15999)
    env = connect_server.server_environment(server, "local[1]")
    assert not set(connect_server.CLIENT_MODE_VARIABLES) & set(env)
    assert env["DBT_PAIMON_UNRELATED"] == "kept"
    assert env["SPARK_PID_DIR"] == server.state_dir


@pytest.mark.parametrize("before", [None, "sc://127.0.0.1:15002"], ids=["unset", "set"])
def test_joining_a_session_for_a_while_restores_the_connect_mode_variables(monkeypatch, before):
    for key in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE"):
        if before is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, before)
    saved = connect.connect_mode_env()
    # what pyspark and ConnectEnvironment do on joining a session
    monkeypatch.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
    monkeypatch.setenv("SPARK_REMOTE", "sc://127.0.0.1:15003/;session_id=x")
    connect.restore_connect_mode_env(saved)
    assert os.environ.get("SPARK_CONNECT_MODE_ENABLED") == before
    assert os.environ.get("SPARK_REMOTE") == before
