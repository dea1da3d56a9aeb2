"""VARIANT columns written by models (Spark 4's `parse_json`): a primary-key model keeps the
variant each key's latest run wrote, on both write paths; the table's schema says VARIANT, Spark
reads it back as VARIANT (`variant_get`), and pypaimon 2.1 reads exactly the value and metadata
bytes Spark encodes for the same JSON (Paimon stores a variant as that pair). With the table
option `variant.shreddingSchema` every data file stores the listed fields shredded, on both
primary-key write paths and in an append table, and Spark and pypaimon read the same variants
back; a shredded field holding another type is kept in its untyped bytes. With
`variant.inferShreddingSchema` each data file is shredded with the schema Paimon infers from its
rows, and reads back the same."""

import json
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dbt.tests.util import run_dbt
from pypaimon.data.generic_variant import GenericVariant

from dbt.adapters.paimon import environments
from tests.functional.paimon_tables import open_table, snapshots

MODEL = """{{{{ config(materialized='paimon_pk', primary_key='id', buckets=2,
                    write_path='{path}') }}}}
select cast(id as bigint) as id,
       parse_json(concat('{{"a":', cast(id * {{{{ var('k', 1) }}}} as string), ',"tag":"t"}}')) as v
from range({{{{ var('low', 0) }}}}, 4)
"""
APPEND = """{{ config(materialized='paimon_append') }}
select cast(id as bigint) as id, parse_json('[1, {"x": null}]') as v from range(2)
"""


def pypaimon_rows(project, table):
    read = open_table(project, table).new_read_builder()
    rows = read.new_read().to_arrow(read.new_scan().plan().splits())
    return rows.sort_by("id")


def spark_encoded(json_texts):
    """Spark's own encoding (value, metadata) of each JSON text, as one Arrow struct array."""
    spark = environments.current_registry().spark
    literals = ", ".join("parse_json('" + text.replace("'", "''") + "')" for text in json_texts)
    return spark.sql(f"select explode(array({literals})) as v").toArrow().column("v") \
        .combine_chunks()


class TestVariantColumns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"in_process.sql": MODEL.format(path="in_process"),
                "distributed.sql": MODEL.format(path="distributed"),
                "events.sql": APPEND}

    def test_variant_columns_merge_and_read_back(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{k: 10, low: 2}", "-s", "in_process", "distributed"])
        expected = [f'{{"a":{i * (10 if i >= 2 else 1)},"tag":"t"}}' for i in range(4)]
        encoded = spark_encoded(expected)
        for table in ("in_process", "distributed"):
            field = open_table(project, table).fields[1]
            assert str(field.type).upper().startswith("VARIANT"), field
            read = project.run_sql(
                f"select id, variant_get(v, '$.a', 'int') as a, variant_get(v, '$.tag', 'string')"
                f" as tag, typeof(v) as t from {project.test_schema}.{table} order by id",
                fetch="all")
            assert [tuple(r) for r in read] == [
                (i, i * (10 if i >= 2 else 1), "t", "variant") for i in range(4)], table
            stored = pypaimon_rows(project, table).column("v").combine_chunks()
            for part in ("value", "metadata"):
                assert stored.field(part).to_pylist() == encoded.field(part).to_pylist(), \
                    (table, part)

        rows = project.run_sql(
            f"select id, to_json(v) from {project.test_schema}.events order by id", fetch="all")
        assert [tuple(r) for r in rows] == [(0, '[1,{"x":null}]'), (1, '[1,{"x":null}]')]


# `variant.shreddingSchema` (Paimon 1.4): the listed fields of a VARIANT column are stored in
# typed Parquet columns (`typed_value`) beside the rest of the variant (`value`), which pypaimon
# 2.1's writer does for every Parquet data file dbt-paimon writes through it
SHREDDING = json.dumps({"type": "ROW", "fields": [
    {"id": 0, "name": "v", "type": {"type": "ROW", "fields": [
        {"id": 0, "name": "a", "type": "BIGINT"}, {"id": 1, "name": "tag", "type": "STRING"}]}}]})
SHREDDED_PK = """{{ config(materialized='paimon_pk', primary_key='id', buckets=2,
                          write_path='PATH', table_options={'variant.shreddingSchema': 'SCHEMA'}) }}
select cast(id as bigint) as id,
       case when id = 2 then null
            when id = 3 and {{ var('mismatch', false) }} then parse_json('{"a": "three"}')
            else parse_json(concat('{"a":', cast(id * {{ var('k', 1) }} as string),
                                   ',"tag":"t","more":[1,{"x":null}]}')) end as v
from range(0, 4)
"""
SHREDDED_APPEND = """{{ config(materialized='paimon_append',
                          table_options={'variant.shreddingSchema': 'SCHEMA'}) }}
select cast(id as bigint) as id, parse_json(concat('{"a":', cast(id as string), '}')) as v
from range(2)
"""


def shredded_values(k: int) -> list:
    """The rows' variants as Python values; ``more`` is no shredded field: it stays in the
    variant's remaining bytes."""
    return [None if i == 2 else {"a": i * k, "tag": "t", "more": [1, {"x": None}]}
            for i in range(4)]


def as_python(stored) -> list:
    """Stored variants (value and metadata bytes) as Python values, NULL as None."""
    return [None if s is None else GenericVariant(s["value"], s["metadata"]).to_python()
            for s in stored]


def data_file_types(project, table):
    """The Parquet type of column ``v`` in each of the table's data files."""
    folder = str(open_table(project, table).table_path).removeprefix("file:")
    return [pq.read_schema(os.path.join(root, name)).field("v").type
            for root, _, names in os.walk(folder) for name in names
            if name.startswith("data-") and name.endswith(".parquet")]


class TestShreddedVariantWrites:
    @pytest.fixture(scope="class")
    def models(self):
        return {f"{path}.sql": SHREDDED_PK.replace("PATH", path).replace("SCHEMA", SHREDDING)
                for path in ("in_process", "distributed")} | \
            {"shredded_events.sql": SHREDDED_APPEND.replace("SCHEMA", SHREDDING)}

    def test_shredded_variant_columns_written_on_every_path(self, project):
        run_dbt(["run"])
        run_dbt(["run", "--vars", "{k: 10}", "-s", "in_process", "distributed"])
        for table in ("in_process", "distributed", "shredded_events"):
            types = data_file_types(project, table)
            assert types and all(pa.types.is_struct(t) and t.get_field_index("typed_value") >= 0
                                 for t in types), (table, types)
        for table in ("in_process", "distributed"):
            stored = pypaimon_rows(project, table).column("v").to_pylist()
            assert as_python(stored) == shredded_values(10), table
            read = project.run_sql(
                f"select id, to_json(v), variant_get(v, '$.a', 'bigint') "
                f"from {project.test_schema}.{table} order by id", fetch="all")
            assert [(r[0], None if r[1] is None else json.loads(r[1]), r[2]) for r in read] == [
                (i, value, None if value is None else value["a"])
                for i, value in enumerate(shredded_values(10))], table
        rows = project.run_sql(f"select id, variant_get(v, '$.a', 'int') from "
                               f"{project.test_schema}.shredded_events order by id", fetch="all")
        assert [tuple(r) for r in rows] == [(0, 0), (1, 1)]

        # a shredded field holding another type: kept in the field's untyped bytes, as
        # Paimon's writers keep it (format/variant_shredder.py), on both paths
        run_dbt(["run", "--vars", "{k: 20, mismatch: true}", "-s", "in_process", "distributed"])
        expected = shredded_values(20)
        expected[3] = {"a": "three"}
        for table in ("in_process", "distributed"):
            stored = pypaimon_rows(project, table).column("v").to_pylist()
            assert as_python(stored) == expected, table
            read = project.run_sql(f"select id, to_json(v) from {project.test_schema}.{table} "
                                   f"order by id", fetch="all")
            assert [None if r[1] is None else json.loads(r[1]) for r in read] == expected, table


# `variant.inferShreddingSchema`: each Parquet data file is shredded with the schema Paimon's
# per-file inference gives its rows (format/variant_inference.py): `a` BIGINT, `tag` STRING, `x`
# DECIMAL(18, 1) (Spark's parse_json reads 1.5 as a decimal; the integer 1 is stored in it as
# 1.0, as Paimon's writer stores it), `y` (a string in some rows, an integer in others) untyped;
# `o` an object of `k` BIGINT and `n` (only ever a JSON null) untyped, `l` an array of BIGINT
# (a LIST of its elements); `w`, strings only,
# whole into one STRING `typed_value`
INFERRED_PK = """{{ config(materialized='paimon_pk', primary_key='id', buckets=1,
                          write_path='distributed',
                          table_options={'variant.inferShreddingSchema': 'true'}) }}
select cast(id as bigint) as id,
       case when id = 2 then null
            else parse_json(concat('{"a":', cast(id as string), ',"tag":"t","x":',
                                   case when id % 2 = 0 then '1, "y": "s"' else '1.5, "y": 2' end,
                                   ',"o":{"k":', cast(id as string), ',"n":null}',
                                   ',"l":[', cast(id as string), ',7]}')) end as v,
       parse_json(concat('"w', cast(id as string), '"')) as w
from range(0, 4)
"""


def inferred_values() -> list:
    return [None if i == 2 else {"a": i, "tag": "t", "x": Decimal("1.0" if i % 2 == 0 else "1.5"),
                                 "y": "s" if i % 2 == 0 else 2, "o": {"k": i, "n": None},
                                 "l": [i, 7]}
            for i in range(4)]


class TestInferredVariantShredding:
    @pytest.fixture(scope="class")
    def models(self):
        return {"inferred.sql": INFERRED_PK}

    def test_each_data_file_is_shredded_as_inferred_and_reads_back(self, project):
        run_dbt(["run"])
        [stored_type] = data_file_types(project, "inferred")
        folder = str(open_table(project, "inferred").table_path).removeprefix("file:")
        [w_type] = [pq.read_schema(os.path.join(root, name)).field("w").type
                    for root, _, names in os.walk(folder) for name in names
                    if name.startswith("data-") and name.endswith(".parquet")]
        assert w_type.field("typed_value").type == pa.string()
        typed = stored_type.field("typed_value").type
        assert {typed.field(i).name: [f.name for f in typed.field(i).type]
                for i in range(typed.num_fields)} == \
            {"a": ["value", "typed_value"], "tag": ["value", "typed_value"],
             "x": ["value", "typed_value"], "y": ["value"], "o": ["value", "typed_value"],
             "l": ["value", "typed_value"]}
        assert typed.field("l").type.field("typed_value").type.value_type \
            .field("typed_value").type == pa.int64()
        nested = typed.field("o").type.field("typed_value").type
        assert [nested.field(i).name for i in range(nested.num_fields)] == ["k", "n"]
        assert typed.field("a").type.field("typed_value").type == pa.int64()
        assert typed.field("x").type.field("typed_value").type == pa.decimal128(18, 1)
        rows = pypaimon_rows(project, "inferred")
        assert as_python(rows.column("v").to_pylist()) == inferred_values()
        assert as_python(rows.column("w").to_pylist()) == [f"w{i}" for i in range(4)]
        read = project.run_sql(
            f"select id, to_json(v), variant_get(v, '$.a', 'bigint'), to_json(w) "
            f"from {project.test_schema}.inferred order by id", fetch="all")
        assert [(r[0], None if r[1] is None else json.loads(r[1], parse_float=Decimal), r[2],
                 json.loads(r[3])) for r in read] == \
            [(i, value, None if value is None else value["a"], f"w{i}")
             for i, value in enumerate(inferred_values())]
