"""A command through the background daemon runs on the code of ``method: connect``: once the
daemon's URL is known (server/daemon.py finds or starts it), the command opens the same
ConnectEnvironment a `method: connect` profile on that URL opens, with the same warehouse,
Spark settings and catalog; only the server's death watch is the daemon's own.

This is why tests/reliability/test_lifecycle_across_commands.py walks the lifecycle in session
mode and through the daemon, and tests/connect runs lifecycle commands on an explicit Connect
server (test_lifecycle_commands_state_machine.py): the walk-through over an explicit server
would run the daemon mode's code again."""

from dbt.adapters.paimon import environments
from dbt.adapters.paimon.credentials import PaimonCredentials
from dbt.adapters.paimon.environments import connect, connect_client, daemon_environment
from dbt.adapters.paimon.server import daemon

PROFILE = {"schema": "analytics", "spark_conf": {"spark.sql.shuffle.partitions": "3"},
           "catalog": {"type": "filesystem"}}


def credentials(profile, project):
    made = PaimonCredentials.from_dict(profile)
    made.resolve_paths(str(project))  # as the adapter does on loading the profile
    return made


def test_a_daemon_command_opens_the_connect_environment_of_its_url(monkeypatch, tmp_path):
    warehouse = str(tmp_path / "warehouse")
    url = connect_client.parse_connect_url("sc://127.0.0.1:15123/;token=t")
    monkeypatch.setenv("DBT_PAIMON_DAEMON", "on")
    through_daemon = environments.create(credentials({**PROFILE, "warehouse": warehouse},
                                                     tmp_path))
    assert isinstance(through_daemon, daemon_environment.DaemonEnvironment)
    explicit = environments.create(credentials(
        {**PROFILE, "warehouse": warehouse, "method": "connect", "host": str(url)}, tmp_path))
    assert isinstance(explicit, connect.ConnectEnvironment)

    opened = []
    monkeypatch.setattr(daemon, "acquire", lambda plan, announce: url)
    monkeypatch.setattr(connect.ConnectEnvironment, "_open",
                        lambda self: opened.append(self) or "registry")
    assert through_daemon._open() == "registry"
    [used] = opened
    assert type(used) is connect.ConnectEnvironment
    assert (used.url, used.warehouse, used.catalog_options) == (
        explicit.url, explicit.warehouse, explicit.catalog_options)
    assert used.spark_conf == through_daemon.embedded.spark_conf
    assert used.spark_conf["spark.sql.shuffle.partitions"] == explicit.spark_conf[
        "spark.sql.shuffle.partitions"]
    assert used.watch is not None  # the daemon's processes, not the port alone
