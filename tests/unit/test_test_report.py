"""The summary `make test` prints (scripts/test_report.py): it reads the processes' JUnit files,
finds the figures docs/development.md records for every process, and warns on growth."""
import importlib.util
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("test_report", ROOT / "scripts" / "test_report.py")
test_report = importlib.util.module_from_spec(spec)
sys.modules["test_report"] = test_report  # dataclasses look their module up there
spec.loader.exec_module(test_report)


def junit(path, seconds, cases):
    body = "".join(f'<testcase classname="tests.m" name="{name}" time="{t}"/>'
                   for name, t in cases)
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="0" '
                    f'failures="1" skipped="0" tests="{len(cases)}" time="{seconds}">{body}'
                    f'</testsuite></testsuites>')
    return path


def test_every_make_test_process_has_a_recorded_figure():
    recorded = test_report.recorded_minutes()
    makefile = (ROOT / "Makefile").read_text()
    processes = re.search(r"^TEST_PROCESSES := ((?:.*\\\n)*.*)$", makefile, re.MULTILINE) \
        .group(1).replace("\\", " ").split()
    assert processes and set(processes) <= set(recorded), (processes, recorded)


def test_the_summary_orders_processes_and_warns_on_growth(tmp_path):
    lanes = [test_report.read_lane(junit(tmp_path / "test-paimon.xml", 780,
                                         [("a", 10.5), ("b", 200.0)])),
             test_report.read_lane(junit(tmp_path / "test-unit.xml", 60, [("c", 1.0)]))]
    assert lanes[0].tests == 2 and lanes[0].failures == 1
    assert lanes[0].slowest[0] == (200.0, "tests.m::b")
    recorded = {"test-paimon": (10.0, 60), "test-unit": (1.0, 1000)}
    text = test_report.report(lanes, recorded, wall_seconds=46 * 60)
    assert text.index("test-paimon") < text.index("test-unit")
    assert "work: 14.0 min in 2 processes; wall time: 46.0 min" in text
    assert text.index("200.0s  test-paimon: tests.m::b") < text.index("10.5s  test-paimon")
    warnings = [line for line in text.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 2, text
    assert "test-paimon took 13.0 min, 30% over the 10 min" in warnings[0]
    assert "over the suite's 45-minute guard" in warnings[1]
    quiet = test_report.report(lanes, {"test-paimon": (12.0, 60)}, wall_seconds=30 * 60)
    assert "WARNING" not in quiet
