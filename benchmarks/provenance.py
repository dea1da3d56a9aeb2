"""The first line of every results file: the code version and the machine a result describes."""

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def code_version() -> str:
    """The checkout's commit, marked `+local changes` when the work tree differs from it."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True)
        return done.stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no")
    return commit + (" +local changes" if changed else "")


def results_header(script: str, setup: str) -> str:
    """`# benchmarks/<script>, commit <c>, <setup> on a <n>-core machine (load average <l>)`:
    the one-minute load average when the result is written, as other work on the machine
    slows every figure."""
    load = os.getloadavg()[0]
    return (f"# benchmarks/{script}, commit {code_version()}, {setup} on a {os.cpu_count()}-core "
            f"machine (load average {load:.1f})")
