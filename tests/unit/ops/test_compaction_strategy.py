"""Paimon's compaction strategies on bucket metadata only (no files, no Spark)."""
from types import SimpleNamespace

import pytest

from dbt.adapters.paimon.format.splits import Split
from dbt.adapters.paimon.format.sorted_runs import sorted_runs
from dbt.adapters.paimon.ops.compaction_strategy import CompactionConfig, pick_full, pick_minor


def _file(name, level, size, seq, deletes=0, min_key=(0,)):
    return SimpleNamespace(file_name=name, level=level, file_size=size, max_sequence_number=seq,
                           min_sequence_number=seq, delete_row_count=deletes,
                           min_key=SimpleNamespace(values=list(min_key)))


def _split(*files):
    return Split(partition={}, partition_values=(), bucket=0, files=list(files), snapshot_id=1,
                 levels=[f.level for f in files])


CONFIG = CompactionConfig.from_options({"num-sorted-run.compaction-trigger": "3"})


def test_options():
    assert CONFIG.max_level == 3 and CONFIG.size_ratio == 1 and CONFIG.max_size_amp == 200
    assert not CONFIG.force_up_level0
    assert CompactionConfig.from_options({"merge-engine": "first-row"}).force_up_level0
    assert CompactionConfig.from_options({"changelog-producer": "lookup"}).max_level == 5
    assert CONFIG.delete_ratio_threshold == 0.2
    assert CompactionConfig.from_options(
        {"compaction.delete-ratio-threshold": " 0.5 "}).delete_ratio_threshold == 0.5


@pytest.mark.parametrize("raw,problem", [("a lot", "must be a number, got 'a lot'"),
                                         ("-0.1", "must be >= 0, got '-0.1'"),
                                         ("nan", "must be >= 0, got 'nan'")])
def test_a_bad_delete_ratio_threshold_is_named(raw, problem):
    with pytest.raises(ValueError, match=f"'compaction.delete-ratio-threshold' {problem}"):
        CompactionConfig.from_options({"compaction.delete-ratio-threshold": raw})


def test_sorted_runs_newest_level0_first_a_levels_files_in_key_order():
    runs = sorted_runs([_file("a", 0, 1, 1), _file("b", 0, 1, 5), _file("c", 2, 1, 0, min_key=(9,)),
                        _file("d", 2, 1, 0, min_key=(3,))])
    assert [(r.level, [f.file_name for f in r.files]) for r in runs] == \
        [(0, ["b"]), (0, ["a"]), (2, ["d", "c"])]


def test_below_trigger_nothing():
    assert pick_minor(_split(_file("a", 0, 10, 1), _file("b", 0, 10, 2)), CONFIG) is None


def test_size_amplification_compacts_everything_to_the_top():
    unit = pick_minor(_split(_file("a", 0, 100, 3), _file("b", 0, 100, 2),
                             _file("c", 3, 10, 1)), CONFIG)
    assert unit.output_level == 3 and unit.drop_delete and len(unit.split.files) == 3


def test_size_ratio_picks_the_small_new_runs_only():
    # two small new runs, one big old one: merged into the level below the big one
    unit = pick_minor(_split(_file("a", 0, 10, 4), _file("b", 0, 10, 3),
                             _file("big", 3, 1000, 1)), CONFIG)
    assert sorted(f.file_name for f in unit.split.files) == ["a", "b"]
    assert unit.output_level == 2 and not unit.drop_delete   # older data below: keep -D


def test_force_up_level0_for_first_row():
    config = CompactionConfig.from_options({"merge-engine": "first-row"})
    unit = pick_minor(_split(_file("a", 0, 10, 2), _file("big", 5, 1000, 1)), config)
    assert [f.file_name for f in unit.split.files] == ["a"] and unit.output_level == 4
    assert pick_minor(_split(_file("big", 5, 1000, 1)), config) is None


def test_full_skips_a_compacted_bucket():
    config = CompactionConfig.from_options({})
    assert pick_full(_split(_file("a", 5, 10, 1), _file("b", 5, 10, 2)), config) is None
    assert pick_full(_split(_file("a", 5, 10, 1, deletes=1)), config) is not None
    unit = pick_full(_split(_file("a", 0, 10, 2), _file("b", 5, 10, 1)), config)
    assert unit.output_level == 5 and unit.drop_delete and unit.full


def test_deletion_vectors_force_level0_up_and_drop_deletes():
    """Java: deletion vectors need lookup compaction (ForceUpLevel0Compaction), and with a
    deletion-vector maintainer every compaction drops retractions."""
    config = CompactionConfig.from_options({"deletion-vectors.enabled": "true"})
    assert config.force_up_level0
    split = _split(_file("a", 0, 10, 2), _file("big", 5, 1000, 1))
    split.deletion_vectors = True
    unit = pick_minor(split, config)
    assert [f.file_name for f in unit.split.files] == ["a"] and unit.output_level == 4
    assert unit.drop_delete and [f.file_name for f in unit.other_files] == ["big"]
    # a compacted bucket whose top-level file has a deletion vector still has rows to purge
    compacted = _split(_file("big", 5, 1000, 1))
    compacted.deletion_vectors = True
    assert pick_full(compacted, config) is None
    compacted.deletion_files = {"big": object()}
    assert pick_full(compacted, config).full
