"""catalogs.yml integrations (catalog_integrations.py): options checked when dbt loads them,
and which catalog holds each schema of the project (catalog_routes)."""
from types import SimpleNamespace

import pytest
from dbt.adapters.catalogs import CatalogIntegrationClient
from dbt.adapters.catalogs._integration import CatalogWriteIntegrationConfig
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon.catalog_integrations import (CATALOG_INTEGRATIONS,
                                                      PaimonCatalogIntegration, catalog_routes)


def integration(catalog_type="jdbc", **fields):
    client = CatalogIntegrationClient(CATALOG_INTEGRATIONS)
    properties = fields.pop("adapter_properties", {"uri": "jdbc:sqlite:marts.db"})
    return client.add(CatalogWriteIntegrationConfig(
        name=fields.pop("name", "marts"), catalog_type=catalog_type,
        adapter_properties=properties, **fields))


def test_an_integration_holds_its_paimon_catalog_and_routes_relative_paths_to_the_project():
    marts = integration(adapter_properties={"uri": "jdbc:sqlite:marts.db",
                                            "warehouse": "marts_wh", "lock.enabled": True})
    route = marts.route("/project", "/project/default_wh", {"fs.s3.region": "eu"})
    assert (route.name, route.warehouse) == ("marts", "/project/marts_wh")
    assert route.options == {"fs.s3.region": "eu", "metastore": "jdbc",
                             "uri": "jdbc:sqlite:/project/marts.db", "lock.enabled": "true"}
    assert marts.build_relation(None).catalog_name == "marts"
    assert marts.table_format == "paimon" and marts.allows_writes


def test_without_a_warehouse_the_profile_s_is_used():
    hive = integration("HIVE", adapter_properties={"uri": "thrift://metastore:9083"})
    route = hive.route("/project", "/data/wh", {})
    assert route.warehouse == "/data/wh" and route.options["metastore"] == "hive"


@pytest.mark.parametrize("fields, message", [
    ({"adapter_properties": {}}, "catalog type 'jdbc' needs `uri`"),
    ({"adapter_properties": {"uri": "jdbc:sqlite:x.db", "colour": "blue"}},
     "does not take option(s) colour"),
    ({"adapter_properties": {"uri": "jdbc:sqlite:x.db", "type": "hive"}},
     "name the Paimon catalog kind with catalog_type"),
    ({"table_format": "iceberg"}, "table_format 'iceberg' is not a Paimon table format"),
    ({"external_volume": "vol"}, "external_volume is not used by Paimon catalogs"),
    ({"file_format": "orc"}, "file_format is a table option in Paimon"),
    ({"catalog_database": "db"}, "catalog_database has no meaning"),
])
def test_bad_options_are_refused_with_the_catalog_named(fields, message):
    with pytest.raises(DbtRuntimeError) as raised:
        integration(**fields)
    assert "catalogs.yml catalog 'marts'" in str(raised.value)
    assert message in str(raised.value)


def test_a_catalog_type_paimon_does_not_have_is_dbts_not_supported_error():
    with pytest.raises(Exception, match="glue"):
        integration("glue")


def test_a_rest_catalog_keeps_its_name_and_finds_its_files_at_its_warehouse_path():
    rest = integration("rest", adapter_properties={
        "uri": "http://rest:8080", "warehouse": "shop", "token.provider": "bear",
        "token": "t"})
    route = rest.route("/project", "/data/wh", {"fs.s3.region": "eu"})
    assert route.warehouse == "/data/wh"  # the profile's by default
    located = integration("rest", adapter_properties={
        "uri": "http://rest:8080", "warehouse": "shop", "warehouse-path": "shop_files",
        "token.provider": "bear", "token": "t"})
    assert located.route("/project", "/data/wh", {}).warehouse == "/project/shop_files"
    assert route.options == {"fs.s3.region": "eu", "metastore": "rest",
                             "uri": "http://rest:8080", "warehouse": "shop",
                             "token.provider": "bear", "token": "t"}
    with pytest.raises(DbtRuntimeError,
                       match="catalogs.yml catalog 'marts'.*needs `token.provider`"):
        integration("rest", adapter_properties={"uri": "http://rest:8080", "warehouse": "w"})


def node(unique_id, schema, catalog=None, kind="model", materialized="table"):
    config = {"materialized": materialized}
    if catalog is not None:
        config["catalog_name"] = catalog
    return SimpleNamespace(unique_id=unique_id, schema=schema, resource_type=kind,
                           config=SimpleNamespace(get=config.get, materialized=materialized))


def routes_of(nodes, defined=("marts", "shop")):
    made = []

    def integration_of(name):
        if name not in defined:
            raise KeyError(name)
        return integration(name=name)

    def route_of(found: PaimonCatalogIntegration):
        made.append(found.name)
        return found.route("/p", "/p/wh", {})

    return catalog_routes(nodes, integration_of, route_of), made


def test_each_schema_goes_to_the_catalog_its_nodes_name_once_per_catalog():
    routes, made = routes_of([
        node("model.p.a", "Marts", "marts"), node("model.p.b", "marts", "marts"),
        node("source.p.shop.events", "shop_cdc", "shop", kind="source"),
        node("model.p.c", "staging"), node("model.p.e", "eph", "nowhere", materialized="ephemeral"),
        node("test.p.t", "marts", "shop", kind="test")])
    assert {schema: route.name for schema, route in routes.items()} == {
        "marts": "marts", "shop_cdc": "shop"}
    assert made == ["marts", "shop"]


@pytest.mark.parametrize("second", [None, "shop"])
def test_a_schema_in_two_catalogs_is_refused_naming_both_nodes(second):
    with pytest.raises(CompilationError) as raised:
        routes_of([node("model.p.a", "marts", "marts"), node("seed.p.b", "marts", second,
                                                              kind="seed")])
    text = str(raised.value)
    assert "Schema 'marts' is in two catalogs" in text
    assert "model model.p.a places it in catalog 'marts'" in text
    assert f"seed seed.p.b in {'catalog ' + repr(second) if second else 'the profile'}" in text


def test_an_undefined_catalog_names_the_node():
    with pytest.raises(CompilationError, match="model model.p.a sets catalog_name: 'lake', "
                                               "which catalogs.yml does not define"):
        routes_of([node("model.p.a", "marts", "lake")])
