"""dbt-tests-adapter's basic suite against the paimon profile: plain dbt materializations
(table, view, incremental append, seed, ephemeral) keep working on the embedded Spark session.

dbt-spark skips several of these for its `spark_session` profile; dbt-paimon runs them all
(its session binds seed values as parameters and keeps Spark's state under the warehouse).
Snapshots are left out: dbt-spark's snapshot needs a merge-capable format (delta/hudi/iceberg),
not the parquet tables these plain materializations build.
"""

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental, BaseIncrementalNotSchemaChange
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_table_materialization import BaseTableMaterialization
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection


class TestSimpleMaterializationsPaimon(BaseSimpleMaterializations):
    pass


class TestSingularTestsPaimon(BaseSingularTests):
    pass


class TestSingularTestsEphemeralPaimon(BaseSingularTestsEphemeral):
    pass


# BaseEmpty checks that dbt wrote run_results.json
@pytest.mark.usefixtures("dbt_artifacts")
class TestEmptyPaimon(BaseEmpty):
    pass


class TestEphemeralPaimon(BaseEphemeral):
    pass


class TestIncrementalPaimon(BaseIncremental):
    pass


class TestIncrementalNotSchemaChangePaimon(BaseIncrementalNotSchemaChange):
    pass


class TestGenericTestsPaimon(BaseGenericTests):
    pass


class TestTableMaterializationPaimon(BaseTableMaterialization):
    pass


class TestValidateConnectionPaimon(BaseValidateConnection):
    pass


class TestAdapterMethodPaimon(BaseAdapterMethod):
    pass
