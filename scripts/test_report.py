"""The summary at the end of `make test`: each pytest process's time, test count and share of
the work, the whole run's wall time, the 25 slowest tests of all processes, and a warning when a
process grew by more than 20% over the figure docs/development.md records for it, or the run
neared CI's limit (the suite's own guard: 45 minutes on the quiet machine).

    python scripts/test_report.py <folder of the processes' JUnit files> [<start time, epoch s>]

Reads ``<target>.xml`` (pytest --junitxml) of each process; standard library only.
"""
from __future__ import annotations

import re
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


def main(argv: List[str]) -> int:
    folder = Path(argv[0])
    started = float(argv[1]) if len(argv) > 1 and argv[1] else None
    lanes = [read_lane(path) for path in sorted(folder.glob("test-*.xml"))]
    if not lanes:
        print(f"no JUnit files of the test processes in {folder}")
        return 0
    wall = time.time() - started if started else None
    print(report(lanes, recorded_minutes(), wall))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
