"""Tags Paimon's committer creates and expires after each commit (Java 1.0 ``TagAutoManager``:
``TagAutoCreation`` then ``TagTimeExpire``), run after each dbt commit (ops/after_run.py).

``tag.automatic-creation``:
- ``process-time`` / ``watermark``: a tag per period (``tag.creation-period``: daily, hourly,
  two-hours) once a snapshot's commit time (or watermark, read in ``sink.watermark-time-zone``)
  passes the period's end plus ``tag.creation-delay``. The tag names the period that ended
  (``2026-11-26``, ``2026-11-26 13``; ``tag.period-formatter`` without-dashes: ``20261126``) and
  holds the first snapshot after it. Which snapshots are new is derived, as Java's constructor
  does, from the newest automatic tag. ``tag.automatic-completion`` names a skipped period's
  tag after the period that followed the previous one; ``tag.num-retained-max`` keeps that
  many automatic tags (the oldest go first).
- ``batch``: after each run, tag ``batch-write-<local date>`` of the latest snapshot replaced
  (``tag.batch.customized-name`` instead when set), then at most ``tag.num-retained-max`` tags
  of any kind kept (Flink's BatchWriteGeneratorTagOperator, the writer Paimon 1.0 has for it).
Every new tag gets ``tag.default-time-retained``; ``expire_tags`` then deletes tags past their
retention, as Java does after every commit.
"""

from __future__ import annotations

import datetime as dt
from typing import Dict, List, Optional

from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.ops.expire import parse_duration_ms
from dbt.adapters.paimon.ops.tags import delete_tag, expire_tags, retention

PERIODS = {"daily": dt.timedelta(days=1), "hourly": dt.timedelta(hours=1),
           "two-hours": dt.timedelta(hours=2)}
BATCH_TAG_PREFIX = "batch-write-"
RETAINED_OPTION = "tag.default-time-retained"
_EPOCH = dt.datetime(1970, 1, 1)


class PeriodNames:
    """Java's TagPeriodHandler: a period's tag name, and whether a name is one."""

    def __init__(self, period: str, formatter: str):
        if period not in PERIODS:
            raise ValueError(f"tag.creation-period must be one of {sorted(PERIODS)}, got "
                             f"{period!r}")
        if formatter not in ("with_dashes", "without_dashes"):
            raise ValueError(f"tag.period-formatter must be with_dashes or without_dashes, "
                             f"got {formatter!r}")
        self.length = PERIODS[period]
        self.daily = period == "daily"
        dashes = formatter == "with_dashes" or period == "two-hours"
        day = "%Y-%m-%d" if dashes else "%Y%m%d"
        self.pattern = day if self.daily else f"{day} %H"

    def name(self, start: dt.datetime) -> str:
        return start.strftime(self.pattern)

    def start_of(self, name: str) -> Optional[dt.datetime]:
        """The period a tag name names; None when it names none (not an automatic tag)."""
        try:
            if self.daily:
                return dt.datetime.strptime(name.split(" ")[0], self.pattern)
            return dt.datetime.strptime(name, self.pattern)
        except ValueError:
            return None

    def previous(self, time: dt.datetime) -> dt.datetime:
        """The period before the one ``time`` is in (normalizeToPreviousTag)."""
        step = self.length.total_seconds()
        floored = (time - _EPOCH).total_seconds() // step * step
        return _EPOCH + dt.timedelta(seconds=floored) - self.length


def after_commit(location: TableRef, now: Optional[dt.datetime] = None) -> List[str]:
    """Create the table's automatic tags and expire tags past their retention; what was done."""
    table = location.open()
    options = {str(k): str(v) for k, v in table.table_schema.options.items()}
    mode = options.get("tag.automatic-creation", "none").lower()
    retained = options.get(RETAINED_OPTION)
    keep = options.get("tag.num-retained-max")
    keep = int(keep) if keep else None
    done: List[str] = []
    if mode in ("process-time", "watermark"):
        done += _periodic(location, table, options, mode, retained, keep)
    elif mode == "batch":
        done += _batch(location, table, options, retained, keep)
    elif mode != "none":
        raise ValueError(f"tag.automatic-creation must be none, process-time, watermark or "
                         f"batch, got {mode!r}")
    expired = expire_tags(location, now=now)
    if expired.tags:
        done.append(expired.message)
    return done


def _periodic(location, table, options: Dict[str, str], mode: str, retained, keep) -> List[str]:
    names = PeriodNames(options.get("tag.creation-period", "daily").lower(),
                        options.get("tag.period-formatter", "with_dashes").lower())
    delay = dt.timedelta(milliseconds=parse_duration_ms(options.get("tag.creation-delay", "0"),
                                                        "tag.creation-delay"))
    if delay >= names.length:
        raise ValueError(f"tag.creation-delay ({options.get('tag.creation-delay')}) must be "
                         f"shorter than one tag.creation-period")
    complete = options.get("tag.automatic-completion", "false").lower() == "true"
    zone = options.get("sink.watermark-time-zone", "UTC")
    automatic = _automatic_tags(table, names)
    snapshots = sorted(table.snapshot_manager().list_snapshots(), key=lambda s: s.id)
    next_tag = None
    first = snapshots[0].id if snapshots else 1
    if automatic:
        last_name, last = max(automatic.items(), key=lambda item: item[1].id)
        first = last.id + 1
        next_tag = names.start_of(last_name) + names.length
    manager = time_travel.tag_manager(table)
    created = []
    for snapshot in snapshots:
        if snapshot.id < first:
            continue
        time = _time_of(snapshot, mode, zone)
        if time is None:
            continue
        if next_tag is None or time - delay >= next_tag + names.length:
            this_tag = next_tag if complete and next_tag is not None else names.previous(time)
            name = names.name(this_tag)
            if not manager.tag_exists(name):
                manager.create_tag(snapshot, name, time_retained=retention(retained, RETAINED_OPTION))
                created.append(name)
            next_tag = this_tag + names.length
            if keep is not None:
                _keep_newest(location, _automatic_tags(location.open(), names), keep)
    return [f"created automatic tag(s) {created}"] if created else []


def _batch(location, table, options: Dict[str, str], retained, keep) -> List[str]:
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is None:
        return []
    name = options.get("tag.batch.customized-name") or BATCH_TAG_PREFIX + \
        dt.datetime.fromtimestamp(latest.time_millis / 1000).strftime("%Y-%m-%d")
    if time_travel.tag_manager(table).tag_exists(name):
        delete_tag(location, name)
    time_travel.tag_manager(location.open()).create_tag(latest, name,
                                                        time_retained=retention(retained, RETAINED_OPTION))
    if keep is not None:
        _keep_newest(location, time_travel.tags(location.open()), keep)
    return [f"tagged snapshot {latest.id} '{name}'"]


def _automatic_tags(table, names: PeriodNames) -> Dict[str, object]:
    return {name: tag for name, tag in time_travel.tags(table).items()
            if names.start_of(name) is not None}


def _keep_newest(location: TableRef, tags: Dict[str, object], keep: int) -> None:
    """Delete the oldest of ``tags`` (by snapshot, then name) beyond ``keep``."""
    ordered = sorted(tags.items(), key=lambda item: (item[1].id, item[0]))
    for name, _ in ordered[:max(0, len(ordered) - keep)]:
        delete_tag(location, name)


def _time_of(snapshot, mode: str, zone: str) -> Optional[dt.datetime]:
    """A snapshot's time as Java's TagTimeExtractor gives it: the commit time in the local
    zone, or the watermark in ``zone`` (none without a watermark)."""
    if mode == "process-time":
        return dt.datetime.fromtimestamp(snapshot.time_millis / 1000)
    if snapshot.watermark is None or snapshot.watermark == time_travel.MISSING_WATERMARK:
        return None
    from zoneinfo import ZoneInfo

    moment = dt.datetime.fromtimestamp(snapshot.watermark / 1000, dt.timezone.utc)
    return moment.astimezone(ZoneInfo(zone)).replace(tzinfo=None)

