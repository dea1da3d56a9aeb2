"""dbt-tests-adapter's persist_docs suites on Paimon tables (dbt's `table` materialization,
file_format='paimon') and Spark views: the table's comments are the Paimon schema's (table
comment, field descriptions), the views' are dbt-spark's (`create view ... (col comment ..)
comment ..`), and `dbt docs generate` reads both."""

from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
)


class TestPersistDocsPaimon(BasePersistDocs):
    pass


class TestPersistDocsColumnMissingPaimon(BasePersistDocsColumnMissing):
    pass


class TestPersistDocsAllColumnsMissingPaimon(BasePersistDocsAllColumnsMissing):
    pass


class TestPersistDocsCommentOnQuotedColumnPaimon(BasePersistDocsCommentOnQuotedColumn):
    pass
