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
