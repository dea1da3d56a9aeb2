"""Model config -> Paimon table definition: every rule of the config contract, without Spark."""

import pytest

from dbt.adapters.paimon.config import table_definition
from dbt.adapters.paimon.runtime import PaimonConfigError

COLUMNS = [("order_id", "BIGINT"), ("dt", "STRING"), ("amount", "INT"), ("pay_ts", "BIGINT"),
           ("status", "STRING"), ("op", "STRING")]


def define(config, materialization="paimon_pk", columns=COLUMNS):
    return table_definition("orders", materialization, config, columns)


def error_of(config, materialization="paimon_pk", columns=COLUMNS) -> str:
    with pytest.raises(PaimonConfigError) as info:
        define(config, materialization, columns)
    return str(info.value)


def test_configs_become_paimon_options():
    d = define({
        "primary_key": ["order_id", "dt"], "partition_by": "dt", "buckets": 4,
        "merge_engine": "partial-update", "sequence_groups": {"pay_ts": ["amount", "status"]},
        "aggregations": {"amount": "sum"}, "ignore_delete": True,
        "table_options": {"snapshot.num-retained.max": 10},
    })
    assert d.primary_keys == ("order_id", "dt") and d.partition_keys == ("dt",)
    assert d.options == {
        "bucket": "4", "merge-engine": "partial-update", "ignore-delete": "true",
        "fields.pay_ts.sequence-group": "amount,status", "fields.amount.aggregate-function": "sum",
        "snapshot.num-retained.max": "10",
    }


def test_unique_key_is_accepted_as_primary_key():
    assert define({"unique_key": "order_id"}).primary_keys == ("order_id",)


def test_primary_key_given_two_ways_is_an_error():
    assert "given two ways" in error_of({"primary_key": "order_id", "unique_key": "order_id"})


def test_option_given_two_ways_names_both_sources():
    message = error_of({"primary_key": "order_id", "buckets": 2, "table_options": {"bucket": "3"}})
    assert "config `buckets`" in message and "table_options['bucket']" in message


def test_unknown_table_option_is_rejected():
    message = error_of({"primary_key": "order_id", "table_options": {"bukcet": "2"}})
    assert "'bukcet'" in message and "not a Paimon table option" in message


def test_field_options_and_format_prefixes_are_known():
    d = define({"primary_key": "order_id", "merge_engine": "aggregation",
                "table_options": {"fields.amount.ignore-retract": "true", "parquet.block.size": "1"}})
    assert d.options["fields.amount.ignore-retract"] == "true"


def test_unknown_merge_engine_names_the_option():
    assert "merge-engine" in error_of({"primary_key": "order_id", "merge_engine": "dedup"})


def test_sequence_group_naming_a_missing_column():
    message = error_of({"primary_key": "order_id", "merge_engine": "partial-update",
                        "sequence_groups": {"pay_ts": ["nope"]}})
    assert "nope" in message


def test_bucket_key_must_be_in_primary_key():
    message = error_of({"primary_key": "order_id", "buckets": 2, "bucket_key": "status"})
    assert "bucket_key" in message and "subset of the primary key" in message


def test_first_row_rejects_sequence_field():
    message = error_of({"primary_key": "order_id", "merge_engine": "first-row",
                        "sequence_field": "pay_ts"})
    assert "sequence" in message


def test_missing_columns_are_named():
    message = error_of({"primary_key": "id", "partition_by": "day"})
    assert "`primary_key` names ['id']" in message and "`partition_by` names ['day']" in message


def test_all_problems_are_reported_at_once():
    message = error_of({"primary_key": "id", "buckets": 0, "changelog_producer": "always"})
    assert message.count("\n  - ") == 3


def test_fixed_buckets_need_partition_keys_in_primary_key():
    message = error_of({"primary_key": "order_id", "partition_by": "dt", "buckets": 4})
    assert "dynamic buckets" in message
    assert define({"primary_key": "order_id", "partition_by": "dt"}).buckets == -1


def test_partial_update_forces_its_engine():
    assert define({"primary_key": "order_id"}, "partial_update").options["merge-engine"] == "partial-update"
    assert "partial_update" in error_of({"primary_key": "order_id", "merge_engine": "aggregation"},
                                        "partial_update")


def test_pk_models_need_a_primary_key():
    assert "needs a primary key" in error_of({})


def test_row_kind_column_must_be_a_string_outside_the_key():
    d = define({"primary_key": "order_id", "row_kind_column": "op"})
    assert d.row_kind_column == "op"
    assert "string column" in error_of({"primary_key": "order_id", "row_kind_column": "amount"})
    assert "primary-key column" in error_of({"primary_key": "order_id", "row_kind_column": "order_id"})


def test_append_models_reject_primary_key_settings():
    message = error_of({"primary_key": "order_id", "merge_engine": "aggregation"}, "paimon_append")
    assert "without primary key" in message and "`merge_engine` only applies" in message


def test_row_tracking_needs_an_unbucketed_append_table():
    assert define({"row_tracking": True}, "paimon_append").options["row-tracking.enabled"] == "true"
    assert "unbucketed" in error_of({"row_tracking": True, "buckets": 2}, "paimon_append")
    assert "only for materialized='paimon_append'" in error_of(
        {"primary_key": "order_id", "row_tracking": True})


def test_write_path_configs_are_checked_and_kept():
    d = define({"primary_key": "order_id", "write_path": "in_process",
                "in_process_max_bytes": 1 << 20})
    assert (d.write_path, d.in_process_max_bytes) == ("in_process", 1 << 20)
    assert (define({"primary_key": "order_id"}).write_path, None) == (None, None)
    message = error_of({"primary_key": "order_id", "write_path": "local",
                        "in_process_max_bytes": "1GB"})
    assert "`write_path` is 'local'" in message and "'distributed'" in message
    assert "`in_process_max_bytes` is '1GB'" in message


def test_deletion_vectors_config():
    d = define({"primary_key": "order_id", "deletion_vectors": True})
    assert d.options == {"deletion-vectors.enabled": "true"}
    assert "given two ways" in error_of({"primary_key": "order_id", "deletion_vectors": True,
                                         "table_options": {"deletion-vectors.enabled": "true"}})
    for config in ({"deletion_vectors": True},
                   {"table_options": {"deletion-vectors.enabled": "true"}}):
        assert "Paimon refuses it" in error_of({"primary_key": "order_id",
                                                "merge_engine": "first-row", **config})
    # Paimon SchemaValidation.validateForDeletionVectors: NONE/INPUT/LOOKUP producers only
    message = error_of({"primary_key": "order_id", "deletion_vectors": True,
                        "changelog_producer": "full-compaction"})
    assert "changelog_producer 'full-compaction'" in message and "'lookup'" in message
    for producer in ("none", "input", "lookup"):
        assert define({"primary_key": "order_id", "deletion_vectors": True,
                       "changelog_producer": producer}).options["changelog-producer"] == producer


def test_existing_deletion_vector_table_cannot_get_a_full_compaction_changelog():
    """An option change that would leave a table with deletion vectors and changelog producer
    'full-compaction' is refused before the table is altered (Paimon validates altered schemas
    with SchemaValidation.validateForDeletionVectors)."""
    from dbt.adapters.paimon.materialize.schema_changes import (ChangeRequest, StoredTable,
                                                                plan_changes)

    definition = define({"primary_key": "order_id", "changelog_producer": "full-compaction"})
    columns = tuple((n, t) for n, t in COLUMNS)

    def plan_over(table_options):
        stored = StoredTable(("order_id",), (), table_options, columns)
        return plan_changes(ChangeRequest(definition, stored, columns, "ignore", "db.orders"))

    with pytest.raises(PaimonConfigError, match="deletion vectors with changelog producer "
                                                "'full-compaction'"):
        plan_over({"deletion-vectors.enabled": "true"})
    plan = plan_over({})
    assert plan.set_options == {"changelog-producer": "full-compaction"}
