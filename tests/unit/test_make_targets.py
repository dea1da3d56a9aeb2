"""Every test module of tests/ runs in one of the pytest processes of `make test` (a module no
process names would silently never run in CI)."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_test_commands():
    """The pytest command lines `make test` runs, as make expands them (dry run)."""
    out = subprocess.run(["make", "-n", "--no-print-directory", "-j1", "test",
                          "MAKE=make -n"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.replace("\\\n", " ").splitlines() if " -m pytest " in line]


def test_every_test_module_runs_in_a_make_test_process():
    commands = make_test_commands()
    assert len(commands) >= 6, commands
    # paths a process runs whole (a `file::Class` argument runs part of a module)
    whole = [arg.rstrip("/") for command in commands for arg in command.split()
             if arg.startswith("tests") and "::" not in arg]
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = [m for m in modules
               if not any(m == w or m.startswith(w + "/") for w in whole)]
    assert not missing, f"in no `make test` process: {missing}"


def test_each_process_has_its_own_pytest_temp_folder():
    folders = [re.search(r"--basetemp=(\S+)", c).group(1) for c in make_test_commands()]
    assert len(set(folders)) == len(folders)


def test_the_measured_processes_each_write_their_own_coverage_data():
    commands = make_test_commands()
    measured = {}
    for command in commands:
        target = re.search(r"--basetemp=\S+/(test-[\w-]+)", command).group(1)
        data = re.search(r"-m coverage run --data-file=(\S+) -m pytest ", command)
        if data:
            measured[target] = data.group(1)
    assert "test-unit" in measured
    assert all(path.endswith(f"/{target}.coverage") for target, path in measured.items())
    # the summary combines exactly these
    out = subprocess.run(["make", "-n", "--no-print-directory", "-j1", "test", "MAKE=make -n"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    report_args = re.search(r"scripts/test_report\.py \S+ \S+ ([\w -]+);", out).group(1).split()
    assert sorted(report_args) == sorted(measured)
