"""A profile's spark_conf over dbt-paimon's own settings (spark_conf.with_profile_conf), in the
embedded session and a Connect server alike."""

from dbt.adapters.paimon.environments import connect_server
from dbt.adapters.paimon.environments.spark_conf import (DRIVER_JAVA_OPTIONS, default_spark_conf,
                                                         with_profile_conf)


def test_the_profile_wins_except_that_driver_jvm_options_are_appended(tmp_path):
    defaults = default_spark_conf("local[2]", str(tmp_path))
    merged = with_profile_conf(defaults, {"spark.sql.shuffle.partitions": "3",
                                          DRIVER_JAVA_OPTIONS: "-Xss4m -XX:TieredStopAtLevel=4"})
    assert merged["spark.sql.shuffle.partitions"] == "3"
    own = defaults[DRIVER_JAVA_OPTIONS]
    assert "-Dlog4j2.configurationFile=" in own and "-Dderby.system.home=" in own
    # the JVM takes the last of a repeated flag: the profile's come last
    assert merged[DRIVER_JAVA_OPTIONS] == f"{own} -Xss4m -XX:TieredStopAtLevel=4"
    assert defaults[DRIVER_JAVA_OPTIONS] == own  # the defaults are not changed
    assert with_profile_conf(defaults, {}) == defaults


def test_a_connect_server_keeps_its_log_configuration_beside_the_users_jvm_options(tmp_path):
    server = connect_server.server_for(str(tmp_path), 15998)
    settings = connect_server.server_conf(server, "local[1]", {DRIVER_JAVA_OPTIONS: "-Xss4m"})
    options = settings[DRIVER_JAVA_OPTIONS]
    assert "-Dlog4j2.configurationFile=" in options and options.endswith(" -Xss4m")


def test_a_connect_server_maps_the_class_data_archive_once_one_is_built(tmp_path, monkeypatch):
    """`dbt-paimon server start`'s server and the daemon's (both from server_conf) map the
    driver's archive when a session start has built it, never dump it, and keep the user's JVM
    options last."""
    from dbt.adapters.paimon.environments import jvm_cds

    server = connect_server.server_for(str(tmp_path / "warehouse"), 15998)
    cache = tmp_path / "cds"
    monkeypatch.setenv(jvm_cds.DIR_ENV, str(cache))

    def options():
        return connect_server.server_conf(server, "local[1]",
                                          {DRIVER_JAVA_OPTIONS: "-Xss4m"})[DRIVER_JAVA_OPTIONS]

    assert "SharedArchiveFile" not in options()  # none built yet: none used, none dumped
    assert "ArchiveClassesAtExit" not in options()
    cache.mkdir()
    archive = cache / f"{jvm_cds.archive_key()}.jsa"
    archive.write_bytes(jvm_cds.MAGIC + b"\0" * 64)
    built = options()
    assert f"-XX:SharedArchiveFile={archive}" in built and "-XX:+VerifySharedSpaces" in built
    assert built.endswith(" -Xss4m") and "ArchiveClassesAtExit" not in built
    monkeypatch.setenv(jvm_cds.DIR_ENV, "off")
    assert "SharedArchiveFile" not in options()
