"""The sample project built on a shared Paimon catalog, as docs/catalogs.md tells a user to:
`dbt build --target jdbc` with DBT_PAIMON_JDBC_URI naming a PostgreSQL database (the test
process's server), and `dbt build --target hive` with DBT_PAIMON_HIVE_URI naming a Hive
Metastore (the test process's metastore). Paimon Java, through its own JdbcCatalog or
HiveCatalog, then finds every Paimon table the build made by name and reads one."""
import json
import shutil
from pathlib import Path

import pytest

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.catalog import listing
from dbt.adapters.paimon.catalog.config import parse_catalog
from tests.functional.console_output import run_dbt_process
from tests.integration.write.write_helpers import read_back, sorted_rows
from tests.interop.conftest import catalog_spec, jdbc_driver_jar
from tests.interop.test_hive_catalog_java import java_hive_client_classpath

# the tables the build made are read from manifest.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")

SAMPLE = Path(__file__).resolve().parents[2] / "sample_project"
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "models", "seeds", "snapshots", "tests")


def sample_copy(root: Path) -> Path:
    root.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = SAMPLE / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy(source, root / name)
    return root


def paimon_tables(project: Path) -> dict:
    """schema -> the Paimon tables the build's seeds, models and snapshots write (their own, or
    the shared table a partial_update model's `target` names; views and ephemeral models write
    none), from dbt's manifest."""
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    tables: dict = {}
    for node in manifest["nodes"].values():
        if node["resource_type"] in ("seed", "model", "snapshot") and \
                node["config"]["materialized"] not in ("view", "ephemeral"):
            table = node["config"].get("target") or node["alias"]
            tables.setdefault(node["schema"], set()).add(table)
    return {schema: sorted(names) for schema, names in tables.items()}


@pytest.fixture(params=["jdbc", "hive"], ids=["jdbc-postgresql", "hive-metastore"])
def catalog(request, tmp_path, paimon_java):
    """(target, environment of the dbt command, our catalog options, Java, its catalog spec)."""
    project = tmp_path / "project"
    warehouse = str(project / "paimon_warehouse")
    if request.param == "jdbc":
        server = request.getfixturevalue("postgres_server")
        given = server.catalog(server.new_database("sample"))
        env = {"DBT_PAIMON_JDBC_URI": given["uri"], "DBT_PAIMON_JDBC_USER": given["jdbc.user"],
               "DBT_PAIMON_JDBC_PASSWORD": given["jdbc.password"]}
        java = paimon_java.with_classpath(jdbc_driver_jar("postgresql"))
    else:
        metastore = request.getfixturevalue("hive_metastore")
        given = metastore.catalog(warehouse)
        env = {"DBT_PAIMON_HIVE_URI": metastore.uri}
        before, after = java_hive_client_classpath()
        java = paimon_java.with_classpath(*after, before_jar=before)
    options = parse_catalog(given).pypaimon_options()
    # Java without its commit lock: it only reads (and Paimon 1.0 has none on PostgreSQL)
    spec = catalog_spec({**options, "lock.enabled": "false"}, warehouse)
    return request.param, project, warehouse, env, options, java, spec


def test_paimon_java_finds_every_table_of_the_sample_project_by_name(catalog):
    target, project, warehouse, env, options, java, spec = catalog
    sample_copy(project)
    build = run_dbt_process(project, "build", "--target", target, env=env)
    assert build.returncode == 0, build.stdout
    assert "ERROR=0" in build.stdout, build.stdout

    expected = paimon_tables(project)
    assert set(expected) == {"analytics", "analytics_raw"}
    for schema, tables in expected.items():
        assert listing.list_tables(warehouse, schema, options) == tables
        assert java.tables(spec, schema) == tables, (schema, target)
    # the merged rows (customer 3 once, its latest version), the same through both catalogs
    columns = ["customer_id", "first_name", "last_name"]
    ours = sorted_rows(read_back(TableRef(warehouse, "analytics", "customers", options))
                       .select(columns), ["customer_id"])
    theirs = sorted(({k: row[k] for k in columns} for row in
                     java.read(spec, "analytics.customers")), key=lambda row: row["customer_id"])
    assert theirs == ours and len(ours) > 2
