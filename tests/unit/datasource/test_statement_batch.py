"""Several catalog statements as one SQL script (datasource/statement_batch.py): what is sent,
and when it falls back to one call per statement. Spark's own run of such a script (its
statements' effects, the first failure's error) is tested in
tests/integration/datasource/test_statement_scripts.py."""

import pytest

from dbt.adapters.paimon.datasource.statement_batch import (SCRIPTING_CONF, as_script,
                                                            run_statements, runs_scripts)


class Session:
    def __init__(self, conf=None, conf_error=None):
        self.sent = []
        self._conf, self._error = dict(conf or {}), conf_error

    @property
    def conf(self):
        return self

    def get(self, key, default="<not given>"):
        # as Spark's: a default given is returned for a setting left at Spark's own default
        assert default == "<not given>", "asked with a default: Spark would return it"
        if self._error is not None:
            raise self._error
        if key not in self._conf:
            raise RuntimeError(f"[SQL_CONF_NOT_FOUND] {key}")
        return self._conf[key]

    def sql(self, text):
        self.sent.append(text)


STATEMENTS = ["alter table `d__paimon`.`files_t` set location '/w/a;b'",
              "alter view `d`.`t` set tblproperties ('paimon.snapshot-id' = '3')"]


def test_several_statements_are_one_script_in_their_order():
    session = Session()
    run_statements(session, STATEMENTS, scripts=True)
    assert session.sent == [as_script(STATEMENTS)]
    assert session.sent[0] == ("begin\n" + STATEMENTS[0] + ";\n" + STATEMENTS[1] + ";\nend")


@pytest.mark.parametrize("statements", [[], STATEMENTS[:1]])
def test_one_statement_or_none_is_sent_as_it_is(statements):
    session = Session()
    run_statements(session, statements, scripts=True)
    assert session.sent == statements


def test_without_scripts_each_statement_is_a_call_of_its_own():
    session = Session()
    run_statements(session, STATEMENTS, scripts=False)
    assert session.sent == STATEMENTS


@pytest.mark.parametrize("conf, error, expected", [
    ({SCRIPTING_CONF: "true"}, None, True),
    ({SCRIPTING_CONF: "TRUE "}, None, True),
    ({SCRIPTING_CONF: "false"}, None, False),
    ({}, None, False),  # a Spark before 4.0 knows no such setting
    ({SCRIPTING_CONF: "true"}, RuntimeError("the server is gone"), False),
])
def test_a_session_runs_scripts_only_when_its_setting_says_so(conf, error, expected):
    assert runs_scripts(Session(conf, error)) is expected
