"""A `deletion_vectors=true` model: each dbt run commits its rows, then the run's maintenance
compacts them with deletion vectors (APPEND + COMPACT, as Paimon's batch writer), so the next
read, `dbt test` and downstream models see every row of the run; with changelog_producer
'lookup' that compaction also writes the run's changelog, which `paimon_changes` consumes.
Interop with Paimon Java: tests/interop/test_deletion_vector_tables.py."""

import struct

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.paimon.datasource.source import is_raw_convertible
from dbt.adapters.paimon.format import deletion_vectors, splits
from tests.functional.paimon_tables import commit_kinds, open_table

MODEL = """
{{ config(materialized='paimon_pk', primary_key='id', buckets=2, deletion_vectors=true,
          merge_engine='aggregation', aggregations={'amount': 'sum'},
          changelog_producer='lookup') }}
{% if var('batch') == 1 %}
select id, cast(id * 10 as int) amount from range(1, 201)
{% else %}
select cast(id as bigint) id, cast(amount as int) amount from values (2, 5), (3, 1), (201, 40)
as t(id, amount)
{% endif %}
"""

DOWNSTREAM = "select sum(amount) as total from {{ ref('balances') }}"

CHANGES = """
{{ config(materialized='paimon_append') }}
select id, amount, _row_kind as kind from {{ paimon_changes(ref('balances')) }}
"""

SCHEMA_YML = """
version: 2
models:
  - name: balances
    columns:
      - name: id
        data_tests: [unique, not_null]
"""


class TestDeletionVectorModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"balances.sql": MODEL, "total.sql": DOWNSTREAM, "balance_changes.sql": CHANGES,
                "schema.yml": SCHEMA_YML}

    def test_runs_are_visible_through_deletion_vectors(self, project):
        run_dbt(["run", "--vars", "{batch: 1}"])
        run_dbt(["run", "--vars", "{batch: 2}"])
        table = open_table(project, "balances")
        assert table.options.deletion_vectors_enabled()
        assert commit_kinds(project, "balances") == ["APPEND", "COMPACT"] * 2
        live = splits.plan_splits(table)
        assert all(f.level > 0 for s in live for f in s.files)
        # run 2's small files did not pull run 1's big ones into the compaction (size ratio):
        # ids 2, 3 of run 1's file are marked deleted instead
        assert any(s.deletion_files for s in live)
        schema = project.test_schema
        assert project.run_sql(f"select id, amount from {schema}.balances where id in (1, 2, 3, "
                               f"201) order by id", fetch="all") == \
            [(1, 10), (2, 25), (3, 31), (201, 40)]
        assert project.run_sql(f"select count(*), sum(amount) from {schema}.balances",
                               fetch="one") == (201, 201046)
        assert project.run_sql(f"select total from {schema}.total", fetch="one")[0] == 201046
        assert len(run_dbt(["test"])) == 2
        # the first run of the consumer reads every row (+I), the second run 2's changelog
        assert project.run_sql(f"select kind, id, amount from {schema}.balance_changes where "
                               f"kind <> '+I' or id > 200 order by id, kind desc", fetch="all") == \
            [("-U", 2, 20), ("+U", 2, 25), ("-U", 3, 30), ("+U", 3, 31), ("+I", 201, 40)]
        assert project.run_sql(f"select count(*) from {schema}.balance_changes",
                               fetch="one")[0] == 205


INCREMENTAL = """
{{ config(materialized='incremental', unique_key='id', buckets=2,
          table_options={'deletion-vectors.enabled': 'true',
                         'deletion-vectors.bitmap64': 'true'}) }}
{% if var('batch') == 1 %}
select id, cast(id * 10 as int) amount from range(1, 201)
{% else %}
select cast(id as bigint) id, cast(amount as int) amount from values (2, 5), (3, 1), (201, 40)
as t(id, amount)
{% endif %}
"""


class TestIncrementalModelWith64BitDeletionVectors:
    """dbt's own incremental materialization (merge on `unique_key`) on a deletion-vector table
    whose options ask for Paimon 1.1's 64-bit vectors (`deletion-vectors.bitmap64`, written as
    Java's Bitmap64DeletionVector: magic 1681511377 little-endian after the big-endian length):
    the run's lookup compaction writes them, and every read applies them without merging."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"ledger.sql": INCREMENTAL}

    def test_runs_write_64_bit_vectors_and_read_through_them(self, project):
        run_dbt(["run", "--vars", "{batch: 1}"])
        run_dbt(["run", "--vars", "{batch: 2}"])
        assert commit_kinds(project, "ledger")[-2:] == ["APPEND", "COMPACT"]
        table = open_table(project, "ledger")
        entries = deletion_vectors.index_entries(
            table, table.snapshot_manager().get_latest_snapshot())
        magics = set()
        for entry in entries:
            path = deletion_vectors.index_file_path(table, tuple(entry.partition.values),
                                                    entry.bucket, entry.index_file)
            with table.file_io.new_input_stream(path) as stream:
                data = stream.read()
            for meta in entry.index_file.dv_ranges.values():
                magics.add(data[meta.offset + 4:meta.offset + 8])
        assert magics == {struct.pack("<i", deletion_vectors.MAGIC_BITMAP64)}
        # each bucket's files are read as they are, the vectors applied, without a merge
        assert all(is_raw_convertible(s) for s in splits.plan_splits(table))
        schema = project.test_schema
        assert project.run_sql(f"select id, amount from {schema}.ledger where id in (1, 2, 3, "
                               f"201) order by id", fetch="all") == \
            [(1, 10), (2, 5), (3, 1), (201, 40)]
        assert project.run_sql(f"select count(*) from {schema}.ledger", fetch="one")[0] == 201
