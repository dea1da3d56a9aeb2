"""A dbt project over three Paimon catalogs (catalogs.yml, catalog_integrations.py): the
shop's CDC table is a source() in a Hive Metastore catalog (registered there as Paimon Java's
HiveCatalog does), the marts go to a JDBC catalog on SQLite (`catalog_name`), the staging and
reporting models stay in the profile's filesystem catalog. One `dbt build` in a real dbt
process reads and writes across the three; each table is registered in its own catalog and
nowhere else.

Bad input fails `dbt parse` (no Spark) with the node, the schema and the catalogs named: a
schema placed in two catalogs, a catalog_name catalogs.yml does not define, a bad option of a
catalog (also in dbt's v2 catalogs.yml form, which reaches the same integrations)."""
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests.functional.console_output import run_dbt_process, write_project
from tests.integration.catalog.test_hive_catalog import Hive, shop_events_table, write_events
from tests.integration.write.write_helpers import read_back, sorted_rows

NAME = "catalogs_project"
SHOP = "shop_cdc"                # the Hive catalog's database (a source's schema)
MARTS = f"{NAME}_marts"          # dbt's schema of the models with schema='marts'
MODELS = {
    "sources.yml": (f"version: 2\nsources:\n  - name: shop\n    schema: {SHOP}\n"
                    "    config:\n      catalog_name: shop\n"
                    "    tables:\n      - name: events\n"),
    "stg_events.sql": "{{ config(materialized='paimon_pk', primary_key='id') }}\n"
                      "select id, upper(name) as name from {{ source('shop', 'events') }}",
    "orders_mart.sql": "{{ config(materialized='paimon_pk', primary_key='id', schema='marts', "
                       "catalog_name='marts') }}\n"
                       "select id, name, length(name) as size from {{ ref('stg_events') }}",
    "report.sql": "{{ config(materialized='paimon_pk', primary_key='one') }}\n"
                  "select 1 as one, count(*) as orders, sum(size) as size "
                  "from {{ ref('orders_mart') }}",
    "marts.yml": ("version: 2\nmodels:\n  - name: orders_mart\n    columns:\n"
                  "      - name: id\n        data_tests: [not_null, unique]\n"),
}
PROFILE = ("warehouse: paimon_warehouse\nspark_master: 'local[2]'\n"
           "spark_conf:\n  spark.sql.shuffle.partitions: '2'\n  spark.driver.memory: '512m'")


def catalogs_yml(hive_uri: str) -> str:
    return ("catalogs:\n"
            "  - name: shop\n    write_integrations:\n      - name: shop_metastore\n"
            "        catalog_type: hive\n        adapter_properties:\n"
            f"          uri: '{hive_uri}'\n          warehouse: shop_warehouse\n"
            "  - name: marts\n    write_integrations:\n      - name: marts_jdbc\n"
            "        catalog_type: jdbc\n        adapter_properties:\n"
            "          uri: 'jdbc:sqlite:marts_catalog.db'\n          warehouse: marts_warehouse\n")


@pytest.fixture(scope="module")
def project(tmp_path_factory, hive_metastore) -> Path:
    root = write_project(tmp_path_factory.mktemp("catalogs"), NAME, PROFILE, MODELS)
    (root / "catalogs.yml").write_text(catalogs_yml(hive_metastore.uri))
    shop_events_table(Hive(hive_metastore, str(root / "shop_warehouse"), SHOP),
                      {"id": [1, 2, 3], "name": ["ab", "c", "def"]})
    return root


def test_one_build_reads_and_writes_three_catalogs(project, hive_metastore):
    build = run_dbt_process(project, "build")
    assert build.returncode == 0, build.stdout
    assert "PASS=5" in build.stdout, build.stdout  # 3 models, 2 tests

    default = str(project / "paimon_warehouse")
    marts = str(project / "marts_warehouse")
    jdbc = parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{project}/marts_catalog.db"}
                         ).pypaimon_options()
    # the mart is in the JDBC catalog (its files under the catalog's warehouse) ...
    assert wh.list_tables(marts, MARTS, catalog_options=jdbc) == ["orders_mart"]
    mart = read_back(TableRef(marts, MARTS, "orders_mart", jdbc))
    assert sorted_rows(mart, ["id"]) == [{"id": 1, "name": "AB", "size": 2},
                                         {"id": 2, "name": "C", "size": 1},
                                         {"id": 3, "name": "DEF", "size": 3}]
    # ... and nowhere else: not in the profile's filesystem catalog, not in the metastore
    assert MARTS not in listing.list_databases(default)
    assert sorted(listing.list_tables(default, NAME)) == ["report", "stg_events"]
    shop = Hive(hive_metastore, str(project / "shop_warehouse"), SHOP)
    assert shop.call("get_all_tables", SHOP) == ["events"]
    assert MARTS not in shop.call("get_all_databases")
    report = read_back(TableRef(default, NAME, "report", {}))
    assert sorted_rows(report, ["one"]) == [{"one": 1, "orders": 3, "size": 6}]

    # the shop commits again; a new dbt process reads every catalog at its new snapshot
    write_events(wh.open_table(shop.warehouse, SHOP, "events", shop.options()),
                 {"id": [4], "name": ["ghij"]})
    run = run_dbt_process(project, "run")
    assert run.returncode == 0, run.stdout
    report = read_back(TableRef(default, NAME, "report", {}))
    assert sorted_rows(report, ["one"]) == [{"one": 1, "orders": 4, "size": 10}]


def _parse(project: Path):
    return run_dbt_process(project, "parse", "--no-partial-parse")


@pytest.fixture
def small_project(tmp_path) -> Path:
    models = {"a.sql": "{{ config(materialized='paimon_pk', primary_key='id', "
                       "catalog_name='marts') }}\nselect 1 as id",
              "b.sql": "{{ config(materialized='paimon_pk', primary_key='id') }}\nselect 1 as id"}
    root = write_project(tmp_path, "small", PROFILE, models)
    (root / "catalogs.yml").write_text(
        "catalogs:\n  - name: marts\n    write_integrations:\n      - name: marts_jdbc\n"
        "        catalog_type: jdbc\n        adapter_properties:\n"
        "          uri: 'jdbc:sqlite:marts.db'\n")
    return root


def test_a_schema_in_two_catalogs_fails_the_parse(small_project):
    parse = _parse(small_project)
    assert parse.returncode != 0, parse.stdout
    assert "Schema 'small' is in two catalogs" in parse.stdout, parse.stdout
    assert "model.small.a" in parse.stdout and "model.small.b" in parse.stdout
    assert not (small_project / "paimon_warehouse").exists()


def test_an_undefined_catalog_and_a_bad_option_fail_the_parse(small_project):
    (small_project / "models" / "b.sql").write_text(
        "{{ config(materialized='paimon_pk', primary_key='id', schema='other', "
        "catalog_name='lake') }}\nselect 1 as id")
    parse = _parse(small_project)
    assert parse.returncode != 0, parse.stdout
    assert "model.small.b sets catalog_name: 'lake', which catalogs.yml does not define" \
        in parse.stdout, parse.stdout

    # dbt's v2 form reaches the same integration, and its options are checked
    (small_project / "catalogs.yml").write_text(
        "catalogs:\n  - name: marts\n    type: jdbc\n    table_format: default\n"
        "    config:\n      paimon:\n        uri: 'jdbc:sqlite:marts.db'\n"
        "        lock.enabeld: true\n")
    with open(small_project / "dbt_project.yml", "a") as project_file:
        project_file.write("flags:\n  use_catalogs_v2: true\n")
    parse = _parse(small_project)
    assert parse.returncode != 0, parse.stdout
    assert "catalogs.yml catalog 'marts'" in parse.stdout, parse.stdout
    assert "lock.enabeld" in parse.stdout, parse.stdout
