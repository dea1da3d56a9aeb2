"""`make demo`: the sample project end to end (seed, run, test, run again, tag, build a branch
and publish it, show, docs).

All steps run through dbt's programmatic runner in this one process, so Spark starts once.

    run_demo.py                    # embedded Spark (profile target dev, local[2])
    run_demo.py --target cluster   # a Spark standalone cluster: DBT_PAIMON_SPARK_MASTER
                                   # (default spark://127.0.0.1:7077)
    run_demo.py --target connect   # a Spark Connect server (started for the demo, then stopped)
"""

import argparse
import os
import shutil
import sys
from collections import Counter

from dbt.cli.main import dbtRunner

HERE = os.path.dirname(os.path.abspath(__file__))
WAREHOUSE = os.path.join(HERE, "paimon_warehouse")  # the profile's default warehouse
SHOW_MERGED = "select * from {{ ref('customers') }} order by customer_id"
SHOW_WIDE = ("select order_id, status, amount, pay_status, paid_amount, carrier, ship_status "
             "from {{ ref('order_facts') }} order by order_id")
SHOW_TRACKED = ("select order_id, status, note, _ROW_ID, _SEQUENCE_NUMBER "
                "from {{ paimon_row_tracking(ref('order_notes')) }} order by _ROW_ID")
SHOW_SNAPSHOTS = ("select snapshot_id, commit_kind, commit_time, total_record_count "
                  "from {{ paimon_system(ref('customers'), 'snapshots') }} order by snapshot_id")
# (title, dbt arguments, count its node results in the summary)
STEPS = [
    ("load the seeds", ["seed", "--full-refresh"], True),
    ("build the models", ["run"], True),
    ("snapshot the customers: every version in a Paimon primary-key table on dbt_scd_id",
     ["snapshot"], True),
    ("test the merged results (data tests and the unit test)", ["test"], True),
    ("run again: every Paimon table merges this run's rows as a new snapshot", ["run"], True),
    ("test again (product_sales now holds both runs' sums)", ["test"], True),
    ("tag the customers table's current snapshot (expiry keeps a tagged snapshot readable)",
     ["run-operation", "create_tag", "--args", "{model: customers, tag: after_second_run}"],
     False),
    ("write-audit-publish: build and test customers on branch 'audit' (main untouched)",
     ["build", "--select", "customers", "--vars", "{paimon_branch: audit}"], True),
    ("publish the audited branch: main of each table that has it becomes the branch",
     ["run-operation", "publish_branch", "--args", "{branch: audit}"], False),
    ("Paimon's system tables as relations: the customers table's snapshots",
     ["show", "--inline", SHOW_SNAPSHOTS, "--limit", "10"], False),
    ("read a merged Paimon table (customer 3 once, latest version)",
     ["show", "--inline", SHOW_MERGED, "--limit", "10"], False),
    ("read the wide table assembled by three partial_update models",
     ["show", "--inline", SHOW_WIDE, "--limit", "10"], False),
    ("row tracking: update one row of a row-tracking append table (one commit, row ids kept)",
     ["run-operation", "update_rows", "--args",
      '{model: order_notes, set: {note: "gift wrap"}, where: "order_id = 1"}'], False),
    ("read its hidden columns: order 1 has a new _SEQUENCE_NUMBER, every _ROW_ID is unchanged",
     ["show", "--inline", SHOW_TRACKED, "--limit", "10"], False),
    ("inspect the wide table: snapshots, files per bucket and level",
     ["run-operation", "paimon_table_info", "--args", "{relation: analytics.orders_wide}"], False),
    ("full compaction of the wide table: one COMPACT snapshot, fewer files, same rows",
     ["run-operation", "compact", "--args", "{relation: analytics.orders_wide, full: true}"], False),
    ("inspect it again", ["run-operation", "paimon_table_info", "--args", "{relation: analytics.orders_wide}"],
     False),
    ("test after compaction", ["test"], True),
    ("generate the docs catalog", ["docs", "generate"], False),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="dev",
                        help="profile target (dev, cluster or connect)")
    target = parser.parse_args(argv).target
    os.chdir(HERE)
    # The demo counts on its own history (the second run doubles product_sales): start from an
    # empty warehouse, before dbt starts Spark (its metastore lives in the warehouse folder).
    # A background daemon left on this warehouse by an earlier run holds its metastore: stop it.
    from dbt.adapters.paimon.server import daemon

    daemon.stop(os.path.join(WAREHOUSE, ".spark"))
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    if target != "connect":
        return run_steps(target)
    from dbt.adapters.paimon.environments import connect_server

    port = free_port()
    print(f"=== start a Spark Connect server: dbt-paimon server start --warehouse {WAREHOUSE} "
          f"--port {port}", flush=True)
    server = connect_server.start(WAREHOUSE, port, master="local[2]",
                                  conf={"spark.sql.shuffle.partitions": "4"})
    os.environ["DBT_PAIMON_CONNECT_URL"] = server.url
    try:
        return run_steps(target)
    finally:
        connect_server.stop(WAREHOUSE, port)
        print(f"=== stopped the server (dbt-paimon server stop --warehouse {WAREHOUSE} "
              f"--port {port})")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_steps(target: str) -> int:
    runner = dbtRunner()
    totals: Counter = Counter()
    for title, args, counted in STEPS:
        print(f"\n=== {title}: dbt {' '.join(args)}", flush=True)
        result = runner.invoke(args + ["--project-dir", HERE, "--profiles-dir", HERE,
                                       "--target", target])
        if not result.success:
            print(f"\nDemo failed at: dbt {' '.join(args)}", file=sys.stderr)
            if result.exception is not None:
                print(result.exception, file=sys.stderr)
            return 1
        for node_result in (getattr(result.result, "results", None) or []) if counted else []:
            totals[(str(node_result.node.resource_type), str(node_result.status))] += 1
    print("\n=== Demo summary")
    for (kind, status), count in sorted(totals.items()):
        print(f"  {kind:>8} {status:<8} {count}")
    print(f"  warehouse: {WAREHOUSE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
