"""`make bench`: every benchmark, one after the other (each prints its table; plots go to
benchmarks/results/)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = ["merge_kernel.py", "e2e_merge.py", "cluster_vs_local.py", "driver_memory.py",
              "append_throughput.py", "small_models.py", "read_speed.py"]

if __name__ == "__main__":
    failed = [name for name in BENCHMARKS
              if subprocess.call([sys.executable, os.path.join(HERE, name)]) != 0]
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
    sys.exit(1 if failed else 0)
