"""dbt-tests-adapter's snapshot suites on Paimon. The suites change their `fact` table with
UPDATE/DELETE statements, which Spark runs only on Delta/Iceberg/Hudi: here `fact` is a parquet
table that each change rebuilds with Spark SQL (the same rows as the suites' statements give), and
the snapshot table is dropped between tests instead of emptied."""

from dbt.tests.adapter.simple_snapshot.test_snapshot import BaseSimpleSnapshot, BaseSnapshotCheck
from dbt.tests.util import get_connection, relation_from_name


class SparkFact:
    """The suites' table helpers in Spark SQL."""

    def _fact(self):
        return relation_from_name(self.project.adapter, "fact")

    def _columns(self):
        return [(r[0], r[1]) for r in self.project.run_sql(f"describe {self._fact()}", fetch="all")
                if r[0] and not r[0].startswith("#")]

    def _rebuild(self, select_list: str, where: str = "1 = 1"):
        fact = self._fact()
        self.project.run_sql(f"drop table if exists {fact}__rebuilt")
        self.project.run_sql(f"create table {fact}__rebuilt using parquet as "
                             f"select {select_list} from {fact} where {where}")
        self.project.run_sql(f"drop table {fact}")
        self.project.run_sql(f"alter table {fact}__rebuilt rename to {fact}")

    def create_fact_from_seed(self, where: str = None):
        fact, seed = self._fact(), relation_from_name(self.project.adapter, "seed")
        self.project.run_sql(f"drop table if exists {fact}")
        self.project.run_sql(f"create table {fact} using parquet as select * from {seed} "
                             f"where {where or '1 = 1'}")

    def update_fact_records(self, updates, where: str = None):
        select_list = ", ".join(
            f"case when {where or '1 = 1'} then cast({updates[name]} as {dtype}) else {name} end "
            f"as {name}" if name in updates else name
            for name, dtype in self._columns())
        self._rebuild(select_list)

    def insert_fact_records(self, where: str = None):
        seed = relation_from_name(self.project.adapter, "seed")
        self.project.run_sql(f"insert into {self._fact()} select * from {seed} "
                             f"where {where or '1 = 1'}")

    def delete_fact_records(self, where: str = None):
        self._rebuild("*", f"not ({where})" if where else "1 = 0")

    def add_fact_column(self, column: str = None, definition: str = None):
        self.project.run_sql(f"alter table {self._fact()} add columns ({column} string)")

    def delete_snapshot_records(self):
        adapter = self.project.adapter
        with get_connection(adapter):
            adapter.drop_relation(relation_from_name(adapter, "snapshot").incorporate(type="table"))


class TestPaimonSimpleSnapshot(SparkFact, BaseSimpleSnapshot):
    pass


class TestPaimonSnapshotCheck(SparkFact, BaseSnapshotCheck):
    pass


# -- the new_record, dbt_valid_to_current and multi-unique-key suites --------------------------
# Their fixtures are Postgres SQL creating `seed` and `snapshot_expected` and changing them with
# UPDATE/DELETE. Spark versions of the same statements, as dbt-spark gives its profiles: the
# tables are Hive text tables (Spark rewrites one from itself with INSERT OVERWRITE, which it
# refuses for data source tables), each UPDATE/DELETE an INSERT OVERWRITE giving the same rows,
# names are schema.table (Spark has no database level).

import re  # noqa: E402

import pytest  # noqa: E402
from dbt.tests.adapter.simple_snapshot import new_record_dbt_valid_to_current as valid_to_current
from dbt.tests.adapter.simple_snapshot import new_record_timestamp_mode as new_record
from dbt.tests.adapter.simple_snapshot import fixtures as snapshot_fixtures  # noqa: E402
from dbt.tests.adapter.simple_snapshot.new_record_check_mode import (  # noqa: E402
    BaseSnapshotNewRecordCheckMode,
)
from dbt.tests.adapter.simple_snapshot.new_record_dbt_valid_to_current import (  # noqa: E402
    BaseSnapshotNewRecordDbtValidToCurrent,
)
from dbt.tests.adapter.simple_snapshot.new_record_timestamp_mode import (  # noqa: E402
    BaseSnapshotNewRecordTimestampMode,
)
from dbt.tests.util import check_relations_equal, run_dbt  # noqa: E402


def spark_sql(sql: str) -> str:
    sql = sql.replace("{database}.{schema}", "{schema}").replace("{{target.database}}.", "")
    sql = sql.replace("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP")
    sql = sql.replace("TEXT", "STRING").replace("text", "string")
    return re.sub(r"(create table [^;]*\))\s*;", r"\1 stored as textfile;", sql)


class LegacyStoreAssignment:
    @pytest.fixture(autouse=True)
    def legacy_store_assignment(self, project):
        # the fixtures insert timestamp strings, which Spark's ANSI store assignment refuses
        project.run_sql("set spark.sql.storeAssignmentPolicy=LEGACY")
        yield
        project.run_sql("set spark.sql.storeAssignmentPolicy=ANSI")


_SEED_COLUMNS = "id, first_name, last_name, {email}, gender, ip_address, {updated_at}"
_CHANGED = "id >= 10 and id <= 20"
_DELETE_ID_1 = "insert overwrite table {schema}.seed select * from {schema}.seed where id != 1"


class NewRecordSparkFixtures(LegacyStoreAssignment):
    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshot.sql": spark_sql(new_record._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [spark_sql(s) for s in new_record._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def invalidate_sql_statements(self):
        email = (f"case when {_CHANGED} then (case when id = 20 then 'pfoxj@creativecommons.org' "
                 "else 'new_' || email end) else email end as email")
        updated_at = f"case when {_CHANGED} then updated_at + interval '1 hour' " \
                     "else updated_at end as updated_at"
        return [
            "insert overwrite table {schema}.seed select "
            + _SEED_COLUMNS.format(email=email, updated_at=updated_at) + " from {schema}.seed",
            "insert overwrite table {schema}.snapshot_expected select "
            + _SEED_COLUMNS.format(email="email", updated_at="updated_at")
            + f", dbt_valid_from, case when {_CHANGED} then updated_at + interval '1 hour' "
              "else dbt_valid_to end, dbt_scd_id, dbt_updated_at, dbt_is_deleted "
              "from {schema}.snapshot_expected",
        ]

    @pytest.fixture(scope="class")
    def update_sql(self):
        return spark_sql(new_record._update_sql)

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return _DELETE_ID_1

    @pytest.fixture(scope="class")
    def reinsert_sql(self):
        return spark_sql(new_record._reinsert_sql)

    @pytest.fixture(scope="class")
    def reinsert_check_sql(self):
        return new_record._reinsert_check_sql.replace(";", "")


class TestPaimonSnapshotNewRecordTimestampMode(NewRecordSparkFixtures,
                                               BaseSnapshotNewRecordTimestampMode):
    pass


class TestPaimonSnapshotNewRecordCheckMode(NewRecordSparkFixtures, BaseSnapshotNewRecordCheckMode):
    pass


class TestPaimonSnapshotNewRecordDbtValidToCurrent(LegacyStoreAssignment,
                                                   BaseSnapshotNewRecordDbtValidToCurrent):
    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snapshot.sql": spark_sql(valid_to_current._snapshot_actual_sql)}

    @pytest.fixture(scope="class")
    def seed_new_record_mode_statements(self):
        return [spark_sql(s) for s in valid_to_current._seed_new_record_mode_statements]

    @pytest.fixture(scope="class")
    def delete_sql(self):
        return _DELETE_ID_1


class TestPaimonSnapshotMultiUniqueKey(LegacyStoreAssignment):
    """BaseSnapshotMultiUniqueKey (YAML snapshot, unique_key [id1, id2],
    snapshot_meta_column_names) with its statements in Spark SQL, as dbt-spark runs it."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "seed.sql": spark_sql(snapshot_fixtures.model_seed_sql),
            "snapshots.yml": snapshot_fixtures.snapshots_multi_key_yml,
            "ref_snapshot.sql": snapshot_fixtures.ref_snapshot_sql,
        }

    def test_multi_column_unique_key(self, project):
        for sql in (snapshot_fixtures.create_multi_key_seed_sql,
                    snapshot_fixtures.create_multi_key_snapshot_expected_sql,
                    snapshot_fixtures.seed_multi_key_insert_sql,
                    snapshot_fixtures.populate_multi_key_snapshot_expected_sql):
            project.run_sql(spark_sql(sql))
        assert len(run_dbt(["snapshot"])) == 1

        changed = "id1 >= 10 and id1 <= 20"
        columns = "id1, id2, first_name, last_name, {email}, gender, ip_address, {updated_at}"
        project.run_sql(
            "insert overwrite table {schema}.seed select " + columns.format(
                email=f"case when {changed} then (case when id1 = 20 then "
                      "'pfoxj@creativecommons.org' else 'new_' || email end) else email end",
                updated_at=f"case when {changed} then updated_at + interval '1 hour' "
                           "else updated_at end")
            + " from {schema}.seed")
        project.run_sql(
            "insert overwrite table {schema}.snapshot_expected select "
            + columns.format(email="email", updated_at="updated_at")
            + f", test_valid_from, case when {changed} then updated_at + interval '1 hour' "
              "else TEST_VALID_TO end, test_scd_id, test_updated_at "
              "from {schema}.snapshot_expected")
        project.run_sql(spark_sql(snapshot_fixtures.update_multi_key_sql))
        assert len(run_dbt(["snapshot"])) == 1

        check_relations_equal(project.adapter, ["snapshot_actual", "snapshot_expected"])
