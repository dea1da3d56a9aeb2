"""materialized='data_evolution_update' from a dbt project: a paimon_append model builds a
data-evolution table, a second model writes two of its columns by key (one commit of column
files), pypaimon 2.1 reads the table exactly and the model's view shows every column; a model
whose keys match no row, or naming a column the table lacks, fails without a commit, and one with
`when_not_matched='insert'` adds them as new rows. Then `compact` rewrites the row-id ranges into
one file (rows and _ROW_IDs kept) and `update_rows` changes a row by row id. A VECTOR column of
the data files is written like any other column, a NULL vector and a new row included. The same
model written in Spark tasks (`write_path='distributed'`) gives the table the in-process run
gives, and a failing distributed run leaves the table as it was; its VARIANT column (a NULL
variant included, which Spark hands its tasks with null children) is written on both paths, and
the table's `variant.inferShreddingSchema` shreds the column files, read back whole."""

import json
import os

import pyarrow.parquet as pq
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from pypaimon.data.generic_variant import GenericVariant
from pypaimon.schema.data_types import is_variant_struct

from tests.functional.paimon_tables import commit_kinds, open_table

BASE = """
{{ config(materialized='paimon_append', row_tracking=true,
          table_options={'data-evolution.enabled': 'true'}) }}
select cast(id as bigint) as id, name, cast(score as int) as score, note
from values (1, 'a', 10, 'n1'), (2, 'b', 20, 'n2'), (3, 'c', 30, 'n3')
  as v(id, name, score, note)
"""
SCORES = """
{{ config(materialized='data_evolution_update', target='base', update_key='id',
          update_columns=['score', 'note']) }}
select id, score * 10 as score, concat('updated ', name) as note
from {{ ref('base') }} where id in (1, 3)
"""
UNMATCHED = """
{{ config(materialized='data_evolution_update', target='base', update_key='id') }}
select cast(id as bigint) as id, cast(score as int) as score
from values (2, 5), (9, 6) as v(id, score)
"""
UPSERT = """
{{ config(materialized='data_evolution_update', target='base', update_key='id',
          when_not_matched='insert') }}
select cast(id as bigint) as id, cast(score as int) as score
from values (2, 5), (9, 6) as v(id, score)
"""
BY_ROW_ID = """
{{ config(materialized='data_evolution_update', target='base', update_key='_ROW_ID',
          update_columns='score') }}
select _ROW_ID, score + 1 as score from {{ paimon_row_tracking(ref('base')) }} where id >= 3
"""
VECTOR_BASE = """
{{ config(materialized='paimon_append', row_tracking=true,
          table_options={'data-evolution.enabled': 'true', 'vector-field': 'emb',
                         'field.emb.vector-dim': '2'}) }}
select cast(id as bigint) as id, array(cast(id as float), cast(0 as float)) as emb, note
from values (1, 'n1'), (2, 'n2'), (3, 'n3') as v(id, note)
"""
VECTOR_UPDATE = """
{{ config(materialized='data_evolution_update', target='vector_base', update_key='id',
          update_columns='emb', when_not_matched='insert') }}
select cast(id as bigint) as id,
       case when id = 2 then null else array(cast(id as float), cast(9 as float)) end as emb
from values (2), (3), (4) as v(id)
"""
MISSING = """
{{ config(materialized='data_evolution_update', target='base', update_key='id',
          update_columns=['score', 'nope']) }}
select cast(1 as bigint) as id, 5 as score, 6 as nope
"""


# a partitioned table (two row-id ranges) with a VECTOR column and a VARIANT column whose
# files are shredded as inferred, built twice
PARTITIONED = """
{{ config(materialized='paimon_append', row_tracking=true, partition_by='dt',
          table_options={'data-evolution.enabled': 'true', 'vector-field': 'emb',
                         'field.emb.vector-dim': '2', 'variant.inferShreddingSchema': 'true'}) }}
select cast(id as bigint) as id, name, cast(id as int) as score,
       array(cast(id as float), cast(0 as float)) as emb,
       parse_json(concat('{"k":', cast(id as string), '}')) as v, dt
from values (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'x'), (4, 'd', 'y'), (5, 'e', 'y')
  as v(id, name, dt)
"""
# keys 2 (its variant set NULL) and 5 in the two ranges, key 9 a new row of partition 'y'
SAME_UPDATE = """
{{{{ config(materialized='data_evolution_update', target='{target}', update_key='id',
          update_columns=['score', 'emb', 'v'], when_not_matched='insert',
          write_path='{path}') }}}}
select cast(id as bigint) as id, cast(score as int) as score,
       case when id = 5 then null else array(cast(id as float), cast(7 as float)) end as emb,
       case when id = 2 then null
            else parse_json(concat('{{"k":', cast(score as string), ',"s":"u"}}')) end as v,
       dt
from values (2, 20, 'x'), (5, 50, 'y'), (9, 90, 'y') as v(id, score, dt)
"""
DISTRIBUTED_BY_ROW_ID = """
{{ config(materialized='data_evolution_update', target='part_spark', update_key='_ROW_ID',
          update_columns='score', write_path='distributed') }}
select _ROW_ID, score + 1 as score from {{ paimon_row_tracking(ref('part_spark')) }}
where id in (3, 4, 9)
"""
DISTRIBUTED_UNMATCHED = """
{{ config(materialized='data_evolution_update', target='part_spark', update_key='id',
          write_path='distributed') }}
select cast(id as bigint) as id, cast(score as int) as score
from values (1, 5), (77, 6) as v(id, score)
"""


def pypaimon_rows(project, name="base", with_row_id=False):
    table = open_table(project, name)
    builder = table.new_read_builder()
    if with_row_id:
        builder = builder.with_projection(list(table.field_names) + ["_ROW_ID"])
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    variants = {f.name for f in data.schema if is_variant_struct(f.type)}
    return sorted(tuple(GenericVariant(v["value"], v["metadata"]).to_python()
                        if k in variants and v is not None else v for k, v in r.items())
                  for r in data.to_pylist())


class TestDataEvolutionUpdate:
    @pytest.fixture(scope="class")
    def models(self):
        return {"base.sql": BASE, "scores.sql": SCORES, "unmatched.sql": UNMATCHED,
                "missing.sql": MISSING, "upsert.sql": UPSERT,
                "by_row_id.sql": BY_ROW_ID, "vector_base.sql": VECTOR_BASE,
                "vector_update.sql": VECTOR_UPDATE}

    def test_a_model_writes_two_columns_and_leaves_the_others(self, project):
        run_dbt(["run", "-s", "base", "scores"])
        want = [(1, "a", 100, "updated a"), (2, "b", 20, "n2"), (3, "c", 300, "updated c")]
        assert pypaimon_rows(project) == want
        assert commit_kinds(project, "base") == ["APPEND", "APPEND"]
        files = [f for split in open_table(project, "base").new_read_builder().new_scan()
                 .plan().splits() for f in split.files]
        assert sorted(tuple(sorted(f.write_cols)) for f in files if f.write_cols) == [
            ("note", "score")]
        shown = run_dbt(["show", "--inline", "select * from {{ ref('scores') }} order by id"])
        assert [tuple(r) for r in shown.results[0].agate_table.rows] == want

        # a key matching no row: an error naming it, no commit
        _, out = run_dbt_and_capture(["run", "-s", "unmatched"], expect_pass=False)
        assert "1 of the model's rows match no row" in out and "[9]" in out
        assert pypaimon_rows(project) == want and len(commit_kinds(project, "base")) == 2
        _, out = run_dbt_and_capture(["run", "-s", "missing"], expect_pass=False)
        assert "update_columns` names ['nope'], which are not columns" in out
        assert len(commit_kinds(project, "base")) == 2

        # when_not_matched='insert': key 2 updated, key 9 a new row (name and note NULL), in
        # one commit, as MERGE INTO's WHEN NOT MATCHED THEN INSERT (id, score) VALUES
        _, out = run_dbt_and_capture(["run", "-s", "upsert"])
        assert "UPDATE ['score'] of 1 rows in 1 column file(s), INSERT 1 new rows" in out, out
        assert pypaimon_rows(project) == [(1, "a", 100, "updated a"), (2, "b", 5, "n2"),
                                          (3, "c", 300, "updated c"), (9, None, 6, None)]
        assert commit_kinds(project, "base") == ["APPEND"] * 3

        # keyed by _ROW_ID, read by dbt-paimon itself from the table whose rows now span
        # column files and an inserted file
        run_dbt(["run", "-s", "by_row_id"])
        assert pypaimon_rows(project) == [(1, "a", 100, "updated a"), (2, "b", 5, "n2"),
                                          (3, "c", 301, "updated c"), (9, None, 7, None)]

        # `compact` rewrites the row-id ranges (the base file, the inserted one and their
        # column files: six files, over compaction.min.file-num's 5) into one file: the rows,
        # their _ROW_IDs and the model's view as they were
        row_ids = run_dbt(["show", "--inline", "select id, _ROW_ID from "
                                               "{{ paimon_row_tracking(ref('base')) }}"])
        _, out = run_dbt_and_capture(["run-operation", "compact", "--args", "{model: base}"])
        assert "data-evolution compaction" in out and "data files 6 -> 1" in out, out
        assert commit_kinds(project, "base")[-1] == "COMPACT"
        assert pypaimon_rows(project) == [(1, "a", 100, "updated a"), (2, "b", 5, "n2"),
                                          (3, "c", 301, "updated c"), (9, None, 7, None)]
        again = run_dbt(["show", "--inline", "select id, _ROW_ID from "
                                             "{{ paimon_row_tracking(ref('base')) }}"])
        assert sorted(map(tuple, again.results[0].agate_table.rows)) == \
            sorted(map(tuple, row_ids.results[0].agate_table.rows))

        # a row operation changes the table by row id: a column file, no data file rewritten
        _, out = run_dbt_and_capture(["run-operation", "update_rows", "--args",
                                      '{model: base, set: {note: "nine"}, where: "id = 9"}'])
        assert "1 updated by row id" in out and "0 data files rewritten" in out, out
        assert pypaimon_rows(project) == [(1, "a", 100, "updated a"), (2, "b", 5, "n2"),
                                          (3, "c", 301, "updated c"), (9, None, 7, "nine")]
        assert commit_kinds(project, "base")[-1] == "APPEND"

    def test_a_vector_column_of_the_data_files_is_updated(self, project):
        run_dbt(["run", "-s", "vector_base", "vector_update"])
        want = [(1, [1.0, 0.0], "n1"), (2, None, "n2"), (3, [3.0, 9.0], "n3"),
                (4, [4.0, 9.0], None)]
        assert pypaimon_rows(project, "vector_base") == want
        read = project.run_sql(f"select id, emb, note from {project.test_schema}.vector_base "
                               f"order by id", fetch="all")
        assert [(r[0], r[1] and list(r[1]), r[2]) for r in read] == want


def table_files(project, name):
    root = open_table(project, name).table_path
    root = str(root).replace("file://", "").replace("file:", "")
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


class TestDistributedDataEvolutionUpdate:
    @pytest.fixture(scope="class")
    def models(self):
        return {"part_in.sql": PARTITIONED, "part_spark.sql": PARTITIONED,
                "update_in.sql": SAME_UPDATE.format(target="part_in", path="in_process"),
                "update_spark.sql": SAME_UPDATE.format(target="part_spark",
                                                       path="distributed"),
                "unmatched_spark.sql": DISTRIBUTED_UNMATCHED,
                "by_row_id_spark.sql": DISTRIBUTED_BY_ROW_ID}

    def test_spark_tasks_write_the_table_the_in_process_run_writes(self, project):
        run_dbt(["run", "-s", "part_in", "part_spark"])
        _, out = run_dbt_and_capture(["run", "-s", "update_in", "update_spark"])
        assert "UPDATE ['score', 'emb', 'v'] of 2 rows in 2 column file(s), INSERT 1 new " \
               "rows in-process" in out, out
        assert "UPDATE ['score', 'emb', 'v'] of 2 rows in 2 column file(s), INSERT 1 new " \
               "rows distributed" in out, out
        want = [(1, "a", 1, [1.0, 0.0], {"k": 1}, "x"), (2, "b", 20, [2.0, 7.0], None, "x"),
                (3, "c", 3, [3.0, 0.0], {"k": 3}, "x"), (4, "d", 4, [4.0, 0.0], {"k": 4}, "y"),
                (5, "e", 50, None, {"k": 50, "s": "u"}, "y"),
                (9, None, 90, [9.0, 7.0], {"k": 90, "s": "u"}, "y")]
        assert pypaimon_rows(project, "part_spark") == want
        # every column and every _ROW_ID as the in-process run left them, in one new snapshot
        assert pypaimon_rows(project, "part_spark", with_row_id=True) == \
            pypaimon_rows(project, "part_in", with_row_id=True)
        assert commit_kinds(project, "part_spark") == ["APPEND", "APPEND"]
        assert commit_kinds(project, "part_in") == ["APPEND", "APPEND"]
        for name in ("part_in", "part_spark"):
            # every Parquet file holding the variant (data, column and new-row files) shredded
            # as inferred from its rows; Spark reads the variants whole
            shredded = [pq.read_schema(f).field("v").type for f in table_files(project, name)
                        if f.endswith(".parquet") and "v" in pq.read_schema(f).names]
            assert len(shredded) == 5 and all(
                "typed_value" in [c.name for c in t] for t in shredded), (name, shredded)
            read = project.run_sql(f"select id, to_json(v) from {project.test_schema}.{name} "
                                   f"order by id", fetch="all")
            assert [(r[0], r[1] and json.loads(r[1])) for r in read] == \
                [(w[0], w[4]) for w in want], name

        # a key matching no row: the in-process path's error, no commit, no file left
        files = table_files(project, "part_spark")
        _, out = run_dbt_and_capture(["run", "-s", "unmatched_spark"], expect_pass=False)
        assert "1 of the model's rows match no row" in out and "[77]" in out, out
        assert pypaimon_rows(project, "part_spark") == want
        assert commit_kinds(project, "part_spark") == ["APPEND", "APPEND"]
        assert table_files(project, "part_spark") == files

        # keyed by _ROW_ID: rows of both ranges and the inserted row, one commit
        _, out = run_dbt_and_capture(["run", "-s", "by_row_id_spark"])
        assert "UPDATE ['score'] of 3 rows in 3 column file(s) distributed" in out, out
        assert pypaimon_rows(project, "part_spark") == [
            w[:2] + (w[2] + 1,) + w[3:] if w[0] in (3, 4, 9) else w for w in want]
        assert commit_kinds(project, "part_spark") == ["APPEND"] * 3
