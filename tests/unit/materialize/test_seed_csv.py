"""A seed read by seed_csv.read_seed has the types and values dbt's agate path gives.

The reference is what dbt-spark's seed did with the same file: agate's table
(``agate_helper.from_csv``), dbt-spark's ``convert_type`` per column, and each value as its
``cast(? as <type>)`` binding received it (Decimal -> int/float, dates and datetimes as ISO text,
``column_types`` columns as text). Every case is a file; each is compared column by column.
"""
import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.clients import agate_helper

from dbt.adapters.paimon.materialize.seed_csv import SeedFileError, read_seed


def reference(path, delimiter=",", column_types=None):
    column_types = column_types or {}
    table = agate_helper.from_csv(path, text_columns=[c for c in column_types], delimiter=delimiter)
    types, columns = [], []
    for i, name in enumerate(table.column_names):
        spark_type = column_types.get(name, SparkAdapter.convert_type(table, i))
        types.append(spark_type)
        columns.append([_bound(v, spark_type, name in column_types) for v in table.columns[i]])
    return list(table.column_names), types, columns


def _bound(value, spark_type, text):
    if value is None or text:
        return value
    if isinstance(value, Decimal):
        return float(value) + 0.0 if spark_type == "double" else int(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def ours(path, delimiter=",", column_types=None):
    seed = read_seed(str(path), delimiter, column_types)
    return seed.columns, seed.types, [c.to_pylist() for c in seed.table.columns]


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and str(a) == str(b))
    return a == b and type(a) is type(b)


def check(tmp_path, text, delimiter=",", column_types=None, encoding="utf-8"):
    path = tmp_path / "seed.csv"
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    try:
        names, types, columns = reference(path, delimiter, column_types)
    except ValueError:  # e.g. NaN in a bigint column: no value to bind
        with pytest.raises(SeedFileError):
            ours(path, delimiter, column_types)
        return None
    got_names, got_types, got_columns = ours(path, delimiter, column_types)
    assert got_names == names
    assert got_types == types
    for name, want, got in zip(names, columns, got_columns):
        assert len(want) == len(got), name
        bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got)) if not _same(w, g)]
        assert not bad, (name, bad[:5])
    return types


CASES = {
    "integers": "a,b\n1,-2\n+3, 4 \n007,0\n",
    "integers_with_zero_fractions": "a\n1.0\n2.00\n-3.\n.0\n",
    "decimals": "a\n1.5\n-0.25\n3\n.5\n-.75\n0.0\n-0\n",
    "negative_zero_double": "a\n-0\n0.5\n",
    "long_fraction": "a\n0.123456789012345\n1\n",
    "exponents": "a\n1e3\n2E-2\n",
    "exponent_integer": "a\n1e3\n5\n",
    "currency_and_percent": "a\n$5\n10%\n\"1,000\"\n-$2.50\n",
    "nan_and_infinity": "a\nNaN\n1.5\nInfinity\n-inf\n",
    "big_integer": "a\n12345678901234567\n1\n",
    "nulls": "a,b,c\n1,,x\nnull,NULL,\n , Null ,y\n",
    "all_null_column": "a,b\n,1\nnull,2\n",
    "empty_file_header_only": "a,b,c\n",
    "dates": "d\n2024-01-31\n1999-12-01\n\n",
    "lenient_dates": "d\n2024-1-5\n2024-01-06\n",
    "invalid_date_is_text": "d\n2024-02-30\n2024-01-01\n",
    "datetimes": "t\n2024-01-31 10:11:12\n2024-02-01 00:00:00\n",
    "datetime_and_date_mix": "t\n2024-01-31 10:11:12\n2024-02-01\n",
    "iso_datetimes": "t\n2024-01-31T10:11:12\n2024-02-01T00:00:00.5\n2024-02-01T00:00:00.123456\n",
    "iso_with_offsets": "t\n2024-01-31T10:11:12Z\n2024-02-01T00:00:00+02:00\n2024-02-01T00:00:00\n",
    "booleans": "b\ntrue\nFalse\nTRUE\n\" t,rue \"\n\",\"\nnull\n",
    "one_zero_is_number": "b\n1\n0\n",
    "yes_no_is_text": "b\nyes\nno\n",
    "text": "s\nalice\n  padded  \n\"quoted, comma\"\n\"say \"\"hi\"\"\"\n",
    "multiline_text": "s,n\n\"line1\nline2\",1\n\"a\r\nb\",2\n",
    "crlf_file": "a,b\r\n1,x\r\n2,y\r\n",
    "bom": "\ufeffa,b\n1,x\n",
    "unicode": "name,city\nJosé,Zürich\n日本,東京\n",
    "unicode_digits_are_numbers": "a\n\u0661\u0662\n5\n",
    "unicode_whitespace_nulls": "a,b\n\u00a0,x\n\u2003null\u2003,y\n",
    "blank_line_in_the_middle": "a,b\n1,x\n\n2,y\n",
    "short_row": "a,b,c\n1,x\n2,y,z\n",
    "year_zero_is_text": "d\n0000-01-01\n2024-01-01\n",
    "leap_second_is_text": "t\n2024-01-31 23:59:60\n",
    "mixed_number_text": "a\n1\ntwo\n3\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_types_and_values_match_dbts_agate_path(tmp_path, name):
    check(tmp_path, CASES[name])


def test_spot_checks_of_the_expected_types(tmp_path):
    # the differential test above checks against dbt; these say what dbt decides
    assert check(tmp_path, CASES["integers_with_zero_fractions"]) == ["bigint"]
    assert check(tmp_path, CASES["decimals"]) == ["double"]
    assert check(tmp_path, CASES["currency_and_percent"]) == ["double"]
    assert check(tmp_path, CASES["datetime_and_date_mix"]) == ["string"]
    assert check(tmp_path, CASES["iso_datetimes"]) == ["timestamp"]
    assert check(tmp_path, CASES["booleans"]) == ["boolean"]
    assert check(tmp_path, CASES["all_null_column"]) == ["bigint", "bigint"]


def test_column_types_keep_the_text_for_sparks_cast(tmp_path):
    types = check(tmp_path, "id,code,amount\n1,007,1.50\n2,,2\n",
                  column_types={"code": "string", "amount": "decimal(10,2)"})
    assert types == ["bigint", "string", "decimal(10,2)"]
    seed = read_seed(str(tmp_path / "seed.csv"), column_types={"code": "string", "nope": "int"})
    assert seed.unknown_overrides == ["nope"]
    assert seed.table.column(1).to_pylist() == ["007", None]


def test_delimiter(tmp_path):
    assert check(tmp_path, "a;b\n1;x,y\n2;z\n", delimiter=";") == ["bigint", "string"]
    assert check(tmp_path, "a|b\n1.5|x\n", delimiter="|") == ["double", "string"]


def test_empty_keeps_the_types_and_no_rows(tmp_path):
    path = tmp_path / "seed.csv"
    path.write_text("a,b\n1.5,x\n")
    seed = read_seed(str(path), empty=True)
    assert seed.types == ["double", "string"] and seed.num_rows == 0


def test_a_row_longer_than_the_header_is_agates_error(tmp_path):
    path = tmp_path / "seed.csv"
    path.write_text("a,b\n1,2,3\n")
    with pytest.raises(SeedFileError, match="3 values"):
        read_seed(str(path))


def test_a_large_file_is_read_without_agate(tmp_path, monkeypatch):
    import dbt.adapters.paimon.materialize.seed_csv as seed_csv

    def refuse(*args, **kwargs):
        raise AssertionError("agate parsed the file")

    monkeypatch.setattr(seed_csv.agate_helper, "from_csv", refuse)
    rows = "\n".join(f"{i},{i * 0.5},n{i},2024-01-{i % 28 + 1:02d},{'true' if i % 2 else 'false'}"
                     for i in range(20000))
    path = tmp_path / "seed.csv"
    path.write_text("id,x,name,day,flag\n" + rows + "\n")
    seed = read_seed(str(path))
    assert seed.types == ["bigint", "double", "string", "date", "boolean"]
    assert seed.num_rows == 20000


TOKENS = ["1", "-2", "+3", "0", "-0", "1.5", "2.50", ".5", "1e3", "$4", "10%", '"1,000"', "NaN",
          "2024-01-31", "2024-1-5", "2024-02-30", "2024-01-31 10:11:12",
          "2024-01-31T10:11:12", "2024-01-31T10:11:12.25", "2024-01-31T10:11:12Z", "true",
          "False", "yes", "", "null", " NULL ", "abc", " padded ", '"a,b"', '"x ""y"""']


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(TOKENS), min_size=3, max_size=3), max_size=12),
       st.lists(st.integers(0, len(TOKENS) - 1), min_size=3, max_size=3))
def test_random_files_match_dbts_agate_path(tmp_path, rows, column_bias):
    # each column mostly draws from one token so that typed columns arise, not only text
    lines = ["a,b,c"]
    for row in rows:
        lines.append(",".join(TOKENS[column_bias[i]] if j % 3 else cell
                              for i, (j, cell) in enumerate(zip(range(len(row)), row))))
    check(tmp_path, "\n".join(lines) + "\n")
