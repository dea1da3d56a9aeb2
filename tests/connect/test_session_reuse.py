"""What a dbt command over Spark Connect asks the server when the warehouse has not changed:
the shared session keeps the data sources registered by earlier commands (nothing is registered
again), and dbt's relation cache is filled from the listing the session's sync just read."""

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.paimon import environments
from dbt.adapters.paimon.datasource.registry import (REGISTERED_CONF_PREFIX,
                                                     PaimonTableRegistry, provider_name)

MODEL = ("{{ config(materialized='paimon_pk', primary_key='id') }}\n"
         "select id, 'x' as v from range(3)")


class TestSharedSessionReuse:
    @pytest.fixture(scope="class")
    def models(self):
        return {"kept.sql": MODEL}

    @pytest.fixture
    def recorded(self, project):
        """Data sources registered and SQL sent through the process's Connect session."""
        spark = environments.current_registry().spark
        client, calls = spark._client, {"registered": [], "sql": []}
        register, sql = client.register_data_source, spark.sql

        def record_register(source):
            calls["registered"].append(source.name())
            return register(source)

        def record_sql(text, *args, **kwargs):
            calls["sql"].append(text)
            return sql(text, *args, **kwargs)

        client.register_data_source, spark.sql = record_register, record_sql
        yield calls
        client.register_data_source, spark.sql = register, sql

    def test_a_new_registry_registers_only_what_the_session_lacks(self, project, recorded):
        run_dbt(["run"])
        registry = environments.current_registry()
        recorded["registered"].clear()
        # a new dbt process: a new registry on the shared session, the warehouse unchanged
        PaimonTableRegistry(registry.spark, registry.warehouse, registry.catalog_options) \
            .sync([project.test_schema])
        assert recorded["registered"] == []
        # a registration the session does not hold (here: its record removed) is made again
        provider = provider_name(project.test_schema, "kept")
        registry.spark.conf.unset(REGISTERED_CONF_PREFIX + provider)
        PaimonTableRegistry(registry.spark, registry.warehouse, registry.catalog_options) \
            .sync([project.test_schema])
        assert recorded["registered"] == [provider]
        assert registry.spark.conf.get(REGISTERED_CONF_PREFIX + provider, None)

    def test_the_relation_cache_takes_the_syncs_listing(self, project, recorded):
        run_dbt(["run"])
        results = run_dbt(["run"])  # an existing table: dbt's cache must know it
        assert "MERGE 3 rows" in results.results[0].adapter_response["_message"]
        listings = [s for s in recorded["sql"] if "show table extended" in s
                    and project.test_schema in s]
        assert len(listings) == 2, listings  # one per invocation: the sync's
