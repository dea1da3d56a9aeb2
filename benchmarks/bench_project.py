"""The throwaway dbt project the end-to-end benchmarks run: one profile (local[2], 4 shuffle
partitions, 4g driver), and the models they compare."""
from __future__ import annotations

import os
from typing import Dict

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
