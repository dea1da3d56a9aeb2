"""paimon_pk / partial_update from a dbt project: several runs (one Paimon commit each), then reads
and `dbt test` on the merged rows. Inputs come from a seed filtered by the run's batch number, so
every run is one INSERT statement of the seed documents' examples."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.paimon.catalog import warehouse as wh
from tests.functional import batch_runs
from tests.functional.batch_runs import batch_env
from tests.functional.paimon_tables import snapshots


def rows(project, sql):
    return [tuple(r) for r in project.run_sql(sql, fetch="all")]


def snapshot_ids(project, table):
    return [s.id for s in snapshots(project, table)]


def appends(project, table):
    """Snapshots written by dbt runs (automatic compaction may add COMPACT snapshots)."""
    return [s.id for s in snapshots(project, table) if s.commit_kind == "APPEND"]


def run_batch(batch, select=None, expect_pass=True):
    args = ["run"] + (["--select", select] if select else [])
    return batch_runs.run_batch(args, batch, expect_pass)


# Seed 001, first example: sequence groups g_1 (a, b) and g_2 (c, d).
SEQUENCE_GROUP_INPUT = """batch,k,a,b,g_1,c,d,g_2
1,1,1,1,1,1,1,1
2,1,2,2,2,2,2,
3,1,3,3,1,3,3,3
"""

SEQUENCE_GROUP_MODEL = """
{{ config(materialized='partial_update', primary_key='k',
          sequence_groups={'g_1': ['a', 'b'], 'g_2': ['c', 'd']}) }}
select cast(k as int) k, cast(a as int) a, cast(b as int) b, cast(g_1 as int) g_1,
       cast(c as int) c, cast(d as int) d, cast(g_2 as int) g_2
from {{ ref('sg_input') }} where batch = {{ env_var('DBT_TEST_BATCH', '0') }}
"""

SCHEMA_YML = """
version: 2
models:
  - name: sg
    columns:
      - name: k
        data_tests: [unique, not_null]
"""


class TestPartialUpdateSequenceGroups:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"sg_input.csv": SEQUENCE_GROUP_INPUT}

    @pytest.fixture(scope="class")
    def models(self):
        return {"sg.sql": SEQUENCE_GROUP_MODEL, "schema.yml": SCHEMA_YML}

    def test_seed_001_example(self, project):
        run_dbt(["seed"])
        run_batch(1)
        run_batch(2)
        # g_2 is null: c, d keep their values
        assert rows(project, f"select * from {project.test_schema}.sg") == [(1, 2, 2, 2, 1, 1, 1)]
        run_batch(3)
        # g_1 is smaller: a, b keep their values
        assert rows(project, f"select * from {project.test_schema}.sg") == [(1, 2, 2, 2, 3, 3, 3)]
        assert len(appends(project, "sg")) == 3  # one Paimon commit per run
        results = run_dbt(["test"])
        assert len(results) == 2


# Seeds 002/003: the merge engines' documented examples, each INSERT one run.
ENGINE_INPUT = """batch,seq,k,v1,v2
1,1,1,2.0,apple
2,2,1,4.0,banana
3,3,1,8.0,cherry
"""


def engine_model(engine):
    return f"""
{{{{ config(materialized='paimon_pk', primary_key='k', merge_engine='{engine}', buckets=2) }}}}
select cast(k as int) k, cast(v1 as double) v1, v2 from {{{{ ref('engine_input') }}}}
where batch = {{{{ env_var('DBT_TEST_BATCH', '0') }}}}
"""


class TestDeduplicateAndFirstRow:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"engine_input.csv": ENGINE_INPUT}

    @pytest.fixture(scope="class")
    def models(self):
        return {"dedup.sql": engine_model("deduplicate"), "first.sql": engine_model("first-row")}

    def test_last_and_first_record_win(self, project):
        run_dbt(["seed"])
        # the query reads a Paimon seed (an append table), which Spark reads with its own
        # Parquet reader and sizes by its files: the small run is merged in the dbt process
        with batch_env(1):
            _, output = run_dbt_and_capture(["--debug", "run"])
        assert output.count("rows in-process") == 2
        assert "(Paimon metadata of" not in output
        assert output.count(" <= in-process budget") >= 2
        for batch in (2, 3):
            run_batch(batch)
        schema = project.test_schema
        assert rows(project, f"select * from {schema}.dedup") == [(1, 8.0, "cherry")]
        assert rows(project, f"select * from {schema}.first") == [(1, 2.0, "apple")]


DELETE_INPUT = """seq,k,v1,v2,op
1,1,2.0,apple,+I
2,1,4.0,banana,+I
3,1,4.0,banana,-D
4,2,1.0,kiwi,+I
"""

DELETE_MODEL = """
{{ config(materialized='paimon_pk', primary_key='k', row_kind_column='op') }}
select cast(k as int) k, cast(v1 as double) v1, v2, op from {{ ref('delete_input') }} order by seq
"""


class TestDeleteThroughRowKindColumn:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"delete_input.csv": DELETE_INPUT}

    @pytest.fixture(scope="class")
    def models(self):
        return {"deleted.sql": DELETE_MODEL}

    def test_latest_delete_removes_the_key(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        # seed 002: +I apple, +I banana, -D banana -> key 1 gone; the row-kind column is not stored
        assert rows(project, f"select * from {project.test_schema}.deleted") == [(2, 1.0, "kiwi")]


AGG_INPUT = """batch,product_id,price,sales
1,1,23.0,15
2,1,30.2,20
"""

AGG_MODEL = """
{{ config(materialized='paimon_pk', primary_key='product_id', merge_engine='aggregation',
          aggregations={'price': 'max', 'sales': 'sum'}) }}
select cast(product_id as bigint) product_id, cast(price as double) price,
       cast(sales as bigint) sales
from {{ ref('agg_input') }} where batch = {{ env_var('DBT_TEST_BATCH', '0') }}
"""


class TestAggregation:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"agg_input.csv": AGG_INPUT}

    @pytest.fixture(scope="class")
    def models(self):
        return {"sales.sql": AGG_MODEL}

    def test_max_and_sum(self, project):
        run_dbt(["seed"])
        run_batch(1)
        run_batch(2)
        assert rows(project, f"select * from {project.test_schema}.sales") == [(1, 30.2, 35)]


BAD_INPUT = """batch,k,v
1,1,a
2,,b
"""

BAD_MODEL = """
{{ config(materialized='paimon_pk', primary_key='k') }}
select cast(k as int) k, v from {{ ref('bad_input') }} where batch = {{ env_var('DBT_TEST_BATCH', '0') }}
"""


class TestBadInputLeavesTableUntouched:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"bad_input.csv": BAD_INPUT}

    @pytest.fixture(scope="class")
    def models(self):
        return {"bad.sql": BAD_MODEL}

    def test_null_primary_key_fails_the_run(self, project):
        run_dbt(["seed"])
        run_batch(1)
        before = snapshot_ids(project, "bad")
        with batch_env(2):
            _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "bad" in output and "k" in output and "null" in output.lower()
        assert snapshot_ids(project, "bad") == before
        assert rows(project, f"select * from {project.test_schema}.bad") == [(1, "a")]


class TestConfigErrorsNameModelAndKey:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "wrong_engine.sql": "{{ config(materialized='paimon_pk', primary_key='k', "
            "merge_engine='dedup') }} select 1 as k",
            "two_ways.sql": "{{ config(materialized='paimon_pk', primary_key='k', buckets=2, "
            "table_options={'bucket': '3'}) }} select 1 as k",
        }

    def test_errors_before_anything_is_written(self, project):
        _, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert "Model 'wrong_engine'" in output and "merge-engine" in output
        assert "Model 'two_ways'" in output and "given two ways" in output
        warehouse = project.adapter.config.credentials.warehouse
        assert not wh.table_exists(warehouse, project.test_schema, "wrong_engine")
        assert not wh.table_exists(warehouse, project.test_schema, "two_ways")


CHANGING_MODEL = """
{{ config(materialized='paimon_pk', primary_key='k', on_schema_change='append_new_columns',
          merge_engine=var('engine', 'deduplicate'), buckets=var('buckets', 1)) }}
select 1 as k, 'x' as v {% if var('extra', false) %}, 10 as w {% endif %}
"""


class TestExistingTableChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {"changing.sql": CHANGING_MODEL}

    def test_engine_bucket_and_column_changes(self, project):
        run_dbt(["run"])
        _, output = run_dbt_and_capture(["run", "--vars", "{engine: first-row}"], expect_pass=False)
        assert "--full-refresh" in output
        _, output = run_dbt_and_capture(["run", "--vars", "{buckets: 4}"], expect_pass=False)
        assert "rescale_buckets" in output
        run_dbt(["run", "--vars", "{extra: true}"])
        assert rows(project, f"select * from {project.test_schema}.changing") == [(1, "x", 10)]
        run_dbt(["run", "--full-refresh", "--vars", "{engine: first-row}"])
        assert rows(project, f"select k, v from {project.test_schema}.changing") == [(1, "x")]
        # a rebuilt table starts a new history: its first run's commit (plus the first-row
        # engine's immediate compaction of level 0, which Paimon's writers also do)
        assert [s.commit_kind for s in snapshots(project, "changing")] == ["APPEND", "COMPACT"]


SCHEMA_CHANGE_MODEL = """
{{ config(materialized='paimon_pk', primary_key='k', on_schema_change=var('mode')) }}
select 1 as k, 'x' as v {% if var('extra', false) %}, 10 as w {% endif %}
{% if not var('drop_v', false) %}, 'keep' as u {% endif %}
"""


class TestOnSchemaChangeModes:
    @pytest.fixture(scope="class")
    def models(self):
        return {"evolving.sql": SCHEMA_CHANGE_MODEL}

    def test_ignore_fail_and_sync(self, project):
        table = f"{project.test_schema}.evolving"
        run_dbt(["run", "--vars", "{mode: ignore}"])
        # ignore: the new column is not stored
        run_dbt(["run", "--vars", "{mode: ignore, extra: true}"])
        assert rows(project, f"select * from {table}") == [(1, "x", "keep")]
        # fail: any difference stops the run before anything is written
        before = snapshot_ids(project, "evolving")
        _, output = run_dbt_and_capture(["run", "--vars", "{mode: fail, extra: true}"],
                                        expect_pass=False)
        assert "on_schema_change='fail'" in output and "['w']" in output
        assert snapshot_ids(project, "evolving") == before
        # sync_all_columns: add w, drop u
        run_dbt(["run", "--vars", "{mode: sync_all_columns, extra: true, drop_v: true}"])
        assert rows(project, f"select * from {table}") == [(1, "x", 10)]


FAILING_EVOLUTION_MODEL = """
{{ config(materialized='paimon_pk', primary_key='k', on_schema_change='append_new_columns') }}
select {% if var('bad', false) %}cast(null as int){% else %}1{% endif %} as k, 'x' as v
{% if var('extra', false) %}, 10 as w {% endif %}
"""


class TestFailedRunKeepsSchema:
    """A run that adds a column and then fails (a NULL primary key) leaves the table exactly as
    it was: the ALTER is retracted with the failed commit."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"evolving_bad.sql": FAILING_EVOLUTION_MODEL}

    def test_schema_change_retracted(self, project):
        warehouse = project.adapter.config.credentials.warehouse
        run_dbt(["run"])
        before = wh.open_table(warehouse, project.test_schema, "evolving_bad")
        snapshots_before = snapshot_ids(project, "evolving_bad")
        _, output = run_dbt_and_capture(["run", "--vars", "{bad: true, extra: true}"],
                                        expect_pass=False)
        assert "'k'" in output
        after = wh.open_table(warehouse, project.test_schema, "evolving_bad")
        assert after.table_schema.id == before.table_schema.id
        assert list(after.field_names) == ["k", "v"]
        assert snapshot_ids(project, "evolving_bad") == snapshots_before
        # the next good run makes the same change for real
        run_dbt(["run", "--vars", "{extra: true}"])
        table = f"{project.test_schema}.evolving_bad"
        assert rows(project, f"select * from {table}") == [(1, "x", 10)]


ORDERS_PART = """
{{ config(materialized='partial_update', target='wide', primary_key='id',
          sequence_groups={'order_ts': ['status']}) }}
select cast(id as int) id, status, cast(order_ts as int) order_ts
from {{ ref('order_events') }} where batch = {{ env_var('DBT_TEST_BATCH', '0') }}
"""

PAYMENTS_PART = """
{{ config(materialized='partial_update', target='wide', primary_key='id',
          sequence_groups={'pay_ts': ['paid']}) }}
select cast(id as int) id, paid, cast(pay_ts as int) pay_ts
from {{ ref('pay_events') }} where batch = {{ env_var('DBT_TEST_BATCH', '0') }}
"""


class TestSharedPartialUpdateTarget:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "order_events.csv": "batch,id,status,order_ts\n1,1,placed,1\n2,1,shipped,3\n3,1,stale,2\n",
            "pay_events.csv": "batch,id,paid,pay_ts\n1,1,no,1\n2,2,yes,5\n3,1,yes,4\n",
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders_part.sql": ORDERS_PART, "payments_part.sql": PAYMENTS_PART}

    def test_writers_assemble_one_table(self, project):
        run_dbt(["seed"])
        for batch in (1, 2, 3):
            # two threads: dbt starts both writers at once (independent nodes); their builds of
            # the shared table take turns instead of refusing the later commit
            with batch_env(batch):
                run_dbt(["run", "--threads", "2"])
        schema = project.test_schema
        # each writer owns its columns; the late 'stale' order event (order_ts 2 < 3) is ignored
        assert rows(project, f"select id, status, order_ts, paid, pay_ts from {schema}.wide "
                             "order by id") == [(1, "shipped", 3, "yes", 4), (2, None, None, "yes", 5)]
        # every writer model is a view of the shared table
        assert rows(project, f"select count(*) from {schema}.orders_part") == [(2,)]
        assert rows(project, f"select count(*) from {schema}.payments_part") == [(2,)]
        with batch_env(1):
            _, output = run_dbt_and_capture(["run", "--full-refresh", "--select",
                                             "orders_part"], expect_pass=False)
        assert "paimon_drop_table" in output


# Writer `late` comes third in its chain (late_source, late_input, late), its table's other
# writer `early` first: one thread runs nodes by their depth in the graph, so a data test naming
# `early` alone would run before `late` adds `b`.
EARLY_WRITER = """
{{ config(materialized='partial_update', target='assembled', primary_key='id') }}
select 1 as id, 'x' as a
"""
LATE_WRITER = """
{{ config(materialized='partial_update', target='assembled', primary_key='id') }}
select id, 'y' as b from {{ ref('late_input') }}
"""
READS_BOTH_WRITERS = """
select * from {{ ref('early') }} where b is null
"""


class TestReadersRunAfterEveryWriter:
    """A data test of one writer's view reading another writer's column runs after both
    (manifest_hooks.order_readers_after_shared_writers), and the view made by the first writer
    shows the column the second one adds (a view WITH SCHEMA EVOLUTION, build_model.sql).
    Without either, this build fails with UNRESOLVED_COLUMN `b`. The sample project's
    wide-table test is such a reader."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"early.sql": EARLY_WRITER, "late.sql": LATE_WRITER,
                "late_source.sql": "select 1 as id",
                "late_input.sql": "select * from {{ ref('late_source') }}"}

    @pytest.fixture(scope="class")
    def tests(self):
        return {"reads_both_writers.sql": READS_BOTH_WRITERS}

    def test_the_test_runs_after_both_writers(self, project):
        results = run_dbt(["build", "--threads", "1"])
        order = [r.node.name for r in results]
        assert order.index("reads_both_writers") > max(order.index("early"),
                                                       order.index("late")), order
        assert rows(project, f"select id, a, b from {project.test_schema}.assembled") == \
            [(1, "x", "y")]


TRAVEL_SOURCE = """
{{ config(materialized='paimon_pk', primary_key='k') }}
select 1 as k, '{{ var("v", "first") }}' as v
"""

TRAVEL_READER = """
{{ config(materialized='table') }}
select * from {{ paimon_snapshot(ref('travel_source'), var('snapshot', 1)) }}
"""


class TestPaimonSnapshotTimeTravel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"travel_source.sql": TRAVEL_SOURCE, "travel_reader.sql": TRAVEL_READER}

    def test_reads_an_earlier_snapshot(self, project):
        schema = project.test_schema
        run_dbt(["run", "--select", "travel_source"])
        run_dbt(["run", "--select", "travel_source", "--vars", "{v: second}"])
        assert rows(project, f"select * from {schema}.travel_source") == [(1, "second")]
        run_dbt(["run", "--select", "travel_reader"])
        assert rows(project, f"select * from {schema}.travel_reader") == [(1, "first")]
        _, output = run_dbt_and_capture(["run", "--select", "travel_reader",
                                         "--vars", "{snapshot: 99}"], expect_pass=False)
        assert "has no snapshot 99" in output


class TestAnotherWritersRunIsReadAsAChoiceOfRows:
    @pytest.fixture(scope="class")
    def models(self):
        return {"shop.sql": "{{ config(materialized='paimon_pk', primary_key='k', buckets=1) }}\n"
                            "select cast(id as int) k, 'dbt' as v from range(4)"}

    def test_a_statement_naming_the_table_reads_it_natively(self, project):
        """Another writer (pypaimon here) adds a run overlapping dbt's: the next dbt statement
        naming the table first chooses each key's last record, then Spark's own reader reads
        just those rows (docs/reads.md)."""
        import pyarrow as pa

        run_dbt(["run"])
        schema = project.test_schema
        table = wh.open_table(project.adapter.config.credentials.warehouse, schema, "shop")
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(pa.table({"k": pa.array([1, 2], pa.int32()),
                                    "v": pa.array(["other", "other"])}))
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
        assert sorted(rows(project, f"select k, v from {schema}.shop")) == [
            (0, "dbt"), (1, "other"), (2, "other"), (3, "dbt")]
        properties = dict(rows(project, f"show tblproperties {schema}.shop"))
        assert properties["paimon.read"] == "native-with-deleted-rows"
