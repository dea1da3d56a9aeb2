"""The tests' dbt fork server (tests/dbt_fork_server.py): a child it forks is a process as
``subprocess.Popen(start_new_session=True)`` makes one, in the folder and with exactly the
environment asked for, and dbt run that way behaves as the ``dbt`` executable does."""
import json
import os
import signal
import subprocess
import time

import pytest

from tests import dbt_fork_server

PROBE = """
import json, os, sys, threading
print(json.dumps({"pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0),
                  "cwd": os.getcwd(), "env": dict(os.environ),
                  "stdin": os.path.realpath("/proc/self/fd/0"),
                  "threads": threading.active_count(), "argv": sys.argv,
                  "spark": "pyspark.sql.session" in sys.modules and
                           sys.modules["pyspark.sql.session"].SparkSession._instantiatedSession
                           is not None}))
sys.stdout.flush()
if os.environ.get("PROBE_SLEEP"):
    import time
    time.sleep(600)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture(autouse=True)
def server_on(monkeypatch):
    monkeypatch.delenv(dbt_fork_server.SWITCH, raising=False)


def probe(tmp_path, env, **popen):
    output = tmp_path / f"probe-{time.monotonic_ns()}.out"
    return dbt_fork_server.popen(["probe"], tmp_path, env, output, python=PROBE, **popen), output


def test_a_child_is_a_new_session_in_its_folder_with_exactly_its_environment(tmp_path):
    env = {"PATH": os.environ["PATH"], "ONLY_THIS": "1", "PROBE_EXIT": "3"}
    process, output = probe(tmp_path, env)
    assert process.wait(timeout=60) == 3
    seen = json.loads(output.read_text())
    assert seen["pid"] == process.pid == seen["pgid"] == seen["sid"]
    assert seen["pid"] != os.getpid()
    assert seen["cwd"] == str(tmp_path)
    assert seen["env"] == env
    assert seen["stdin"] == "/dev/null"
    assert seen["argv"] == ["dbt", "probe"]
    assert seen["threads"] == 1 and seen["spark"] is False
    # the server forks each child from the same untouched state: a second one starts alike
    again, output = probe(tmp_path, env)
    assert again.wait(timeout=60) == 3 and again.pid != process.pid
    assert json.loads(output.read_text())["env"] == env


def test_poll_wait_and_killing_the_group_report_as_popen_does(tmp_path):
    process, output = probe(tmp_path, {"PATH": os.environ["PATH"], "PROBE_SLEEP": "1"})
    deadline = time.monotonic() + 60
    while not output.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.2)
    dbt_fork_server.kill_group(process)
    assert process.returncode == -signal.SIGKILL
    assert process.poll() == -signal.SIGKILL


def test_dbt_run_by_the_server_is_dbt_with_this_adapter(tmp_path):
    project = tmp_path / "project"
    (project / "macros").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: forked\nversion: '1.0'\nprofile: forked\nconfig-version: 2\n")
    (project / "profiles.yml").write_text(
        "forked:\n  target: dev\n  outputs:\n    dev:\n      type: paimon\n      schema: s\n"
        f"      warehouse: {tmp_path / 'warehouse'}\n")
    (project / "macros" / "say.sql").write_text(
        "{% macro say() %}{{ log('said ' ~ env_var('FORKED_WORD'), info=True) }}{% endmacro %}")
    env = {**os.environ, "FORKED_WORD": "hello"}
    args = ["--project-dir", str(project), "--profiles-dir", str(project)]
    said = dbt_fork_server.run(["run-operation", "say", *args], project, env, timeout=120)
    assert said.returncode == 0 and "said hello" in said.stdout, said.stdout
    missing = dbt_fork_server.run(["run-operation", "no_such_macro", *args], project, env,
                                  timeout=120)
    # dbt's exit code for an error outside a node, as the `dbt` executable ends with
    assert missing.returncode == 2 and "no_such_macro" in missing.stdout, missing.stdout
