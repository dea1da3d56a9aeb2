"""`dbt snapshot` into a Paimon primary-key table on dbt_scd_id: each run is ONE commit that closes
changed versions (keeping their stored values) and inserts their successors."""

import pytest
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture

from tests.functional.paimon_tables import open_table, snapshots

# `source` is a view over a seed, switched between states by var('state').
SOURCE_SEED = """state,id,name,updated_at
1,1,alice,2024-01-01 00:00:00
1,2,bob,2024-01-01 00:00:00
1,3,carol,2024-01-01 00:00:00
2,1,alice,2024-01-01 00:00:00
2,2,bobby,2024-02-01 00:00:00
2,4,dave,2024-02-01 00:00:00
"""

SOURCE_MODEL = """
{{ config(materialized='view') }}
select cast(id as int) id, name, cast(updated_at as timestamp) updated_at
from {{ ref('source_rows') }} where state = {{ var('state', 1) }}
"""

TIMESTAMP_SNAPSHOT = """
{% snapshot orders_ts %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at',
          hard_deletes='invalidate') }}
select * from {{ ref('source_view') }}
{% endsnapshot %}
"""

SNAPSHOTS_YML = """
snapshots:
  - name: orders_check
    relation: ref('source_view')
    config:
      unique_key: [id, name]
      strategy: check
      check_cols: all
      hard_deletes: new_record
      dbt_valid_to_current: "to_timestamp('9999-12-31')"
      snapshot_meta_column_names:
        dbt_scd_id: scd_id
        dbt_valid_from: valid_from
        dbt_valid_to: valid_to
"""

BAD_KEY_SNAPSHOT = """
{% snapshot bad_key %}
{{ config(unique_key='name', strategy='check', check_cols=['id']) }}
select id, case when {{ var('bad', 'true') }} then (case when id = 3 then null else 'same' end)
                 else cast(id as string) end as name
from {{ ref('source_view') }}
{% endsnapshot %}
"""


def rows(project, sql):
    return sorted((tuple(r) for r in project.run_sql(sql, fetch="all")), key=repr)


class TestPaimonSnapshot:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"source_rows.csv": SOURCE_SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {"source_view.sql": SOURCE_MODEL}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"orders_ts.sql": TIMESTAMP_SNAPSHOT, "snapshots.yml": SNAPSHOTS_YML,
                "bad_key.sql": BAD_KEY_SNAPSHOT}

    def test_snapshot_versions(self, project):
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["snapshot", "--exclude", "bad_key"])
        table = open_table(project, "orders_ts")
        assert list(table.primary_keys) == ["dbt_scd_id"]
        assert rows(project, f"select id, name, dbt_valid_to is null from {schema}.orders_ts") \
            == [(1, "alice", True), (2, "bob", True), (3, "carol", True)]

        run_dbt(["run", "--vars", "{state: 2}"])
        run_dbt(["snapshot", "--exclude", "bad_key", "--vars", "{state: 2}"])
        # bob's old version closed with its stored name; bobby inserted; carol invalidated
        assert rows(project, f"select id, name, cast(dbt_valid_from as string), "
                             f"dbt_valid_to is null from {schema}.orders_ts") == sorted([
            (1, "alice", "2024-01-01 00:00:00", True),
            (2, "bob", "2024-01-01 00:00:00", False),
            (2, "bobby", "2024-02-01 00:00:00", True),
            (3, "carol", "2024-01-01 00:00:00", False),
            (4, "dave", "2024-02-01 00:00:00", True),
        ], key=repr)
        assert rows(project, f"select cast(dbt_valid_to as string) from {schema}.orders_ts "
                             f"where id = 2 and name = 'bob'") == [("2024-02-01 00:00:00",)]
        # one Paimon commit per `dbt snapshot`
        assert [s.commit_kind for s in snapshots(project, "orders_ts")] == ["APPEND", "APPEND"]

        # YAML snapshot: composite key, check strategy, new_record deletes, custom column names
        current = "to_timestamp('9999-12-31')"
        check = rows(project, f"select id, name, valid_to = {current}, dbt_is_deleted "
                              f"from {schema}.orders_check")
        assert check == sorted([
            (1, "alice", True, "False"),
            (2, "bob", False, "False"),       # key (2, bob) left the source: closed...
            (2, "bob", True, "True"),         # ... and a deletion record added
            (2, "bobby", True, "False"),
            (3, "carol", False, "False"),
            (3, "carol", True, "True"),
            (4, "dave", True, "False"),
        ], key=repr)
        assert list(open_table(project, "orders_check").primary_keys) == ["scd_id"]

        # a run without changes commits nothing new and changes nothing
        run_dbt(["snapshot", "--exclude", "bad_key", "--vars", "{state: 2}"])
        assert len(rows(project, f"select * from {schema}.orders_ts")) == 5

    def test_null_or_duplicate_unique_key_fails_before_writing(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        _, output = run_dbt_and_capture(["snapshot", "--select", "bad_key"], expect_pass=False)
        assert "Snapshot 'bad_key'" in output
        assert "unique_key 'name'" in output
        assert "1 row(s) with a NULL key" in output
        assert "'name': 'same', 'rows': 2" in output
        assert "Fix the snapshot query" in output
        with get_connection(project.adapter):
            assert not project.adapter.is_paimon_relation(
                project.adapter.Relation.create(schema=project.test_schema, identifier="bad_key"))
        # on an existing snapshot table: the failed run leaves it at its previous snapshot
        run_dbt(["snapshot", "--select", "bad_key", "--vars", "{bad: 'false'}"])
        before = [s.id for s in snapshots(project, "bad_key")]
        run_dbt_and_capture(["snapshot", "--select", "bad_key"], expect_pass=False)
        assert [s.id for s in snapshots(project, "bad_key")] == before == [1]
        assert len(project.run_sql(f"select * from {project.test_schema}.bad_key",
                                   fetch="all")) == 3
