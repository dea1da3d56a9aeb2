"""Paimon's metadata system tables (``orders$snapshots``, ``orders$files``, ...) as Arrow tables.

One function per system table, named as Paimon names the table, taking a pypaimon table and
returning a ``pyarrow.Table`` with the columns (names, order, types, NOT NULL) and values that
Paimon Java 1.0's ``SystemTableLoader`` gives (``paimon-core`` ``table/system/*Table.java``):

- timestamps are what Java shows: the local date-time of the process's time zone (Java: the
  JVM's ``ZoneId.systemDefault()``), as Arrow timestamps without a zone;
- text columns that render values (``files.partition``, ``min_key``, stats, ...) use Java's
  ``toString`` of them: ``[a, 1]`` for a row, ``{col=value, ...}`` sorted by column for stats,
  DATE values as their day number (Paimon's internal value), DECIMAL as plain text;
- rows come in Java's order where Java sorts (partitions, buckets, tags by name), else in a
  stable order (snapshot / schema id, file order of the plan).

The tables that read data (``audit_log``, ``binlog``, ``ro``) are read by the data source
(datasource/system_reads.py); ``SYSTEM_TABLES`` lists all of them.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import pyarrow as pa

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)

# metadata tables (this module) and data tables (datasource/system_reads.py), as Paimon names them
METADATA_TABLES = ("snapshots", "schemas", "options", "tags", "branches", "consumers", "files",
                   "manifests", "partitions", "buckets", "aggregation_fields", "statistics")
DATA_TABLES = ("audit_log", "binlog", "ro")
SYSTEM_TABLES = METADATA_TABLES + DATA_TABLES

_TS = pa.timestamp("us")  # Java's TIMESTAMP(3) values keep sub-millisecond parts (tags)


def check_system_table(name: Any) -> str:
    """The system table's name (lower case, as Paimon's loader takes it), or ValueError
    listing the supported ones."""
    text = str(name or "").strip().lower()
    if text in ("read_optimized",):  # Paimon's constant is READ_OPTIMIZED = "ro"
        text = "ro"
    if text not in SYSTEM_TABLES:
        raise ValueError(f"unknown Paimon system table {name!r}; supported: "
                         f"{', '.join(SYSTEM_TABLES)}")
    return text


def metadata_table(table, name: str) -> pa.Table:
    """The metadata system table ``name`` of ``table`` (one of METADATA_TABLES)."""
    name = check_system_table(name)
    if name not in METADATA_TABLES:
        raise ValueError(f"{name} reads the table's data: read it through the paimon data "
                         f"source (option system_table)")
    return _BUILDERS[name](table)


# ---------------------------------------------------------------------------- helpers

def _schema(*fields: Tuple[str, pa.DataType, bool]) -> pa.Schema:
    return pa.schema([pa.field(n, t, nullable=nullable) for n, t, nullable in fields])


def _rows(schema: pa.Schema, rows: Iterable[Sequence[Any]]) -> pa.Table:
    columns = list(zip(*rows)) or [()] * len(schema)
    return pa.Table.from_arrays([pa.array(list(c), f.type) for c, f in zip(columns, schema)],
                                schema=schema)


def local_time(millis: Optional[int]) -> Optional[datetime.datetime]:
    """Epoch milliseconds as the local date-time Java's ``LocalDateTime.ofInstant(...,
    ZoneId.systemDefault())`` gives (naive)."""
    if millis is None:
        return None
    millis = int(millis)
    seconds, rest = divmod(millis, 1000)
    return datetime.datetime.fromtimestamp(seconds).replace(microsecond=rest * 1000)


def _timestamp_value(value) -> Optional[datetime.datetime]:
    """A pypaimon Timestamp / datetime as a naive datetime."""
    if value is None:
        return None
    if hasattr(value, "to_local_date_time"):
        return value.to_local_date_time()
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value
    return None


def java_text(value: Any) -> str:
    """``String.valueOf`` of the Java object Paimon's row converters give for ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        return _java_local_date_time(value)
    if isinstance(value, datetime.date):  # Paimon keeps a DATE as its day number
        return str((value - datetime.date(1970, 1, 1)).days)
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()  # Java prints byte[]'s identity: no value to match
    if hasattr(value, "to_local_date_time"):
        return _java_local_date_time(value.to_local_date_time())
    return str(value)


def _java_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))
    # computerized scientific notation with the shortest digits: 1.0E10, -2.5E-4
    sign, digits, exponent = decimal.Decimal(repr(float(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) - 1 + exponent
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def _java_local_date_time(value: datetime.datetime) -> str:
    """``LocalDateTime.toString()``: seconds only when not zero, the fraction in groups of 3."""
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
        if value.microsecond:
            micros = f"{value.microsecond:06d}"
            text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text


def row_values(row) -> List[Any]:
    """The values of a pypaimon row (GenericRow or BinaryRow); [] for None."""
    if row is None:
        return []
    values = getattr(row, "values", None)
    if values is not None:
        return list(values)
    return [row.get_field(i) for i in range(len(row.fields))]


def _row_text(values: Sequence[Any]) -> str:
    """``Arrays.toString`` of a row's values: ``[a, 1]``."""
    return "[" + ", ".join(java_text(v) for v in values) + "]"


def _map_text(values: Dict[str, Any]) -> str:
    """``TreeMap.toString``: ``{a=1, b=x}`` sorted by key."""
    return "{" + ", ".join(f"{k}={java_text(values[k])}" for k in sorted(values)) + "}"


def _compact_json(value: Any) -> str:
    """Paimon's ``JsonSerdeUtil.toJson``: compact, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _mtime_ms(status) -> int:
    mtime = getattr(status, "mtime", None)
    if isinstance(mtime, datetime.datetime):
        return int(mtime.timestamp() * 1000)
    return int(float(mtime or 0) * 1000)


def _list_status(file_io, path: str) -> list:
    try:
        return list(file_io.list_status(path) or [])
    except (FileNotFoundError, OSError):
        return []


def _base_name(status) -> str:
    name = getattr(status, "base_name", None)
    return name if name is not None else str(getattr(status, "path", "")).rstrip("/").rsplit(
        "/", 1)[-1]


def _latest_snapshot(table):
    return table.snapshot_manager().get_latest_snapshot()


# ---------------------------------------------------------------------------- snapshots

SNAPSHOTS = _schema(
    ("snapshot_id", pa.int64(), False), ("schema_id", pa.int64(), False),
    ("commit_user", pa.string(), False), ("commit_identifier", pa.int64(), False),
    ("commit_kind", pa.string(), False), ("commit_time", _TS, False),
    ("base_manifest_list", pa.string(), False), ("delta_manifest_list", pa.string(), False),
    ("changelog_manifest_list", pa.string(), True), ("total_record_count", pa.int64(), True),
    ("delta_record_count", pa.int64(), True), ("changelog_record_count", pa.int64(), True),
    ("watermark", pa.int64(), True))


def snapshots(table) -> pa.Table:
    """SnapshotsTable: every retained snapshot, oldest first."""
    found = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    return _rows(SNAPSHOTS, [
        (s.id, s.schema_id, s.commit_user, s.commit_identifier, s.commit_kind,
         local_time(s.time_millis), s.base_manifest_list, s.delta_manifest_list,
         s.changelog_manifest_list, s.total_record_count, s.delta_record_count,
         s.changelog_record_count, s.watermark) for s in found])


# ---------------------------------------------------------------------------- schemas

SCHEMAS = _schema(
    ("schema_id", pa.int64(), False), ("fields", pa.string(), False),
    ("partition_keys", pa.string(), False), ("primary_keys", pa.string(), False),
    ("options", pa.string(), False), ("comment", pa.string(), True),
    ("update_time", _TS, False))


def _schema_files(table) -> List[Dict[str, Any]]:
    """Every schema file of the table as its JSON (key order kept: Java writes the maps it
    read, in their order), by id."""
    folder = f"{table.table_path.rstrip('/')}/schema"
    found = []
    for status in _list_status(table.file_io, folder):
        name = _base_name(status)
        if name.startswith("schema-") and name[len("schema-"):].isdigit():
            found.append(json.loads(table.file_io.read_file_utf8(f"{folder}/{name}")))
    return sorted(found, key=lambda s: int(s["id"]))


def schemas(table) -> pa.Table:
    """SchemasTable: every schema version, JSON as Paimon serializes fields, keys, options."""
    return _rows(SCHEMAS, [
        (int(s["id"]), _compact_json(s.get("fields", [])),
         _compact_json(s.get("partitionKeys", [])), _compact_json(s.get("primaryKeys", [])),
         _compact_json(s.get("options", {})), s.get("comment"),
         local_time(s.get("timeMillis", 0))) for s in _schema_files(table)])


# ---------------------------------------------------------------------------- options

OPTIONS = _schema(("key", pa.string(), False), ("value", pa.string(), False))


def options(table) -> pa.Table:
    """OptionsTable: the latest schema's options, in their stored order."""
    latest = _schema_files(table)
    stored = latest[-1].get("options", {}) if latest else {}
    return _rows(OPTIONS, [(str(k), str(v)) for k, v in stored.items()])


# ---------------------------------------------------------------------------- tags

TAGS = _schema(
    ("tag_name", pa.string(), False), ("snapshot_id", pa.int64(), False),
    ("schema_id", pa.int64(), False), ("commit_time", _TS, False),
    ("record_count", pa.int64(), True), ("create_time", _TS, True),
    ("time_retained", pa.string(), True))


def java_duration(value: Optional[datetime.timedelta]) -> Optional[str]:
    """``java.time.Duration.toString()``: ``PT24H``, ``PT1H30M``, ``PT0.5S``."""
    if value is None:
        return None
    total = round(value.total_seconds() * 1_000_000)  # microseconds
    if total == 0:
        return "PT0S"
    sign = "-" if total < 0 else ""
    total = abs(total)
    seconds, micros = divmod(total, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "PT"
    if hours:
        text += f"{sign}{hours}H"
    if minutes:
        text += f"{sign}{minutes}M"
    if seconds or micros:
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        text += f"{sign}{seconds}{fraction}S"
    return text


def tags(table) -> pa.Table:
    """TagsTable: every tag (of the table's branch), by name."""
    from dbt.adapters.paimon.format.time_travel import tags as tags_of

    rows = []
    for name, tag in tags_of(table).items():
        rows.append((name, tag.id, tag.schema_id, local_time(tag.time_millis),
                     tag.total_record_count, getattr(tag, "tag_create_time", None),
                     java_duration(getattr(tag, "tag_time_retained", None))))
    return _rows(TAGS, rows)


# ---------------------------------------------------------------------------- branches

BRANCHES = _schema(
    ("branch_name", pa.string(), False), ("created_from_tag", pa.string(), True),
    ("created_from_snapshot", pa.int64(), True), ("create_time", _TS, False))

BRANCH_PREFIX = "branch-"


def branches(table) -> pa.Table:
    """BranchesTable (Paimon 1.0): every branch folder, the tag or snapshot it starts from
    (its earliest snapshot; the tag when exactly one tag marks that snapshot) and the folder's
    modification time."""
    folder = f"{table.table_path.rstrip('/')}/branch"
    rows = []
    for status in sorted(_list_status(table.file_io, folder), key=_base_name):
        name = _base_name(status)
        if not name.startswith(BRANCH_PREFIX):
            continue
        branch = name[len(BRANCH_PREFIX):]
        path = f"{folder}/{name}"
        from_tag, from_snapshot = None, None
        if _list_status(table.file_io, f"{path}/schema"):
            snapshot_ids = [int(_base_name(s)[len("snapshot-"):])
                            for s in _list_status(table.file_io, f"{path}/snapshot")
                            if _base_name(s).startswith("snapshot-")
                            and _base_name(s)[len("snapshot-"):].isdigit()]
            earliest = min(snapshot_ids) if snapshot_ids else None
            tagged = _branch_tags(table, branch)
            from_snapshot = earliest
            if tagged:
                first = min(tagged)
                if first == earliest and len(tagged[first]) == 1:
                    from_tag = tagged[first][0]
        rows.append((branch, from_tag, from_snapshot, local_time(_mtime_ms(status))))
    return _rows(BRANCHES, rows)


def _branch_tags(table, branch: str) -> Dict[int, List[str]]:
    """snapshot id -> the branch's tag names on it."""
    from dbt.adapters.paimon.format.time_travel import tags as tags_of

    found: Dict[int, List[str]] = {}
    for name, tag in tags_of(table, branch).items():
        found.setdefault(tag.id, []).append(name)
    return found


# ---------------------------------------------------------------------------- consumers

CONSUMERS = _schema(("consumer_id", pa.string(), False), ("next_snapshot_id", pa.int64(), False))


def consumers(table) -> pa.Table:
    """ConsumersTable: every consumer and the next snapshot it reads, by id."""
    from dbt.adapters.paimon.format.consumers import list_consumers

    return _rows(CONSUMERS, sorted(list_consumers(table).items()))


# ---------------------------------------------------------------------------- files

FILES = _schema(
    ("partition", pa.string(), True), ("bucket", pa.int32(), False),
    ("file_path", pa.string(), False), ("file_format", pa.string(), False),
    ("schema_id", pa.int64(), False), ("level", pa.int32(), False),
    ("record_count", pa.int64(), False), ("file_size_in_bytes", pa.int64(), False),
    ("min_key", pa.string(), True), ("max_key", pa.string(), True),
    ("null_value_counts", pa.string(), False), ("min_value_stats", pa.string(), False),
    ("max_value_stats", pa.string(), False), ("min_sequence_number", pa.int64(), True),
    ("max_sequence_number", pa.int64(), True), ("creation_time", _TS, True))


def _live_entries(table, snapshot) -> list:
    """The snapshot's live manifest entries (ADDs not deleted later), with value stats."""
    from pypaimon.manifest.manifest_list_manager import ManifestListManager
    from pypaimon.read.scanner.file_scanner import FileScanner

    manifests = ManifestListManager(table).read_all(snapshot)
    if not manifests:
        return []
    scanner = FileScanner(table, lambda: (manifests, snapshot), skip_level0=False)
    return scanner.read_manifest_entries(manifests, keep_stats=True)


def _skips_level0(table) -> bool:
    """Java's batch scan leaves out level-0 files of deletion-vector and first-row primary-key
    tables (``batchScanSkipLevel0``): their system tables show what a batch read uses."""
    if not table.primary_keys:
        return False
    engine = str(table.table_schema.options.get("merge-engine", "deduplicate")).lower()
    return table.options.deletion_vectors_enabled() or engine == "first-row"


def files(table) -> pa.Table:
    """FilesTable (Paimon 1.0): the data files of the latest snapshot a batch read uses, each
    with its key range and value stats (mapped to the current columns by field id)."""
    snapshot = _latest_snapshot(table)
    if snapshot is None:
        return FILES.empty_table()
    entries = _live_entries(table, snapshot)
    if _skips_level0(table):
        entries = [e for e in entries if e.file.level > 0]
    entries.sort(key=lambda e: (_row_text(row_values(e.partition)), e.bucket, e.file.level,
                                e.file.min_sequence_number, e.file.file_name))
    current = list(table.table_schema.fields)
    fields_of: Dict[int, list] = {}
    rows = []
    for entry in entries:
        meta = entry.file
        if meta.schema_id not in fields_of:
            stored = table.schema_manager.get_schema(meta.schema_id)
            fields_of[meta.schema_id] = list(stored.fields) if stored else current
        nulls, lower, upper = _value_stats(meta, fields_of[meta.schema_id], current)
        keys = row_values(meta.min_key)
        rows.append((
            _row_text(row_values(entry.partition)), entry.bucket, meta.file_name,
            meta.file_name.rsplit(".", 1)[-1] if "." in meta.file_name else "",
            meta.schema_id, meta.level, meta.row_count, meta.file_size,
            _row_text(keys) if keys else None,
            _row_text(row_values(meta.max_key)) if keys else None,
            _map_text(nulls), _map_text(lower), _map_text(upper),
            meta.min_sequence_number, meta.max_sequence_number,
            _timestamp_value(meta.creation_time)))
    return _rows(FILES, rows)


def _value_stats(meta, file_fields: list, current: list) -> Tuple[Dict, Dict, Dict]:
    """column -> null count, min, max for each current column (Java's SimpleStatsEvolution:
    a column the file's schema lacks, or its stats do not cover, has null; a file recording
    stats of no column has none)."""
    stats = meta.value_stats
    if meta.value_stats_cols is not None and not meta.value_stats_cols:
        return {}, {}, {}  # a file without value stats (Java: an empty evolution result)
    columns = list(meta.value_stats_cols) if meta.value_stats_cols is not None else \
        [f.name for f in file_fields]
    position = {name: i for i, name in enumerate(columns)}
    name_by_id = {f.id: f.name for f in file_fields}
    minimum = row_values(stats.min_values) if stats is not None else []
    maximum = row_values(stats.max_values) if stats is not None else []
    counts = list(stats.null_counts or []) if stats is not None else []
    nulls, lower, upper = {}, {}, {}
    for field in current:
        i = position.get(name_by_id.get(field.id))
        nulls[field.name] = counts[i] if i is not None and i < len(counts) else None
        lower[field.name] = minimum[i] if i is not None and i < len(minimum) else None
        upper[field.name] = maximum[i] if i is not None and i < len(maximum) else None
    return nulls, lower, upper


# ---------------------------------------------------------------------------- manifests

MANIFESTS = _schema(
    ("file_name", pa.string(), False), ("file_size", pa.int64(), False),
    ("num_added_files", pa.int64(), False), ("num_deleted_files", pa.int64(), False),
    ("schema_id", pa.int64(), False))


def manifests(table) -> pa.Table:
    """ManifestsTable: the latest snapshot's data manifests (base, then delta)."""
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    snapshot = _latest_snapshot(table)
    metas = ManifestListManager(table).read_all(snapshot) if snapshot is not None else []
    return _rows(MANIFESTS, [(m.file_name, m.file_size, m.num_added_files,
                              m.num_deleted_files, m.schema_id) for m in metas])


# ---------------------------------------------------------------------------- partitions, buckets

PARTITIONS = _schema(
    ("partition", pa.string(), True), ("record_count", pa.int64(), False),
    ("file_size_in_bytes", pa.int64(), False), ("file_count", pa.int64(), False),
    ("last_update_time", _TS, True))
BUCKETS = _schema(
    ("partition", pa.string(), True), ("bucket", pa.int32(), False),
    ("record_count", pa.int64(), False), ("file_size_in_bytes", pa.int64(), False),
    ("file_count", pa.int64(), False), ("last_update_time", _TS, True))


def _file_totals(table, by_bucket: bool) -> List[Tuple[str, int, list]]:
    """(partition text, bucket or -1, [records, bytes, files, last creation time]) as Java's
    PartitionEntry / BucketEntry sum the latest snapshot's manifest entries: an ADD counts, a
    DELETE subtracts; the last creation time is the largest of all entries (DELETEs too);
    groups without files are left out. Sorted by partition text (then bucket)."""
    from pypaimon.manifest.manifest_file_manager import ManifestFileManager
    from pypaimon.manifest.manifest_list_manager import ManifestListManager

    snapshot = _latest_snapshot(table)
    if snapshot is None:
        return []
    reader = ManifestFileManager(table)
    totals: Dict[Tuple[str, int], list] = {}
    for meta in ManifestListManager(table).read_all(snapshot):
        for entry in reader.read(meta.file_name, drop_stats=True):
            sign = 1 if entry.kind == 0 else -1
            key = (_row_text(row_values(entry.partition)), entry.bucket if by_bucket else -1)
            total = totals.setdefault(key, [0, 0, 0, None])
            total[0] += sign * entry.file.row_count
            total[1] += sign * entry.file.file_size
            total[2] += sign
            # Java: the creation time (a local date-time) to epoch millis and back to local
            created = _timestamp_value(entry.file.creation_time)
            if created is not None and (total[3] is None or created > total[3]):
                total[3] = created
    return [(p, b, t) for (p, b), t in sorted(totals.items()) if t[2] > 0]


def partitions(table) -> pa.Table:
    """PartitionsTable: records, bytes, files and last file creation per partition."""
    return _rows(PARTITIONS, [(p, t[0], t[1], t[2], t[3])
                              for p, _, t in _file_totals(table, by_bucket=False)])


def buckets(table) -> pa.Table:
    """BucketsTable: the same per (partition, bucket)."""
    return _rows(BUCKETS, [(p, b, t[0], t[1], t[2], t[3])
                           for p, b, t in _file_totals(table, by_bucket=True)])


# ---------------------------------------------------------------------------- aggregation_fields

AGGREGATION_FIELDS = _schema(
    ("field_name", pa.string(), False), ("field_type", pa.string(), False),
    ("function", pa.string(), True), ("function_options", pa.string(), True),
    ("comment", pa.string(), True))


def aggregation_fields(table) -> pa.Table:
    """AggregationFieldsTable: each column of the latest schema with the values and keys of its
    ``fields.<column>.<option>`` options (Java's Multimap lists, ``[sum]``)."""
    latest = _schema_files(table)
    stored = latest[-1] if latest else {"fields": [], "options": {}}
    values: Dict[str, List[str]] = {}
    keys: Dict[str, List[str]] = {}
    for key, value in stored.get("options", {}).items():
        parts = key.split(".")
        if len(parts) > 2 and parts[0] == "fields":
            values.setdefault(parts[1], []).append(str(value))
            keys.setdefault(parts[1], []).append(key)
    fields = {f.id: f for f in table.table_schema.fields}
    rows = []
    for field in stored.get("fields", []):
        name = field["name"]
        paimon_field = fields.get(field["id"])
        type_text = str(paimon_field.type) if paimon_field is not None else str(field["type"])
        rows.append((name, type_text, "[" + ", ".join(values.get(name, [])) + "]",
                     "[" + ", ".join(keys.get(name, [])) + "]", field.get("description")))
    return _rows(AGGREGATION_FIELDS, rows)


# ---------------------------------------------------------------------------- statistics

STATISTICS = _schema(
    ("snapshot_id", pa.int64(), False), ("schema_id", pa.int64(), False),
    ("mergedRecordCount", pa.int64(), True), ("mergedRecordSize", pa.int64(), True),
    ("colstat", pa.string(), True))


def statistics(table) -> pa.Table:
    """StatisticTable: the statistics file of the latest snapshot (written by Paimon's
    ANALYZE TABLE), one row; no row when the snapshot has none."""
    snapshot = _latest_snapshot(table)
    name = getattr(snapshot, "statistics", None) if snapshot is not None else None
    if not name:
        return STATISTICS.empty_table()
    stats = json.loads(table.file_io.read_file_utf8(
        f"{table.table_path.rstrip('/')}/statistics/{name}"))
    return _rows(STATISTICS, [(stats.get("snapshotId"), stats.get("schemaId"),
                               stats.get("mergedRecordCount"), stats.get("mergedRecordSize"),
                               _compact_json(stats.get("colStats", {})))])


_BUILDERS: Dict[str, Callable[[Any], pa.Table]] = {
    "snapshots": snapshots, "schemas": schemas, "options": options, "tags": tags,
    "branches": branches, "consumers": consumers, "files": files, "manifests": manifests,
    "partitions": partitions, "buckets": buckets, "aggregation_fields": aggregation_fields,
    "statistics": statistics,
}
