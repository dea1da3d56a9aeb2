"""The summary at the end of `make test`: each pytest process's time, test count and share of
the work, the whole run's wall time, the 25 slowest tests of all processes, the line coverage of
dbt/adapters/paimon, and a warning when a process grew by more than 20% over the figure
docs/development.md records for it, the run neared CI's limit (the suite's own guard: 45 minutes
on the quiet machine), the line coverage fell below its recorded figure, or a measured process
left no coverage data.

    python scripts/test_report.py <folder of the processes' JUnit files> [<start time, epoch s>
        [<measured process> ...]]

Reads ``<target>.xml`` (pytest --junitxml) of each process and ``<target>.coverage`` (coverage
run --data-file) of each measured one, which it combines into ``coverage`` and
``coverage.json`` in the same folder with ``python -m coverage`` (run by this interpreter), and
``<target>.processes.jsonl`` of each process (tests/process_ledger.py: the dbt processes its
tests started); standard library only.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
DEVELOPMENT_DOC = ROOT / "docs" / "development.md"
GROWTH_WARNING = 1.20
WALL_GUARD_MIN = 45.0
# a row of the lanes table: | `make test-x` | what it runs | 10.7 min (72 tests) |
_RECORDED_ROW = re.compile(r"^\| `make (test-[\w-]+)` \|.*\| ([\d.]+) min \((\d+)")
# the figure beside the lanes table: "Recorded line coverage: 81.3%"
_RECORDED_COVERAGE = re.compile(r"Recorded line coverage: ([\d.]+)%")
PACKAGE_DIR = "dbt/adapters/paimon/"


@dataclass(frozen=True)
class Lane:
    target: str
    seconds: float
    tests: int
    failures: int
    skipped: int
    slowest: Tuple[Tuple[float, str], ...]   # (seconds, test id), slowest first


def read_lane(path: Path) -> Lane:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    seconds = sum(float(s.get("time", 0)) for s in suites)
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failures = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    cases = []
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}".lstrip(":")
        cases.append((float(case.get("time", 0)), name))
    cases.sort(reverse=True)
    return Lane(path.stem, seconds, tests, failures, skipped, tuple(cases[:25]))


def recorded_minutes(doc: Path = DEVELOPMENT_DOC) -> Dict[str, Tuple[float, int]]:
    """target -> (minutes, tests) as docs/development.md's lanes table records them."""
    recorded = {}
    try:
        lines = doc.read_text().splitlines()
    except OSError:
        return recorded
    for line in lines:
        found = _RECORDED_ROW.match(line)
        if found:
            recorded[found.group(1)] = (float(found.group(2)), int(found.group(3)))
    return recorded


def warnings_for(lanes: List[Lane], recorded: Dict[str, Tuple[float, int]],
                 wall_seconds: Optional[float]) -> List[str]:
    found = []
    for lane in lanes:
        if lane.target not in recorded:
            continue
        minutes, _tests = recorded[lane.target]
        if minutes > 0 and lane.seconds / 60 > minutes * GROWTH_WARNING:
            found.append(f"{lane.target} took {lane.seconds / 60:.1f} min, "
                         f"{lane.seconds / 60 / minutes - 1:.0%} over the {minutes:g} min "
                         f"docs/development.md records: find what grew, or record the new "
                         f"figure with the reason")
    if wall_seconds is not None and wall_seconds / 60 > WALL_GUARD_MIN:
        found.append(f"the run took {wall_seconds / 60:.1f} min, over the suite's "
                     f"{WALL_GUARD_MIN:g}-minute guard (CI stops at 90)")
    return found


def report(lanes: List[Lane], recorded: Dict[str, Tuple[float, int]],
           wall_seconds: Optional[float]) -> str:
    work = sum(lane.seconds for lane in lanes) or 1.0
    lines = ["", "== make test: the pytest processes ==",
             f"{'process':<18} {'min':>6} {'share':>6} {'tests':>6} {'failed':>6} "
             f"{'recorded':>9}"]
    for lane in sorted(lanes, key=lambda lane: -lane.seconds):
        was = recorded.get(lane.target)
        lines.append(f"{lane.target:<18} {lane.seconds / 60:>6.1f} "
                     f"{lane.seconds / work:>6.0%} {lane.tests:>6} {lane.failures:>6} "
                     f"{(f'{was[0]:g} min' if was else '-'):>9}")
    lines.append(f"work: {work / 60:.1f} min in {len(lanes)} processes"
                 + (f"; wall time: {wall_seconds / 60:.1f} min" if wall_seconds else ""))
    lines += ["", "== the 25 slowest tests (setup, call and teardown) =="]
    slowest = sorted(((s, f"{lane.target}: {name}") for lane in lanes
                      for s, name in lane.slowest), reverse=True)[:25]
    lines += [f"{seconds:>8.1f}s  {name}" for seconds, name in slowest]
    for warning in warnings_for(lanes, recorded, wall_seconds):
        lines.append(f"WARNING: {warning}")
    return "\n".join(lines)


def read_ledger(path: Path) -> List[dict]:
    """A process's ledger lines (tests/process_ledger.py); a torn last line is left out."""
    entries = []
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return entries
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def ledger_report(ledgers: Dict[str, List[dict]], lanes: List[Lane]) -> str:
    """The dbt processes each pytest process's tests started, their wall time against the
    process's own, and the 10 tests that spend the most in them."""
    own = {lane.target: lane.seconds for lane in lanes}
    lines = ["", "== the dbt processes the tests started (tests/process_ledger.py) ==",
             f"{'process':<18} {'count':>6} {'min':>6} {'of its time':>12}"]
    by_test: Dict[Tuple[str, str], List[float]] = {}
    for target, entries in sorted(ledgers.items(), key=lambda item: -len(item[1])):
        seconds = [float(e.get("seconds", 0)) for e in entries if e.get("kind") == "dbt"]
        if not seconds:
            continue
        share = sum(seconds) / own[target] if own.get(target) else None
        lines.append(f"{target:<18} {len(seconds):>6} {sum(seconds) / 60:>6.1f} "
                     f"{(f'{share:.0%}' if share is not None else '-'):>12}")
        for entry in entries:
            if entry.get("kind") == "dbt":
                by_test.setdefault((target, entry.get("test", "")), []).append(
                    float(entry.get("seconds", 0)))
    servers = servers_report(ledgers)
    if not by_test:
        return servers
    lines.append("the 10 tests spending the most in dbt processes:")
    ranked = sorted(by_test.items(), key=lambda item: -sum(item[1]))[:10]
    lines += [f"{sum(times):>8.1f}s {len(times):>4} processes  {target}: {test}"
              for (target, test), times in ranked]
    return "\n".join(lines) + servers


def servers_report(ledgers: Dict[str, List[dict]]) -> str:
    """The servers each pytest process's fixtures started (a Spark Connect server, PostgreSQL,
    a Hive Metastore, the standalone cluster): how many of each and their start time."""
    started: Dict[Tuple[str, str], List[float]] = {}
    for target, entries in ledgers.items():
        for entry in entries:
            if entry.get("kind") == "server":
                started.setdefault((target, entry.get("detail", "")), []).append(
                    float(entry.get("seconds", 0)))
    if not started:
        return ""
    lines = ["", "== the servers the tests started (tests/process_ledger.py) ==",
             f"{'process':<18} {'server':<16} {'count':>6} {'start s':>8}"]
    lines += [f"{target:<18} {name:<16} {len(times):>6} {sum(times):>8.1f}"
              for (target, name), times in sorted(started.items())]
    return "\n".join(lines)


def recorded_coverage(doc: Path = DEVELOPMENT_DOC) -> Optional[float]:
    """The line coverage (%) docs/development.md records, if it records one."""
    try:
        found = _RECORDED_COVERAGE.search(doc.read_text())
    except OSError:
        return None
    return float(found.group(1)) if found else None


def run_coverage(*args: str) -> str:
    """``python -m coverage <args>`` in the repository (its [tool.coverage.*] config); its
    output, or RuntimeError with its message."""
    done = subprocess.run([sys.executable, "-m", "coverage", *args], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
        raise RuntimeError(f"`coverage {args[0]}` failed: {said[-1]}")
    return done.stdout


def measure_coverage(folder: Path, processes: List[str]
                     ) -> Tuple[Optional[dict], Dict[str, float], List[str]]:
    """Combines the measured processes' data files into <folder>/coverage (keeping them) and
    returns its JSON report (None if there is none), each process's own line coverage (%), and
    the problems met: a missing data file, a coverage command that failed."""
    problems, per_process, present = [], {}, []
    for process in processes:
        data = folder / f"{process}.coverage"
        if not data.exists():
            problems.append(f"{process} left no coverage data ({data} is missing: did it "
                            f"crash?); the total lacks its lines")
            continue
        present.append(str(data))
        try:
            per_process[process] = float(run_coverage("report", "--format=total",
                                                      f"--data-file={data}"))
        except (RuntimeError, ValueError) as error:
            problems.append(f"{process}: {error}")
    if not present:
        return None, per_process, problems
    combined, out = folder / "coverage", folder / "coverage.json"
    try:
        run_coverage("combine", "--keep", "-q", f"--data-file={combined}", *present)
        run_coverage("json", "-q", f"--data-file={combined}", "-o", str(out))
        return json.loads(out.read_text()), per_process, problems
    except (RuntimeError, OSError, ValueError) as error:
        return None, per_process, problems + [str(error)]


def lines_by_package(report_json: dict) -> Dict[str, Tuple[int, int]]:
    """Top-level subpackage of dbt/adapters/paimon ("(modules)" for the package's own modules)
    -> (lines run, lines), from coverage's JSON report."""
    found: Dict[str, Tuple[int, int]] = {}
    for name, data in report_json["files"].items():
        inside = Path(name).as_posix().split(PACKAGE_DIR, 1)[-1]
        package = inside.split("/")[0] if "/" in inside else "(modules)"
        run, lines = found.get(package, (0, 0))
        found[package] = (run + data["summary"]["covered_lines"],
                          lines + data["summary"]["num_statements"])
    return found


def coverage_report(report_json: Optional[dict], per_process: Dict[str, float],
                    problems: List[str], recorded: Optional[float], folder: Path) -> str:
    """The coverage section of the summary, its warnings last."""
    lines = ["", "== line coverage of dbt/adapters/paimon (pytest processes only) =="]
    warnings = list(problems)
    if report_json is not None:
        totals = report_json["totals"]
        total = 100.0 * totals["covered_lines"] / max(totals["num_statements"], 1)
        lines.append(f"{'total':<18} {total:>6.1f}% {totals['covered_lines']:>6} of "
                     f"{totals['num_statements']} lines; recorded: "
                     + (f"{recorded:g}%" if recorded is not None else "-"))
        for package, (run, count) in sorted(lines_by_package(report_json).items()):
            lines.append(f"  {package:<16} {100.0 * run / max(count, 1):>6.1f}% {run:>6} of "
                         f"{count}")
        if recorded is not None and round(total, 1) < recorded:
            warnings.append(f"line coverage is {total:.1f}%, below the {recorded:g}% "
                            f"docs/development.md records: test the code that lost it, or "
                            f"record the new figure with the reason")
    if per_process:
        lines.append("each process alone: " + ", ".join(
            f"{process} {percent:g}%" for process, percent in per_process.items()))
    if report_json is not None:
        lines.append(f"combined data: {folder / 'coverage'} (`coverage report -m "
                     f"--data-file=<it>` lists the lines not run) and coverage.json")
    return "\n".join(lines + [f"WARNING: {warning}" for warning in warnings])


def main(argv: List[str]) -> int:
    folder = Path(argv[0])
    started = float(argv[1]) if len(argv) > 1 and argv[1] else None
    measured = argv[2:]
    lanes = [read_lane(path) for path in sorted(folder.glob("test-*.xml"))]
    if not lanes:
        print(f"no JUnit files of the test processes in {folder}")
        return 0
    wall = time.time() - started if started else None
    print(report(lanes, recorded_minutes(), wall))
    ledgers = {lane.target: read_ledger(folder / f"{lane.target}.processes.jsonl")
               for lane in lanes}
    said = ledger_report(ledgers, lanes)
    if said:
        print(said)
    if measured:
        print(coverage_report(*measure_coverage(folder, measured), recorded_coverage(), folder))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
