"""The throwaway dbt project the end-to-end benchmarks run: one profile (local[2], 4 shuffle
partitions, 4g driver), and the models they compare."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Dict, List, Sequence, Tuple

PROFILE = (
    "bench:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n"
    "      schema: bench\n      spark_master: 'local[2]'\n      spark_conf:\n"
    "        spark.sql.shuffle.partitions: '4'\n        spark.driver.memory: '4g'\n"
)


def write_bench_project(root: str, models: Dict[str, str]) -> None:
    """``models``: file name (``pk_model.sql``) -> its SQL, config block included."""
    os.makedirs(os.path.join(root, "models"))
    with open(os.path.join(root, "dbt_project.yml"), "w") as f:
        f.write("name: bench\nversion: '1.0'\nconfig-version: 2\nprofile: bench\n")
    with open(os.path.join(root, "profiles.yml"), "w") as f:
        f.write(PROFILE)
    for name, sql in models.items():
        with open(os.path.join(root, "models", name), "w") as f:
            f.write(sql)


def model_results(root: str) -> Dict[str, Tuple[float, str]]:
    """The last dbt command's models in the project at ``root``: name -> (seconds, message),
    from target/run_results.json."""
    with open(os.path.join(root, "target", "run_results.json")) as f:
        data = json.load(f)
    return {r["unique_id"].rsplit(".", 1)[-1]: (r["execution_time"],
                                                (r.get("adapter_response") or {}).get("_message")
                                                or r.get("message") or "")
            for r in data["results"]}


def fresh_dbt_runs(root: str, var_sets: Sequence[dict]
                   ) -> List[Tuple[float, Dict[str, Tuple[float, str]]]]:
    """One `dbt run` process per ``var_sets`` entry (its ``--vars``) in the project at
    ``root``, as users run dbt (each starts Spark): [(wall seconds, model_results)]."""
    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    out = []
    for variables in var_sets:
        start = time.perf_counter()
        subprocess.run([dbt, "run", "--project-dir", root, "--profiles-dir", root,
                        "--vars", json.dumps(variables), "--quiet"], check=True, cwd=root)
        out.append((time.perf_counter() - start, model_results(root)))
    return out
