"""Paimon tables written by another Paimon writer (pypaimon) are dbt relations.

The tables are written straight into the test process's warehouse, then declared as a dbt
`source`. Every way dbt reads a relation must see the table's latest snapshot, and a
primary-key table must read merged (the updated value, one row per key): SQL view, table and
incremental models, a Python model, `dbt show`, `dbt test` and `dbt docs generate`. The adapter
methods macros rely on (columns, listing, drop, rename) must act on the Paimon table itself.
Tables of every merge engine read merged as Paimon defines it, and every Paimon type reads back.

Each class writes into its own Paimon database so classes never see each other's tables.
"""

import datetime
import decimal

import pyarrow as pa
import pytest
from dbt.tests.util import get_connection, relation_from_name, run_dbt

from dbt.adapters.paimon import environments
from dbt.adapters.paimon.catalog import warehouse as wh

EVENTS_SCHEMA = pa.schema([
    ("dt", pa.string()),
    ("id", pa.int64()),
    ("kind", pa.string()),
    ("amount", pa.float64()),
])
CUSTOMERS_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    ("name", pa.string()),
    ("tier", pa.string()),
])


def rows_of(schema: pa.Schema, rows) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(schema.names, row)) for row in rows], schema=schema)


def pypaimon_commit(table, data: pa.Table) -> None:
    """One commit by pypaimon's own batch writer (another Paimon writer, not the adapter)."""
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    commit = builder.new_commit()
    try:
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()


def expose_to_running_session(database: str) -> None:
    """A session that started before the tables were written learns about them on sync;
    one that starts later syncs the whole warehouse itself."""
    try:
        registry = environments.current_registry()
    except RuntimeError:
        return
    registry.sync([database])


def drop_paimon_database(warehouse: str, database: str) -> None:
    for table in wh.list_tables(warehouse, database):
        wh.drop_table(warehouse, database, table)
    expose_to_running_session(database)


def as_tuples(rows):
    return [tuple(row) for row in rows]


EVENTS_COMMIT_1 = [
    ("2024-01-01", 1, "click", 1.5),
    ("2024-01-01", 2, "view", None),
    ("2024-01-02", 3, "click", 3.25),
]
EVENTS_COMMIT_3 = [("2024-01-03", 4, "buy", 10.0)]
CUSTOMERS_COMMIT_1 = [(1, "Alice", "gold"), (2, "Bob", "silver"), (3, "Carol", "bronze")]
CUSTOMERS_COMMIT_2 = [(2, "Bobby", "gold"), (4, "Dan", None)]
# merged: key 2 takes the second commit's row; one row per key
CUSTOMERS_MERGED = [(1, "Alice", "gold"), (2, "Bobby", "gold"), (3, "Carol", "bronze"),
                    (4, "Dan", None)]

SOURCES_YML = """
version: 2
sources:
  - name: lake
    schema: {database}
    tables:
      - name: events
        columns:
          - name: id
            data_tests: [not_null, unique]
          - name: dt
            data_tests: [not_null]
      - name: customers
        columns:
          - name: id
            description: primary key; unique only if the table is read merged
            data_tests: [not_null, unique]
          - name: name
            data_tests: [not_null]
"""

events_view_sql = """
{{ config(materialized='view') }}
select dt, id, kind, amount from {{ source('lake', 'events') }}
"""

customers_table_sql = """
{{ config(materialized='table') }}
select id, name, tier from {{ source('lake', 'customers') }}
"""

events_incremental_sql = """
{{ config(materialized='incremental') }}
select dt, id, kind, amount from {{ source('lake', 'events') }}
{% if is_incremental() %}
where id > (select coalesce(max(id), 0) from {{ this }})
{% endif %}
"""

customers_python_py = """
def model(dbt, session):
    dbt.config(materialized='table')
    customers = dbt.source('lake', 'customers')
    return customers.where("tier = 'gold'").select('id', 'name')
"""

# downstream of both sources: a join that depends on the merged customer rows
gold_events_sql = """
{{ config(materialized='table') }}
select e.id as event_id, c.name
from {{ ref('events_view') }} e
join {{ ref('customers_table') }} c on c.id = e.id
where c.tier = 'gold'
"""


class TestPaimonSourcesPaimon:
    DATABASE = "paimon_src_lake"

    @pytest.fixture(scope="class")
    def paimon_tables(self, paimon_warehouse):
        """Written before the project fixture opens the first dbt connection of this class."""
        db = self.DATABASE
        events_table = wh.create_table(paimon_warehouse, db, "events", EVENTS_SCHEMA,
                                       partition_keys=["dt"])
        pypaimon_commit(events_table, rows_of(EVENTS_SCHEMA, EVENTS_COMMIT_1))
        customers_table = wh.create_table(paimon_warehouse, db, "customers", CUSTOMERS_SCHEMA,
                                          primary_keys=["id"], options={"bucket": "2"})
        pypaimon_commit(customers_table, rows_of(CUSTOMERS_SCHEMA, CUSTOMERS_COMMIT_1))
        pypaimon_commit(customers_table, rows_of(CUSTOMERS_SCHEMA, CUSTOMERS_COMMIT_2))
        # two snapshots, key 2 in both: reading one row per key needs the merge
        assert customers_table.snapshot_manager().get_latest_snapshot().id == 2
        expose_to_running_session(db)
        yield {"events": events_table, "customers": customers_table}
        drop_paimon_database(paimon_warehouse, db)

    @pytest.fixture(scope="class")
    def models(self, paimon_tables):
        return {
            "sources.yml": SOURCES_YML.format(database=self.DATABASE),
            "events_view.sql": events_view_sql,
            "customers_table.sql": customers_table_sql,
            "events_incremental.sql": events_incremental_sql,
            "customers_python.py": customers_python_py,
            "gold_events.sql": gold_events_sql,
        }

    def _select(self, project, name, columns, order_by="id"):
        relation = relation_from_name(project.adapter, name)
        return as_tuples(project.run_sql(
            f"select {columns} from {relation} order by {order_by}", fetch="all"))

    def test_models_read_paimon_sources(self, project, paimon_tables, paimon_warehouse):
        results = run_dbt(["run"])
        assert {r.node.name: r.status for r in results} == {
            "events_view": "success",
            "customers_table": "success",
            "events_incremental": "success",
            "customers_python": "success",
            "gold_events": "success",
        }
        events_cols = "dt, id, kind, amount"
        assert self._select(project, "events_view", events_cols) == EVENTS_COMMIT_1
        assert self._select(project, "events_incremental", events_cols) == EVENTS_COMMIT_1
        assert self._select(project, "customers_table", "id, name, tier") == CUSTOMERS_MERGED
        assert self._select(project, "customers_python", "id, name") == [(1, "Alice"),
                                                                         (2, "Bobby")]
        assert self._select(project, "gold_events", "event_id, name", "event_id") == [
            (1, "Alice"), (2, "Bobby")]

        # the source itself, read through Spark SQL: merged, one row per key
        rows = project.run_sql(
            f"select id, name, tier from {self.DATABASE}.customers order by id", fetch="all")
        assert as_tuples(rows) == CUSTOMERS_MERGED

        # another pypaimon commit: the view sees it at once, the incremental model on its next run
        pypaimon_commit(paimon_tables["events"], rows_of(EVENTS_SCHEMA, EVENTS_COMMIT_3))
        assert self._select(project, "events_view", events_cols) == (
            EVENTS_COMMIT_1 + EVENTS_COMMIT_3)
        results = run_dbt(["run", "--select", "events_incremental"])
        assert len(results) == 1
        assert self._select(project, "events_incremental", events_cols) == (
            EVENTS_COMMIT_1 + EVENTS_COMMIT_3)
        # the data files under the partitions are untouched by dbt
        assert wh.table_exists(paimon_warehouse, self.DATABASE, "events")

    def test_data_tests_on_paimon_sources(self, project):
        results = run_dbt(["test", "--select", "source:lake"])
        assert len(results) == 6
        assert all(r.status == "pass" for r in results), [(r.node.name, r.status) for r in results]

    def test_show_paimon_source(self, project):
        results = run_dbt([
            "show", "--limit", "-1", "--inline",
            "select id, name, tier from {{ source('lake', 'customers') }} order by id",
        ])
        table = results.results[0].agate_table
        assert [tuple(int(v) if i == 0 else v for i, v in enumerate(row)) for row in table.rows] \
            == CUSTOMERS_MERGED

        results = run_dbt([
            "show", "--limit", "2", "--inline",
            "select dt, id from {{ source('lake', 'events') }} where dt = '2024-01-01' order by id",
        ])
        rows = results.results[0].agate_table.rows
        assert [(row[0], int(row[1])) for row in rows] == [("2024-01-01", 1), ("2024-01-01", 2)]

    def test_docs_generate_lists_source_columns(self, project):
        run_dbt(["run", "--select", "customers_table"])
        catalog = run_dbt(["docs", "generate"])
        customers_source = catalog.sources["source.test.lake.customers"]
        # dbt-spark's catalog reads Spark's schema tree string (`long`), for any Spark table
        source_types = {name: col.type for name, col in customers_source.columns.items()}
        assert source_types == {"id": "long", "name": "string", "tier": "string"}
        model_columns = catalog.nodes["model.test.customers_table"].columns
        assert {name: col.type for name, col in model_columns.items()} == source_types
        events_source = catalog.sources["source.test.lake.events"]
        assert list(events_source.columns) == ["dt", "id", "kind", "amount"]


ORDERS_SCHEMA = pa.schema([
    pa.field("order_id", pa.int64(), nullable=False),
    ("customer", pa.string()),
    ("amount", pa.float64()),
    ("dt", pa.string()),
])
ORDERS_ROWS = [
    (1, "Alice", 10.0, "2024-01-01"),
    (2, "Bob", 20.5, "2024-01-01"),
    (3, "Carol", None, "2024-01-02"),
]


class TestPaimonRelationAdapterMethodsPaimon:
    DATABASE = "paimon_src_ops"

    @pytest.fixture(scope="class")
    def paimon_tables(self, paimon_warehouse):
        db = self.DATABASE
        orders = wh.create_table(paimon_warehouse, db, "orders", ORDERS_SCHEMA,
                                 primary_keys=["order_id"], options={"bucket": "2"})
        pypaimon_commit(orders, rows_of(ORDERS_SCHEMA, ORDERS_ROWS))
        notes = wh.create_table(paimon_warehouse, db, "notes",
                                [("id", "INT"), ("note", "STRING")])
        pypaimon_commit(notes, pa.table({"id": pa.array([1], pa.int32()), "note": ["n"]}))
        expose_to_running_session(db)
        yield
        drop_paimon_database(paimon_warehouse, db)

    def _relation(self, project, identifier):
        return project.adapter.Relation.create(
            database=project.database, schema=self.DATABASE, identifier=identifier, type="table")

    def _spark_tables(self, project):
        """Spark catalog tables of the database (SHOW TABLES also lists temporary views)."""
        rows = project.run_sql(f"show tables in {self.DATABASE}", fetch="all")
        return {row[1] for row in rows if not row[2]}

    def test_get_columns_in_relation(self, paimon_tables, project):
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(self._relation(project, "orders"))
        assert [(c.name, c.dtype) for c in columns] == [
            ("order_id", "bigint"), ("customer", "string"), ("amount", "double"),
            ("dt", "string")]

    def test_list_relations(self, paimon_tables, project):
        with get_connection(project.adapter):
            relations = project.adapter.list_relations(project.database, self.DATABASE)
        by_name = {r.identifier: r for r in relations}
        assert set(by_name) == {"orders", "notes"}
        assert all(r.type == "table" for r in relations)
        assert all(r.is_paimon for r in relations)
        with get_connection(project.adapter):
            assert project.adapter.is_paimon_relation(by_name["orders"])

    def test_list_relations_skips_temporary_views(self, paimon_tables, project):
        project.run_sql("create or replace temporary view leaked_tmp_view as select 1 as id")
        try:
            with get_connection(project.adapter):
                relations = project.adapter.list_relations_without_caching(
                    project.adapter.Relation.create(
                        database=project.database, schema=self.DATABASE))
        finally:
            project.run_sql("drop view if exists leaked_tmp_view")
        assert sorted((r.schema, r.identifier) for r in relations) == [
            (self.DATABASE, "notes"), (self.DATABASE, "orders")]

    def test_rename_then_drop_paimon_table(self, paimon_tables, project, paimon_warehouse):
        db = self.DATABASE
        renamed = self._relation(project, "orders_renamed")
        with get_connection(project.adapter):
            project.adapter.rename_relation(self._relation(project, "orders"), renamed)
        assert not wh.table_exists(paimon_warehouse, db, "orders")
        assert wh.table_exists(paimon_warehouse, db, "orders_renamed")
        rows = project.run_sql(
            f"select order_id, customer, amount, dt from {db}.orders_renamed order by order_id",
            fetch="all")
        assert as_tuples(rows) == ORDERS_ROWS
        # Spark's catalog follows: the old name is gone, the new one resolves
        assert self._spark_tables(project) == {"orders_renamed", "notes"}

        with get_connection(project.adapter):
            project.adapter.drop_relation(renamed)
        assert not wh.table_exists(paimon_warehouse, db, "orders_renamed")
        assert wh.table_exists(paimon_warehouse, db, "notes")
        assert self._spark_tables(project) == {"notes"}
        with get_connection(project.adapter):
            relations = project.adapter.list_relations_without_caching(
                project.adapter.Relation.create(database=project.database, schema=db))
        assert [r.identifier for r in relations] == ["notes"]

    def test_drop_schema_drops_paimon_database(self, paimon_tables, project, paimon_warehouse):
        db = self.DATABASE
        with get_connection(project.adapter):
            project.adapter.drop_schema(
                project.adapter.Relation.create(database=project.database, schema=db))
        assert db not in wh.list_databases(paimon_warehouse)
        assert not wh.table_exists(paimon_warehouse, db, "notes")
        rows = project.run_sql(f"show databases like '{db}'", fetch="all")
        assert rows == []


ENGINE_SOURCES_YML = """
version: 2
sources:
  - name: engines
    schema: {database}
    tables:
      - name: first_row
      - name: partial
      - name: agg
      - name: deletes
"""


class TestPaimonMergeEngineSourcesPaimon:
    """Primary-key tables of every merge engine, written by pypaimon in two commits, read merged
    as Paimon defines it (pypaimon's own reader returns nothing for first-row tables and keeps
    a lone -D row alive)."""

    DATABASE = "paimon_src_engines"

    @pytest.fixture(scope="class")
    def paimon_tables(self, paimon_warehouse):
        db = self.DATABASE
        key = pa.field("id", pa.int64(), nullable=False)
        kv = pa.schema([key, ("v", pa.string())])
        first_row = wh.create_table(paimon_warehouse, db, "first_row", kv, primary_keys=["id"],
                                    options={"bucket": "2", "merge-engine": "first-row"})
        pypaimon_commit(first_row, rows_of(kv, [(1, "a"), (2, "b")]))
        pypaimon_commit(first_row, rows_of(kv, [(2, "B"), (3, "c")]))

        ab = pa.schema([key, ("a", pa.string()), ("b", pa.string())])
        partial = wh.create_table(paimon_warehouse, db, "partial", ab, primary_keys=["id"],
                                  options={"bucket": "1", "merge-engine": "partial-update"})
        pypaimon_commit(partial, rows_of(ab, [(1, "x", None), (2, "p", "q")]))
        pypaimon_commit(partial, rows_of(ab, [(1, None, "y")]))

        totals = pa.schema([key, ("total", pa.int64())])
        agg = wh.create_table(paimon_warehouse, db, "agg", totals, primary_keys=["id"],
                              options={"bucket": "1", "merge-engine": "aggregation",
                                       "fields.total.aggregate-function": "sum"})
        pypaimon_commit(agg, rows_of(totals, [(1, 10), (2, 1)]))
        pypaimon_commit(agg, rows_of(totals, [(1, 5)]))

        ops = pa.schema([key, ("op", pa.string()), ("v", pa.string())])
        deletes = wh.create_table(paimon_warehouse, db, "deletes", ops, primary_keys=["id"],
                                  options={"bucket": "1", "rowkind.field": "op"})
        pypaimon_commit(deletes, rows_of(ops, [(1, "+I", "a"), (2, "+I", "b")]))
        pypaimon_commit(deletes, rows_of(ops, [(2, "-D", "b"), (3, "-D", "never-inserted")]))
        expose_to_running_session(db)
        yield
        drop_paimon_database(paimon_warehouse, db)

    @pytest.fixture(scope="class")
    def models(self, paimon_tables):
        return {
            "sources.yml": ENGINE_SOURCES_YML.format(database=self.DATABASE),
            "first_row_model.sql": "{{ config(materialized='table') }}\n"
                                   "select id, v from {{ source('engines', 'first_row') }}",
            "partial_model.sql": "{{ config(materialized='view') }}\n"
                                 "select id, a, b from {{ source('engines', 'partial') }}",
            "agg_model.sql": "{{ config(materialized='table') }}\n"
                             "select id, total from {{ source('engines', 'agg') }}",
            "deletes_model.sql": "{{ config(materialized='view') }}\n"
                                 "select id, v from {{ source('engines', 'deletes') }}",
        }

    def test_merge_engines_read_merged(self, project):
        results = run_dbt(["run"])
        assert len(results) == 4

        def select(name, columns):
            relation = relation_from_name(project.adapter, name)
            return as_tuples(project.run_sql(
                f"select {columns} from {relation} order by id", fetch="all"))

        assert select("first_row_model", "id, v") == [(1, "a"), (2, "b"), (3, "c")]
        assert select("partial_model", "id, a, b") == [(1, "x", "y"), (2, "p", "q")]
        assert select("agg_model", "id, total") == [(1, 15), (2, 1)]
        assert select("deletes_model", "id, v") == [(1, "a")]


TYPES_SCHEMA = pa.schema([
    ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("dec", pa.decimal128(10, 2)),
    ("s", pa.string()), ("b", pa.bool_()), ("d", pa.date32()),
    ("ts3", pa.timestamp("ms")), ("ts6", pa.timestamp("us")), ("bin", pa.binary()),
    ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())),
    ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
])
TYPES_ROW = {
    "i8": -8, "i16": 1600, "i32": -32, "i64": 2**40, "f32": 1.5, "f64": -2.25,
    "dec": decimal.Decimal("12345678.91"), "s": "héllo 'q'", "b": True,
    "d": datetime.date(2024, 2, 29), "ts3": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000),
    "ts6": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901), "bin": b"\x00\xff",
    "arr": [1, None, 3], "m": [("k", 7)], "st": {"x": 1, "y": "z"},
}
# Spark's rendering of each column (cast to string, hex for bytes, JSON for nested types)
TYPES_RENDER = (
    "cast(i8 as string), cast(i16 as string), cast(i32 as string), cast(i64 as string), "
    "cast(f32 as string), cast(f64 as string), cast(dec as string), s, cast(b as string), "
    "cast(d as string), cast(ts3 as string), cast(ts6 as string), hex(bin), "
    "to_json(arr), to_json(m), to_json(st)"
)
TYPES_EXPECTED = [
    ("-8", "1600", "-32", "1099511627776", "1.5", "-2.25", "12345678.91", "héllo 'q'", "true",
     "2024-02-29", "2024-01-02 03:04:05.678", "2024-01-02 03:04:05.678901", "00FF",
     "[1,null,3]", '{"k":7}', '{"x":1,"y":"z"}'),
    (None,) * 13 + (None, None, None),
]


class TestPaimonSourceTypesPaimon:
    """Every Paimon type pypaimon writes reads back exactly through a dbt view (Paimon
    TIMESTAMP is wall-clock time: Spark's timestamp_ntz)."""

    DATABASE = "paimon_src_types"

    @pytest.fixture(scope="class")
    def paimon_tables(self, paimon_warehouse):
        table = wh.create_table(paimon_warehouse, self.DATABASE, "all_types", TYPES_SCHEMA)
        null_row = {name: None for name in TYPES_SCHEMA.names}
        pypaimon_commit(table, pa.Table.from_pylist([TYPES_ROW, null_row], schema=TYPES_SCHEMA))
        expose_to_running_session(self.DATABASE)
        yield
        drop_paimon_database(paimon_warehouse, self.DATABASE)

    @pytest.fixture(scope="class")
    def models(self, paimon_tables):
        return {
            "sources.yml": (
                "version: 2\nsources:\n  - name: typed\n"
                f"    schema: {self.DATABASE}\n    tables:\n      - name: all_types\n"
            ),
            "types_view.sql": "{{ config(materialized='view') }}\n"
                              "select * from {{ source('typed', 'all_types') }}",
        }

    def test_types_read_back(self, project):
        run_dbt(["run"])
        relation = relation_from_name(project.adapter, "types_view")
        rows = project.run_sql(
            f"select {TYPES_RENDER} from {relation} order by i8 nulls last", fetch="all")
        assert as_tuples(rows) == TYPES_EXPECTED

        source = project.adapter.Relation.create(
            database=project.database, schema=self.DATABASE, identifier="all_types")
        with get_connection(project.adapter):
            columns = project.adapter.get_columns_in_relation(source)
        assert [(c.name, c.dtype) for c in columns] == [
            ("i8", "tinyint"), ("i16", "smallint"), ("i32", "int"), ("i64", "bigint"),
            ("f32", "float"), ("f64", "double"), ("dec", "decimal(10,2)"), ("s", "string"),
            ("b", "boolean"), ("d", "date"), ("ts3", "timestamp_ntz"), ("ts6", "timestamp_ntz"),
            ("bin", "binary"), ("arr", "array<int>"), ("m", "map<string,bigint>"),
            ("st", "struct<x:int,y:string>"),
        ]


class TestPaimonTableWrittenMidSessionPaimon:
    """A table another Paimon writer creates while this process's Spark session runs (dbt's
    programmatic runner, orchestrators and this test suite reuse one session across invocations)."""

    DATABASE = "paimon_src_late"

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": (
                "version: 2\nsources:\n  - name: late\n"
                f"    schema: {self.DATABASE}\n    tables:\n      - name: arrivals\n"
            ),
            "arrivals_view.sql": "{{ config(materialized='view') }}\n"
                                 "select id, v from {{ source('late', 'arrivals') }}",
        }

    @pytest.fixture(scope="class")
    def cleanup(self, paimon_warehouse):
        yield
        drop_paimon_database(paimon_warehouse, self.DATABASE)

    def test_new_table_visible_to_next_invocation(self, project, paimon_warehouse, cleanup):
        # the project fixture has started the session: the table is created after it
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
        table = wh.create_table(paimon_warehouse, self.DATABASE, "arrivals", schema)
        pypaimon_commit(table, rows_of(schema, [(1, "first")]))
        # no registry.sync() here: the next dbt invocation must find the table on its own
        run_dbt(["run"])
        relation = relation_from_name(project.adapter, "arrivals_view")
        assert as_tuples(project.run_sql(f"select id, v from {relation}", fetch="all")) == [
            (1, "first")]
