"""The table options a Spark session sets for reads, read as Paimon's Spark connector reads them
(OptionUtils.mergeSQLConfWithIdentifier + OptionsUtils.convertToDynamicTableProperties in
apache/paimon): ``spark.paimon.<option>`` for every table, ``spark.paimon.<catalog>.<db>.<table>
.<option>`` (segments may be ``*``) for one, the table's own winning."""

import pytest

from dbt.adapters.paimon.datasource.catalog_entry import CatalogEntry
from dbt.adapters.paimon.datasource.entry_planner import WantedEntry, keeps
from dbt.adapters.paimon.datasource.session_options import (decode, encode, paimon_confs,
                                                            table_read_options)

MOR = "postpone.merge-on-read"


def test_a_global_setting_applies_to_every_table():
    confs = {f"spark.paimon.{MOR}": "true", "spark.sql.shuffle.partitions": "2"}
    assert table_read_options(confs, "db", "t") == ((MOR, "true"),)
    assert table_read_options(confs, "other", "u") == ((MOR, "true"),)


def test_the_tables_own_setting_wins_and_names_only_it():
    confs = {f"spark.paimon.{MOR}": "true", f"spark.paimon.spark_catalog.db.t.{MOR}": "False"}
    assert table_read_options(confs, "db", "t") == ((MOR, "false"),)
    assert table_read_options(confs, "db", "u") == ((MOR, "true"),)


def test_wildcards_and_catalog_names():
    confs = {f"spark.paimon.*.db.*.{MOR}": "true"}
    assert table_read_options(confs, "db", "anything") == ((MOR, "true"),)
    assert table_read_options(confs, "db2", "t") == ()
    # entries live in spark_catalog: another catalog's setting is not ours
    assert table_read_options({f"spark.paimon.paimon.db.t.{MOR}": "true"}, "db", "t") == ()


def test_the_most_specific_table_setting_wins_in_any_order():
    """Paimon's connector takes the last matching key in its hash map's order, which other
    settings change; here the exact table name wins over '*', then the database, then the
    catalog, whatever the order of the session's settings."""
    settings = [(f"spark.paimon.spark_catalog.db.t.{MOR}", "false"),
                (f"spark.paimon.*.db.*.{MOR}", "true"),
                (f"spark.paimon.*.*.t.{MOR}", "true"),
                (f"spark.paimon.spark_catalog.*.*.{MOR}", "true")]
    for order in (settings, settings[::-1], settings[1:] + settings[:1]):
        assert table_read_options(dict(order), "db", "t") == ((MOR, "false"),)
    # a table name outranks a database name: `*.*.t` over `spark_catalog.db.*`
    ranked = [(f"spark.paimon.spark_catalog.db.*.{MOR}", "false"),
              (f"spark.paimon.*.*.t.{MOR}", "true")]
    for order in (ranked, ranked[::-1]):
        assert table_read_options(dict(order), "db", "t") == ((MOR, "true"),)
        assert table_read_options(dict(order), "db", "u") == ((MOR, "false"),)


def test_only_the_options_reads_take_are_taken():
    confs = {"spark.paimon.scan.snapshot-id": "3", "spark.paimon.spark_catalog.db.t.bucket": "4",
             "spark.paimon.write.merge-schema": "true"}
    assert table_read_options(confs, "db", "t") == ()


def test_a_value_that_is_no_boolean_is_refused_naming_the_setting_and_table():
    with pytest.raises(ValueError, match=rf"'{MOR}' to 'yes' for reads of db\.t .*true or false"):
        table_read_options({f"spark.paimon.{MOR}": "yes"}, "db", "t")


def test_encoding_round_trips_and_only_paimon_settings_are_kept():
    options = ((MOR, "true"),)
    assert decode(encode(options)) == options and encode(()) == "" and decode("") == ()
    assert paimon_confs({"spark.paimon.x": 1, "spark.sql.y": "2"}) == {"spark.paimon.x": "1"}


def test_an_entry_made_with_other_read_options_is_made_again():
    properties = {"paimon.schema-id": "0", "paimon.snapshot-id": "3.1", "paimon.read": "native",
                  "paimon.branch": "", "paimon.native-rows": "0:parquet:nullable"}
    entry = CatalogEntry("VIEW", "", properties)
    wanted = WantedEntry("db", "t", "/wh", 0, "3.1", "", True)
    assert keeps(entry, wanted, lambda: True)
    with_option = WantedEntry("db", "t", "/wh", 0, "3.1", "", True,
                              read_options=encode(((MOR, "true"),)))
    assert not keeps(entry, with_option, lambda: True)
    remade = CatalogEntry("VIEW", "", {**properties,
                                       "paimon.session-read-options": f"{MOR}=true"})
    assert keeps(remade, with_option, lambda: True) and not keeps(remade, wanted, lambda: True)


def test_the_view_records_the_read_options_and_a_change_of_them_makes_it_anew():
    """ALTER VIEW SET TBLPROPERTIES would keep a property it does not name: an entry whose
    read options change is a new view."""
    import pyarrow as pa

    from dbt.adapters.paimon.datasource.entry_statements import EntryRead, entry_change

    schema = pa.schema([("id", pa.int64())])
    first = entry_change(EntryRead("db", "t", "t", 0, "3.1", "python", None, f"{MOR}=true"),
                         None, schema, None)
    assert first.properties["paimon.session-read-options"] == f"{MOR}=true"
    assert f"'paimon.session-read-options' = '{MOR}=true'" in first.statements[-1]
    made = CatalogEntry("VIEW", "", first.properties)
    same = entry_change(EntryRead("db", "t", "t", 0, "4.1", "python", None, f"{MOR}=true"),
                        made, schema, None)
    assert same.statements[-1].startswith("alter view")      # only the snapshot moved
    without = entry_change(EntryRead("db", "t", "t", 0, "4.1", "python"), made, schema, None)
    assert without.statements[-1].startswith("create or replace view")
    assert "paimon.session-read-options" not in without.properties
