import getpass

import pytest
from dbt.tests.adapter.basic.expected_catalog import base_expected_catalog, no_stats
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate
from dbt.tests.util import AnyString

# dbt-tests-adapter's docs suite reads manifest.json
pytestmark = pytest.mark.usefixtures("dbt_artifacts")


class Number:
    """A catalog stat value that reads as a number satisfying ``test`` (dbt's catalog may hand
    back ints as floats or text)."""

    def __init__(self, test):
        self.test = test

    def __eq__(self, other):
        if isinstance(other, bool):
            return False
        try:
            return bool(self.test(float(other)))
        except (TypeError, ValueError):
            return False

    def __repr__(self):
        return "<Number>"


def paimon_stat(name, value):
    return {"id": f"paimon_{name}", "label": AnyString(), "value": value,
            "description": AnyString(), "include": True}


def one_commit_append_table_stats():
    """The seed: a Paimon append table (file_format='paimon' is the default for seeds) loaded by
    one commit; dbt-paimon's catalog adds its Paimon numbers (ops/catalog_stats.py)."""
    stats = {
        "has_stats": {"id": "has_stats", "label": "Has Stats?", "value": True,
                      "description": "Indicates whether there are statistics for this table",
                      "include": False},
        "paimon_rows": paimon_stat("rows", Number(lambda v: v == 1)),
        "paimon_files": paimon_stat("files", Number(lambda v: v == 1)),
        "paimon_bytes": paimon_stat("bytes", Number(lambda v: v > 0)),
        "paimon_snapshot_id": paimon_stat("snapshot_id", Number(lambda v: v == 1)),
        "paimon_snapshot_time": paimon_stat("snapshot_time", AnyString()),
        "paimon_primary_key": paimon_stat("primary_key", "(append table)"),
        "paimon_merge_engine": paimon_stat("merge_engine", "(append table)"),
        "paimon_buckets": paimon_stat("buckets", Number(lambda v: v == -1)),
    }
    return stats


class TestDocsGeneratePaimon(BaseDocsGenerate):
    # dbt-spark's catalog: Spark's schema tree type names (`long` for a bigint seed column),
    # lower-case relation types, the OS user as owner; views have no stats, the seed (a Paimon
    # table) has its Paimon numbers.
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
            seed_stats=one_commit_append_table_stats(),
        )
