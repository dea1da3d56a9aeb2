"""The documentation's examples match the code: README.md and docs/*.md.

Every relative link resolves (file and #anchor); every `yaml` block parses, and a `type: paimon`
profile in it is accepted by the adapter's credentials; every `config(...)` of a `sql` block names
configs the adapter or dbt knows and a known materialization, and a Paimon model's config passes
the adapter's own validation (config/model_config.py) with the columns of its select list; every
`dbt run-operation` of a `bash` block names an operation macro and only its parameters. The
second half proves each check fails on an example that no longer matches the code.
"""

import pytest

import docs_examples as docs
from docs_examples import Block

PAGES = docs.doc_files()
BLOCKS = docs.all_blocks(PAGES)


@pytest.mark.parametrize("path", PAGES)
def test_links_resolve(path):
    assert docs.link_problems(path, docs.read(path)) == []


def test_the_readme_stays_a_front_page():
    """The README is the newcomer's first page: within 12 KB, one line per benchmark; figures
    and methods belong in docs/benchmarks.md."""
    size = len(docs.read("README.md").encode())
    assert size <= 12_000, f"README.md is {size} bytes: move detail to a page under docs/"


CHECKED = ("yaml", "yml", "sql", "jinja", "bash", "sh", "shell", "console")


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang in CHECKED],
                         ids=lambda b: f"{b.where}:{b.lang}")
def test_example_matches_the_code(block):
    assert docs.block_problems(block) == []


def test_the_pages_hold_examples_of_every_kind():
    kinds = {b.lang for b in BLOCKS}
    assert {"yaml", "sql", "bash"} <= kinds
    assert any(docs.model_examples(b) for b in BLOCKS if b.lang == "sql")
    assert any("run-operation" in b.text for b in BLOCKS if b.lang == "bash")


# -- each check fails on an example that no longer matches the code ---------------------------

def sql(text):
    return docs.block_problems(Block("doc.md", 1, "sql", text))


def test_a_good_paimon_model_passes():
    assert sql("{{ config(materialized='paimon_pk', primary_key='id', buckets=2,\n"
               "          merge_engine='aggregation', aggregations={'n': 'sum'}) }}\n"
               "select id, count(*) as n from {{ ref('x') }} group by id") == []


@pytest.mark.parametrize("config, message", [
    ("materialized='paimon_pk', primary_key='id', primary_keys='id'", "primary_keys"),
    ("materialized='paimon_pkk', primary_key='id'", "paimon_pkk"),
    ("materialized='paimon_pk', primary_key='id', merge_engine='upsert'", "upsert"),
    ("materialized='paimon_pk', primary_key='missing'", "missing"),
    ("materialized='paimon_pk'", "needs a primary key"),
    ("materialized='paimon_pk', primary_key='id', changelog_producer='always'", "always"),
    ("materialized='paimon_pk', primary_key='id', table_options={'no-such-option': '1'}",
     "no-such-option"),
    ("materialized='paimon_append', primary_key='id'", "append table without primary key"),
    ("materialized='paimon_append', incremental_strategy='upsert'", "upsert"),
])
def test_a_config_the_code_refuses_fails(config, message):
    problems = sql("{{ config(" + config + ") }}\nselect id, name from t")
    assert problems and message in " ".join(problems)


def test_select_star_checks_the_columns_the_config_names():
    assert sql("{{ config(materialized='paimon_pk', primary_key='id', sequence_field='ts') }}\n"
               "select * from t") == []


def test_dbt_configs_and_materializations_pass():
    assert sql("{{ config(materialized='incremental', unique_key='id', on_schema_change='fail',"
               " pre_hook='select 1', tags=['a']) }}\nselect 1 as id") == []


def bash(text):
    return docs.block_problems(Block("doc.md", 1, "bash", text))


def test_run_operations():
    assert bash("dbt run-operation compact --args '{model: orders, full: true}'") == []
    assert "not an operation macro" in " ".join(bash("dbt run-operation compactt"))
    assert "no parameter(s) ['fulll']" in " ".join(
        bash("dbt run-operation compact --args '{model: orders, fulll: true}'"))
    assert "not YAML" in " ".join(bash("dbt run-operation compact --args '{model: [orders'"))


def yaml_block(text):
    return docs.block_problems(Block("doc.md", 1, "yaml", text))


def test_profiles():
    assert yaml_block("p:\n  outputs:\n    dev: {type: paimon, schema: a, "
                      "spark_master: \"{{ env_var('M', 'local[2]') }}\"}") == []
    assert "spark_masterr" in " ".join(yaml_block("dev: {type: paimon, spark_masterr: yarn}"))
    assert "not a Spark master URL" in " ".join(
        yaml_block("dev: {type: paimon, schema: a, spark_master: 'host:7077'}"))
    assert "does not parse" in " ".join(yaml_block("a: [b"))
    assert "paimon_pkk" in " ".join(yaml_block("models:\n  p:\n    +materialized: paimon_pkk"))


def test_links(tmp_path):
    page = "[setup](docs/setup.md#profile-fields) [x](docs/nope.md) [y](docs/setup.md#nope)"
    problems = docs.link_problems("README.md", page)
    assert len(problems) == 2
    assert "nope.md does not exist" in problems[0] and "#nope" in problems[1]
    assert docs.link_problems("README.md", "`[a](nope.md)` and https://x [b](https://e.com)") == []


def test_every_config_of_the_adapter_is_documented():
    """Each config PaimonConfig adds to dbt-spark's appears, as `name`, in docs/."""
    import dataclasses

    from dbt.adapters.paimon.impl import PaimonConfig
    from dbt.adapters.spark.impl import SparkConfig

    own = ({f.name for f in dataclasses.fields(PaimonConfig)}
           - {f.name for f in dataclasses.fields(SparkConfig)} - {"_extra"})
    pages = " ".join(docs.read(p) for p in PAGES if p.startswith("docs/"))
    assert sorted(name for name in own if f"`{name}`" not in pages) == []


def test_every_operation_is_documented():
    """Each run-operation (a macro of operations/ taking a table) appears in docs/operations.md."""
    operations = [name for name, params in docs.operation_macros().items()
                  if not name.startswith("paimon__") and "relation" in params
                  and params[0] in ("model", "relation")]
    page = docs.read("docs/operations.md")
    assert operations and [name for name in operations if f"`{name}`" not in page] == []
