"""Paimon's 'adaptive' inference of a VARIANT shredding schema
(`variant.shredding.inferenceMode` = 'adaptive': ``VariantShreddingInferenceSession``,
``InferVariantShreddingSchema.inferAdaptive``), for the files one data writer writes.

A data writer's first file is inferred as in 'per-file' mode (format/variant_inference.py)
from its first `variant.shredding.maxInferBufferRow` rows. Each later file samples only its
first `variant.shredding.adaptive.maxInferBufferRow` rows (256) and weighs them with what the
writer's earlier files saw:

- evidence (each column's value count and merged schema, fields counted) is kept at most
  `adaptive.maxInferBufferRow` values strong: stronger evidence has its counts scaled down;
  a file's sample is merged into the kept evidence, which is kept once the file is written;
- a field is admitted when seen in at least `minFieldCardinalityRatio` of the values, and a
  field the previous file shredded is retained down to `adaptive.retentionRatio` (0.05);
  fields are taken most frequent first (retained before admitted, then by name) while
  `maxSchemaWidth` lasts, and laid out by name;
- a field's type follows the file's sample: a type of another family than the one shredded
  before (an object, an array, a scalar) replaces it; a scalar merges with the one shredded
  before when they merge (decimals, integers), else the sample's type is taken, widened as
  in 'per-file' mode (integers BIGINT, decimals DECIMAL(18 or 38, s)).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa

from dbt.adapters.paimon.format import variant_inference as vi
from dbt.adapters.paimon.format.variant_inference import (VARIANT, Array, Decimal, Evidence,
                                                          Field, Row, Schema)

ADAPTIVE_ROWS = "variant.shredding.adaptive.maxInferBufferRow"
RETENTION = "variant.shredding.adaptive.retentionRatio"
DEFAULTS = {ADAPTIVE_ROWS: 256, RETENTION: 0.05}


class Adaptive:
    """One data writer's adaptive inference: the evidence and shredded schemas of its last
    written file (none before its first)."""

    def __init__(self, names: Sequence[str], options: Mapping[str, str]):
        self.names, self.options = list(names), options
        self.sample_size = vi.setting(options, ADAPTIVE_ROWS, DEFAULTS[ADAPTIVE_ROWS])
        self.admission = vi.setting(options, vi.MIN_RATIO, vi.DEFAULTS[vi.MIN_RATIO])
        self.retention = vi.setting(options, RETENTION, DEFAULTS[RETENTION])
        if self.sample_size <= 0 or not 0 <= self.retention <= self.admission <= 1:
            raise ValueError(
                f"'{ADAPTIVE_ROWS}' must be positive and '{RETENTION}' between 0 and "
                f"'{vi.MIN_RATIO}', which is at most 1 (got {self.sample_size}, "
                f"{self.retention}, {self.admission}), as Paimon requires")
        self.kept: Optional[Tuple[List[Evidence], List[Schema]]] = None
        self.pending: Optional[Tuple[List[Evidence], List[Schema]]] = None

    def plan(self, data: pa.Table) -> Dict[str, Tuple[list, pa.StructType]]:
        """The shredding of the file of ``data``'s rows."""
        names = [n for n in self.names if n in data.column_names]
        if data.num_rows == 0 or names != self.names:
            # a write of some columns only (data evolution): each file on its own
            return vi.infer(data, names, self.options)
        rows = self.sample_size if self.kept else vi.sample_rows(self.options)
        evidence = vi.analyze(vi.sampled(data, names, rows), self.options)
        if self.kept is None:
            schemas = vi.finalize_all(evidence, self.options)
            kept = [_scaled(e, self.sample_size) for e in evidence]
        else:
            schemas, kept = self._adapted(evidence)
        self.pending = (kept, schemas)
        return vi.shredding_plan(names, schemas)

    def written(self) -> None:
        """The file of the last plan is written: its evidence and schemas are kept."""
        if self.pending is not None:
            self.kept, self.pending = self.pending, None

    def _adapted(self, current: List[Evidence]) -> Tuple[List[Schema], List[Evidence]]:
        previous, selected = self.kept
        budget = vi.Budget(vi.setting(self.options, vi.MAX_WIDTH, vi.DEFAULTS[vi.MAX_WIDTH]))
        combined = [_combined(p, c, self.sample_size) for p, c in zip(previous, current)]
        schemas = [finalize_adaptive(both.observed, now.observed, before, both.count,
                                     self.admission, self.retention, budget)
                   for both, now, before in zip(combined, current, selected)]
        return schemas, combined


# ------------------------------------------------------------------------- evidence

def _scaled(evidence: Evidence, most: float) -> Evidence:
    """``evidence`` at most ``most`` values strong, its field counts scaled alike."""
    if evidence.count == 0 or evidence.count <= most:
        return evidence
    return Evidence(most, _scale_counts(evidence.observed, most / evidence.count))


def _scale_counts(schema: Schema, scale: float) -> Schema:
    if isinstance(schema, Row):
        return Row(tuple(Field(f.name, _scale_counts(f.type, scale), _count(f) * scale)
                         for f in schema.fields))
    if isinstance(schema, Array):
        return Array(_scale_counts(schema.element, scale))
    return schema


def _combined(previous: Evidence, current: Evidence, most: float) -> Evidence:
    """The kept evidence with a file's sample merged in (``combineEvidence``)."""
    if current.count == 0:
        return previous
    bounded = _scaled(previous, most)
    return _scaled(Evidence(current.count + bounded.count,
                            vi.merge(bounded.observed, current.observed)), most)


def _count(field: Field) -> float:
    if field.count is None:
        # Paimon's writer fails here too (getFieldCount: "missing count in description")
        raise ValueError(f"Variant field '{field.name}' has no count: Paimon's adaptive "
                         f"inference cannot weigh it (set '{vi.MODE}' to 'per-file')")
    return field.count


# ------------------------------------------------------------------------- finalizing

def finalize_adaptive(combined: Schema, current: Schema, before: Schema, count: float,
                      admission: float, retention: float, budget) -> Schema:
    """A column's (or field's) shredded schema from the combined evidence, the file's sample
    and what the previous file shredded (``finalizeAdaptiveSchema``)."""
    budget.remaining -= 1
    if budget.remaining <= 0:
        return VARIANT
    if current is not None and before is not None and not _same_family(before, current):
        combined, before = current, None
    if combined is None or combined == VARIANT:
        if current is not None and current != VARIANT:
            combined = current
        elif before is not None:
            combined = before
        else:
            return VARIANT
    if isinstance(combined, Row):
        return _adaptive_row(combined, current, before, count, admission, retention, budget)
    if isinstance(combined, Array):
        return Array(finalize_adaptive(
            combined.element, current.element if isinstance(current, Array) else None,
            before.element if isinstance(before, Array) else None, count, admission,
            retention, budget))
    budget.remaining -= 1
    return _scalar(combined, current, before)


def _adaptive_row(combined: Row, current: Schema, before: Schema, count: float,
                  admission: float, retention: float, budget) -> Schema:
    now = current if isinstance(current, Row) else None
    then = before if isinstance(before, Row) else None

    def ratio(field):
        return 0 if count == 0 else _count(field) / count

    candidates = [f for f in combined.fields
                  if ratio(f) >= (retention if _field(then, f.name) else admission)]
    candidates.sort(key=lambda f: (-ratio(f), _field(then, f.name) is None,
                                   vi.java_order(f.name)))
    selected = []
    for field in candidates:
        if budget.remaining <= 0:
            break
        now_field, then_field = _field(now, field.name), _field(then, field.name)
        selected.append(Field(field.name, finalize_adaptive(
            field.type, now_field.type if now_field else None,
            then_field.type if then_field else None, count, admission, retention, budget),
            None))
    selected.sort(key=lambda f: vi.java_order(f.name))
    return Row(tuple(selected)) if selected else VARIANT


def _field(row: Optional[Row], name: str) -> Optional[Field]:
    if row is None:
        return None
    return next((f for f in row.fields if f.name == name), None)


def _same_family(before: Schema, current: Schema) -> bool:
    """Both objects, both arrays, or scalars that merge (``compatibleTypeFamilies``)."""
    if isinstance(before, Row) or isinstance(current, Row):
        return isinstance(before, Row) and isinstance(current, Row)
    if isinstance(before, Array) or isinstance(current, Array):
        return isinstance(before, Array) and isinstance(current, Array)
    return _merge_scalars(before, current) != VARIANT


def _merge_scalars(a: Schema, b: Schema) -> Schema:
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return vi.merge_decimals(a, b)
    if isinstance(a, Decimal) and b == "BIGINT":
        return vi.merge_decimal_with_long(a)
    if a == "BIGINT" and isinstance(b, Decimal):
        return vi.merge_decimal_with_long(b)
    return a if a == b else VARIANT


def _scalar(combined: Schema, current: Schema, before: Schema) -> Schema:
    """``selectScalarType``: the sample's type, merged with the one shredded before when it
    merges; the one before, or the evidence's, when the sample has none."""
    if current is None:
        return combined if before is None else before
    if before is None:
        return _widened(current)
    merged = _merge_scalars(before, current)
    return _widened(current) if merged == VARIANT else merged


def _widened(schema: Schema) -> Schema:
    if isinstance(schema, Decimal):
        if schema.precision <= 18 and schema.scale == 0:
            return "BIGINT"
        return Decimal(18 if schema.precision <= 18 else vi.MAX_PRECISION, schema.scale)
    return schema
