"""`--empty` runs and seeds (the same bases dbt-spark runs for every profile)."""

from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
)


class TestEmptyRunPaimon(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRefPaimon(BaseTestEmptyInlineSourceRef):
    pass


class TestEmptySeedFlagPaimon(BaseTestEmptySeedFlag):
    pass
