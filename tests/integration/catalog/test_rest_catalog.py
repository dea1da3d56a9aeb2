"""A warehouse whose tables are listed by Paimon's REST catalog (catalog/rest_catalog.py), against
the test process's REST catalog server (tests/rest_catalog_server.py, a catalog of its own per
test): tables are created, written (the real write path, both executors; each snapshot
published by the server's commit endpoint), listed, altered, renamed and dropped through the
server; a fresh pypaimon RESTCatalog reads what was written; a folder the server does not list
is not a table; a bad uri, token or catalog name stops with a message naming the server, and a
server that keeps tables elsewhere than <warehouse>/<db>.db/<table> is refused."""
import os
import socket

import pyarrow as pa
import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.catalog.config import parse_catalog
from dbt.adapters.paimon.runtime import PaimonConfigError
from dbt.adapters.paimon.format.errors import (CatalogUnreachableError, PaimonFormatError,
                                               TableNotFoundError)
from dbt.adapters.paimon.write import write_primary_key_run
from tests import rest_catalog_server
from tests.integration.write.write_helpers import read_back, sorted_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())])


@pytest.fixture
def rest(tmp_path):
    """(warehouse, catalog options, the server, the catalog's name): a catalog of the server
    whose tables live in this test's warehouse folder."""
    server = rest_catalog_server.shared()
    warehouse = str(tmp_path / "warehouse")
    name = server.add_catalog(warehouse)
    return warehouse, parse_catalog(server.options(name)).pypaimon_options(), server, name


def rows(spark, *pairs):
    return spark.createDataFrame(list(pairs), "id long, name string")


def commits(server, name):
    return [path for method, path in server.requests
            if method == "POST" and path.startswith(f"/v1/{name}/") and path.endswith("/commit")]


@pytest.mark.parametrize("write_path", ["in_process", "distributed"])
def test_a_table_is_created_written_and_listed_through_the_server(spark, rest, write_path):
    from pypaimon import CatalogFactory

    warehouse, options, server, name = rest
    wh.create_table(warehouse, "db", "orders", SCHEMA, primary_keys=["id"],
                    options={"bucket": "2"}, catalog_options=options)
    assert listing.list_databases(warehouse, options) == ["db"]
    assert listing.list_tables(warehouse, "db", options) == ["orders"]
    assert listing.latest_schema_id(warehouse, "db", "orders", options) == 0

    location = TableRef(warehouse, "db", "orders", options)
    write_primary_key_run(spark, rows(spark, (1, "a"), (2, "b")), location, write_path=write_path)
    write_primary_key_run(spark, rows(spark, (2, "B"), (3, "c")), location, write_path=write_path)
    expected = [{"id": 1, "name": "a"}, {"id": 2, "name": "B"}, {"id": 3, "name": "c"}]
    assert sorted_rows(read_back(location), ["id"]) == expected
    # the server published both snapshots, as files where Paimon's readers look for them
    assert commits(server, name) == [f"/v1/{name}/databases/db/tables/orders/commit"] * 2
    assert listing.latest_snapshot_id(warehouse, "db", "orders") == 2

    # a fresh pypaimon client of the same catalog, as another engine would open it
    catalog = CatalogFactory.create({"metastore": "rest", "uri": server.uri, "warehouse": name,
                                     "token.provider": "bear", "token": server.token})
    table = catalog.get_table("db.orders")
    assert table.table_path == f"{warehouse}/db.db/orders"
    read = table.new_read_builder()
    assert sorted(read.new_read().to_arrow(read.new_scan().plan().splits()).to_pylist(),
                  key=lambda r: r["id"]) == expected


def test_a_folder_the_server_does_not_list_is_not_a_table(rest, tmp_path):
    warehouse, options, server, _ = rest
    wh.create_table(warehouse, "db", "listed", SCHEMA, primary_keys=["id"],
                    catalog_options=options)
    # the same database folder in another warehouse of the server's: not this catalog's
    elsewhere = str(tmp_path / "elsewhere")
    other = parse_catalog(server.options(server.add_catalog(elsewhere))).pypaimon_options()
    wh.create_table(elsewhere, "db", "stray", SCHEMA, catalog_options=other)
    assert listing.list_tables(warehouse, "db", options) == ["listed"]
    assert listing.latest_schema_id(warehouse, "db", "stray", options) is None
    with pytest.raises(TableNotFoundError):
        wh.open_table(warehouse, "db", "stray", options)


def test_alter_rename_and_drop_go_through_the_server(rest):
    from pypaimon.schema.data_types import DataTypeParser
    from pypaimon.schema.schema_change import SchemaChange

    warehouse, options, _, _ = rest
    wh.create_table(warehouse, "db", "t", SCHEMA, primary_keys=["id"], catalog_options=options)
    wh.open_catalog(warehouse, options).alter_table(
        "db.t", [SchemaChange.add_column("qty", DataTypeParser.parse_data_type("INT")),
                 SchemaChange.set_option("bucket", "3")])
    assert listing.latest_schema_id(warehouse, "db", "t", options) == 1
    assert wh.open_table(warehouse, "db", "t", options).options.bucket() == 3

    wh.rename_table(warehouse, "db", "t", "t2", catalog_options=options)
    assert listing.list_tables(warehouse, "db", options) == ["t2"]
    assert wh.open_table(warehouse, "db", "t2", options).field_names == ["id", "name", "qty"]
    assert not os.path.exists(f"{warehouse}/db.db/t")

    wh.drop_table(warehouse, "db", "t2", catalog_options=options)
    assert listing.list_tables(warehouse, "db", options) == []
    assert not os.path.exists(f"{warehouse}/db.db/t2")
    wh.drop_database(warehouse, "db", catalog_options=options)
    assert listing.list_databases(warehouse, options) == []


def test_tables_the_server_keeps_elsewhere_are_refused_naming_both_places(rest, tmp_path):
    warehouse, options, _, _ = rest
    wh.create_table(warehouse, "db", "t", SCHEMA, catalog_options=options)
    other = str(tmp_path / "profile_warehouse")  # a profile whose warehouse is another folder
    assert listing.list_databases(other, options) == []  # its database is elsewhere
    with pytest.raises(PaimonFormatError) as error:
        wh.open_table(other, "db", "t", options)
    message = str(error.value)
    assert f"keeps the table db.t at {warehouse}/db.db/t, not at {other}/db.db/t" in message
    assert f"Set the catalog's warehouse-path to {warehouse}." in message
    assert isinstance(error.value, PaimonConfigError)  # a config to fix: dbt's config error
    with pytest.raises(PaimonFormatError, match=f"keeps the database db at {warehouse}/db.db"):
        wh.create_table(other, "db", "t2", SCHEMA, catalog_options=options)
    assert listing.list_tables(warehouse, "db", options) == ["t"]  # nothing created


def test_a_bad_uri_token_or_catalog_name_names_the_server(rest):
    warehouse, options, server, _ = rest
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CatalogUnreachableError,
                       match=f"cannot reach the REST catalog at http://127.0.0.1:{port}: "
                             "ConnectionError.*Check the catalog's `uri`"):
        listing.list_databases(warehouse, {**options, "uri": f"http://127.0.0.1:{port}"})

    wrong = {**options, "token": "not-the-token"}
    with pytest.raises(CatalogUnreachableError,
                       match=f"the REST catalog at {server.uri} refused the credentials of "
                             "token.provider 'bear' .401 Unauthorized") as error:
        wh.create_table(warehouse, "db", "t", SCHEMA, catalog_options=wrong)
    assert "not-the-token" not in str(error.value)

    with pytest.raises(CatalogUnreachableError,
                       match=f"the REST catalog at {server.uri} has no catalog named 'nope'"):
        listing.list_databases(warehouse, {**options, "warehouse": "nope"})
    assert not os.path.exists(f"{warehouse}/db.db")  # nothing written
