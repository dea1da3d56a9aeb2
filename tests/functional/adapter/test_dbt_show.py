from dbt.tests.adapter.dbt_show.test_dbt_show import BaseShowLimit, BaseShowSqlHeader


class TestShowLimitPaimon(BaseShowLimit):
    pass


class TestShowSqlHeaderPaimon(BaseShowSqlHeader):
    pass
