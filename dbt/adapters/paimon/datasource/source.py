"""The ``paimon`` Spark Python data source: Arrow reads per (partition, bucket) split, Arrow writes.

Two ways in:
- ``spark.read.format("paimon").option("warehouse", w).option("table", "db.t")`` with optional
  ``snapshot_id`` (time travel), ``columns`` (projection: Spark's Python data source API has
  no column pruning, so SQL reads prune after the scan), ``catalog_options`` (a JSON object:
  Spark lower-cases option names, and FileIO options such as ``fs.s3.accessKeyId`` are
  case-sensitive; ``TableRef.source_options`` writes all of them), ``parallelism`` (the
  task slots a read is spread over, read_tasks.py; default: this machine's cores) and
  ``filter_pushdown``
  ('true': prune partitions by the query's filters; only in a session with
  ``spark.sql.python.filterPushdown.enabled``, which Spark requires for it) and
  ``system_table`` (``audit_log``, ``binlog`` or ``ro``: Paimon's system tables that read data,
  system_reads.py) and ``read_options`` (table options the session sets for reads,
  session_options.py);
- a catalog table ``USING paimon.<db>.<table>`` (see registry.py), whose per-table subclass
  carries the table's identity because Spark hands catalog tables no options.

Primary-key tables are always read merged (pypaimon's own reader is wrong for first-row tables
and for deletes): a split that needs a merge goes through the merge runtime a key range at a time
(``iter_merged_split``); a raw-convertible one is read as stored.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    StringStartsWith,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from dbt.adapters.paimon.datasource.session_options import ReadOptions, decode, encode
from dbt.adapters.paimon.datasource.spark_types import arrow_schema_for_spark, conform, spark_schema

# option ``filter_pushdown``: 'true' when the session enables Python filter pushdown
FILTER_PUSHDOWN_OPTION = "filter_pushdown"
# option ``parallelism``: the task slots a read is spread over (default: this machine's cores)
PARALLELISM_OPTION = "parallelism"
# option ``system_table``: read Paimon's audit_log, binlog or ro system table (system_reads.py)
SYSTEM_TABLE_OPTION = "system_table"
# option ``read_options``: table options the session sets for reads (session_options.py),
# ``key=value;key=value``
READ_OPTIONS_OPTION = "read_options"


@dataclass(frozen=True)
class TableRef:
    """Which Paimon table: pickled into every Spark task."""

    warehouse: str
    database: str
    table: str
    catalog_options: Dict[str, str]
    # table options the session sets for reads (session_options.py): its rows are read with
    # them; writes and metadata never see them
    read_options: ReadOptions = ()

    def open(self):
        from dbt.adapters.paimon.catalog import warehouse as wh

        return wh.open_table(self.warehouse, self.database, self.table, self.catalog_options)

    def open_for_read(self):
        """The table as its rows are read: with the session's ``read_options``."""
        return with_read_options(self.open(), self.read_options)

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"

    def source_options(self) -> Dict[str, str]:
        """The paimon data source's options naming this table (see the module docstring), for
        the adapter's sessions (they enable Python filter pushdown)."""
        options = {"warehouse": self.warehouse, "table": self.name,
                   "catalog_options": json.dumps(self.catalog_options),
                   FILTER_PUSHDOWN_OPTION: "true"}
        if self.read_options:
            options[READ_OPTIONS_OPTION] = encode(self.read_options)
        return options


def with_read_options(table, read_options: ReadOptions):
    """The pypaimon table ``table`` with the session's ``read_options`` over its stored
    options (as Paimon's Spark connector copies a table with them), its schema kept."""
    return table.copy_without_time_travel(dict(read_options)) if read_options else table


def arrow_schema_of(table) -> pa.Schema:
    """The table's columns as Arrow (pypaimon's own Paimon -> Arrow mapping)."""
    from pypaimon.schema.data_types import PyarrowFieldParser

    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


class PaimonDataSource(DataSource):
    """Generic entry point, identified by options; per-table subclasses set ``location``."""

    location: Optional[TableRef] = None
    # the session's task slots a read is spread over (read_tasks.py); None: the cores here
    parallelism: Optional[int] = None

    @classmethod
    def name(cls) -> str:
        return "paimon"

    def _location(self) -> TableRef:
        if self.location is not None:
            return self.location
        try:
            database, table = self.options["table"].split(".", 1)
            warehouse = self.options["warehouse"]
        except (KeyError, ValueError):
            raise ValueError(
                "The paimon data source needs option 'warehouse' and option 'table' as "
                "'<database>.<table>'."
            ) from None
        catalog_options = json.loads(self.options.get("catalog_options") or "{}")
        return TableRef(warehouse, database, table, catalog_options,
                        decode(self.options.get(READ_OPTIONS_OPTION, "")))

    def _columns(self) -> Optional[List[str]]:
        columns = self.options.get("columns")
        return [c.strip() for c in columns.split(",") if c.strip()] if columns else None

    def schema(self) -> StructType:
        schema = arrow_schema_of(self._location().open())
        columns = self._columns()
        if columns:
            missing = [c for c in columns if c not in schema.names]
            if missing:
                raise ValueError(f"columns {missing} are not in {self._location().name}")
            schema = pa.schema([schema.field(c) for c in columns])
        if self.options.get("changes_to"):  # a change read (changes.py) adds _row_kind
            from dbt.adapters.paimon.datasource.changes import change_schema

            schema = change_schema(schema)
        if self.options.get(SYSTEM_TABLE_OPTION):  # audit_log, binlog, ro (system_reads.py)
            from dbt.adapters.paimon.datasource.system_reads import system_schema

            schema = system_schema(schema, self.options[SYSTEM_TABLE_OPTION])
        return spark_schema(schema)

    def reader(self, schema: StructType) -> "PaimonReader":
        if self.options.get("changes_to"):
            from dbt.adapters.paimon.datasource.changes import changes_reader

            return changes_reader(self._location(), schema, dict(self.options))
        if self.options.get(SYSTEM_TABLE_OPTION):
            from dbt.adapters.paimon.datasource.system_reads import PaimonSystemReader

            return PaimonSystemReader(self._location(), schema,
                                      self.options[SYSTEM_TABLE_OPTION])
        snapshot = self.options.get("snapshot_id")
        # Spark refuses a reader with pushFilters unless spark.sql.python.filterPushdown.enabled
        # is on (off by default): only the adapter's own reads, whose sessions turn it on, get
        # one; a read in any other session works, without partition pruning
        pushdown = self.location is not None or \
            self.options.get(FILTER_PUSHDOWN_OPTION, "").lower() == "true"
        reader = PaimonPushdownReader if pushdown else PaimonReader
        return reader(self._location(), schema, int(snapshot) if snapshot else None,
                      self._parallelism())

    def _parallelism(self) -> Optional[int]:
        raw = self.options.get(PARALLELISM_OPTION)
        if raw is None:
            return self.parallelism
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise ValueError(f"option {PARALLELISM_OPTION!r} of the paimon data source must be "
                             f"a positive number of task slots, got {raw!r}")
        return value

    def writer(self, schema: StructType, overwrite: bool) -> "PaimonAppendWriter":
        scope = self.options.get("overwrite", "table") if overwrite else None
        if scope not in (None, "table", "partitions"):
            raise ValueError(f"option overwrite must be 'table' or 'partitions', got {scope!r}")
        extra = decode_partitions(self.options.get("overwrite_partitions"))
        return PaimonAppendWriter(self._location(), schema, scope, extra)


def encode_partitions(partitions: Sequence[tuple]) -> str:
    """Partition value tuples (as pypaimon's splits hold them: dates, decimals...) as the text
    of a data-source option; options are strings."""
    import base64
    import pickle

    return base64.b64encode(pickle.dumps([tuple(p) for p in partitions])).decode("ascii")


def decode_partitions(text: Optional[str]) -> List[tuple]:
    import base64
    import pickle

    return pickle.loads(base64.b64decode(text)) if text else []


def table_source_class(
    provider: str, warehouse: str, database: str, table: str, catalog_options: Dict[str, str],
    parallelism: Optional[int] = None, read_options: ReadOptions = (),
) -> type:
    """A data-source class bound to one table, registered under ``provider``; its reads are
    spread over ``parallelism`` task slots (the session's), with the session's
    ``read_options``."""
    location = TableRef(warehouse, database, table, dict(catalog_options), read_options)
    return type(
        "PaimonTable_" + provider.replace(".", "_"),
        (PaimonDataSource,),
        {"location": location, "parallelism": parallelism,
         "name": classmethod(lambda cls: provider)},
    )


class SplitPartition(InputPartition):
    """One Spark task's files (``read_tasks.ReadTask``: a split narrowed to them, and maybe a
    range of its one file's row groups); ``split`` None for the empty read of an empty table."""

    def __init__(self, split: Any, row_groups: Any = None):
        super().__init__(split)
        self.split = split
        self.row_groups = row_groups


class PostponeMergePartition(SplitPartition):
    """One Spark task of a ``postpone.merge-on-read`` read: a partition's real buckets and its
    pending postpone rows, merged (format/postpone_merge.py)."""

    def __init__(self, merge: Any):
        super().__init__(None)
        self.merge = merge


class PaimonReader(DataSourceReader):
    # splits cut into tasks of about a split size each (read_tasks.py); False: a task per split
    split_into_tasks = True

    def __init__(self, location: TableRef, schema: StructType, snapshot_id: Optional[int],
                 parallelism: Optional[int] = None):
        self.location = location
        self.schema = schema
        self.snapshot_id = snapshot_id
        # the session's task slots, which the read's tasks are spread over; None: this
        # machine's cores (a local session's default)
        self.parallelism = parallelism
        self.partition_filter: List[Dict[str, Any]] = []  # PaimonPushdownReader fills it
        self.conditions: List[tuple] = []  # ... and this: file_stats.Condition, file skipping

    def partitions(self) -> Sequence[InputPartition]:
        from dbt.adapters.paimon.format.splits import plan_splits

        table = self.location.open_for_read()
        partitions = combine_filters(self.partition_filter)
        if partitions == []:  # contradictory filters (dt = 'a' AND dt = 'b') select nothing
            return [SplitPartition(None)]
        splits = plan_splits(table, self.snapshot_id, partitions, self.conditions)
        from dbt.adapters.paimon.format.postpone_merge import plan_merge_on_read

        # postpone.merge-on-read: the partitions with pending postpone rows, a task each
        merge = plan_merge_on_read(table, splits, self.snapshot_id, partitions)
        splits = merge.splits
        merges = [PostponeMergePartition(m) for m in merge.merges]
        if not table.primary_keys:  # append tables: Paimon's partition order (queue tables)
            from dbt.adapters.paimon.format.bucketed_append import order_splits

            splits = order_splits(table, splits)
        if not self.split_into_tasks:
            return [SplitPartition(s) for s in splits] + merges or [SplitPartition(None)]
        from dbt.adapters.paimon.datasource.read_tasks import read_tasks

        tasks = read_tasks(table, splits, self.parallelism or os.cpu_count() or 1)
        # Spark needs at least one partition; an empty table reads as one empty split.
        return [SplitPartition(t.split, t.row_groups) for t in tasks] + merges \
            or [SplitPartition(None)]

    def read(self, partition: SplitPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, PostponeMergePartition):
            from dbt.adapters.paimon.format.postpone_merge import read_postpone_merge

            table = self.location.open_for_read()
            target = arrow_schema_for_spark(self.schema)
            rows = read_postpone_merge(table, partition.merge, target.names)
            if rows.num_rows:
                yield from conform(rows, target).to_batches(max_chunksize=65536)
            return
        if partition.split is None:
            return
        table = self.location.open_for_read()
        target = arrow_schema_for_spark(self.schema)
        for piece in iter_split_rows(table, partition.split, target.names,
                                     partition.row_groups, self.conditions):
            if piece.num_rows:
                yield from conform(piece, target).to_batches(max_chunksize=65536)


class PaimonPushdownReader(PaimonReader):
    """The reader with partition pruning: Spark hands it the query's filters (only in a session
    with ``spark.sql.python.filterPushdown.enabled``)."""

    def pushFilters(self, filters):
        """Prune on partition equality / IN filters, and skip files by their statistics
        (file_stats.stats_predicate) on comparisons of other columns; Spark still evaluates every
        filter but the partition ones."""
        partition_keys = set(self.location.open().partition_keys)
        for f in filters:
            attribute = getattr(f, "attribute", None)  # Not carries a child instead
            column = attribute[0] if attribute and len(attribute) == 1 else None
            if column in partition_keys and isinstance(f, EqualTo):
                self.partition_filter.append({column: f.value})
            elif column in partition_keys and isinstance(f, In):
                self.partition_filter.append({column: list(f.value)})
            else:
                condition = _stats_condition(f, column)
                if condition is not None:
                    self.conditions.append(condition)
                yield f


# Spark's pushed filters that file statistics can answer -> file_stats.STATS_OPERATIONS
_STATS_FILTERS = ((EqualTo, "equal"), (LessThan, "less_than"),
                  (LessThanOrEqual, "less_or_equal"), (GreaterThan, "greater_than"),
                  (GreaterThanOrEqual, "greater_or_equal"), (In, "is_in"), (IsNull, "is_null"),
                  (IsNotNull, "is_not_null"), (StringStartsWith, "startswith"))


def _stats_condition(f, column: Optional[str]) -> Optional[tuple]:
    """A pushed filter on one top-level column as (operation, column, value), or None."""
    if column is None:
        return None
    for kind, operation in _STATS_FILTERS:
        if type(f) is kind:  # noqa: E721 - exact classes: no subclass changes the meaning
            value = getattr(f, "value", None)
            if operation == "is_in":
                value = [v for v in value if v is not None]
            elif operation not in ("is_null", "is_not_null") and value is None:
                return None
            return (operation, column, value)
    return None


def read_merged_split(table, split, columns: Sequence[str], all_levels: bool = False
                      ) -> pa.Table:
    """A primary-key split's rows as Paimon's reader returns them: all levels merged (for a
    deletion-vector table: the files above level 0, each without its deleted rows; with
    ``all_levels`` its level-0 files merged in too, the state a rewrite must keep)."""
    from dbt.adapters.paimon.format.kv_files import read_split_records
    from dbt.adapters.paimon.runtime import merge_arrow

    if split.deletion_vectors and not all_levels:
        split = dataclasses.replace(split, files=split.batch_read_files())
        if not split.files:
            return read_split_records(table, split, columns).select(list(columns))
    if is_raw_convertible(split):
        # one sorted run without retractions: every key once, already merged; read only the
        # wanted columns and skip the merge (Java's "raw convertible" splits)
        records = read_split_records(table, split, columns)
        if len(split.files) > 1 and not split.deletion_vectors:
            # one level's files come by sequence number: key order as a merge would give.
            # With deletion vectors Java concatenates the files unsorted; so do we (cheaper)
            records = records.sort_by([(k, "ascending") for k in table.primary_keys])
        return records.select(list(columns))
    records = read_split_records(table, split)
    merged = merge_arrow(merge_spec_of(table), records.drop_columns(["_level"]))
    return merged.select(list(columns))


def iter_split_rows(table, split, columns: Sequence[str], row_groups=None,
                    conditions: Sequence[tuple] = ()) -> Iterator[pa.Table]:
    """A split's rows as every reader sees them, in Arrow pieces at the table's types: a
    data-evolution table's rows assembled field by field from their row-id range's files; an
    append table's files, or a range of the row groups of a file that holds merged rows
    (read_tasks.py), streamed a batch at a time; a primary-key split merged."""
    from dbt.adapters.paimon.format import data_evolution

    if data_evolution.assembles_rows(table, split.files):
        yield from data_evolution.iter_data_evolution_split(table, split, columns)
        return
    if not table.primary_keys or row_groups is not None:
        from dbt.adapters.paimon.format.kv_files import iter_append_file

        for meta in split.files:
            yield from iter_append_file(table, split, meta, columns, row_groups=row_groups,
                                        conditions=conditions)
        return
    yield from iter_merged_split(table, split, columns, conditions)


def iter_merged_split(table, split, columns: Sequence[str], conditions: Sequence[tuple] = ()
                      ) -> Iterator[pa.Table]:
    """``read_merged_split``'s rows in pieces, in key order, memory bounded by a batch per
    sorted run rather than by the split. A raw-convertible split streams file by file and batch
    by batch (its files hold each key once and no retraction: their rows are the merged rows),
    one sorted run's files in key order. A split to merge streams by key range
    (``kv_files.iter_split_records``): each piece holds every record of its keys and is merged
    on its own. Files pyarrow does not read, and floating-point keys, come whole.
    ``conditions`` (the read's filters) skip row groups of files whose rows are the merged rows
    (``kv_files.iter_append_file``); the caller still filters the rows."""
    from dbt.adapters.paimon.format.kv_files import (iter_append_file, iter_split_records,
                                                     read_by_pyarrow, streams_by_key)
    from dbt.adapters.paimon.runtime import merge_arrow

    read = dataclasses.replace(split, files=split.batch_read_files()) \
        if split.deletion_vectors else split
    if not read.files:
        yield read_merged_split(table, split, columns)
        return
    if not is_raw_convertible(read):
        if not streams_by_key(table, read):
            yield read_merged_split(table, split, columns)
            return
        spec = merge_spec_of(table)
        for records in iter_split_records(table, read):
            yield merge_arrow(spec, records.drop_columns(["_level"])).select(list(columns))
        return
    if not all(read_by_pyarrow(f) for f in read.files):
        yield read_merged_split(table, split, columns)  # (other formats: pypaimon's reader)
        return
    files = read.files if read.deletion_vectors else \
        sorted(read.files, key=lambda f: tuple(f.min_key.values))
    for meta in files:
        yield from iter_append_file(table, read, meta, columns, conditions=conditions)


def is_raw_convertible(split) -> bool:
    """True when reading the split's files without merging gives the merged rows (Java's
    ``MergeTreeSplitGenerator``): no file at level 0, none recording -U/-D rows, and either
    one level (one sorted run, as after a full compaction) or deletion vectors (they delete
    every superseded version, so each key is live in one file only). Files with an unknown
    delete count do not qualify."""
    files = split.files
    if not files or any(f.level == 0 or f.delete_row_count != 0 for f in files):
        return False
    return split.deletion_vectors or len({f.level for f in files}) == 1


def merge_spec_of(table):
    from dbt.adapters.paimon.runtime import MergeSpec

    return MergeSpec.from_table_options(
        schema=[(f.name, str(f.type)) for f in table.table_schema.fields],
        primary_keys=list(table.primary_keys),
        options=dict(table.table_schema.options),
    )


def combine_filters(filters: List[Dict[str, Any]]) -> Optional[List[Dict[str, Any]]]:
    """AND of single-column equality/IN filters -> the OR-of-ANDs form plan_splits takes."""
    if not filters:
        return None
    combos: List[Dict[str, Any]] = [{}]
    for f in filters:
        (column, value), = f.items()
        values = value if isinstance(value, list) else [value]
        next_combos = []
        for combo in combos:
            if column in combo:
                # a = 1 AND a IN (1, 2): keep the combination only where they agree
                if combo[column] in values:
                    next_combos.append(combo)
                continue
            next_combos.extend({**combo, column: v} for v in values)
        combos = next_combos
    return combos


class PaimonCommitMessage(WriterCommitMessage):
    def __init__(self, messages: list):
        self.messages = messages


class PaimonAppendWriter(DataSourceArrowWriter):
    """Append-table writes: each task writes files, the driver makes one commit of all of them.

    Primary-key tables are written by the merge write path (materializations), never here.
    """

    def __init__(self, location: TableRef, schema: StructType, overwrite: Optional[str],
                 extra_partitions: Sequence[tuple] = ()):
        """``overwrite``: None appends; 'table' replaces the whole table; 'partitions' replaces
        the partitions this write touches (INSERT OVERWRITE with dynamic partitions) plus
        ``extra_partitions`` (value tuples: partitions that end up empty)."""
        self.location = location
        self.schema = schema
        self.overwrite = overwrite
        self.extra_partitions = [tuple(p) for p in extra_partitions]
        if location.open().primary_keys:
            raise NotImplementedError(
                f"{location.name} is a primary-key table: write it with a paimon_pk or "
                "partial_update model (its rows must be merged), not with the data source."
            )

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return PaimonCommitMessage(write_append_files(self.location.open(), iterator))

    def commit(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        written = [m for msg in messages if msg is not None for m in msg.messages]
        commit_append_files(self.location.open(), written, self.overwrite, self.extra_partitions)

    def abort(self, messages: List[Optional[PaimonCommitMessage]]) -> None:
        from dbt.adapters.paimon.format.commit import abort

        abort(self.location.open(), [m for msg in messages if msg is not None for m in msg.messages])


def write_append_files(table, batches: Iterable[Union[pa.RecordBatch, pa.Table]]) -> list:
    """Write ``batches`` (Spark's Arrow of the rows) as new files of the append table ``table``;
    returns the commit messages. On failure the files already written are deleted (a failing
    Spark task's messages never reach abort())."""
    from dbt.adapters.paimon.format import variant_shredding
    from dbt.adapters.paimon.format.bucketed_append import bucket_groups, is_queue_table
    from dbt.adapters.paimon.format.file_stats import with_full_stats

    write = with_full_stats(table).new_batch_write_builder().new_write()
    target = arrow_schema_of(table)
    queue = is_queue_table(table)
    try:
        for batch in batches:
            check_vector_values(table, batch, target)
            if queue:  # our vectorized bucket hash instead of pypaimon's per-row one
                for bucket, rows in bucket_groups(table, conform(batch, target)):
                    write.write_arrow(rows, bucket=bucket)
            else:
                write.write_arrow(conform(batch, target))
        return write.prepare_commit()
    except BaseException as exc:
        write.abort()
        shredding = variant_shredding.refused(table, exc)
        if shredding is not None:
            raise shredding from exc
        raise
    finally:
        write.close()


def check_vector_values(table, batch: Union[pa.RecordBatch, pa.Table], target: pa.Schema) -> None:
    """Each VECTOR column of ``target`` (a fixed-size list) holds in ``batch`` only lists of
    the vector's length (or NULL). A NULL is stored in Parquet files, data files and
    ``.vector.parquet`` files alike (format/pypaimon_compat.py), but not in the Lance or Vortex
    vector files of ``vector.file.format``, whose writers are pypaimon 2.1's and unmended here.
    Raised before the batch is written (vectorized), as bad data: the model's rows to fix, not
    a failure to report."""
    from dbt.adapters.paimon.config.blob_vector import VECTOR_FILE_FORMAT, wrong_vector_lengths
    from dbt.adapters.paimon.runtime import PaimonDataError

    vector_format = str(table.table_schema.options.get(VECTOR_FILE_FORMAT) or "parquet").lower()
    for field in target:
        if not pa.types.is_fixed_size_list(field.type) or field.name not in batch.schema.names:
            continue
        column = batch.column(field.name)
        name = table.identifier.get_full_name()
        if column.null_count and vector_format != "parquet":
            raise PaimonDataError(
                f"{column.null_count} row(s) have a NULL in VECTOR column '{field.name}' of "
                f"{name}, whose vectors are stored in {vector_format} files "
                f"('{VECTOR_FILE_FORMAT}'), which dbt-paimon does not write NULL vectors into. "
                f"Filter those rows or give them a vector (e.g. coalesce) in the model's "
                f"query, or store the vectors in Parquet ('{VECTOR_FILE_FORMAT}': 'parquet').")
        if pa.types.is_fixed_size_list(column.type):
            continue
        rows, found = wrong_vector_lengths(column, field.type.list_size)
        if len(rows):
            raise PaimonDataError(
                f"{len(rows)} row(s) of VECTOR column '{field.name}' of {name} are not "
                f"{field.type.list_size} long (the column's 'field.{field.name}.vector-dim'); "
                f"lengths found: {found}. Give every row a vector of that length in the "
                f"model's query.")


def commit_append_files(table, written: list, overwrite: Optional[str] = None,
                        extra_partitions: Sequence[tuple] = ()) -> None:
    """ONE commit of ``written`` (write_append_files' messages): APPEND, or with ``overwrite``
    an OVERWRITE of the table ('table') or of the partitions written plus ``extra_partitions``
    ('partitions')."""
    from dbt.adapters.paimon.format.commit import commit_append, commit_overwrite
    from dbt.adapters.paimon.format.bucketed_append import is_queue_table, number_files

    if is_queue_table(table):  # each bucket's files numbered in write order, as Java's
        written = number_files(table, written)
    if overwrite is None:
        commit_append(table, written)
    elif overwrite == "table" or not table.partition_keys:
        commit_overwrite(table, written, partitions=None)
    else:
        touched = {tuple(m.partition) for m in written if m.new_files}
        touched |= {tuple(p) for p in extra_partitions}
        keys = list(table.partition_keys)
        if touched:
            commit_overwrite(table, written, [dict(zip(keys, p)) for p in sorted(touched)])
