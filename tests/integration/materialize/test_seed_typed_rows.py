"""A seed's rows typed in Arrow (SeedRows.typed, written without a Spark query) are exactly what
Spark's ``cast(`col` as type)`` of the same text gives, in the session time zone (the rows the
seed's Spark path writes): per column, value by value, in UTC and in a time zone with daylight
saving time (the hour a fall-back repeats takes the earlier offset, as java.time does). Where
only Spark can cast (a skipped hour, an offset in the text, a column_types cast), typed() says
so with None."""
import pytest

from dbt.adapters.paimon.materialize.seed_csv import read_seed

CSV = """id,amount,price,name,flag,day,at,iso_at
1,10,1.5,alice,true,2024-01-31,2024-01-31 10:11:12,2024-01-31T10:11:12.5
2,-3,2,"b, ob",False,2024-11-03,2024-11-03 01:30:00,2024-11-03T01:59:59.999999
3,,,,,,,
4,7,-0.25,null,TRUE,1999-12-31,2024-03-09 02:30:00,2024-03-11T02:30:00
"""


def spark_cast(spark, seed, view="seed_rows"):
    spark.createDataFrame(seed.table).createOrReplaceTempView(view)
    select = ", ".join(f"cast(`c{i}` as {t}) as `{name}`"
                       for i, (name, t) in enumerate(zip(seed.columns, seed.types)))
    return spark.sql(f"select {select} from {view}").toArrow()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_typed_rows_equal_sparks_cast(spark, tmp_path, zone):
    path = tmp_path / "seed.csv"
    path.write_text(CSV)
    seed = read_seed(str(path))
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        expected = spark_cast(spark, seed)
    finally:
        spark.conf.unset("spark.sql.session.timeZone")
    typed = seed.typed(zone)
    assert typed is not None
    assert typed.schema.names == expected.schema.names
    for name in typed.schema.names:
        want = expected.column(name).cast(typed.schema.field(name).type)
        assert typed.column(name).to_pylist() == want.to_pylist(), name


def test_only_spark_casts_a_skipped_hour_an_offset_or_a_column_types_cast(tmp_path):
    path = tmp_path / "seed.csv"
    path.write_text("at\n2024-03-10 02:30:00\n")  # New York skips 02:00-03:00 that day
    seed = read_seed(str(path))
    assert seed.typed("UTC") is not None
    assert seed.typed("America/New_York") is None
    path.write_text("at\n2024-03-10T02:30:00+02:00\n2024-03-10T02:30:00\n")
    assert read_seed(str(path)).types == ["timestamp"]
    assert read_seed(str(path)).typed("UTC") is None
    path.write_text("code,n\n007,1\n")
    assert read_seed(str(path), column_types={"code": "string"}).typed("UTC") is not None
    assert read_seed(str(path), column_types={"code": "int"}).typed("UTC") is None
    assert read_seed(str(path), column_types={"n": "decimal(4,1)"}).typed("UTC") is None
