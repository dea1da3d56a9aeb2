"""The summary `make test` prints (scripts/test_report.py): it reads the processes' JUnit files,
finds the figures docs/development.md records for every process, and warns on growth."""
import importlib.util
import pathlib
import re
import sys

import pytest

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


def fake_coverage_json():
    def summary(run, lines):
        return {"summary": {"covered_lines": run, "num_statements": lines}}
    return {"totals": {"covered_lines": 75, "num_statements": 100},
            "files": {"dbt/adapters/paimon/impl.py": summary(10, 20),
                      "dbt/adapters/paimon/runtime/merge.py": summary(30, 40),
                      "dbt/adapters/paimon/runtime/deep/x.py": summary(5, 10),
                      "/elsewhere/dbt/adapters/paimon/format/a.py": summary(30, 30)}}


def test_the_coverage_summary_counts_lines_by_package_and_warns_on_a_drop(tmp_path):
    assert test_report.lines_by_package(fake_coverage_json()) == {
        "(modules)": (10, 20), "runtime": (35, 50), "format": (30, 30)}
    text = test_report.coverage_report(fake_coverage_json(), {"test-unit": 60.0}, [], 76.0,
                                       tmp_path)
    assert "total                75.0%     75 of 100 lines; recorded: 76%" in text, text
    assert "  runtime            70.0%     35 of 50" in text
    assert "each process alone: test-unit 60%" in text
    warnings = [line for line in text.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "line coverage is 75.0%, below the 76%" in warnings[0]
    for recorded in (75.0, 74.9, None):
        assert "WARNING" not in test_report.coverage_report(
            fake_coverage_json(), {}, [], recorded, tmp_path)


def test_the_docs_record_a_coverage_figure():
    assert 0 < test_report.recorded_coverage() <= 100


def test_coverage_combines_the_data_files_there_are_and_names_the_missing_ones(tmp_path):
    import coverage
    data = coverage.CoverageData(basename=str(tmp_path / "test-unit.coverage"))
    data.add_lines({str(ROOT / "dbt" / "adapters" / "paimon" / "__version__.py"): [1]})
    data.write()
    report_json, per_process, problems = test_report.measure_coverage(
        tmp_path, ["test-unit", "test-functional"])
    assert report_json["files"]["dbt/adapters/paimon/__version__.py"]["summary"][
        "covered_lines"] == 1
    assert per_process == {"test-unit": 100.0}
    assert len(problems) == 1 and "test-functional left no coverage data" in problems[0]
    assert (tmp_path / "test-unit.coverage").exists() and (tmp_path / "coverage.json").exists()


def test_a_run_without_coverage_data_still_prints_its_summary(tmp_path, capsys):
    junit(tmp_path / "test-unit.xml", 60, [("c", 1.0)])
    assert test_report.main([str(tmp_path), "", "test-unit", "test-paimon"]) == 0
    out = capsys.readouterr().out
    assert "work: 1.0 min in 1 processes" in out
    assert out.count("left no coverage data") == 2 and "\ntotal " not in out


def test_the_ledger_sums_each_process_dbt_commands_and_ranks_the_tests(tmp_path, monkeypatch):
    from tests import process_ledger

    ledger = tmp_path / "test-reliability.processes.jsonl"
    monkeypatch.setenv(process_ledger.LEDGER, str(ledger))
    for test, seconds in (("t.py::a", 30.0), ("t.py::b", 12.0), ("t.py::a", 18.0)):
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{test} (call)")
        process_ledger.record("dbt", seconds, "run")
    with open(ledger, "a") as out:
        out.write('{"kind": "dbt", "seco')  # a line torn by a killed process: left out
    lanes = [test_report.read_lane(junit(tmp_path / "test-reliability.xml", 120,
                                         [("a", 60.0), ("b", 60.0)]))]
    entries = test_report.read_ledger(ledger)
    assert [e["test"] for e in entries] == ["t.py::a", "t.py::b", "t.py::a"]
    text = test_report.ledger_report({"test-reliability": entries}, lanes)
    assert re.search(r"test-reliability\s+3\s+1\.0\s+50%", text), text
    assert text.index("48.0s    2 processes  test-reliability: t.py::a") \
        < text.index("12.0s    1 processes  test-reliability: t.py::b"), text
    assert test_report.ledger_report({"test-unit": []}, lanes) == ""


def test_the_ledger_counts_each_process_servers_and_their_start_time(tmp_path, monkeypatch):
    from tests import process_ledger

    paimon = tmp_path / "test-paimon.processes.jsonl"
    monkeypatch.setenv(process_ledger.LEDGER, str(paimon))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "t.py::a (setup)")
    with process_ledger.server_start("hive-metastore"):
        pass
    with pytest.raises(RuntimeError), process_ledger.server_start("postgresql"):
        raise RuntimeError("did not start: not a server")
    process_ledger.record("server", 2.5, "hive-metastore")
    process_ledger.record("dbt", 10.0, "run")
    connect = tmp_path / "test-connect.processes.jsonl"
    monkeypatch.setenv(process_ledger.LEDGER, str(connect))
    process_ledger.record("server", 20.0, "spark-connect")
    ledgers = {"test-paimon": test_report.read_ledger(paimon),
               "test-connect": test_report.read_ledger(connect)}
    lanes = [test_report.read_lane(junit(tmp_path / "test-paimon.xml", 60, [("a", 60.0)]))]
    text = test_report.ledger_report(ledgers, lanes)
    assert "== the servers the tests started" in text
    assert re.search(r"test-paimon\s+hive-metastore\s+2\s+2\.5\b", text), text
    assert re.search(r"test-connect\s+spark-connect\s+1\s+20\.0\b", text), text
    assert "postgresql" not in text
    # servers only, no dbt process: the servers' table alone
    only = test_report.ledger_report({"test-connect": ledgers["test-connect"]}, lanes)
    assert only.lstrip().startswith("== the servers the tests started"), only


def test_without_a_ledger_file_nothing_is_recorded(tmp_path, monkeypatch):
    from tests import process_ledger

    monkeypatch.delenv(process_ledger.LEDGER, raising=False)
    monkeypatch.chdir(tmp_path)
    process_ledger.record("dbt", 1.0, "run")
    assert list(tmp_path.iterdir()) == []
