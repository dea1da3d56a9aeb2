"""A realistic dbt project of our own, built by one `dbt build` (session mode; `make connect`
runs it over Spark Connect too): seeds in a `raw` schema read as sources by staging
views (no `ref()` of the seeds: dbt-paimon orders a source of a seed's table after the seed),
source tests, marts in a `marts` schema (a paimon_pk model, dbt `table` and `incremental` models on
Paimon, a paimon_append log), a snapshot in a `snapshots` schema, a custom
generate_schema_name, a macro, dbt's generic tests, dbt_utils-style generic tests written in the
project, a singular test and a unit test. Every node passes in the first build and in a second
one (incremental merge, snapshot check), and the marts hold the expected rows.

The project's files are in ``project/`` as a user writes them (``dbt_project.yml`` included;
dbt's test fixture names the project ``test``)."""
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from dbt.tests.util import run_dbt

PROJECT = Path(__file__).parent / "project"


def _files(folder: str) -> dict:
    """The folder's files as dbt's project fixture takes them (subfolders as nested dicts)."""
    def read(path: Path):
        if path.is_dir():
            return {child.name: read(child) for child in sorted(path.iterdir())}
        return path.read_text()
    return read(PROJECT / folder)


CUSTOMERS = [  # customer_id, country, number_of_orders, lifetime_value
    (1, "FR", 3, Decimal("52.00")), (2, "US", 1, Decimal("17.00")),
    (3, "US", 2, Decimal("26.00")), (4, "DE", 1, Decimal("1.00")),
    (5, "unknown", 0, Decimal("0.00")), (6, "IE", 1, Decimal("33.00"))]
REVENUE = [(1, Decimal("30.00")), (2, Decimal("17.00")), (3, Decimal("20.00")),
           (4, Decimal("1.00")), (6, Decimal("33.00"))]
NODES = {"seed": 3, "model": 7, "snapshot": 1, "test": 17, "unit_test": 1}


class TestMultiSchemaProject:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        config = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())
        # the fixture's project is named `test`: folder configs move under that name
        return {key: {"test": config[key]["ecom"]} for key in ("seeds", "models", "snapshots")}

    @pytest.fixture(scope="class")
    def seeds(self):
        return _files("seeds")

    @pytest.fixture(scope="class")
    def models(self):
        return _files("models")

    @pytest.fixture(scope="class")
    def macros(self):
        return _files("macros")

    @pytest.fixture(scope="class")
    def snapshots(self):
        return _files("snapshots")

    @pytest.fixture(scope="class")
    def tests(self):
        return _files("tests")

    def _rows(self, project, sql):
        return [tuple(r) for r in project.run_sql(sql, fetch="all")]

    def test_two_builds_pass_every_node(self, project):
        schema = project.test_schema
        project.created_schemas.extend(f"{schema}_{s}" for s in ("raw", "marts", "snapshots"))
        for build in range(2):
            results = run_dbt(["build"])
            failed = [(r.node.name, r.status, r.message) for r in results
                      if r.status not in ("success", "pass")]
            assert not failed, (build, failed)
            kinds = {}
            for r in results:
                kinds[str(r.node.resource_type)] = kinds.get(str(r.node.resource_type), 0) + 1
            assert kinds == NODES
        marts = f"{schema}_marts"
        assert self._rows(project, f"select customer_id, country, number_of_orders, "
                                   f"lifetime_value from {marts}.customers "
                                   f"order by customer_id") == CUSTOMERS
        assert self._rows(project, f"select customer_id, revenue from {marts}.customer_revenue "
                                   f"order by customer_id") == REVENUE
        # the paimon_append log got each order once per build
        assert self._rows(project, f"select count(*), count(distinct order_id) from "
                                   f"{marts}.order_events") == [(16, 8)]
        assert self._rows(project, f"select count(*) from {schema}_snapshots.customers_snapshot "
                                   f"where dbt_valid_to is null") == [(6,)]
        for table in ("orders", "customer_revenue", "order_events"):
            assert project.adapter.is_paimon_relation(
                project.adapter.Relation.create(schema=marts, identifier=table))
