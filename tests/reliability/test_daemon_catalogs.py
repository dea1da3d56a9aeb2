"""A project whose tables a catalog lists (here Paimon's JDBC catalog on SQLite) gets the
background daemon as a filesystem one does (server/daemon_policy.py): its first command
starts the warehouse's daemon, a later fresh command joins it and reads the models by name, and
the tables are the catalog's. The catalog is the dbt process's own (pypaimon's client); the
daemon's Spark only meets it through each relation's catalog entry. A Python model building a
Paimon table runs through the daemon too (its DataFrame is the Spark Connect session's)."""
from __future__ import annotations

import json
import os
import sqlite3

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.server import daemon
from dbt.adapters.paimon.server.daemon_process import INFO_NAME
from dbt.adapters.paimon.catalog.config import parse_catalog

from reliability_helpers import read_merged, run_dbt

ON = {"DBT_PAIMON_DAEMON": "on"}
MODEL = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1) }}
select cast(id as bigint) as id, cast(id * 3 as bigint) as v from range(0, 20)
"""
PYTHON_MODEL = """
def model(dbt, session):
    dbt.config(materialized="paimon_pk", primary_key="bucket")
    return dbt.ref("m").selectExpr("id % 2 as bucket", "v").groupBy("bucket").sum("v") \\
        .withColumnRenamed("sum(v)", "total")
"""


def test_a_jdbc_catalog_project_runs_through_the_daemon(process_tmp):
    root, warehouse = process_tmp / "project", process_tmp / "warehouse"
    state = str(warehouse / ".spark")
    catalog_db = process_tmp / "catalog.db"
    (root / "models").mkdir(parents=True)
    (root / "models" / "m.sql").write_text(MODEL)
    (root / "models" / "totals.py").write_text(PYTHON_MODEL)
    (root / "dbt_project.yml").write_text(
        "name: daemon_catalog\nversion: '1.0'\nprofile: daemon_catalog\nconfig-version: 2\n")
    (root / "profiles.yml").write_text(
        "daemon_catalog:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
        f"      schema: cat\n      warehouse: {warehouse}\n      spark_master: 'local[2]'\n"
        f"      catalog:\n        type: jdbc\n        uri: 'jdbc:sqlite:{catalog_db}'\n"
        "      spark_conf:\n        spark.sql.shuffle.partitions: '2'\n")
    try:
        ran = run_dbt(root, "run", env=ON)
        assert "Starting a background Spark" in ran, ran
        with open(os.path.join(state, INFO_NAME)) as handle:
            server = json.load(handle)["server_pid"]

        shown = run_dbt(root, "show", "--inline",
                        "select count(*) as n, sum(v) as s, (select sum(total) from "
                        "{{ ref('totals') }} where bucket = 1) as odd from {{ ref('m') }}",
                        env=ON)
        # 3 * (0 + ... + 19) = 570; the odd ids' part 3 * (1 + 3 + ... + 19) = 300
        assert "| 20 |" in shown and "| 570 |" in shown and "| 300 |" in shown, shown
        assert "Starting a background Spark" not in shown and "not available" not in shown
        with open(os.path.join(state, INFO_NAME)) as handle:
            assert json.load(handle)["server_pid"] == server  # joined, not started again

        with sqlite3.connect(catalog_db) as con:
            assert sorted(con.execute("SELECT database_name, table_name FROM paimon_tables")) \
                == [("cat", "m"), ("cat", "totals")]
        options = parse_catalog({"type": "jdbc", "uri": f"jdbc:sqlite:{catalog_db}"}
                                ).pypaimon_options()
        rows = read_merged(TableRef(str(warehouse), "cat", "m", options))
        assert rows.column("v").to_pylist() == [i * 3 for i in range(20)]
    finally:
        daemon.stop(state)
