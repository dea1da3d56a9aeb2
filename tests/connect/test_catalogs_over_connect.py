"""The JDBC, Hive Metastore and REST catalogs over Spark Connect (`method: connect` with `catalog:`):
dbt processes on a server of their own warehouse create, fill and read Paimon tables through
the catalog. A primary-key run commits in the dbt process; an append run commits in the
server's Python (docs/connect.md, "Where things run"), so both sides reach the catalog (and its
lock: `lock.enabled`; the REST server, with the profile's token). A real server and real dbt
processes; the Hive Metastore and the REST catalog server are the test process's
(tests/hive_metastore_server.py, tests/rest_catalog_server.py)."""
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.environments import connect_server
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests import rest_catalog_server
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.catalog.test_hive_catalog import Hive
from tests.integration.write.write_helpers import read_back, sorted_rows

MODELS = {
    "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
                  "select id, cast(id * {{ env_var('FACTOR', '10') }} as int) as amount "
                  "from range(5)",
    "events.sql": "{{ config(materialized='paimon_append') }}\n"
                  "select id, 'e' as kind from range(3)",
    "totals.sql": "{{ config(materialized='paimon_pk', primary_key='one') }}\n"
                  "select 1 as one, sum(amount) as total, "
                  "(select count(*) from {{ ref('events') }}) as events "
                  "from {{ ref('orders') }}",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("catalogs_over_connect") / "warehouse"
    running = connect_server.start(str(warehouse), free_port(), master="local[2]",
                                   conf={"spark.sql.shuffle.partitions": "2"})
    try:
        yield running
    finally:
        connect_server.stop(running.warehouse, running.port)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def build_twice(root: Path, warehouse: str, schema: str, catalog: dict) -> None:
    # the second run merges into, and appends to, the first's tables; the factor is an
    # environment variable, not a dbt var: a changed var makes dbt parse the whole project again
    for factor in (10, 100):
        run = run_dbt_process(root, "run", env={"FACTOR": str(factor)})
        assert run.returncode == 0, run.stdout
    options = parse_catalog(catalog).pypaimon_options()
    totals = read_back(TableRef(warehouse, schema, "totals", options))
    assert sorted_rows(totals, ["one"]) == [{"one": 1, "total": 1000, "events": 6}]
    shown = run_dbt_process(root, "show", "--inline",
                            "select count(*) as n from {{ ref('events') }}")
    assert shown.returncode == 0 and "| 6 |" in shown.stdout, shown.stdout


def profile(server, catalog: dict) -> str:
    lines = "".join(f"  {key}: '{value}'\n" for key, value in catalog.items())
    return (f"method: connect\nhost: '{server.url}'\nwarehouse: {server.warehouse}\n"
            f"catalog:\n{lines}")


def test_a_jdbc_catalog_over_connect(server, tmp_path):
    catalog = {"type": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
               "lock.enabled": "true"}
    root = write_project(tmp_path / "jdbc", "jdbc_connect", profile(server, catalog), MODELS)
    build_twice(root, server.warehouse, "jdbc_connect", catalog)
    import sqlite3

    with sqlite3.connect(tmp_path / "catalog.db") as con:
        listed = sorted(con.execute("SELECT database_name, table_name FROM paimon_tables"))
    assert listed == [("jdbc_connect", "events"), ("jdbc_connect", "orders"),
                      ("jdbc_connect", "totals")]


def test_a_hive_catalog_over_connect(server, tmp_path, hive_metastore):
    catalog = {"type": "hive", "uri": hive_metastore.uri, "lock.enabled": "true"}
    root = write_project(tmp_path / "hive", "hive_connect", profile(server, catalog), MODELS)
    build_twice(root, server.warehouse, "hive_connect", catalog)
    hive = Hive(hive_metastore, server.warehouse, "hive_connect")
    assert sorted(hive.call("get_all_tables", "hive_connect")) == ["events", "orders", "totals"]


def test_a_rest_catalog_over_connect(server, tmp_path):
    """Both commits reach the REST server: the primary-key run's from the dbt process, the
    append run's from the server's Python, each through the catalog's commit endpoint."""
    rest = rest_catalog_server.shared()
    name = rest.add_catalog(server.warehouse)  # the catalog's files: the profile's warehouse
    catalog = rest.options(name)
    root = write_project(tmp_path / "rest", "rest_connect", profile(server, catalog), MODELS)
    build_twice(root, server.warehouse, "rest_connect", catalog)
    commits = [path for method, path in rest.requests
               if method == "POST" and path.endswith("/commit")]
    for table, runs in (("orders", 2), ("events", 2), ("totals", 2)):
        path = f"/v1/{name}/databases/rest_connect/tables/{table}/commit"
        assert commits.count(path) >= runs, (table, commits)


def test_catalogs_yml_catalogs_over_connect(server, tmp_path):
    """A project whose profile's catalog is the server warehouse's folders and whose
    `catalog_name: marts` models live in a catalogs.yml JDBC catalog with a warehouse of its
    own: the append model's commit runs in the server's Python, which reaches that catalog
    through the options its table carries."""
    models = {**MODELS,
              "events.sql": "{{ config(materialized='paimon_append', catalog_name='marts', "
                            "schema='marts') }}\nselect id, 'e' as kind from range(3)",
              "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2, "
                            "catalog_name='marts', schema='marts') }}\n"
                            "select id, cast(id * {{ env_var('FACTOR', '10') }} as int) as amount "
                            "from range(5)"}
    root = write_project(tmp_path / "routed", "routed", profile(server, {"type": "filesystem"}),
                         models)
    (root / "catalogs.yml").write_text(
        "catalogs:\n  - name: marts\n    write_integrations:\n      - name: marts_jdbc\n"
        "        catalog_type: jdbc\n        adapter_properties:\n"
        f"          uri: 'jdbc:sqlite:{tmp_path / 'marts.db'}'\n"
        f"          warehouse: '{tmp_path / 'marts_warehouse'}'\n"
        "          lock.enabled: true\n")
    for factor in (10, 100):
        run = run_dbt_process(root, "run", env={"FACTOR": str(factor)})
        assert run.returncode == 0, run.stdout
    totals = read_back(TableRef(server.warehouse, "routed", "totals", {}))
    assert sorted_rows(totals, ["one"]) == [{"one": 1, "total": 1000, "events": 6}]
    import sqlite3

    with sqlite3.connect(tmp_path / "marts.db") as con:
        listed = sorted(con.execute("SELECT database_name, table_name FROM paimon_tables"))
    assert listed == [("routed_marts", "events"), ("routed_marts", "orders")]
    assert (tmp_path / "marts_warehouse" / "routed_marts.db" / "events").is_dir()
    assert not (Path(server.warehouse) / "routed_marts.db").exists()
