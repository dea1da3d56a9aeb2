"""The Paimon tables a functional test's dbt project built, read straight from its warehouse."""

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import splits


def location(project, table: str) -> TableRef:
    credentials = project.adapter.config.credentials
    return TableRef(credentials.warehouse, project.test_schema, table,
                         credentials.catalog_options)


def open_table(project, table: str):
    return location(project, table).open()


def snapshots(project, table: str) -> list:
    return splits.list_snapshots(open_table(project, table))


def commit_kinds(project, table: str) -> list:
    """Each snapshot's commit kind, oldest first (APPEND, COMPACT, OVERWRITE)."""
    return [s.commit_kind for s in snapshots(project, table)]
