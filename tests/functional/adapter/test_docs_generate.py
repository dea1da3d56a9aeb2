import getpass

import pytest
from dbt.tests.adapter.basic.expected_catalog import base_expected_catalog, no_stats
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate


class TestDocsGeneratePaimon(BaseDocsGenerate):
    # dbt-spark's catalog: Spark's schema tree type names (`long` for a bigint seed column),
    # lower-case relation types, the OS user as owner, no stats.
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return base_expected_catalog(
            project,
            role=getpass.getuser(),
            id_type="long",
            text_type="string",
            time_type="timestamp",
            view_type="view",
            table_type="table",
            model_stats=no_stats(),
        )
