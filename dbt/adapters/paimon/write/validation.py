"""Bad input, found vectorized in the tasks: NULL keys, unknown row kinds, values that do not fit.

Each check is one Arrow kernel over a batch. Only when a check fails do we look for the offending
rows (the first few, for the error message): a failed cast is bisected by chunks so that a single
bad value in a million rows costs a few hundred small casts, not a million.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dbt.adapters.paimon.config.blob_vector import wrong_vector_lengths
from dbt.adapters.paimon.runtime import PaimonDataError
from dbt.adapters.paimon.runtime.vectors import castable_lists
from dbt.adapters.paimon.write.plan import ROW_KIND, SEQ, WritePlan

ROW_KINDS = ("+I", "-U", "+U", "-D")
_ROW_KIND_SET = pa.array(ROW_KINDS, pa.string())
SAMPLE_SIZE = 5
_CHUNK = 4096
_SUB_CHUNK = 64


@dataclass
class _Problem:
    description: str
    count: int = 0
    samples: List[dict] = field(default_factory=list)
    values: List[object] = field(default_factory=list)


class Problems:
    """Offending rows of one task, by (check, column): counts and up to 5 sample rows each."""

    def __init__(self, plan: WritePlan):
        self.plan = plan
        self._problems: Dict[Tuple[str, str], _Problem] = {}

    def __bool__(self) -> bool:
        return bool(self._problems)

    def add(self, check: str, column: str, description: str, batch: pa.Table,
            rows: np.ndarray, values: Optional[list] = None) -> None:
        problem = self._problems.setdefault((check, column), _Problem(description))
        problem.count += len(rows)
        room = SAMPLE_SIZE - len(problem.samples)
        if room > 0 and len(rows):
            problem.samples.extend(sample_rows(self.plan, batch, rows[:room]))
        for value in values or []:
            if len(problem.values) < SAMPLE_SIZE and value not in problem.values:
                problem.values.append(value)

    def error(self) -> PaimonDataError:
        lines = [f"Model '{self.plan.model_name}' produced rows that cannot be written to Paimon "
                 f"table {self.plan.table_name}; nothing was written:"]
        for (_, column), problem in self._problems.items():
            line = f"- column '{column}': {problem.description} ({problem.count} row(s)"
            line += ")" if not problem.values else f"; values {problem.values})"
            lines.append(line)
            lines.append(f"  sample rows: {problem.samples}")
        return PaimonDataError("\n".join(lines))


def sample_rows(plan: WritePlan, batch: pa.Table, rows) -> List[dict]:
    """Rows as the model returned them: table columns and the row kind under its own name."""
    picked = batch.take(pa.array(np.asarray(rows, dtype=np.int64)))
    result = []
    for row in picked.to_pylist():
        row.pop(SEQ, None)
        for internal in [k for k in row if k.startswith("_") and k != ROW_KIND]:
            row.pop(internal)
        if ROW_KIND in row:
            kind = row.pop(ROW_KIND)
            if plan.row_kind_label != ROW_KIND or kind != "+I":
                row[plan.row_kind_label] = kind
        result.append(row)
    return result


def _cast(array, target: pa.DataType, safe: bool = True):
    if array.type == target:
        return array
    if pa.types.is_fixed_size_list(target):
        array = castable_lists(array)
    if pa.types.is_timestamp(array.type) and pa.types.is_timestamp(target):
        # Spark hands microseconds; a TIMESTAMP(0..3) column truncates them as Paimon's casts do
        return pc.cast(array, target, safe=False)
    return pc.cast(array, target, safe=safe)


def cast_column(array, target: pa.DataType):
    """Exact cast for storage; raises ArrowInvalid / ArrowNotImplementedError when it cannot."""
    return _cast(array, target)


def _fails(array, target) -> Optional[str]:
    try:
        _cast(array, target)
        return None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError) as exc:
        return str(exc)


def failing_rows(array: pa.Array, target: pa.DataType) -> np.ndarray:
    """Indices of the values of ``array`` that do not cast to ``target`` (bisected by chunks)."""
    bad: List[int] = []
    n = len(array)
    for start in range(0, n, _CHUNK):
        if _fails(array.slice(start, _CHUNK), target) is None:
            continue
        for sub in range(start, min(n, start + _CHUNK), _SUB_CHUNK):
            if _fails(array.slice(sub, _SUB_CHUNK), target) is None:
                continue
            bad.extend(i for i in range(sub, min(n, sub + _SUB_CHUNK))
                       if _fails(array.slice(i, 1), target) is not None)
    return np.asarray(bad, dtype=np.int64)


def _true_rows(mask) -> np.ndarray:
    return np.flatnonzero(np.asarray(pc.fill_null(mask, True).to_numpy(zero_copy_only=False)))


def conform_and_check(plan: WritePlan, batch: pa.Table, problems: Problems,
                      not_null: Tuple[str, ...]) -> pa.Table:
    """The batch with every table column cast exactly to the table's type, ``_row_kind`` and
    ``_seq``; offending rows are recorded in ``problems`` (their columns come back as NULLs)."""
    n = batch.num_rows
    arrays, fields, unfit = [], [], set()
    for target in plan.arrow_schema:
        column = batch.column(target.name)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        vector = pa.types.is_fixed_size_list(target.type)
        wrong, found = [], []
        if vector and (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
            wrong, found = wrong_vector_lengths(column, target.type.list_size)
        reason = None if len(wrong) else _fails(column, target.type)
        if len(wrong):
            problems.add("type", target.name,
                         f"vector(s) that are not {target.type.list_size} long (the VECTOR "
                         f"column's 'field.{target.name}.vector-dim'); lengths found: {found}",
                         batch, wrong, column.take(pa.array(wrong[:SAMPLE_SIZE])).to_pylist())
            cast = pa.nulls(n, target.type)
            unfit.add(target.name)
        elif reason is None:
            cast = _cast(column, target.type)
        else:
            rows = failing_rows(column, target.type)
            values = column.take(pa.array(rows[:SAMPLE_SIZE])).to_pylist() if len(rows) else []
            problems.add("type", target.name,
                         f"value(s) that do not fit the column type {target.type} "
                         f"({reason.splitlines()[0]})", batch, rows, values)
            cast = pa.nulls(n, target.type)
            unfit.add(target.name)
        arrays.append(cast)
        fields.append(target)
    for name in not_null:
        column = arrays[plan.arrow_schema.get_field_index(name)]
        if column.null_count and name not in unfit:
            role = "primary key" if name in plan.primary_keys else "NOT NULL column"
            problems.add("null", name, f"NULL in a {role}; Paimon {role}s are NOT NULL",
                         batch, _true_rows(pc.is_null(column)))
    if ROW_KIND in batch.column_names:
        kinds = batch.column(ROW_KIND)
        if isinstance(kinds, pa.ChunkedArray):
            kinds = kinds.combine_chunks()
        kinds = kinds.cast(pa.string())
    else:  # the model has no row_kind_column: every row is an insert
        kinds = pa.repeat(pa.scalar("+I", pa.string()), n)
    unknown = pc.invert(pc.fill_null(pc.is_in(kinds, value_set=_ROW_KIND_SET), False))
    if pc.any(unknown).as_py():
        rows = _true_rows(unknown)
        problems.add("row_kind", plan.row_kind_label,
                     f"unknown row kind(s); expected one of {list(ROW_KINDS)}", batch, rows,
                     kinds.take(pa.array(rows)).unique().to_pylist())
    arrays += [kinds, batch.column(SEQ).cast(pa.int64())]
    fields += [pa.field(ROW_KIND, pa.string(), nullable=False),
               pa.field(SEQ, pa.int64(), nullable=False)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
