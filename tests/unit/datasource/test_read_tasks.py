"""The split size a Python data-source read's tasks are cut to (read_tasks.py): Spark's
FilePartition.maxSplitBytes rule on Paimon's source.split options."""

from types import SimpleNamespace

import pytest

from dbt.adapters.paimon.datasource.read_tasks import SplitSize, _pack

MB = 1024 * 1024


def files(*sizes):
    return [SimpleNamespace(file_size=size) for size in sizes]


def test_defaults_are_paimons():
    assert SplitSize.from_options({}) == SplitSize(target=128 * MB, open_cost=4 * MB)
    assert SplitSize.from_options({"source.split.target-size": "16 kb",
                                   "source.split.open-file-cost": "1 b"}) == SplitSize(16384, 1)


@pytest.mark.parametrize("value", ["lots", "0 b", "-3 mb"])
def test_a_bad_split_option_is_named(value):
    with pytest.raises(ValueError, match="table option 'source.split.target-size' must be a "
                                         f"positive memory size such as '128 mb', got '{value}'"):
        SplitSize.from_options({"source.split.target-size": value})


def test_the_split_size_spreads_a_read_over_the_task_slots():
    sizes = SplitSize(target=128 * MB, open_cost=4 * MB)
    # 400 mb over 2 slots: each slot would get 200 mb, more than the target
    assert sizes.for_read(files(200 * MB, 200 * MB), parallelism=2) == 128 * MB
    # 100 mb over 2 slots: 50 mb each
    assert sizes.for_read(files(60 * MB, 40 * MB), parallelism=2) == 50 * MB
    # tiny files count the open cost each, and no split is smaller than it
    assert sizes.for_read(files(10, 10, 10), parallelism=2) == 6 * MB
    assert sizes.for_read(files(10), parallelism=8) == 4 * MB


def test_packing_keeps_order_and_puts_a_heavy_unit_alone():
    a, b, c, d = files(3, 3, 9, 2)
    bins = _pack([[a], [b], [c], [d]], lambda unit: sum(f.file_size for f in unit), limit=6)
    assert bins == [[a, b], [c], [d]]
