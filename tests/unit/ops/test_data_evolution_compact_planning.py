"""Planning the compaction of data-evolution tables (ops/data_evolution_compact.py,
plan_data_evolution_units) on file metadata only (no files, no Spark), following Java's
DataEvolutionCompactCoordinator: ranges merged where they overlap or touch, groups packed by
weight against target-file-size, a task kept from compaction.min.file-num files, BLOB files
left out. The compaction itself, against pypaimon 2.1's tables:
tests/integration/ops/test_data_evolution_compact.py."""
import dataclasses

import pytest

from dbt.adapters.paimon.format.splits import Split
from dbt.adapters.paimon.ops.append_compact import AppendCompactionConfig
from dbt.adapters.paimon.ops.data_evolution_compact import plan_data_evolution_units


@dataclasses.dataclass
class _File:
    file_name: str
    first_row_id: int
    row_count: int
    file_size: int = 1
    min_sequence_number: int = 1


def _plan(files, target=100, open_cost=1, min_files=1):
    split = Split(partition={}, partition_values=(), bucket=0, files=list(files),
                  snapshot_id=1, primary_key_table=False)
    config = AppendCompactionConfig(target_file_size=target, compaction_file_size=0,
                                    min_file_num=min_files, file_num_limit=100,
                                    delete_ratio_threshold=0.2, open_file_cost=open_cost,
                                    force_rewrite_all_files=False)
    return [[f.file_name for f in u.split.files] for u in plan_data_evolution_units([split],
                                                                                     config)]


def test_planning_follows_the_coordinator():
    a, a2 = _File("a", 0, 10), _File("a2", 0, 10, min_sequence_number=2)
    b, c = _File("b", 10, 5), _File("c", 20, 5)           # b touches a; c lies apart
    blob = _File("x.blob", 0, 10)
    assert _plan([c, b, a2, a, blob]) == [["a", "a2", "b"], ["c"]]
    # a task needs compaction.min.file-num files
    assert _plan([a, a2, b, c], min_files=3) == [["a", "a2", "b"]]
    # groups gathered until their weight passes the target; a heavier group alone
    heavy = [_File("h", 30, 5, file_size=500), _File("h2", 30, 5, file_size=500)]
    light = [_File(f"l{i}", 35 + i, 1, file_size=40) for i in range(4)]
    assert _plan([_File("g", 25, 5)] + heavy + light) == [
        ["h", "h2"], ["g"], ["l0", "l1", "l2"], ["l3"]]
    # files of one group must cover one range
    with pytest.raises(ValueError, match="without covering the same row-id range"):
        _plan([a, _File("half", 0, 5)])
