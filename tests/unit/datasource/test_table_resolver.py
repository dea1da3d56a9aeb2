"""Which Paimon table a name means, without Spark (datasource/table_resolver.py): the profile's
catalog, and the databases a catalogs.yml catalog holds. Two filesystem warehouses stand for
the two catalogs: a table exists when its schema folder has a schema file, as in Paimon's
FileSystemCatalog."""
from __future__ import annotations

from pathlib import Path

from dbt.adapters.paimon.catalog.config import CatalogRoute
from dbt.adapters.paimon.datasource.table_resolver import TableResolver


def make_table(warehouse: Path, database: str, table: str) -> None:
    schema = warehouse / f"{database}.db" / table / "schema"
    schema.mkdir(parents=True)
    (schema / "schema-0").write_text("{}")


def test_the_profile_catalog_and_a_routed_database(tmp_path):
    main, other = tmp_path / "main", tmp_path / "other"
    make_table(main, "lc", "m")
    make_table(main, "sales", "orders")  # routed away: the profile's copy is another project's
    make_table(other, "sales", "orders")
    make_table(other, "sales", "returns")
    make_table(other, "hr", "people")  # the other catalog's database no node routes here
    route = CatalogRoute("lake", str(other), {"warehouse": str(other)})
    resolver = TableResolver(str(main), {"warehouse": str(main)}, {"sales": route})

    assert resolver.warehouse_of("lc") == str(main) and resolver.warehouse_of("sales") == str(other)
    assert resolver.catalog_name_of("lc") is None and resolver.catalog_name_of("sales") == "lake"
    assert resolver.options_of("sales") == {"warehouse": str(other)}
    assert resolver.is_paimon_table("LC", "M") and resolver.is_paimon_table("sales", "returns")
    assert not resolver.is_paimon_table("lc", "returns")
    assert resolver.databases() == ["lc", "sales"]
    assert sorted((t.warehouse, t.database, t.table) for t in resolver.locations()) == [
        (str(main), "lc", "m"), (str(other), "sales", "orders"), (str(other), "sales", "returns")]


def test_a_table_without_a_schema_file_is_no_paimon_table(tmp_path):
    (tmp_path / "lc.db" / "half" / "schema").mkdir(parents=True)  # a create that never finished
    resolver = TableResolver(str(tmp_path), {})
    assert not resolver.is_paimon_table("lc", "half")
    assert resolver.table_location("lc", "m$branch_audit").table == "m$branch_audit"


def test_a_table_is_read_on_its_branch_when_it_has_it(tmp_path):
    """The branch in use (a table's own, else the default) names the table's branch only when
    the table has it; the resolver asks the files, not Spark."""
    make_table(tmp_path, "lc", "orders")
    make_table(tmp_path, "lc", "customers")
    (tmp_path / "lc.db" / "orders" / "branch" / "branch-audit").mkdir(parents=True)
    resolver = TableResolver(str(tmp_path), {})
    assert resolver.paimon_name("lc", "orders") == "orders"            # main: no branch asked
    resolver.branch = "audit"
    resolver.table_branches = {("lc", "pinned"): None}
    assert resolver.branch_of("lc", "orders") == "audit"
    assert resolver.branch_of("lc", "pinned") is None                  # pinned to main
    assert resolver.paimon_name("lc", "orders") == "orders$branch_audit"
    assert resolver.paimon_name("lc", "customers") == "customers"      # no such branch
    assert resolver.location("lc", "orders").table == "orders$branch_audit"
