"""An S3 warehouse reached only through the profile's ``catalog_options``, on the cluster.

A local S3 server (moto) on 127.0.0.1 holds the warehouse ``s3://lake/wh``. The dbt project's
profile names it and gives the endpoint and credentials in ``catalog_options`` only: no AWS_*
variable is set, so any catalog or file access that lost the options would go to AWS (no route
from here) and fail. A separate dbt process (a second application of the test cluster, its
tasks in executor processes) builds a paimon_pk model over two runs, a paimon_append model,
compacts, and runs its data tests; the merged rows are then read back with pypaimon.
"""

import os
import subprocess
import sys
import textwrap

import pytest
from moto.server import ThreadedMotoServer

from dbt.adapters.paimon.datasource.source import read_merged_split
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.kv_files import read_append_split

from conftest import cluster_spark_conf

BUCKET = "lake"
WAREHOUSE = f"s3://{BUCKET}/wh"
TIMEOUT = 900  # seconds

ORDERS = """
{{ config(materialized='paimon_pk', primary_key='order_id', buckets=2) }}
{% if var('run', 1) == 1 %}
select 1 as order_id, 'created' as status, 10.0 as amount union all
select 2, 'created', 20.0 union all
select 3, 'created', 30.0
{% else %}
select 2 as order_id, 'shipped' as status, 25.0 as amount union all
select 4, 'created', 40.0
{% endif %}
"""
EVENTS = """
{{ config(materialized='paimon_append') }}
select order_id, status from {{ ref('orders') }}
"""
SCHEMA_YML = """
version: 2
models:
  - name: orders
    columns:
      - name: order_id
        data_tests: [unique, not_null]
      - name: status
        data_tests:
          - accepted_values:
              arguments: {values: ['created', 'shipped']}
"""
STEPS = [
    ["run", "--vars", "{run: 1}"],
    ["run", "--vars", "{run: 2}"],
    ["run-operation", "compact", "--args", "{model: orders, full: true}"],
    ["test"],
]


@pytest.fixture(scope="module")
def s3_server():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def catalog_options(s3_server):
    import boto3

    boto3.client("s3", endpoint_url=s3_server, aws_access_key_id="test-key",
                 aws_secret_access_key="test-secret",
                 region_name="us-east-1").create_bucket(Bucket=BUCKET)
    return {"fs.s3.endpoint": s3_server, "fs.s3.accessKeyId": "test-key",
            "fs.s3.accessKeySecret": "test-secret", "fs.s3.region": "us-east-1",
            "fs.s3.path-style-access": "true"}


def write_project(root: str, master: str, catalog_options: dict) -> None:
    files = {
        "dbt_project.yml": "name: s3_project\nversion: '1.0'\nprofile: s3_project\n"
                           "model-paths: [models]\n",
        "profiles.yml": _profile(master, catalog_options),
        "models/orders.sql": ORDERS,
        "models/order_events.sql": EVENTS,
        "models/schema.yml": SCHEMA_YML,
    }
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))


def _profile(master: str, catalog_options: dict) -> str:
    def block(mapping: dict, indent: str) -> str:
        return "".join(f"\n{indent}{key}: '{value}'" for key, value in mapping.items())

    return ("s3_project:\n  target: s3\n  outputs:\n    s3:\n      type: paimon\n"
            f"      schema: shop\n      threads: 1\n      warehouse: {WAREHOUSE}\n"
            f"      spark_master: {master}\n"
            f"      spark_conf:{block(cluster_spark_conf(), ' ' * 8)}\n"
            f"      catalog_options:{block(catalog_options, ' ' * 8)}\n")


# all steps in one dbt process (one application of the cluster, started once)
RUN_STEPS = """
import sys
from dbt.cli.main import dbtRunner
for args in %r:
    if not dbtRunner().invoke(args + ["--project-dir", ".", "--profiles-dir", "."]).success:
        sys.exit(f"dbt {args} failed")
print("all steps passed")
""" % (STEPS,)


@pytest.fixture(scope="module")
def s3_project_run(spark_cluster, catalog_options, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("s3_project"))
    write_project(root, spark_cluster.master_url, catalog_options)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    done = subprocess.run([sys.executable, "-c", RUN_STEPS], cwd=root, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    return done.returncode, done.stdout + done.stderr, root


def test_dbt_builds_and_tests_models_in_an_s3_warehouse(s3_project_run, catalog_options):
    code, log, root = s3_project_run
    assert code == 0 and "all steps passed" in log, log[-6000:]

    orders = wh.open_table(WAREHOUSE, "shop", "orders", catalog_options)
    merged = sorted(row for s in splits.plan_splits(orders)
                    for row in _rows(read_merged_split(orders, s, ["order_id", "status"])))
    assert merged == [(1, "created"), (2, "shipped"), (3, "created"), (4, "created")]
    # the compaction was a commit of its own, after the two runs' appends
    kinds = [s.commit_kind for s in splits.list_snapshots(orders)]
    assert kinds[:2] == ["APPEND", "APPEND"] and "COMPACT" in kinds[2:], kinds

    events = wh.open_table(WAREHOUSE, "shop", "order_events", catalog_options)
    appended = sorted(row for s in splits.plan_splits(events)
                      for row in _rows(read_append_split(events, s, ["order_id", "status"])))
    assert appended == sorted([(1, "created"), (2, "created"), (3, "created"),
                               (1, "created"), (2, "shipped"), (3, "created"), (4, "created")])
    # nothing was written to the local disk in the warehouse's place
    assert not os.path.exists(os.path.join(root, "s3:"))
    assert sorted(wh.list_tables(WAREHOUSE, "shop", catalog_options)) == \
        ["order_events", "orders"]


def _rows(data):
    return [tuple(r.values()) for r in data.to_pylist()]
