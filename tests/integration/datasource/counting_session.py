"""A Spark session stand-in that records the SQL sent through it: ``calls``, one per
``spark.sql``, and ``statements``, the statements they hold (a SQL script, which the
registry sends an entry's change as, counted as each of its statements)."""

from dbt.adapters.paimon.datasource.statement_batch import as_script


class CountingSession:
    def __init__(self, spark):
        self.spark, self.calls, self.statements = spark, [], []

    def sql(self, text, *args, **kwargs):
        self.calls.append(text)
        self.statements += script_statements(text)
        return self.spark.sql(text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.spark, name)


def script_statements(text: str) -> list:
    """The statements of ``text``: itself, or those of a script as_script made."""
    if not text.startswith("begin\n"):
        return [text]
    statements = text[len("begin\n"):-len("end")].split(";\n")[:-1]
    assert as_script(statements) == text, "not a script as_script makes"
    return statements
