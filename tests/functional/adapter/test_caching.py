"""dbt-tests-adapter's caching suites on Paimon table models. The suites end by comparing
`relation.database.lower()` of the cached relations: a Spark relation has two-level names
(database None), so that comparison is made on schema and identifier; the rest of each
suite (one relation cached by the run, the same one found on the next run's cache
population, --cache-selected-only, --no-populate-cache) runs as it is."""

from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)
from dbt.tests.util import run_dbt


class TwoLevelNames:
    def run_and_inspect_cache(self, project, run_args=None):
        run_dbt(run_args)
        cached = list(project.adapter.cache.relations)
        assert len(cached) == 1
        first = cached[0]
        assert first.schema == project.test_schema == project.test_schema.lower()
        run_dbt(run_args)
        cached = list(project.adapter.cache.relations)
        assert len(cached) == 1
        second = cached[0]
        for key in ("schema", "identifier"):
            assert getattr(first, key).lower() == getattr(second, key).lower()


class TestCachingLowercaseModelPaimon(TwoLevelNames, BaseCachingLowercaseModel):
    pass


class TestCachingUppercaseModelPaimon(TwoLevelNames, BaseCachingUppercaseModel):
    """The suite's model is `MODEL.sql`: its Paimon table is `model`, the lower-case name Spark's
    catalog keeps (dbt compares unquoted names case-insensitively)."""


class TestCachingSelectedSchemaOnlyPaimon(TwoLevelNames, BaseCachingSelectedSchemaOnly):
    pass


class TestNoPopulateCachePaimon(TwoLevelNames, BaseNoPopulateCache):
    pass
