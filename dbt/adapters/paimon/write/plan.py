"""``WritePlan``: everything a write task needs, decided once on the driver and pickled to tasks.

Internal columns the pipeline adds to the model's rows (never stored as table columns):
``_row_kind`` (+I/-U/+U/-D), ``_seq`` (arrival order), ``_bucket``, and in dynamic bucket mode
``_key_hash`` (Paimon's hash of the key, what HASH index files store), ``_assigner`` (which task
assigns the bucket of a new key) and ``_new_key`` (the key enters the bucket's index this run).
"""
from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Dict, List, Optional, Tuple

import pyarrow as pa

from dbt.adapters.paimon.format.splits import POSTPONE_BUCKET

ROW_KIND = "_row_kind"
SEQ = "_seq"
BUCKET = "_bucket"
KEY_HASH = "_key_hash"
ASSIGNER = "_assigner"
NEW_KEY = "_new_key"
OLD_PREFIX = "_old_"  # cross-partition: the partition / bucket a key already lives in
OLD_BUCKET = "_old_bucket"
# cross-partition: the bucket the row's key already lives in within the row's partition, from
# the table's data (Java GlobalIndexAssigner's key index); NULL for a key new there
KNOWN_BUCKET = "_known_bucket"
INTERNAL_COLUMNS = (ROW_KIND, SEQ, BUCKET, KEY_HASH, ASSIGNER, NEW_KEY)

_PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

FIXED = "fixed"
DYNAMIC = "dynamic"
# 'bucket' = POSTPONE_BUCKET (-2): a postpone-bucket table, written by batch runs straight into
# fixed buckets whose count is per partition (WritePlan.postpone_buckets)

# Paimon's defaults (CoreOptions): dynamic-bucket.target-row-num, dynamic-bucket.max-buckets
DEFAULT_TARGET_ROW_NUM = 2_000_000
DEFAULT_MAX_BUCKETS = -1
MAX_DYNAMIC_BUCKETS = 32768  # bucket ids are Java shorts


@dataclass(frozen=True)
class WritePlan:
    location: object                      # datasource.source.TableRef
    model_name: str
    table_name: str
    arrow_schema: pa.Schema               # the table's columns, Paimon's Arrow types
    paimon_types: Tuple[Tuple[str, str], ...]   # (column, Paimon SQL type) for MergeSpec
    options: Tuple[Tuple[str, str], ...]  # table options
    primary_keys: Tuple[str, ...]
    partition_keys: Tuple[str, ...]
    bucket_keys: Tuple[str, ...]          # hashed for the bucket (dynamic: the trimmed key)
    mode: str                             # FIXED or DYNAMIC
    num_buckets: int                      # fixed: bucket count; dynamic: -1
    num_assigners: int                    # dynamic: assigners creating buckets (b % n)
    target_row_num: int
    max_buckets: int
    base_snapshot_id: Optional[int]       # snapshot every task reads (None: empty table)
    row_kind_label: str                   # how error messages name the row-kind column
    num_channels: int = 1                 # dynamic: bucket-assigning tasks (>= num_assigners)
    spark_names: Tuple[Tuple[str, str], ...] = ()  # table column -> its name inside Spark
    cross_partition: bool = False         # primary key lacks a partition key (dynamic mode)
    engine: str = "deduplicate"
    # postpone-bucket tables (num_buckets = -2): the bucket count of each partition that has
    # real buckets at the base snapshot, and the count of a partition new to the table
    postpone_buckets: Tuple[Tuple[tuple, int], ...] = ()
    postpone_new_partition_buckets: int = 1

    @property
    def postpone(self) -> bool:
        return self.num_buckets == POSTPONE_BUCKET

    def partition_buckets(self, partition: tuple) -> int:
        """The fixed bucket count rows of ``partition`` are written with."""
        if not self.postpone:
            return self.num_buckets
        return dict(self.postpone_buckets).get(tuple(partition),
                                               self.postpone_new_partition_buckets)

    @property
    def bucket_input_columns(self) -> List[str]:
        """The columns a row's fixed bucket is computed from: the bucket key, and on a
        postpone-bucket table the partition columns (each partition has its own count)."""
        return list(self.bucket_keys) + (list(self.partition_keys) if self.postpone else [])

    @property
    def names(self) -> List[str]:
        return list(self.arrow_schema.names)

    @property
    def options_dict(self) -> Dict[str, str]:
        return dict(self.options)

    @property
    def group_columns(self) -> List[str]:
        """The columns that decide which task writes a row."""
        return list(self.partition_keys) + [BUCKET]

    def merge_spec(self):
        from dbt.adapters.paimon.runtime import MergeSpec

        return MergeSpec.from_table_options(schema=list(self.paimon_types),
                                            primary_keys=list(self.primary_keys),
                                            options=self.options_dict)

    def open_table(self):
        return self.location.open()

    def base_snapshot(self, table):
        if self.base_snapshot_id is None:
            return None
        return table.snapshot_manager().get_snapshot_by_id(self.base_snapshot_id)

    # PySpark's mapInArrow resolves column names as expressions (a dot means a struct field), so
    # table columns whose names are not plain identifiers travel through Spark as _col<i>.
    def spark_name(self, name: str) -> str:
        mapping = dict(self.spark_names)
        if name in mapping:
            return mapping[name]
        if name.startswith(OLD_PREFIX) and name[len(OLD_PREFIX):] in mapping:
            return OLD_PREFIX + mapping[name[len(OLD_PREFIX):]]
        return name

    def to_spark_names(self, data):
        """Rename the columns of an Arrow table (or fields of a schema) to their Spark names."""
        if isinstance(data, pa.Schema):
            return pa.schema([f.with_name(self.spark_name(f.name)) for f in data])
        return data.rename_columns([self.spark_name(n) for n in data.column_names])

    def from_spark_names(self, data: pa.Table) -> pa.Table:
        inverse = {self.spark_name(n): n for n in self.names}
        inverse.update({self.spark_name(OLD_PREFIX + n): OLD_PREFIX + n for n in self.names})
        return data.rename_columns([inverse.get(n, n) for n in data.column_names])

    def validated_schema(self) -> pa.Schema:
        """The table's columns, ``_row_kind`` and ``_seq``: rows after validation."""
        return pa.schema(list(self.arrow_schema) + [pa.field(ROW_KIND, pa.string(), nullable=False),
                                                    pa.field(SEQ, pa.int64(), nullable=False)])

    def existing_keys_schema(self) -> pa.Schema:
        """Cross-partition mode: where each live key of the table is."""
        fields = [self.arrow_schema.field(k) for k in self.primary_keys]
        fields += [pa.field(OLD_PREFIX + k, self.arrow_schema.field(k).type)
                   for k in self.partition_keys]
        return pa.schema(fields + [pa.field(OLD_BUCKET, pa.int32(), nullable=False)])

    def routed_schema(self) -> pa.Schema:
        """Dynamic mode: rows leaving the routing stage (before the first shuffle). Fixed
        buckets have no such stage: an Arrow UDF adds ``_bucket`` to the model's rows."""
        fields = list(self.arrow_schema) + [pa.field(ROW_KIND, pa.string(), nullable=False),
                                            pa.field(SEQ, pa.int64(), nullable=False),
                                            pa.field(KEY_HASH, pa.int32(), nullable=False),
                                            pa.field(ASSIGNER, pa.int32(), nullable=False)]
        if self.cross_partition:
            fields.append(pa.field(KNOWN_BUCKET, pa.int32()))
        return pa.schema(fields)

    def assigned_schema(self) -> pa.Schema:
        """Dynamic mode: rows leaving the bucket-assignment stage."""
        fields = list(self.arrow_schema) + [pa.field(ROW_KIND, pa.string(), nullable=False),
                                            pa.field(SEQ, pa.int64(), nullable=False),
                                            pa.field(KEY_HASH, pa.int32(), nullable=False),
                                            pa.field(BUCKET, pa.int32(), nullable=False),
                                            pa.field(NEW_KEY, pa.bool_(), nullable=False)]
        return pa.schema(fields)


def spark_names_for(names) -> Tuple[Tuple[str, str], ...]:
    """Spark-side names for table columns that are not plain identifiers (``_col<i>``: Paimon
    column names cannot start with '_' here, so they never clash)."""
    return tuple((n, f"_col{i}") for i, n in enumerate(names) if not _PLAIN_NAME.match(n))
