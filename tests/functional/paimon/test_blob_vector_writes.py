"""BLOB and VECTOR columns written by paimon_append models, as Paimon 2.x writers write them:
a data-evolution table's BLOB column (`blob-field`) lands in `.blob` files and its VECTOR column
(`vector-field`, `vector.file.format`) in `.vector.parquet` files, in one commit per run (so
do the values of ARRAY<BLOB> and MAP<X, BLOB> columns, NULL elements and values included); a
table's VECTOR column without `vector.file.format` lives in its data files. pypaimon 2.1's own
reader and dbt-paimon's read back exactly the models' rows, bytes and NULL vectors included; a
second run appends. A partial-update and an aggregation table hold a NULL vector until a writer
gives the key one. A config Paimon refuses (a BLOB column that is not BINARY) and a vector of
another length are refused with nothing written."""

import os

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.paimon.catalog.warehouse import table_exists
from tests.functional.paimon_tables import open_table, snapshots

PICTURES = """{{ config(materialized='paimon_append', row_tracking=true, partition_by='dt',
    table_options={'data-evolution.enabled': 'true', 'blob-field': 'picture',
                   'vector-field': 'embedding', 'field.embedding.vector-dim': '3',
                   'vector.file.format': 'parquet'}) }}
select cast(id as bigint) as id, cast(id % 2 as string) as dt,
       case when id = 1 then null else unhex(concat(repeat('FF', id), lpad(hex(id), 2, '0')))
         end as picture,
       array(cast(id as float), cast(0.5 as float), cast(-1 as float)) as embedding
from range({{ var('low', 0) }}, {{ var('low', 0) }} + 3)
"""
EMBEDDINGS = """{{ config(materialized='paimon_append',
    table_options={'vector-field': 'embedding', 'field.embedding.vector-dim': '2'}) }}
select cast(id as bigint) as id,
       case when {{ var('null_vector', false) }} and id % 2 = 1 then null
            else array(cast(id as double), cast(null as double)) end as embedding
from range({{ var('low', 0) }}, {{ var('low', 0) }} + 2)
"""
# a VECTOR column in a primary-key table's data files (merge engine deduplicate): merged by key
KEYED = """{{ config(materialized='paimon_pk', primary_key='id', buckets=2,
    write_path=var('write_path', 'auto'),
    table_options={'vector-field': 'embedding', 'field.embedding.vector-dim': '2'}) }}
select cast(id as bigint) as id,
       case when {{ var('null_vector', false) }} and id = 3 then null
            when {{ var('short_vector', false) }} and id = 3 then array(cast(1 as float))
            else array(cast(id as float), cast({{ var('low', 0) }} as float)) end as embedding
from range({{ var('low', 0) }}, {{ var('low', 0) }} + 3)
"""
# VECTOR columns in the merge engines whose rows hold NULL until a writer gives a value: run 1
# gives keys 0-2 a label and key 1 a vector, run 2 gives keys 1-3 vectors (key 2's NULL)
MERGED = """{{ config(materialized='paimon_pk', primary_key='id', merge_engine='ENGINE',
    table_options={'vector-field': 'embedding', 'field.embedding.vector-dim': '2'}) }}
{%- set second = var('second', 0) %}
select cast(id as bigint) as id,
       case when {{ 'id != 2' if second else 'id = 1' }}
            then array(cast(id as float), cast({{ second }} as float)) end as embedding,
       {{ 'cast(null as string)' if second else "concat('label', id)" }} as label
from range({{ second }}, {{ second }} + 3)
"""
# merged by key into a data-evolution table: the matched rows' BLOB and vector-file columns by
# row id (ops/data_evolution_row_ops.py), the others appended
MERGED_PICTURES = """{{ config(materialized='paimon_append', row_tracking=true,
    incremental_strategy='merge', unique_key='id',
    table_options={'data-evolution.enabled': 'true', 'blob-field': 'picture',
                   'vector-field': 'embedding', 'field.embedding.vector-dim': '2',
                   'vector.file.format': 'parquet'}) }}
select cast(id as bigint) as id, unhex(concat(lpad(hex(id), 2, '0'), '{{ var('run', 'AA') }}'))
         as picture,
       array(cast(id as float), cast({{ var('low', 0) }} as float)) as embedding
from range({{ var('low', 0) }}, {{ var('low', 0) }} + 3)
"""
# Paimon 2.x's ARRAY<BLOB> and MAP<X, BLOB>: each value of the list or map in the .blob files
ALBUMS = """{{ config(materialized='paimon_append', row_tracking=true,
    table_options={'data-evolution.enabled': 'true', 'blob-field': 'pages,sides'}) }}
select cast(id as bigint) as id,
       case when id = 1 then null
            else array(unhex(lpad(hex(id), 2, '0')),
                       case when id != 4 then unhex('FFEE') end) end as pages,
       case when id = 2 then null
            else map('front', unhex(lpad(hex(id), 4, '0')),
                     'back', case when id != 5 then unhex('') end) end as sides
from range({{ var('low', 0) }}, {{ var('low', 0) }} + 3)
"""
BAD_BLOB = """{{ config(materialized='paimon_append', row_tracking=true,
    table_options={'data-evolution.enabled': 'true', 'blob-field': 'label'}) }}
select 1 as id, 'not bytes' as label
"""


def picture(i):
    return None if i == 1 else b"\xff" * i + bytes([i])


def pypaimon_rows(project, table):
    read = open_table(project, table).new_read_builder()
    return read.new_read().to_arrow(read.new_scan().plan().splits()).sort_by("id").to_pylist()


def stored_files(project, table):
    path = open_table(project, table).table_path
    return [name for _, _, names in os.walk(str(path).removeprefix("file:")) for name in names
            if name.startswith("data-")]


class TestBlobVectorWrites:
    @pytest.fixture(scope="class")
    def models(self):
        return {"pictures.sql": PICTURES, "embeddings.sql": EMBEDDINGS, "bad_blob.sql": BAD_BLOB,
                "keyed_vectors.sql": KEYED,
                "merged_vectors_partial_update.sql": MERGED.replace("ENGINE", "partial-update"),
                "merged_vectors_aggregation.sql": MERGED.replace("ENGINE", "aggregation"),
                "merged_pictures.sql": MERGED_PICTURES, "albums.sql": ALBUMS}

    def test_vector_column_of_a_primary_key_table_merged_by_key(self, project):
        """Paimon allows VECTOR columns in a primary-key table's data files. A second run,
        written by Spark tasks, replaces key 2's vector; pypaimon 2.1 and Spark read the merged
        rows exactly. A NULL vector (Arrow's Parquet writer cannot store one) or a vector of
        another length is refused naming the column, with nothing written."""
        run_dbt(["run", "-s", "keyed_vectors"])
        run_dbt(["run", "-s", "keyed_vectors", "--vars", "{low: 2, write_path: distributed}"])
        table = open_table(project, "keyed_vectors")
        assert [(f.name, str(f.type)) for f in table.fields] == \
            [("id", "BIGINT NOT NULL"), ("embedding", "VECTOR<FLOAT, 2>")]
        expected = [{"id": i, "embedding": [float(i), 0.0 if i < 2 else 2.0]} for i in range(5)]
        assert pypaimon_rows(project, "keyed_vectors") == expected
        read = project.run_sql(f"select id, embedding from {project.test_schema}.keyed_vectors "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "embedding": list(r[1])} for r in read] == expected

        before = len(snapshots(project, "keyed_vectors"))
        results = run_dbt(["run", "-s", "keyed_vectors", "--vars", "{low: 3, short_vector: true}"],
                          expect_pass=False)
        message = str(results[0].message)
        assert "vector(s) that are not 2 long (the VECTOR column's 'field.embedding.vector-dim'); " \
            "lengths found: [1]" in message and "embedding" in message, message
        assert len(snapshots(project, "keyed_vectors")) == before
        assert pypaimon_rows(project, "keyed_vectors") == expected

        # a NULL vector is stored as Paimon stores it (here by Spark tasks), and replaces key
        # 3's vector
        run_dbt(["run", "-s", "keyed_vectors", "--vars",
                 "{low: 3, null_vector: true, write_path: distributed}"])
        expected = expected[:3] + [{"id": 3, "embedding": None},
                                   {"id": 4, "embedding": [4.0, 3.0]},
                                   {"id": 5, "embedding": [5.0, 3.0]}]
        assert pypaimon_rows(project, "keyed_vectors") == expected
        read = project.run_sql(f"select id, embedding from {project.test_schema}.keyed_vectors "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "embedding": r[1] and list(r[1])} for r in read] == expected

    @pytest.mark.parametrize("engine", ["partial-update", "aggregation"])
    def test_a_vector_column_stays_null_until_a_writer_gives_it(self, project, engine):
        """Run 1 gives only key 1 a vector; run 2 gives keys 1 and 3 vectors and key 2 a NULL
        (no value): key 0 keeps its NULL, key 1 takes the newer vector, key 2 keeps NULL and
        its label. pypaimon 2.1 merges the stored files itself and reads what Spark reads."""
        name = f"merged_vectors_{engine.replace('-', '_')}"
        run_dbt(["run", "-s", name])
        run_dbt(["run", "-s", name, "--vars", "{second: 1}"])
        assert str(open_table(project, name).fields[1].type) == "VECTOR<FLOAT, 2>"
        expected = [{"id": 0, "embedding": None, "label": "label0"},
                    {"id": 1, "embedding": [1.0, 1.0], "label": "label1"},
                    {"id": 2, "embedding": None, "label": "label2"},
                    {"id": 3, "embedding": [3.0, 1.0], "label": None}]
        assert pypaimon_rows(project, name) == expected
        read = project.run_sql(f"select id, embedding, label from {project.test_schema}.{name} "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "embedding": r[1] and list(r[1]), "label": r[2]} for r in read] \
            == expected

    def test_blob_and_vector_columns_written_and_read_back(self, project):
        run_dbt(["run", "-s", "pictures", "embeddings", "albums"])
        run_dbt(["run", "-s", "pictures", "embeddings", "albums", "--vars", "{low: 3}"])

        albums = open_table(project, "albums")
        assert [(f.name, str(f.type)) for f in albums.fields][1:] == \
            [("pages", "ARRAY<BLOB>"), ("sides", "MAP<STRING NOT NULL, BLOB>")]
        expected = [{"id": i,
                     "pages": None if i == 1 else [bytes([i]),
                                                   None if i == 4 else b"\xff\xee"],
                     "sides": None if i == 2 else {"front": bytes([0, i]),
                                                   "back": None if i == 5 else b""}}
                    for i in range(6)]
        read = pypaimon_rows(project, "albums")
        assert [{**r, "sides": r["sides"] and dict(r["sides"])} for r in read] == expected
        assert any(f.endswith(".blob") for f in stored_files(project, "albums"))
        read = project.run_sql(f"select id, pages, sides from {project.test_schema}.albums "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "pages": r[1] and [b and bytes(b) for b in r[1]],
                 "sides": r[2] and {k: v and bytes(v) for k, v in r[2].items()}} for r in read] \
            == expected

        table = open_table(project, "pictures")
        assert [(f.name, str(f.type)) for f in table.fields][2:] == \
            [("picture", "BLOB"), ("embedding", "VECTOR<FLOAT, 3>")]
        expected = [{"id": i, "dt": str(i % 2), "picture": picture(i),
                     "embedding": [float(i), 0.5, -1.0]} for i in range(6)]
        assert pypaimon_rows(project, "pictures") == expected
        assert [s.commit_kind for s in snapshots(project, "pictures")] == ["APPEND", "APPEND"]
        files = stored_files(project, "pictures")
        assert any(f.endswith(".blob") for f in files)
        assert any(f.endswith(".vector.parquet") for f in files)
        read = project.run_sql(f"select id, dt, picture, embedding from "
                               f"{project.test_schema}.pictures order by id", fetch="all")
        assert [(r[0], r[1], None if r[2] is None else bytes(r[2]), list(r[3])) for r in read] \
            == [tuple(e.values()) for e in expected]

        assert str(open_table(project, "embeddings").fields[1].type) == "VECTOR<DOUBLE, 2>"
        vectors = [{"id": i, "embedding": [float(i), None]} for i in (0, 1, 3, 4)]
        assert pypaimon_rows(project, "embeddings") == vectors
        read = project.run_sql(f"select id, embedding from {project.test_schema}.embeddings "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "embedding": list(r[1])} for r in read] == vectors

        # a NULL vector lands in the append table's data file; the refused config writes nothing
        results = run_dbt(["run", "-s", "embeddings", "bad_blob", "--vars",
                           "{low: 6, null_vector: true}"], expect_pass=False)
        messages = {r.node.name: (r.status, str(r.message)) for r in results}
        assert messages["embeddings"][0] == "success", messages["embeddings"]
        assert "column 'label' in 'blob-field' is STRING" in messages["bad_blob"][1]
        assert "cast(label as binary)" in messages["bad_blob"][1]
        vectors += [{"id": 6, "embedding": [6.0, None]}, {"id": 7, "embedding": None}]
        assert pypaimon_rows(project, "embeddings") == vectors
        read = project.run_sql(f"select id, embedding from {project.test_schema}.embeddings "
                               f"order by id", fetch="all")
        assert [{"id": r[0], "embedding": r[1] and list(r[1])} for r in read] == vectors
        credentials = project.adapter.config.credentials
        assert not table_exists(credentials.warehouse, project.test_schema, "bad_blob",
                                credentials.catalog_options)

    def test_a_merge_by_key_writes_blob_and_vector_file_columns(self, project):
        run_dbt(["run", "-s", "merged_pictures"])
        run_dbt(["run", "-s", "merged_pictures", "--vars", "{low: 2, run: BB}"])
        expected = [{"id": i, "picture": bytes([i, 0xBB if i >= 2 else 0xAA]),
                     "embedding": [float(i), 2.0 if i >= 2 else 0.0]} for i in range(5)]
        assert pypaimon_rows(project, "merged_pictures") == expected
        read = project.run_sql(f"select id, picture, embedding from {project.test_schema}."
                               f"merged_pictures order by id", fetch="all")
        assert [{"id": r[0], "picture": bytes(r[1]), "embedding": list(r[2])} for r in read] \
            == expected
