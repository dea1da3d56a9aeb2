"""The sample project on the cluster: the demo's steps (sample_project/run_demo.py STEPS: seed,
runs, row and table operations, compaction) then its data tests with the profile's ``cluster``
target succeed, and leave exactly the rows the same steps leave in local mode (target ``dev``).

Both run on copies of sample_project/ (their warehouses, metastores and logs stay in tmp), as
separate dbt processes side by side: the cluster one as a second application of the test
cluster. The demo's read-only steps (show, table info, docs) are left out to keep the test
short; ``run_demo.py --target cluster`` runs them all.
"""

import datetime
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from dbt.adapters.paimon.datasource.source import TableRef, read_merged_split
from dbt.adapters.paimon.format import splits
from dbt.adapters.paimon.catalog import warehouse as wh
from dbt.adapters.paimon.format.kv_files import read_append_split

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "sample_project")
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "run_demo.py", "models", "seeds")
# the demo's steps that write (its tests, shows and docs only read), on the given target; the
# cluster side then runs the project's data tests as well
STEPS = """
import sys
from dbt.cli.main import dbtRunner
import run_demo
target = sys.argv[1]
steps = [args for _, args, _ in run_demo.STEPS if args[0] not in ("test", "show", "docs")]
for args in steps + ([["test"]] if target == "cluster" else []):
    if not dbtRunner().invoke(args + ["--project-dir", ".", "--profiles-dir", ".",
                                      "--target", target]).success:
        sys.exit(f"dbt {args} failed on target {target}")
print("all steps passed")
"""
TIMEOUT = 1800  # seconds; ~3 min on a quiet 2-core machine


def copy_project(root: str) -> str:
    os.makedirs(root)
    for name in PROJECT_FILES:
        source = os.path.join(SAMPLE, name)
        copy = shutil.copytree if os.path.isdir(source) else shutil.copy
        copy(source, os.path.join(root, name))
    return root


def table_rows(project: str, since: datetime.datetime):
    """Every table the project built, as sorted rows: Paimon tables read (merged) without Spark,
    the plain `table` models from their parquet files. Timestamp columns holding only times
    after ``since`` (``current_timestamp()`` of the run, e.g. a load time) are left out: they
    differ between any two runs."""
    warehouse = os.path.join(project, "paimon_warehouse")
    found = {}
    for name in wh.list_tables(warehouse, "analytics"):
        table = TableRef(warehouse, "analytics", name, {}).open()
        names = list(table.field_names)
        read = read_merged_split if table.primary_keys else read_append_split
        found[name] = pa.concat_tables([read(table, s, names)
                                        for s in splits.plan_splits(table)])
    spark_tables = os.path.join(warehouse, ".spark", "spark-warehouse", "analytics.db")
    for name in sorted(set(os.listdir(spark_tables)) - set(found)):  # Paimon entries are empty
        found[name] = pq.read_table(os.path.join(spark_tables, name))
    return {name: sorted_rows(without_run_times(data, since)) for name, data in found.items()}


def without_run_times(data: pa.Table, since: datetime.datetime) -> pa.Table:
    since = pa.scalar(since, pa.timestamp("us", tz="UTC"))

    def is_run_time(field) -> bool:
        if not pa.types.is_timestamp(field.type) or data.num_rows == 0:
            return False
        earliest = pc.min(data.column(field.name).cast(pa.timestamp("us", tz="UTC")))
        return earliest.is_valid and pc.greater_equal(earliest, since).as_py()

    return data.drop_columns([f.name for f in data.schema if is_run_time(f)])


def sorted_rows(data: pa.Table) -> list:
    return sorted((tuple(row.values()) for row in data.to_pylist()), key=repr)


@pytest.fixture(scope="module")
def sample_runs(spark_cluster, tmp_path_factory):
    """Both targets' runs, side by side: (start time, {target: (exit code, log, folder)})."""
    root = str(tmp_path_factory.mktemp("sample"))
    started = datetime.datetime.now(datetime.timezone.utc)
    env = {**os.environ, "DBT_PAIMON_SPARK_MASTER": spark_cluster.master_url}
    runs = {}
    try:
        for target in ("cluster", "dev"):
            folder = copy_project(os.path.join(root, target))
            with open(os.path.join(root, f"{target}.log"), "w") as log:
                runs[target] = subprocess.Popen([sys.executable, "-c", STEPS, target],
                                                cwd=folder, env=env, stdout=log,
                                                stderr=subprocess.STDOUT)
        codes = {target: run.wait(timeout=TIMEOUT) for target, run in runs.items()}
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait()
    results = {}
    for target, code in codes.items():
        with open(os.path.join(root, f"{target}.log")) as log:
            results[target] = (code, log.read(), os.path.join(root, target))
    return started, results


def test_sample_project_on_the_cluster_matches_local_mode(sample_runs, spark_cluster):
    started, runs = sample_runs
    for target, (code, log, _) in runs.items():
        assert code == 0 and "all steps passed" in log, f"{target} run failed:\n{log[-5000:]}"
        # Spark's and the JVM's output went to <warehouse>/.spark/logs/spark.log
        for noise in ("WARNING: Using incubator", "Setting default log level",
                      "ERROR Executor", "at org.apache", "Traceback", "crashed"):
            assert noise not in log, f"{target} run printed {noise!r}:\n{log[-5000:]}"

    on_cluster = table_rows(runs["cluster"][2], started)
    local = table_rows(runs["dev"][2], started)
    assert {"customers", "orders_wide", "product_sales", "first_orders",
            "customer_orders", "order_status"} <= set(local)
    assert on_cluster == local
    # the cluster side was a (now finished) application whose tasks ran on both workers
    finished = {app["id"] for app in spark_cluster.state()["completedapps"]}
    workers_with_tasks = {}
    for executor_dir in spark_cluster.executor_dirs():
        app_id = os.path.basename(os.path.dirname(executor_dir))
        with open(os.path.join(executor_dir, "stderr"), errors="replace") as log:
            if app_id in finished and "Finished task" in log.read():
                workers_with_tasks.setdefault(app_id, set()).add(
                    os.path.dirname(os.path.dirname(executor_dir)))
    assert any(len(workers) == 2 for workers in workers_with_tasks.values()), workers_with_tasks
