"""One `dbt build` whose nodes write into schemas that did not exist when it started.

The project puts its seeds into their own schema (`+schema` with a generate_schema_name macro
that takes a custom schema as it is), declares a `source` on that schema, and builds from it:
staging views, a primary-key model in a third schema with a generate_alias_name override, a
snapshot in a fourth schema, a dbt `table` and data tests downstream. Every relation a node
creates must be resolvable by every later node of the same invocation, so one build passes
every node. The second build puts every custom schema under new names and runs with two threads.

dbt orders a node after the nodes it ref()s, never after the node that builds a source() it
reads. dbt-paimon adds that order for seeds (a seed depends on nothing: no cycle): one staging
model here reads its seed through source() only, the other also says
`-- depends_on: {{ ref(...) }}`. A source() of a table a *model* builds is not ordered: that
error names the model and the fix (the last classes).
"""

from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

# Custom schemas as they are (the reported project's macro), plus a suffix the second build
# sets so that its schemas are new again.
GENERATE_SCHEMA_NAME = """
{% macro generate_schema_name(custom_schema_name, node) -%}
  {%- if custom_schema_name is none -%}{{ target.schema }}
  {%- else -%}{{ custom_schema_name | trim }}{{ var('schema_suffix', '') }}{%- endif -%}
{%- endmacro %}
"""

# Models tagged `mart` get a `mart_` prefix: the relation's name is not the node's name.
GENERATE_ALIAS_NAME = """
{% macro generate_alias_name(custom_alias_name=none, node=none) -%}
  {%- if custom_alias_name -%}{{ custom_alias_name | trim }}
  {%- elif 'mart' in node.tags -%}mart_{{ node.name }}
  {%- else -%}{{ node.name }}{%- endif -%}
{%- endmacro %}
"""

RAW_CUSTOMERS = """id,name,tier
1,alice,gold
2,bob,silver
3,carol,gold
"""

RAW_ORDERS = """order_id,customer_id,amount
10,1,5.5
11,1,4.5
12,2,7.0
13,3,1.0
"""

SOURCES_YML = """
sources:
  - name: ecom
    schema: "{raw}{{{{ var('schema_suffix', '') }}}}"
    tables:
      - name: raw_customers
      - name: raw_orders
"""

STG_CUSTOMERS = """{{ config(materialized='view') }}
select cast(id as bigint) as id, name, tier from {{ source('ecom', 'raw_customers') }}
"""

# An upper-case alias: Spark's metastore keeps the view's name in lower case.
STG_ORDERS = """{{ config(materialized='view', alias='STG_Orders') }}
-- depends_on: {{ ref('raw_orders') }}
select cast(order_id as bigint) as order_id, cast(customer_id as bigint) as customer_id,
       cast(amount as double) as amount
from {{ source('ecom', 'raw_orders') }}
"""

CUSTOMER_ORDERS = """{{{{ config(materialized='paimon_pk', primary_key='customer_id',
                  schema='{marts}', tags=['mart']) }}}}
select c.id as customer_id, c.name, count(*) as orders, sum(o.amount) as amount
from {{{{ ref('stg_customers') }}}} c join {{{{ ref('stg_orders') }}}} o on o.customer_id = c.id
group by c.id, c.name
"""

CUSTOMERS_SNAPSHOT = """{{% snapshot customers_snapshot %}}
{{{{ config(unique_key='id', strategy='check', check_cols='all', schema='{snap}') }}}}
select * from {{{{ ref('stg_customers') }}}}
{{% endsnapshot %}}
"""

CURRENT_CUSTOMERS = """{{ config(materialized='view') }}
select id, name, tier from {{ ref('customers_snapshot') }} where dbt_valid_to is null
"""

# dbt's own `table` materialization (a Paimon table): downstream of every custom schema
CUSTOMER_SUMMARY = """{{ config(materialized='table') }}
select c.id, c.name, c.tier, m.orders, m.amount
from {{ ref('current_customers') }} c join {{ ref('customer_orders') }} m on m.customer_id = c.id
"""

SCHEMA_YML = """
seeds:
  - name: raw_customers
    columns:
      - name: id
        data_tests: [unique, not_null]
models:
  - name: customer_orders
    columns:
      - name: customer_id
        data_tests: [unique]
  - name: customer_summary
    columns:
      - name: id
        data_tests: [unique, not_null]
"""

SUMMARY = [(1, "alice", "gold", 2, 10.0), (2, "bob", "silver", 1, 7.0),
           (3, "carol", "gold", 1, 1.0)]


class TestCrossSchemaBuild:
    @pytest.fixture(scope="class")
    def custom_schemas(self, unique_schema):
        return {"raw": f"{unique_schema}_raw", "marts": f"{unique_schema}_marts",
                "snap": f"{unique_schema}_snap"}

    @pytest.fixture(scope="class")
    def project_config_update(self, custom_schemas):
        return {"seeds": {"+schema": custom_schemas["raw"]}}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"generate_schema_name.sql": GENERATE_SCHEMA_NAME,
                "generate_alias_name.sql": GENERATE_ALIAS_NAME}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"raw_customers.csv": RAW_CUSTOMERS, "raw_orders.csv": RAW_ORDERS}

    @pytest.fixture(scope="class")
    def models(self, custom_schemas):
        return {
            "sources.yml": SOURCES_YML.format(**custom_schemas),
            "schema.yml": SCHEMA_YML,
            "stg_customers.sql": STG_CUSTOMERS,
            "stg_orders.sql": STG_ORDERS,
            "customer_orders.sql": CUSTOMER_ORDERS.format(**custom_schemas),
            "current_customers.sql": CURRENT_CUSTOMERS,
            "customer_summary.sql": CUSTOMER_SUMMARY,
        }

    @pytest.fixture(scope="class")
    def snapshots(self, custom_schemas):
        return {"customers_snapshot.sql": CUSTOMERS_SNAPSHOT.format(**custom_schemas)}

    def _summary(self, project):
        rows = project.run_sql(
            f"select id, name, tier, orders, amount from {project.test_schema}.customer_summary "
            "order by id", fetch="all")
        return [tuple(r) for r in rows]

    def test_one_build_resolves_every_new_schema(self, project, custom_schemas):
        suffixes = ["", "_t2"]
        # the build's schemas are dropped with the test schema
        project.created_schemas.extend(
            schema + suffix for schema in custom_schemas.values() for suffix in suffixes)

        results = run_dbt(["build"])
        assert {r.status for r in results} <= {"success", "pass"}, \
            [(r.node.name, r.status, r.message) for r in results]
        assert len(results) == 13
        assert self._summary(project) == SUMMARY
        raw, marts, snap = custom_schemas["raw"], custom_schemas["marts"], custom_schemas["snap"]
        assert project.run_sql(f"select count(*) from {marts}.mart_customer_orders",
                               fetch="one")[0] == 3
        assert project.run_sql(f"select count(*) from {snap}.customers_snapshot",
                               fetch="one")[0] == 3
        assert project.run_sql(f"select count(*) from {raw}.raw_orders", fetch="one")[0] == 4

        # every custom schema new again, two threads
        results = run_dbt(["build", "--threads", "2", "--vars", "{schema_suffix: _t2}"])
        assert {r.status for r in results} <= {"success", "pass"}, \
            [(r.node.name, r.status, r.message) for r in results]
        assert self._summary(project) == SUMMARY
        assert project.run_sql(f"select count(*) from {marts}_t2.mart_customer_orders",
                               fetch="one")[0] == 3


SOURCE_ONLY = """{{ config(materialized='view') }}
select id, name from {{ source('ecom', 'raw_customers') }}
"""

SOURCE_TESTS = """
sources:
  - name: ecom
    schema: "{raw}"
    tables:
      - name: raw_customers
        columns:
          - name: id
            data_tests: [unique]
"""


class RawSchemaProject:
    """A project whose custom schemas are taken as they are, with a `<test schema>_raw` one."""

    @pytest.fixture(scope="class")
    def raw_schema(self, unique_schema):
        return f"{unique_schema}_raw"

    @pytest.fixture(scope="class")
    def macros(self):
        return {"generate_schema_name.sql": GENERATE_SCHEMA_NAME}


class TestSourceOfASeedRunsAfterTheSeed(RawSchemaProject):
    """The reported layout, unchanged: seeds in their own schema declared as a source, a model
    (whose name dbt would start before the seed) and a source test reading it."""

    @pytest.fixture(scope="class")
    def project_config_update(self, raw_schema):
        return {"seeds": {"+schema": raw_schema}}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"raw_customers.csv": RAW_CUSTOMERS}

    @pytest.fixture(scope="class")
    def models(self, raw_schema):
        return {"sources.yml": SOURCE_TESTS.format(raw=raw_schema), "a_customers.sql": SOURCE_ONLY}

    def test_one_build_loads_the_seed_first(self, project, raw_schema):
        project.created_schemas.append(raw_schema)
        results = run_dbt(["build", "--threads", "2"])
        assert {r.status for r in results} <= {"success", "pass"}, \
            [(r.node.name, r.status, r.message) for r in results]
        order = [r.node.name for r in results]
        assert order.index("raw_customers") < order.index("a_customers")
        rows = project.run_sql(f"select count(*) from {project.test_schema}.a_customers",
                               fetch="one")
        assert rows[0] == 3


RAW_MODEL = """{{ config(materialized='table', schema=var('raw_schema')) }}
select 1 as id, 'alice' as name
"""


class TestSourceOfAModelNamesTheFix(RawSchemaProject):
    @pytest.fixture(scope="class")
    def project_config_update(self, raw_schema):
        return {"vars": {"raw_schema": raw_schema}}

    @pytest.fixture(scope="class")
    def models(self, raw_schema):
        return {"sources.yml": SOURCES_YML.format(raw=raw_schema),
                # dbt starts `a_customers` before `raw_customers` (node-id order)
                "a_customers.sql": SOURCE_ONLY, "raw_customers.sql": RAW_MODEL}

    def test_the_error_names_the_model_and_the_fix(self, project, raw_schema):
        project.created_schemas.append(raw_schema)
        results, output = run_dbt_and_capture(["build"], expect_pass=False)
        status = {r.node.name: r.status for r in results}
        assert status["a_customers"] == "error" and status["raw_customers"] == "success"
        assert (f"`{raw_schema}`.`raw_customers` is built by model 'raw_customers' of this "
                "project") in output
        assert "-- depends_on: {{ ref('raw_customers') }}" in output
        # the second build finds the table
        results = run_dbt(["build"])
        assert {r.status for r in results} <= {"success", "pass"}


UPPER_SEED = "Item_Id,Amount\n1,2.5\n1,1.5\n2,4\n"

ITEM_TOTALS = """{{ config(materialized='paimon_pk', primary_key='Item_Id', schema='Marts') }}
select Item_Id, sum(Amount) as Total from {{ ref('Raw_Items') }} group by Item_Id
"""

ITEM_REPORT = """{{ config(materialized='table', alias='Item_Report') }}
select * from {{ ref('Item_Totals') }}
"""


class TestUpperCaseNames:
    """Upper-case names of seeds, models, aliases and custom schemas are the lower-case names
    of their Paimon tables, as Spark's catalog and Paimon's case-insensitive catalogs keep them;
    ref() and dbt's own lookups find them (Spark's identifiers are case-insensitive)."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"Raw_Items.csv": UPPER_SEED}

    @pytest.fixture(scope="class")
    def models(self):
        return {"Item_Totals.sql": ITEM_TOTALS, "item_report.sql": ITEM_REPORT,
                "schema.yml": "models:\n  - name: Item_Totals\n    columns:\n"
                              "      - name: Item_Id\n        data_tests: [unique, not_null]\n"}

    def test_build_twice_with_upper_case_names(self, project):
        marts = f"{project.test_schema}_Marts"
        project.created_schemas.append(marts.lower())
        for _ in range(2):
            results = run_dbt(["build"])
            assert {r.status for r in results} <= {"success", "pass"}, \
                [(r.node.name, r.status, r.message) for r in results]
        rows = project.run_sql(f"select item_id, total from {project.test_schema}.item_report "
                               "order by item_id", fetch="all")
        assert [tuple(r) for r in rows] == [(1, 4.0), (2, 4.0)]
        warehouse = Path(project.adapter.config.credentials.warehouse)
        assert (warehouse / f"{marts.lower()}.db" / "item_totals").is_dir()
        assert (warehouse / f"{project.test_schema}.db" / "raw_items").is_dir()
