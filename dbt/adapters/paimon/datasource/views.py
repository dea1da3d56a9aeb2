"""Temporary views of Paimon reads the macros name: a table as of a snapshot (time travel), what
changed between two snapshots, tags or times, a system table, a row-tracking table's row ids.

From SQL, only a temporary view keeps a Python data source's options (a snapshot id, a changes
range), so models, tests and `dbt show` of the session read these views; persistent views
cannot. Each builder takes the session's registry and plain names (the adapter unpacks dbt's
relation; ``label`` is how messages name it) and returns the view's quoted name. A read the
arguments cannot make raises ViewError, which dbt reports as a compilation error."""

from __future__ import annotations

import functools
import re
from typing import Dict, Optional

from dbt.adapters.paimon.catalog.listing import branch_table_name, branches
from dbt.adapters.paimon.datasource.entry_names import check_name, sql_text
from dbt.adapters.paimon.datasource.session_options import encode
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.format.errors import PaimonFormatError


class ViewError(ValueError):
    """The arguments name no read (no such branch, tag or snapshot; a bad range)."""


def view_name(*parts: str) -> str:
    """A temporary view's one-part name: ``parts`` joined by '__', what an unquoted SQL name
    cannot carry (a branch's '$', dots) as '_', in lower case as Spark's catalog keeps it."""
    return check_name("view", re.sub(r"\W", "_", "__".join(parts), flags=re.ASCII).lower())


def source_view(registry, view: str, schema: str, table: str, read_options: Dict[str, str],
                source: str = "paimon") -> str:
    """A temporary view of the paimon data source (or ``source``, e.g. paimon_row_tracking)
    reading Paimon table ``table`` (or a branch ``t$branch_b``) with ``read_options``."""
    options = registry.table_location(schema, table).source_options()
    options.update(read_options)
    rendered = ", ".join(f"`{k}` '{sql_text(v)}'" for k, v in options.items())
    registry.activate().sql(
        f"create or replace temporary view `{view}` using {source} options ({rendered})")
    return f"`{view}`"


def table_or_branch(registry, schema: str, table: str, branch, macro: str, label: str) -> str:
    """The Paimon table name a read of ``table`` means: ``branch`` of it (``t$branch_b``) when
    given, else the table (the branch of a ``paimon_branch`` invocation, when it has it)."""
    if branch is None:
        return registry.paimon_name(schema, table)
    known = branches(registry.open_table(schema, table))
    if str(branch) not in known:
        raise ViewError(f"{macro}: {label} has no branch '{branch}' (branches: "
                        f"{known or 'none'})")
    return branch_table_name(table, str(branch))


def snapshot_view(registry, schema: str, table: str, label: str, snapshot_id=None, tag=None,
                  timestamp=None, watermark=None, version=None, branch=None) -> str:
    """The table as of a snapshot (by id, tag, timestamp, watermark or version:
    format/time_travel.py), of main or of ``branch`` (its latest snapshot when no other
    argument is given)."""
    name = table_or_branch(registry, schema, table, branch, "paimon_snapshot", label)
    opened = registry.open_table(schema, name)
    try:
        if branch is not None and all(v is None for v in (snapshot_id, tag, timestamp,
                                                            watermark, version)):
            latest = opened.snapshot_manager().get_latest_snapshot()
            if latest is None:
                raise ValueError(f"branch '{branch}' has no snapshot yet")
            snapshot = latest.id
        else:
            snapshot = time_travel.travel(opened, snapshot_id, tag, timestamp, watermark,
                                          version).id
    except ValueError as exc:
        raise ViewError(f"paimon_snapshot of {label}: {exc}") from None
    view = view_name(schema, name, f"snapshot_{snapshot}")
    registry.activate()
    # Spark's own reader when that snapshot needs no merge (docs/reads.md)
    if registry.snapshot_view(schema, name, snapshot, view):
        return f"`{view}`"
    options = {"snapshot_id": str(snapshot)}
    session_options = registry.read_options_of(schema, table)
    if session_options:  # e.g. postpone.merge-on-read set by the session (session_options.py)
        from dbt.adapters.paimon.datasource.source import READ_OPTIONS_OPTION

        options[READ_OPTIONS_OPTION] = encode(session_options)
    return source_view(registry, view, schema, name, options)


def changes_between_view(registry, schema: str, table: str, label: str, start=None, end=None,
                         mode: Optional[str] = None, start_timestamp=None,
                         end_timestamp=None) -> str:
    """What changed in the table between two snapshots, two tags or two times, with
    ``_row_kind``, as Paimon's ``incremental-between`` and ``incremental-between-timestamp``
    read it:
    - snapshot ids give the commits (start, end] (delta or changelog files:
      datasource/changes.py);
    - times select those snapshot ids as Java does (time_travel.incremental_between_timestamps);
    - tag names give the difference of the two tagged versions: of a primary-key table by
      key (Java's IncrementalDiffSplitRead: a key new since ``start`` is +I, a key whose row
      changed is +U, both with the ``end`` row; a key deleted since is not returned, as in
      Java's batch read), of an append table the files the end tag has and the start tag
      has not, as +I (changes.py ``diff``).
    Of the branch the invocation reads the table on (registry.paimon_name)."""
    macro = f"paimon_changes_between({label})"
    by_time = start_timestamp is not None or end_timestamp is not None
    given = (start_timestamp, end_timestamp) if by_time else (start, end)
    if None in given or (by_time and (start is not None or end is not None)):
        raise ViewError(
            f"{macro}: pass start and end (two snapshot ids or two tags), or "
            f"start_timestamp and end_timestamp; got start={start!r}, end={end!r}, "
            f"start_timestamp={start_timestamp!r}, end_timestamp={end_timestamp!r}")
    name = registry.paimon_name(schema, table)
    if by_time:
        opened = registry.open_table(schema, table)
        try:
            millis = [time_travel.timestamp_millis(v) for v in (start_timestamp, end_timestamp)]
            ids = [str(i) for i in time_travel.incremental_between_timestamps(opened, *millis)]
        except ValueError as exc:
            raise ViewError(f"{macro}: {exc}") from None
        label_of_range = f"t{millis[0]}_{millis[1]}"
    else:
        ids = [str(v).strip() for v in (start, end)]
        label_of_range = f"{start}_{end}"
    view = view_name(schema, name, f"changes_{label_of_range}")
    if by_time or all(v.isdigit() for v in ids):  # Java: both numbers, else both tags
        options = {"changes_from": ids[0], "changes_to": ids[1], "changes_mode": mode or "auto"}
        return source_view(registry, view, schema, name, options)
    opened = registry.open_table(schema, table)
    try:
        first, last = (time_travel.snapshot_by_tag(opened, v) for v in ids)
    except ValueError as exc:
        raise ViewError(f"{macro}: {exc}") from None
    if last.id <= first.id:
        raise ViewError(
            f"{macro}: tag end {ids[1]} with snapshot id {last.id} should be later than tag "
            f"start {ids[0]} with snapshot id {first.id}")
    if not opened.primary_keys:
        # Java 1.0 IncrementalTagStartingScanner -> SnapshotReaderImpl.readIncrementalDiff;
        # an append table reads the end tag's files the start tag lacks (changes.py)
        options = {"changes_from": str(first.id), "changes_to": str(last.id),
                   "changes_mode": "diff"}
        return source_view(registry, view, schema, name, options)
    return _key_diff_view(registry, view, [
        snapshot_view(registry, schema, table, label, tag=tag).strip("`") for tag in ids],
        list(opened.primary_keys))


def _key_diff_view(registry, view: str, tagged, keys) -> str:
    """The rows of the second view whose key is new (+I) or whose row changed (+U) since the
    first."""
    from pyspark.sql import functions as F

    spark = registry.activate()
    before, after = (spark.table(name) for name in tagged)
    joined = after.alias("a").join(
        before.alias("b"), [F.col(f"a.`{k}`") == F.col(f"b.`{k}`") for k in keys], "left")
    same = [F.col(f"a.`{c}`").eqNullSafe(F.col(f"b.`{c}`")) for c in after.columns]
    kind = (F.when(F.col(f"b.`{keys[0]}`").isNull(), F.lit("+I"))
            .when(~functools.reduce(lambda x, y: x & y, same), F.lit("+U")))
    changes = joined.select(*[F.col(f"a.`{c}`") for c in after.columns],
                            kind.alias("_row_kind")).where(F.col("_row_kind").isNotNull())
    changes.createOrReplaceTempView(view)
    return f"`{view}`"


def system_view(registry, schema: str, table: str, label: str, name: str, branch=None) -> str:
    """Paimon's system table ``name`` of the table (``orders$snapshots`` in Paimon's engines),
    of main or of ``branch`` (``orders$branch_audit$snapshots``). Metadata tables are built in
    this process (format/system_tables.py) and handed to Spark as Arrow; audit_log, binlog and
    ro read data through the paimon data source (datasource/system_reads.py). A metadata table
    that cannot be read raises PaimonFormatError."""
    from dbt.adapters.paimon.datasource.source import SYSTEM_TABLE_OPTION
    from dbt.adapters.paimon.datasource.spark_types import spark_schema
    from dbt.adapters.paimon.format.system_tables import (METADATA_TABLES,
                                                          check_system_table, metadata_table)

    try:
        system = check_system_table(name)
    except ValueError as exc:
        raise ViewError(f"paimon_system({label}, {name!r}): {exc}") from None
    paimon_table = table_or_branch(registry, schema, table, branch, "paimon_system", label)
    view = view_name(schema, paimon_table, f"system_{system}")
    if system not in METADATA_TABLES:
        return source_view(registry, view, schema, paimon_table, {SYSTEM_TABLE_OPTION: system})
    try:
        rows = metadata_table(registry.open_table(schema, paimon_table), system)
    except (ValueError, OSError) as exc:
        raise PaimonFormatError(f"paimon_system({label}, {system!r}): {exc}") from exc
    spark = registry.activate()
    spark.createDataFrame(rows, schema=spark_schema(rows.schema)).createOrReplaceTempView(view)
    return f"`{view}`"


def row_tracking_view(registry, schema: str, table: str) -> str:
    """A row-tracking table with its _ROW_ID and _SEQUENCE_NUMBER (the paimon_row_tracking
    source)."""
    from dbt.adapters.paimon.datasource.row_tracking_source import NAME, register
    from dbt.adapters.paimon.format.row_tracking import require_row_tracking

    try:
        require_row_tracking(registry.open_table(schema, table), "paimon_row_tracking")
    except ValueError as exc:
        raise ViewError(str(exc)) from exc
    register(registry.activate())
    return source_view(registry, view_name(schema, table, "row_tracking"), schema, table, {},
                       source=NAME)
