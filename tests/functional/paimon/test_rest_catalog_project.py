"""A dbt project on Paimon's REST catalog, against the test process's REST catalog server
(tests/rest_catalog_server.py): the profile's `catalog: {type: rest, ...}` holds the staging
schema, a catalogs.yml REST catalog of its own (`warehouse-path`: another folder) the marts.
One `dbt build` in a real dbt process creates a paimon_pk model and a table model through the
server (each snapshot published by its commit endpoint) and runs their data tests; then a fresh
pypaimon RESTCatalog client reads both tables, and a second dbt process reads them by name."""

import pytest

from tests import rest_catalog_server
from tests.functional.console_output import run_dbt_process, write_project

NAME = "rest_project"
MARTS = f"{NAME}_marts"
MODELS = {
    "orders.sql": "{{ config(materialized='paimon_pk', primary_key='id', buckets=2) }}\n"
                  "select id, cast(id * 10 as int) as amount from range(5)",
    "orders_total.sql": "{{ config(materialized='table', schema='marts', catalog_name='marts') }}\n"
                        "select count(*) as n, sum(amount) as total from {{ ref('orders') }}",
    "schema.yml": ("version: 2\nmodels:\n"
                   "  - name: orders\n    columns:\n"
                   "      - name: id\n        data_tests: [not_null, unique]\n"
                   "  - name: orders_total\n    columns:\n"
                   "      - name: n\n        data_tests:\n"
                   "          - accepted_values:\n              arguments:\n"
                   "                values: [5]\n"),
}


def profile(catalog) -> str:
    keys = "".join(f"  {k}: '{v}'\n" for k, v in catalog.items())
    return ("warehouse: paimon_warehouse\n"
            f"catalog:\n{keys}"
            "spark_master: 'local[2]'\n"
            "spark_conf:\n  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")


def catalogs_yml(catalog) -> str:
    keys = "".join(f"          {k}: '{v}'\n" for k, v in catalog.items() if k != "type")
    return ("catalogs:\n  - name: marts\n    write_integrations:\n      - name: marts_rest\n"
            "        catalog_type: rest\n        adapter_properties:\n"
            f"{keys}          warehouse-path: marts_warehouse\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    server = rest_catalog_server.shared()
    root = tmp_path_factory.mktemp("rest")
    main = server.add_catalog(str(root / "paimon_warehouse"))
    marts = server.add_catalog(str(root / "marts_warehouse"))
    write_project(root, NAME, profile(server.options(main)), MODELS)
    (root / "catalogs.yml").write_text(catalogs_yml(server.options(marts)))
    return root, server, main, marts


def read(server, name: str, table: str):
    from pypaimon import CatalogFactory

    catalog = CatalogFactory.create({"metastore": "rest", "uri": server.uri, "warehouse": name,
                                     "token.provider": "bear", "token": server.token})
    loaded = catalog.get_table(table)
    builder = loaded.new_read_builder()
    return loaded, builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist()


def test_dbt_build_on_rest_catalogs_and_a_second_process_reads_it(project):
    root, server, main, marts = project
    build = run_dbt_process(root, "build")
    assert build.returncode == 0, build.stdout
    assert "Completed successfully" in build.stdout
    assert "PASS=5" in build.stdout, build.stdout  # 2 models, 3 data tests

    # each catalog lists its own schema's table; the server published the commits
    commits = {path for method, path in server.requests if method == "POST"
               and path.endswith("/commit")}
    assert f"/v1/{main}/databases/{NAME}/tables/orders/commit" in commits
    assert f"/v1/{marts}/databases/{MARTS}/tables/orders_total/commit" in commits

    # a fresh pypaimon client, as another engine opens the catalogs
    orders, rows = read(server, main, f"{NAME}.orders")
    assert orders.primary_keys == ["id"] and orders.table_path == \
        f"{root}/paimon_warehouse/{NAME}.db/orders"
    assert sorted((r["id"], r["amount"]) for r in rows) == [(i, i * 10) for i in range(5)]
    total, rows = read(server, marts, f"{MARTS}.orders_total")
    assert total.table_path == f"{root}/marts_warehouse/{MARTS}.db/orders_total"
    assert rows == [{"n": 5, "total": 100}]

    # a second dbt process finds both tables by name through the catalogs
    show = run_dbt_process(root, "show", "--inline",
                           "select t.total, count(o.id) as orders from "
                           "{{ ref('orders_total') }} t cross join {{ ref('orders') }} o "
                           "group by t.total")
    assert show.returncode == 0, show.stdout
    assert "| 100 |      5 |" in show.stdout.replace("|   100 |", "| 100 |"), show.stdout
