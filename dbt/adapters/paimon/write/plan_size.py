"""How many bytes a query reads, from Spark's optimized plan with its statistics.

Spark annotates every node of ``explain(mode="cost")``'s optimized logical plan with a
``sizeInBytes``. Two of its numbers are useless for choosing where a run is written:
- a scan of a Python data source (every Paimon table here) has no statistics: Spark says
  ``spark.sql.defaultSizeInBytes`` (8 EiB), and so does every node above it;
- without cost-based optimisation a join is the *product* of its inputs' byte sizes, so joining
  two 100 KiB tables "weighs" 10 GB.

So the estimate is Spark's, corrected where those two apply: a Paimon scan weighs its table's
data files (``table_bytes``, from the table's manifests: as Spark sizes a parquet relation by its
files), a join weighs the sum of its inputs, and every node above a corrected one weighs what
its inputs do (its own reduction, e.g. a projection's, is not known then: an upper bound). A
dbt model's join is nearly always a lookup of dimension rows, whose output is about its largest
input; a join that multiplies rows can exceed the estimate. Any other scan without statistics
(rows from a Python list, a source with no size) leaves the whole estimate unknown.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from dbt.adapters.paimon.datasource.registry import HIDDEN_DATABASE_SUFFIX, READ_PREFIX
from dbt.adapters.paimon.datasource.spark_env import explain_string

# (database, table) of a catalog table -> its Paimon data files' bytes, None if not Paimon
TableBytes = Callable[[str, str], Optional[int]]

_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "PiB": 1 << 50, "EiB": 1 << 60}
_SIZE = re.compile(r"Statistics\(sizeInBytes=([0-9.E+]+)\s*(B|KiB|MiB|GiB|TiB|PiB|EiB)")
# Spark's spark.sql.defaultSizeInBytes (Long.MaxValue, "8.0 EiB") is a relation without
# statistics: anything this large is unknown, not big
UNKNOWN_FROM = 1 << 62
# one tree line: "   :  +- Node ..." (3-character indent segments, then the connector)
_LINE = re.compile(r"^((?:[ :]  )*)([:+]- )?(\S.*)$")
# a V2 catalog table's scan: "RelationV2[id#1, v#2] spark_catalog.db.t, Statistics(...)"
_RELATION_V2 = re.compile(r"^RelationV2\[.*?\] ([^\s,\[]+)")
# joins that keep at most the left side's rows (Spark sizes them as their left input too)
_LEFT_ONLY_JOINS = ("LeftSemi", "LeftAnti", "ExistenceJoin")


@dataclass
class PlanNode:
    text: str
    spark_bytes: Optional[int]          # Spark's own figure, None when it is 8 EiB or missing
    children: List["PlanNode"] = field(default_factory=list)

    @property
    def name(self) -> str:
        return re.split(r"[\s\[,(]", self.text, maxsplit=1)[0]


@dataclass(frozen=True)
class Estimate:
    bytes: Optional[int]                # None: unknown
    paimon_tables: Tuple[str, ...] = ()  # Paimon tables sized from their metadata


def explain_cost(frame) -> str:
    """``frame``'s plans with statistics (Spark's ``explain(mode="cost")``)."""
    return explain_string(frame, "cost")


def optimized_plan(explained: str) -> Optional[PlanNode]:
    """The optimized logical plan's tree, parsed from ``explain(mode="cost")``'s text."""
    start = explained.find("== Optimized Logical Plan ==")
    if start < 0:
        return None
    body = explained[start:].split("\n", 1)[1] if "\n" in explained[start:] else ""
    end = body.find("\n== ")
    lines = [ln for ln in (body if end < 0 else body[:end]).splitlines() if ln.strip()]
    root: Optional[PlanNode] = None
    stack: List[Tuple[int, PlanNode]] = []
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            continue
        depth = len(match.group(1)) // 3 + (1 if match.group(2) else 0)
        node = PlanNode(match.group(3), _spark_bytes(match.group(3)))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        elif root is None:
            root = node
        else:
            # a second top-level tree (text Spark prints under the plan): not part of it
            break
        stack.append((depth, node))
    return root


def estimate(frame, table_bytes: Optional[TableBytes] = None) -> Estimate:
    """The bytes ``frame``'s query reads (see the module docstring), None when unknown."""
    return estimate_explained(explain_cost(frame), table_bytes)


def estimate_explained(explained: str, table_bytes: Optional[TableBytes] = None) -> Estimate:
    """``estimate`` from ``explain(mode="cost")``'s text."""
    root = optimized_plan(explained)
    if root is None:
        return Estimate(None)
    sized: Dict[str, int] = {}
    _, size = _size(root, table_bytes, sized)
    return Estimate(size, tuple(sorted(sized)))


def _size(node: PlanNode, table_bytes: Optional[TableBytes],
          sized: Dict[str, int]) -> Tuple[bool, Optional[int]]:
    """(whether Spark's own figure had to be corrected in this subtree, the node's size)."""
    if not node.children:
        if node.spark_bytes is not None:
            return False, node.spark_bytes
        return True, _scan_bytes(node, table_bytes, sized)
    results = [_size(child, table_bytes, sized) for child in node.children]
    sizes = [s for _, s in results]
    is_join = node.name == "Join"
    if not is_join and not any(c for c, _ in results) and node.spark_bytes is not None:
        return False, node.spark_bytes
    if any(s is None for s in sizes):
        return True, None
    if is_join and node.text.split(",")[0].split()[-1] in _LEFT_ONLY_JOINS:
        return True, sizes[0]
    return True, sum(sizes)


def _scan_bytes(node: PlanNode, table_bytes: Optional[TableBytes],
                sized: Dict[str, int]) -> Optional[int]:
    match = _RELATION_V2.match(node.text)
    if match is None or table_bytes is None:
        return None
    parts = match.group(1).replace("`", "").split(".")
    if len(parts) < 2:
        return None
    database, table = parts[-2], parts[-1]
    # a Paimon table read through the Python source: the hidden table its view reads
    if database.endswith(HIDDEN_DATABASE_SUFFIX) and table.startswith(READ_PREFIX):
        database, table = database[:-len(HIDDEN_DATABASE_SUFFIX)], table[len(READ_PREFIX):]
    name = f"{database}.{table}"
    if name not in sized:
        size = table_bytes(database, table)
        if size is None:
            return None
        sized[name] = size
    return sized[name]


def _spark_bytes(text: str) -> Optional[int]:
    match = _SIZE.search(text)
    if match is None:
        return None
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    return None if size >= UNKNOWN_FROM else size
