"""Seeds read from the file with Arrow (materialize/seed_csv.py) keep dbt's seed behaviour:
inferred types, `column_types`, `delimiter`, `quote_columns`, --full-refresh, --empty, --show,
other file formats, and a bad file's error before anything is written."""
from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed.test_seed import BaseSeedSpecificFormats
from dbt.tests.util import get_connection, run_dbt, run_dbt_and_capture

from tests.functional.paimon.test_paimon_pk import snapshot_ids

TYPED_CSV = """id,amount,price,name,day,at,iso_at,flag,code,empty_col
1,10,1.50,alice,2024-01-31,2024-01-31 10:11:12,2024-01-31T10:11:12.5,true,007,
2,-3,2,"b, ob",2024-02-01,2024-02-01 00:00:00,2024-02-01T00:00:00,False,010,null
3,,,,,,,,,
"""

SEMICOLON_CSV = "key;Value;Label\n1;2.5;x,y\n2;3;z\n"


def _columns(project, relation):
    rows = project.run_sql(f"describe {relation}", fetch="all")
    return [(r[0], r[1]) for r in rows if r[0] and not r[0].startswith("#")]


class TestSeedTypesAndConfigsPaimon:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"typed.csv": TYPED_CSV, "semicolon.csv": SEMICOLON_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"test": {
            "typed": {"+column_types": {"code": "string", "price": "decimal(10,2)",
                                        "missing": "int"}},
            "semicolon": {"+delimiter": ";", "+quote_columns": True},
        }}}

    def test_types_values_and_options(self, project):
        results, output = run_dbt_and_capture(["seed"])
        assert [r.status for r in results] == ["success", "success"]
        assert "Column types specified for non-existent columns in seed 'typed': missing" in output
        schema = project.test_schema
        assert _columns(project, f"{schema}.typed") == [
            ("id", "bigint"), ("amount", "bigint"), ("price", "decimal(10,2)"),
            ("name", "string"), ("day", "date"), ("at", "timestamp"), ("iso_at", "timestamp"),
            ("flag", "boolean"), ("code", "string"), ("empty_col", "bigint")]
        rows = project.run_sql(
            f"select id, amount, cast(price as string), name, cast(day as string), "
            f"cast(at as string), cast(iso_at as string), flag, code, empty_col "
            f"from {schema}.typed order by id", fetch="all")
        assert [tuple(r) for r in rows] == [
            (1, 10, "1.50", "alice", "2024-01-31", "2024-01-31 10:11:12",
             "2024-01-31 10:11:12.5", True, "007", None),
            (2, -3, "2.00", "b, ob", "2024-02-01", "2024-02-01 00:00:00",
             "2024-02-01 00:00:00", False, "010", None),
            (3, None, None, None, None, None, None, None, None, None)]
        assert _columns(project, f"{schema}.semicolon") == [
            ("key", "bigint"), ("Value", "double"), ("Label", "string")]
        rows = project.run_sql(f"select * from {schema}.semicolon order by key", fetch="all")
        assert [tuple(r) for r in rows] == [(1, 2.5, "x,y"), (2, 3.0, "z")]

    def test_reload_full_refresh_empty_and_show(self, project):
        schema = project.test_schema
        run_dbt(["seed"])
        snapshots = len(snapshot_ids(project, "typed"))
        # a reload is one more commit, the rows replaced (not appended)
        run_dbt(["seed", "--select", "typed"])
        assert project.run_sql(f"select count(*) from {schema}.typed", fetch="one")[0] == 3
        assert len(snapshot_ids(project, "typed")) == snapshots + 1
        run_dbt(["seed", "--full-refresh", "--select", "typed"])
        assert project.run_sql(f"select count(*) from {schema}.typed", fetch="one")[0] == 3
        run_dbt(["seed", "--empty", "--select", "semicolon"])
        assert project.run_sql(f"select count(*) from {schema}.semicolon", fetch="one")[0] == 0
        assert _columns(project, f"{schema}.semicolon")[1] == ("Value", "double")
        # what `dbt seed --show` prints: a sample of the file's rows, typed
        run_dbt(["seed", "--select", "semicolon"])
        sample = run_dbt(["seed", "--show", "--select", "semicolon"])[0].agate_table
        assert list(sample.column_names) == ["key", "Value", "Label"]
        assert sorted(tuple(r) for r in sample.rows) == [(1, 2.5, "x,y"), (2, 3, "z")]


class TestSeedIntoParquetPaimon:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"typed.csv": TYPED_CSV}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+file_format": "parquet", "+column_types": {"code": "string"}}}

    def test_parquet_seed_has_the_same_rows(self, project):
        for _ in range(2):  # the second load replaces the table
            results = run_dbt(["seed"])
            assert results[0].status == "success"
        relation = f"{project.test_schema}.typed"
        with get_connection(project.adapter):
            assert not project.adapter.is_paimon_relation(
                project.adapter.get_relation(None, project.test_schema, "typed"))
        assert _columns(project, relation)[:3] == [("id", "bigint"), ("amount", "bigint"),
                                                   ("price", "double")]
        rows = project.run_sql(f"select id, code, flag from {relation} order by id", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "007", True), (2, "010", False),
                                            (3, None, None)]


class TestSeedFileErrorsPaimon:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"good.csv": "a\n1\n", "ragged.csv": "a,b\n1,2,3\n"}

    def test_a_bad_file_names_the_seed_and_writes_nothing(self, project):
        results, output = run_dbt_and_capture(["seed"], expect_pass=False)
        status = {r.node.name: r.status for r in results}
        assert status == {"good": "success", "ragged": "error"}
        assert "Seed 'ragged'" in output and "3 values" in output
        with get_connection(project.adapter):
            assert project.adapter.get_relation(None, project.test_schema, "ragged") is None


class TestSeedSpecificFormatsPaimon(BaseSeedSpecificFormats):
    """dbt's own: a 20,000-row seed, a file name with dots, unicode values. Spark (dbt-spark
    alike) reads an unquoted dotted name as a multi-part one and a Paimon table's name cannot
    have dots: that seed gets an alias, as a user would give it."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"quote_columns": False,
                          "test": {"seed.with.dots": {"+alias": "seed_with_dots"}}}}


class TestSeedNameWithDotsPaimon:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"seed.with.dots.csv": "a\n1\n"}

    def test_a_paimon_seed_named_with_dots_is_refused_clearly(self, project):
        _, output = run_dbt_and_capture(["seed"], expect_pass=False)
        assert "Paimon table name 'seed.with.dots' is not supported" in output


class TestSeedFileChangesPaimon:
    """A seed's rows typed in this process are written without a Spark query while the table
    keeps its columns; a file whose columns changed goes through Spark's path, which evolves
    the table (dbt's seed: the table follows the file)."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"changing.csv": "id,name\n1,a\n2,b\n"}

    def test_added_dropped_and_retyped_columns_follow_the_file(self, project):
        relation = f"{project.test_schema}.changing"
        run_dbt(["seed"])
        assert _columns(project, relation) == [("id", "bigint"), ("name", "string")]
        seed_file = Path(project.project_root) / "seeds" / "changing.csv"
        seed_file.write_text("id,name,score\n1,a,1.5\n2,b,\n3,c,2\n")
        run_dbt(["seed"])
        assert _columns(project, relation) == [("id", "bigint"), ("name", "string"),
                                               ("score", "double")]
        rows = project.run_sql(f"select * from {relation} order by id", fetch="all")
        assert [tuple(r) for r in rows] == [(1, "a", 1.5), (2, "b", None), (3, "c", 2.0)]
        seed_file.write_text("id,score\n1,x\n")
        run_dbt(["seed"])
        assert _columns(project, relation) == [("id", "bigint"), ("score", "string")]
        assert [tuple(r) for r in project.run_sql(f"select * from {relation}", fetch="all")] \
            == [(1, "x")]
