"""The Connect server's process environment: never a Spark Connect client's."""

from dbt.adapters.paimon.environments import connect_server


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
