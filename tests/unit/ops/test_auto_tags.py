"""Automatic tags after a commit (ops/auto_tags.py), following Java 1.0's TagAutoCreation,
TagPeriodHandler and Flink's batch tag writer. Snapshot commit times are set in the snapshot
files to chosen days: the rules depend on commit times only."""
import datetime as dt
import json
import os

import pyarrow as pa
import pytest

from dbt.adapters.paimon.catalog import warehouse
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.ops.auto_tags import PeriodNames, after_commit
from dbt.adapters.paimon.ops.tags import create_tag

DAY = dt.datetime(2026, 11, 20)


def _table(tmp_path, options, commits):
    """A table with ``commits`` snapshots whose commit times are ``commits`` (datetimes)."""
    wh = str(tmp_path / "warehouse")
    warehouse.create_table(wh, "db", "t", pa.schema([("id", pa.int64())]), primary_keys=["id"],
                           options={"bucket": "1", **options})
    location = TableRef(wh, "db", "t", {})
    for index, when in enumerate(commits):
        _commit(location, index)
        _set_time(location, index + 1, when)
    return location


def _commit(location, value):
    table = location.open()
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.table({"id": pa.array([value], pa.int64())}))
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()


def _set_time(location, snapshot_id, when: dt.datetime):
    path = os.path.join(location.warehouse, "db.db", "t", "snapshot", f"snapshot-{snapshot_id}")
    with open(path) as f:
        snapshot = json.load(f)
    snapshot["timeMillis"] = int(when.timestamp() * 1000)
    with open(path, "w") as f:
        json.dump(snapshot, f)


def _tags(location):
    return {name: tag.id for name, tag in time_travel.tags(location.open()).items()}


def test_period_names_as_java():
    daily = PeriodNames("daily", "with_dashes")
    assert daily.name(DAY) == "2026-11-20"
    assert daily.start_of("2026-11-20") == DAY and daily.start_of("month_end") is None
    assert daily.previous(DAY + dt.timedelta(hours=10)) == DAY - dt.timedelta(days=1)
    hourly = PeriodNames("hourly", "without_dashes")
    assert hourly.name(DAY + dt.timedelta(hours=7)) == "20261120 07"
    assert hourly.previous(DAY + dt.timedelta(hours=7, minutes=30)) == \
        DAY + dt.timedelta(hours=6)
    assert PeriodNames("two-hours", "without_dashes").name(DAY) == "2026-11-20 00"
    with pytest.raises(ValueError, match="tag.creation-period"):
        PeriodNames("weekly", "with_dashes")


def test_a_daily_tag_once_each_day_ends(tmp_path):
    times = [DAY + dt.timedelta(hours=10), DAY + dt.timedelta(hours=15),
             DAY + dt.timedelta(days=1, hours=9), DAY + dt.timedelta(days=3, hours=8)]
    location = _table(tmp_path, {"tag.automatic-creation": "process-time"}, times)
    assert after_commit(location) == ["created automatic tag(s) ['2026-11-19', '2026-11-20', "
                                      "'2026-11-22']"]
    # each tag holds the first snapshot after its day ended; a manual tag is not automatic
    assert _tags(location) == {"2026-11-19": 1, "2026-11-20": 3, "2026-11-22": 4}
    create_tag(location, "manual", snapshot_id=2)
    assert after_commit(location) == []  # new snapshots only: derived from the newest tag


def test_completion_delay_and_retained_max(tmp_path):
    times = [DAY + dt.timedelta(hours=10), DAY + dt.timedelta(days=1, hours=1),
             DAY + dt.timedelta(days=3, hours=8)]
    location = _table(tmp_path, {"tag.automatic-creation": "process-time",
                                 "tag.automatic-completion": "true",
                                 "tag.creation-delay": "2 h",
                                 "tag.num-retained-max": "2",
                                 "tag.default-time-retained": "1d"}, times)
    after_commit(location, now=DAY)
    # snapshot 2 is within the 2 h delay; snapshot 3 completes the next day in order
    assert _tags(location) == {"2026-11-19": 1, "2026-11-20": 3}
    tag = time_travel.tags(location.open())["2026-11-20"]
    assert tag.tag_time_retained == dt.timedelta(days=1)
    _commit(location, 9)
    _set_time(location, 4, DAY + dt.timedelta(days=5))
    after_commit(location, now=DAY)
    assert _tags(location) == {"2026-11-20": 3, "2026-11-21": 4}  # 2 kept, oldest deleted
    # tags past their retention expire after a commit, as in Java's committer
    assert after_commit(location, now=dt.datetime.now() + dt.timedelta(days=2)) == \
        ["expired tag(s) ['2026-11-20', '2026-11-21']"]


def test_watermark_mode_needs_watermarks(tmp_path):
    location = _table(tmp_path, {"tag.automatic-creation": "watermark"}, [DAY, DAY])
    assert after_commit(location) == [] and _tags(location) == {}


def test_batch_mode_tags_the_latest_snapshot_of_the_day(tmp_path):
    location = _table(tmp_path, {"tag.automatic-creation": "batch",
                                 "tag.num-retained-max": "2"}, [DAY, DAY])
    after_commit(location)
    assert _tags(location) == {"batch-write-2026-11-20": 2}
    _commit(location, 5)
    _set_time(location, 3, DAY + dt.timedelta(hours=5))
    after_commit(location)
    assert _tags(location) == {"batch-write-2026-11-20": 3}  # replaced
    create_tag(location, "a", snapshot_id=1)
    _commit(location, 6)
    _set_time(location, 4, DAY + dt.timedelta(days=1))
    after_commit(location)
    # at most 2 tags of any kind: the oldest ('a' of snapshot 1) goes
    assert _tags(location) == {"batch-write-2026-11-20": 3, "batch-write-2026-11-21": 4}
