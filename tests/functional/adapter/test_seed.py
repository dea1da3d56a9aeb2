"""Seeds load values verbatim: quotes, backslashes and empty fields (NULL).

dbt-spark formats seed values into the SQL text without escaping and without NULLs; dbt-paimon
binds them as Spark SQL parameters. Spark string literals also read backslash escapes (`\\n`,
`\\t`), so a Windows path is the sharpest check that values are bound, not inlined.
"""

import os
import time

import pytest
from dbt.tests.adapter.simple_seed.test_seed import BaseTestEmptySeed
from dbt.tests.util import get_connection, relation_from_name, run_dbt

seeds__people_csv = "\n".join([
    "id,name,note,amount",
    '1,O\'Brien,"say ""hi""",1.5',
    "2,C:\\new\\table,,",
    "3,,it's 'quoted' \\' too,3",
    '4,Zoë,"comma, inside",',
    "",
])

EXPECTED_PEOPLE = [
    (1, "O'Brien", 'say "hi"', 1.5),
    (2, "C:\\new\\table", None, None),
    (3, None, "it's 'quoted' \\' too", 3.0),
    (4, "Zoë", "comma, inside", None),
]


class TestSeedQuotesAndNullsPaimon:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"people.csv": seeds__people_csv}

    def _loaded_rows(self, project):
        relation = relation_from_name(project.adapter, "people")
        rows = project.run_sql(
            f"select id, name, note, amount from {relation} order by id", fetch="all"
        )
        return [
            (int(r[0]), r[1], r[2], None if r[3] is None else float(r[3])) for r in rows
        ]

    def test_values_and_nulls_survive(self, project):
        results = run_dbt(["seed"])
        assert len(results) == 1
        assert self._loaded_rows(project) == EXPECTED_PEOPLE

        # empty fields are NULLs, not empty strings
        relation = relation_from_name(project.adapter, "people")
        nulls = project.run_sql(
            f"select count(*) from {relation} where name is null or note is null", fetch="one"
        )
        assert nulls[0] == 2

        # a second load replaces the rows instead of appending them
        run_dbt(["seed"])
        assert self._loaded_rows(project) == EXPECTED_PEOPLE
        run_dbt(["seed", "--full-refresh"])
        assert self._loaded_rows(project) == EXPECTED_PEOPLE


class TestEmptySeedPaimon(BaseTestEmptySeed):
    pass


seeds__typed_csv = "\n".join([
    "id,flag,day,ts,price,code",
    "1,true,2024-01-31,2024-01-31 12:34:56,19.99,007",
    "2,false,,,,",
    "",
])

EXPECTED_TYPED = [
    ("1", "true", "2024-01-31", "2024-01-31 12:34:56", "19.99", "007"),
    ("2", "false", None, None, None, None),
]


class TestSeedTypedValuesPaimon:
    """Booleans, dates, timestamps, decimals and a `column_types` text override, as bound values."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"typed.csv": seeds__typed_csv}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+column_types": {"price": "decimal(10,2)", "code": "string"}}}

    def _loaded_rows(self, project):
        relation = relation_from_name(project.adapter, "typed")
        rows = project.run_sql(
            "select cast(id as string), cast(flag as string), cast(day as string), "
            f"cast(ts as string), cast(price as string), code from {relation} order by id",
            fetch="all",
        )
        return [tuple(row) for row in rows]

    def test_typed_values(self, project):
        run_dbt(["seed"])
        assert self._loaded_rows(project) == EXPECTED_TYPED
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(
                relation_from_name(project.adapter, "typed"))
        assert {c.name: c.dtype for c in columns} == {
            "id": "bigint", "flag": "boolean", "day": "date", "ts": "timestamp",
            "price": "decimal(10,2)", "code": "string"}

    def test_timestamps_do_not_depend_on_local_time_zone(self, project):
        saved = os.environ.get("TZ")
        os.environ["TZ"] = "America/New_York"
        time.tzset()
        try:
            run_dbt(["seed", "--full-refresh"])
        finally:
            if saved is None:
                os.environ.pop("TZ", None)
            else:
                os.environ["TZ"] = saved
            time.tzset()
        assert self._loaded_rows(project) == EXPECTED_TYPED
