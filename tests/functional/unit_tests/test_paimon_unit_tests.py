"""dbt unit tests (`unit_tests:` YAML) on models of each Paimon materialization, with fixtures of
decimal, timestamp, timestamp_ntz, date, array, map and struct columns."""

import pytest
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes
from dbt.tests.util import run_dbt

UPSTREAM = """
{{ config(materialized='paimon_append') }}
select cast(1 as int) id, cast(1.50 as decimal(10,2)) amount,
       timestamp'2024-01-01 10:00:00' ts, timestamp_ntz'2024-01-01 10:00:00' ts_ntz,
       date'2024-01-01' day, array('a', 'b') tags, map('k', 1) attrs,
       named_struct('city', 'x', 'zip', 1) address
"""

PK_MODEL = """
{{ config(materialized='paimon_pk', primary_key='id') }}
select id, amount * 2 as doubled, ts, ts_ntz, date_add(day, 1) as next_day,
       size(tags) as n_tags, attrs['k'] as k, address.city as city
from {{ ref('upstream') }}
"""

PARTIAL_MODEL = """
{{ config(materialized='partial_update', primary_key='id') }}
select id, concat_ws(',', tags) as tag_list from {{ ref('upstream') }}
"""

UNIT_TESTS_YML = """
unit_tests:
  - name: pk_model_types
    model: pk_model
    given:
      - input: ref('upstream')
        format: sql
        rows: |
          select cast(7 as int) id, cast(2.25 as decimal(10,2)) amount,
                 timestamp'2024-03-01 12:30:00' ts, timestamp_ntz'2024-03-01 12:30:00' ts_ntz,
                 date'2024-02-28' day, array('x', 'y', 'z') tags, map('k', 42) attrs,
                 named_struct('city', 'Berlin', 'zip', 10115) address
    expect:
      rows:
        - {id: 7, doubled: 4.50, ts: "2024-03-01 12:30:00", ts_ntz: "2024-03-01 12:30:00",
           next_day: "2024-02-29", n_tags: 3, k: 42, city: Berlin}
  - name: partial_model_arrays
    model: partial_model
    given:
      - input: ref('upstream')
        format: sql
        rows: |
          select cast(1 as int) id, array('a', 'b') tags
    expect:
      rows:
        - {id: 1, tag_list: "a,b"}
  - name: append_model_dict_fixture
    model: upstream_copy
    given:
      - input: ref('upstream')
        rows:
          - {id: 3, amount: 1.25, day: "2024-01-31"}
    expect:
      rows:
        - {id: 3, amount: 1.25, day: "2024-01-31"}
"""

APPEND_MODEL = """
{{ config(materialized='paimon_append') }}
select id, amount, day from {{ ref('upstream') }}
"""


class TestPaimonUnitTests:
    @pytest.fixture(scope="class")
    def models(self):
        return {"upstream.sql": UPSTREAM, "pk_model.sql": PK_MODEL,
                "partial_model.sql": PARTIAL_MODEL, "upstream_copy.sql": APPEND_MODEL,
                "unit_tests.yml": UNIT_TESTS_YML}

    def test_unit_tests(self, project):
        run_dbt(["run", "--select", "upstream"])
        results = run_dbt(["test", "--select", "test_type:unit"])
        assert sorted(r.node.name for r in results) == [
            "append_model_dict_fixture", "partial_model_arrays", "pk_model_types"]
        assert all(r.status == "pass" for r in results)


class TestPaimonUnitTestingTypes(BaseUnitTestingTypes):
    """dbt's type suite with Spark literals; the models are Paimon append tables."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        # each case changes the upstream column's type: rebuild the table every run
        return {"models": {"+materialized": "paimon_append", "+full_refresh": True}}

    @pytest.fixture
    def data_types(self):
        return [
            ["1", "1"],
            ["'1'", "1"],
            ["true", "true"],
            ["DATE '2020-01-02'", "2020-01-02"],
            ["TIMESTAMP '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["TIMESTAMP_NTZ '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["CAST(1 AS DECIMAL(10,2))", "1"],
        ]


class TestPaimonUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestPaimonUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass
