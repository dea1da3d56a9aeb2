"""A Paimon table at a glance, as text: options, snapshots, files per bucket and level.

What a user needs to see why reads are slow (many level-0 files = many sorted runs to merge)
and whether compaction helped. Metadata only: no data file is opened.
"""

from __future__ import annotations

import datetime as dt
from typing import Dict, List, Optional, Sequence

from dbt.adapters.paimon.datasource.source import TableRef

MAX_SNAPSHOTS_SHOWN = 20


def format_table(headers: Sequence[str], rows: Sequence[Sequence], right: Sequence[int] = ()
                 ) -> str:
    """A plain-text table with aligned columns (``right``: indexes of right-aligned ones)."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in r]
                                           for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row):
        return "  ".join(value.rjust(widths[i]) if i in right else value.ljust(widths[i])
                         for i, value in enumerate(row)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule] + [line(r) for r in cells[1:]])


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _time(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def table_summary(location: TableRef, snapshot_id: Optional[int] = None) -> Dict:
    """The numbers behind ``table_info`` (for tests and programmatic use)."""
    from dbt.adapters.paimon.format.splits import list_snapshots, plan_splits
    from dbt.adapters.paimon.format.time_travel import tags

    table = location.open()
    splits = plan_splits(table, snapshot_id)
    buckets = []
    for split in splits:
        levels: Dict[int, List] = {}
        for f in split.files:
            levels.setdefault(f.level, []).append(f)
        buckets.append({
            "partition": split.partition, "bucket": split.bucket,
            "files": len(split.files), "rows": split.row_count,
            "bytes": sum(f.file_size for f in split.files),
            "deletes": sum(f.delete_row_count or 0 for f in split.files),
            "levels": {lvl: len(fs) for lvl, fs in sorted(levels.items())},
            "sorted_runs": len(levels.get(0, [])) + len([lvl for lvl in levels if lvl > 0]),
        })
    return {
        "name": location.name,
        "primary_keys": list(table.primary_keys),
        "partition_keys": list(table.partition_keys),
        "options": {str(k): str(v) for k, v in sorted(table.table_schema.options.items())},
        "schema_id": table.table_schema.id,
        "snapshots": list_snapshots(table),
        "tags": tags(table),
        "buckets": buckets,
        "files": sum(b["files"] for b in buckets),
        "rows": sum(b["rows"] for b in buckets),
        "bytes": sum(b["bytes"] for b in buckets),
    }


def table_info(location: TableRef, snapshot_id: Optional[int] = None) -> str:
    info = table_summary(location, snapshot_id)
    out = [f"Paimon table {info['name']}",
           f"  primary key: {info['primary_keys'] or '(none: append table)'}"
           f"   partition keys: {info['partition_keys'] or '(none)'}"
           f"   schema id: {info['schema_id']}", "", "Options"]
    out.append(format_table(["option", "value"], list(info["options"].items())) if
               info["options"] else "  (none)")
    snapshots = info["snapshots"]
    out += ["", f"Snapshots ({len(snapshots)} retained"
            + (f", newest {MAX_SNAPSHOTS_SHOWN} shown" if len(snapshots) > MAX_SNAPSHOTS_SHOWN
               else "") + ")"]
    if snapshots:
        shown = snapshots[-MAX_SNAPSHOTS_SHOWN:]
        out.append(format_table(
            ["id", "kind", "committed (UTC)", "total records", "delta records",
             "dbt invocation", "by"],
            [[s.id, s.commit_kind, _time(s.time_millis), s.total_record_count,
              s.delta_record_count, *_origin(s)] for s in shown], right=(0, 3, 4)))
    else:
        out.append("  (none: the table was never written)")
    if info["tags"]:
        out += ["", f"Tags ({len(info['tags'])})", format_table(
            ["tag", "snapshot", "committed (UTC)", "retained for"],
            [[name, tag.id, _time(tag.time_millis), tag.tag_time_retained or ""]
             for name, tag in info["tags"].items()], right=(1,))]
    out += ["", "Files per (partition, bucket) at the latest snapshot"
            if snapshot_id is None else f"Files per (partition, bucket) at snapshot "
                                        f"{snapshot_id}"]
    if info["buckets"]:
        rows = []
        for b in info["buckets"]:
            partition = ", ".join(f"{k}={v}" for k, v in b["partition"].items()) or "-"
            levels = " ".join(f"L{lvl}:{n}" for lvl, n in b["levels"].items())
            rows.append([partition, b["bucket"], b["files"], levels, b["sorted_runs"],
                         b["rows"], b["deletes"], _size(b["bytes"])])
        out.append(format_table(["partition", "bucket", "files", "levels", "sorted runs",
                                 "rows (stored)", "retractions", "size"], rows,
                                right=(1, 2, 4, 5, 6, 7)))
        out.append(f"Total: {info['files']} data files, {info['rows']} stored rows, "
                   f"{_size(info['bytes'])} in {len(info['buckets'])} bucket(s)")
        worst = max(b["sorted_runs"] for b in info["buckets"])
        if worst > 1:
            out.append(f"A read merges up to {worst} sorted runs per bucket; run the compact "
                       f"operation to merge them.")
    else:
        out.append("  (no data files)")
    return "\n".join(out)


def _origin(snapshot) -> List[str]:
    """The dbt invocation and node that committed a snapshot (ops/invocations.py), else the
    commit user of another writer."""
    from dbt.adapters.paimon.ops.invocations import INVOCATION_PROPERTY, NODE_PROPERTY

    properties = snapshot.properties or {}
    if INVOCATION_PROPERTY in properties:
        return [properties[INVOCATION_PROPERTY], properties.get(NODE_PROPERTY, "")]
    return ["", snapshot.commit_user]


def table_ddl(location: TableRef, relation: str) -> str:
    """The table as Paimon's Spark SQL would create it: columns (NOT NULL included), partition
    keys, primary key and options. The run file of a Paimon model (target/run) shows it, since
    the table is created through Paimon's catalog rather than by a statement."""
    from dbt.adapters.paimon.datasource.entry_names import sql_text
    from dbt.adapters.paimon.datasource.source import arrow_schema_of
    from dbt.adapters.paimon.datasource.spark_types import (
        quote_identifier,
        spark_column_definitions,
    )

    table = location.open()
    columns = spark_column_definitions(arrow_schema_of(table))
    properties = {}
    if table.primary_keys:
        properties["primary-key"] = ",".join(table.primary_keys)
    properties.update({str(k): str(v) for k, v in sorted(table.table_schema.options.items())})
    out = [f"create table {relation} (", ",\n".join(f"    {c}" for c in columns), ") using paimon"]
    if table.partition_keys:
        out.append("partitioned by (" + ", ".join(quote_identifier(k)
                                                  for k in table.partition_keys) + ")")
    if properties:
        out.append("tblproperties (" + ", ".join(
            f"'{sql_text(k)}' = '{sql_text(v)}'" for k, v in properties.items()) + ")")
    return "\n".join(out)
