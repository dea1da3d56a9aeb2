"""The JDBC, Hive Metastore and REST catalogs over Spark Connect (`method: connect`): one project
on a server of its own warehouse whose profile's `catalog:` is JDBC (SQLite) and whose
catalogs.yml places a schema in a Hive Metastore catalog and another in a REST catalog, each
with a warehouse of its own. dbt processes create, fill and read a Paimon table pair in each
catalog. A primary-key run commits in the dbt process; an append run commits in the server's
Python (docs/connect.md, "Where things run"), which reaches the table's catalog through the
options its table carries: so both sides reach each catalog (with its lock: `lock.enabled`; the
REST server, with the token). The profile's catalog and catalogs.yml's reach the server by the
same code (the registry's catalog options and the tables' own options), and each catalog type's
code does not depend on the session kind: one project covers the three types and both ways of
naming a catalog in three dbt processes. A real server and real dbt processes; the Hive
Metastore and the REST catalog server are the test process's (tests/hive_metastore_server.py,
tests/rest_catalog_server.py)."""
import sqlite3
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.environments import connect_server
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests import process_ledger, rest_catalog_server
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.catalog.test_hive_catalog import Hive
from tests.integration.write.write_helpers import read_back, sorted_rows

NAME = "three_catalogs"
# dbt's schema of each catalog's models: the profile's (JDBC) and catalogs.yml's two
SCHEMAS = {"jdbc": NAME, "hive": f"{NAME}_hive", "rest": f"{NAME}_rest"}


def models() -> dict:
    """The same three models in each catalog: a primary-key table, an append table and a total
    of both (named alike in each schema: `alias`)."""
    found = {}
    for kind in SCHEMAS:
        place = "" if kind == "jdbc" else f", schema='{kind}', catalog_name='{kind}'"
        found.update({
            f"{kind}_orders.sql": f"{{{{ config(materialized='paimon_pk', primary_key='id', "
                                  f"buckets=2, alias='orders'{place}) }}}}\n"
                                  "select id, cast(id * {{ env_var('FACTOR', '10') }} as int) "
                                  "as amount from range(5)",
            f"{kind}_events.sql": f"{{{{ config(materialized='paimon_append', "
                                  f"alias='events'{place}) }}}}\n"
                                  "select id, 'e' as kind from range(3)",
            f"{kind}_totals.sql": f"{{{{ config(materialized='paimon_pk', primary_key='one', "
                                  f"alias='totals'{place}) }}}}\n"
                                  "select 1 as one, sum(amount) as total, "
                                  f"(select count(*) from {{{{ ref('{kind}_events') }}}}) "
                                  f"as events from {{{{ ref('{kind}_orders') }}}}"})
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("catalogs_over_connect") / "warehouse"
    with process_ledger.server_start("spark-connect"):
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


def option_lines(catalog: dict, indent: int) -> str:
    return "".join(f"{' ' * indent}{key}: '{value}'\n" for key, value in catalog.items())


def test_jdbc_hive_and_rest_catalogs_over_connect(server, tmp_path, hive_metastore):
    rest = rest_catalog_server.shared()
    rest_name = rest.add_catalog(str(tmp_path / "rest_warehouse"))
    catalogs = {
        "jdbc": {"type": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}",
                 "lock.enabled": "true"},
        "hive": {"type": "hive", "uri": hive_metastore.uri,
                 "warehouse": str(tmp_path / "hive_warehouse"), "lock.enabled": "true"},
        # a REST catalog's server places its tables; dbt-paimon is told where (warehouse-path)
        "rest": {**rest.options(rest_name), "warehouse-path": str(tmp_path / "rest_warehouse")}}
    profile = (f"method: connect\nhost: '{server.url}'\nwarehouse: {server.warehouse}\n"
               f"catalog:\n{option_lines(catalogs['jdbc'], 2)}")
    root = write_project(tmp_path / "project", NAME, profile, models())
    integrations = "".join(
        f"  - name: {kind}\n    write_integrations:\n      - name: {kind}_catalog\n"
        f"        catalog_type: {kind}\n        adapter_properties:\n"
        f"{option_lines({k: v for k, v in catalogs[kind].items() if k != 'type'}, 10)}"
        for kind in ("hive", "rest"))
    (root / "catalogs.yml").write_text(f"catalogs:\n{integrations}")

    # the second run merges into, and appends to, the first's tables; the factor is an
    # environment variable, not a dbt var: a changed var makes dbt parse the whole project again
    for factor in (10, 100):
        run = run_dbt_process(root, "run", env={"FACTOR": str(factor)})
        assert run.returncode == 0, run.stdout
    # each catalog's tables' files: the profile's warehouse, catalogs.yml's own ones
    files = {"jdbc": server.warehouse, "hive": catalogs["hive"]["warehouse"],
             "rest": catalogs["rest"]["warehouse-path"]}
    for kind, schema in SCHEMAS.items():
        totals = read_back(TableRef(files[kind], schema, "totals",
                                    parse_catalog(catalogs[kind]).pypaimon_options()))
        assert sorted_rows(totals, ["one"]) == [{"one": 1, "total": 1000, "events": 6}], kind
    shown = run_dbt_process(root, "show", "--inline",
                            "select (select count(*) from {{ ref('jdbc_events') }}) as j, "
                            "(select count(*) from {{ ref('hive_events') }}) as h, "
                            "(select count(*) from {{ ref('rest_events') }}) as r")
    assert shown.returncode == 0 and "| 6 | 6 | 6 |" in shown.stdout, shown.stdout

    # each table is registered in its own catalog, and its files are in that catalog's warehouse
    with sqlite3.connect(tmp_path / "catalog.db") as con:
        listed = sorted(con.execute("SELECT database_name, table_name FROM paimon_tables"))
    assert listed == [(NAME, "events"), (NAME, "orders"), (NAME, "totals")]
    hive = Hive(hive_metastore, catalogs["hive"]["warehouse"], SCHEMAS["hive"])
    assert sorted(hive.call("get_all_tables", SCHEMAS["hive"])) == ["events", "orders", "totals"]
    # both runs' commits of each table reached the REST server: the primary-key runs' from the
    # dbt process, the append runs' from the server's Python
    commits = [path for method, path in rest.requests
               if method == "POST" and path.endswith("/commit")]
    for table in ("orders", "events", "totals"):
        path = f"/v1/{rest_name}/databases/{SCHEMAS['rest']}/tables/{table}/commit"
        assert commits.count(path) >= 2, (table, commits)
    for kind in ("hive", "rest"):
        assert (Path(files[kind]) / f"{SCHEMAS[kind]}.db" / "events").is_dir(), kind
        assert not (Path(server.warehouse) / f"{SCHEMAS[kind]}.db").exists(), kind
