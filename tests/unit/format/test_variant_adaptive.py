"""format/variant_adaptive.py: Paimon's 'adaptive' inference (VariantShreddingInferenceSession,
InferVariantShreddingSchema.inferAdaptive / finalizeAdaptiveSchema) over a data writer's files,
each case citing the Java rule it checks; a writer's rolled files carry it."""

import os
from decimal import Decimal as D

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pypaimon.data.generic_variant import GenericVariant

from dbt.adapters.paimon.catalog.warehouse import create_table
from dbt.adapters.paimon.format import variant_adaptive as va
from dbt.adapters.paimon.format import variant_inference as vi
from dbt.adapters.paimon.format.kv_files import write_kv_file
from dbt.adapters.paimon.runtime.types import VARIANT_ARROW
from paimon_format_helpers import records

Row, Field, Decimal = vi.Row, vi.Field, vi.Decimal


def table(values) -> pa.Table:
    return pa.table({"v": GenericVariant.to_arrow_array(
        [None if v is None else GenericVariant.from_python(v) for v in values])})


def row(**fields):
    return Row(tuple(Field(name, t, None) for name, t in sorted(fields.items())))


def schemas(session, values):
    """The schema the session gives the file of ``values``, its evidence kept (written)."""
    session.plan(table(values))
    session.written()
    return session.kept[1][0]


def session(**options):
    return va.Adaptive(["v"], {k: str(v) for k, v in options.items()})


def test_the_first_file_is_inferred_as_per_file():
    # VariantShreddingInferenceSession.inferSchema without committed evidence: inferInitial
    values = [{"a": i, "b": "x"} for i in range(20)] + [{"c": D("1.5")}] * 3
    s = session()
    assert s.plan(table(values)) == vi.infer(table(values), ["v"], {})
    s.written()
    assert s.kept[1] == [row(a="BIGINT", b="STRING", c=Decimal(18, 1))]
    # limitEvidence: the kept evidence is at most adaptive.maxInferBufferRow values strong
    small = session(**{va.ADAPTIVE_ROWS: 4})
    schemas(small, values)
    [evidence] = small.kept[0]
    assert evidence.count == 4
    assert {f.name: f.count for f in evidence.observed.fields} == \
        {"a": 4 * 20 / 23, "b": 4 * 20 / 23, "c": 4 * 3 / 23}


def test_later_files_sample_fewer_rows_and_weigh_earlier_files():
    # InferBufferRowCount: adaptive.maxInferBufferRow once the session has a prior;
    # combineEvidence: the scaled kept evidence plus the sample, scaled again
    s = session(**{va.ADAPTIVE_ROWS: 4})
    assert schemas(s, [{"a": i, "b": "x"} for i in range(10)]) == row(a="BIGINT", b="STRING")
    # b, shredded before, is retained though the sample lacks it (combined 2 of 4 values);
    # c lies past the sampled rows
    second = [{"a": i} for i in range(4)] + [{"a": 9, "c": True}] * 10
    assert schemas(s, second) == row(a="BIGINT", b="STRING")
    [evidence] = s.kept[0]
    assert evidence.count == 4 and {f.name: f.count for f in evidence.observed.fields} == \
        {"a": 4, "b": 2}
    # per file, the same file would not shred b
    assert vi.infer_schemas([table(second).column("v").combine_chunks()], {}) == \
        [row(a="BIGINT", c="BOOLEAN")]


def test_fields_shredded_before_are_retained_down_to_the_retention_ratio():
    # finalizeAdaptiveSchema: threshold retentionRatio for a field selected before,
    # minFieldCardinalityRatio (admission) for a new one
    s = session()
    first = [{"a": 1, "r": 1} if i < 10 else {"a": 1} for i in range(100)]
    assert schemas(s, first) == row(a="BIGINT", r="BIGINT")
    second = [{"a": 1, "r": 1} if i < 6 else {"a": 1, "n": 1} if i < 21 else {"a": 1}
              for i in range(100)]
    # r: 16 of 200 values (0.08 >= 0.05) kept; n: 15 of 200 (0.075 < 0.1) not admitted
    assert schemas(s, second) == row(a="BIGINT", r="BIGINT")


def test_a_field_type_follows_the_sample():
    s = session()
    assert schemas(s, [{"a": 1}] * 5) == row(a="BIGINT")
    # selectScalarType: the type before merged with the sample's when they merge, unwidened:
    # BIGINT and DECIMAL(2, 1) -> DECIMAL(20, 1) (mergeDecimalWithLong)
    assert schemas(s, [{"a": D("1.5")}] * 5) == row(a=Decimal(20, 1))
    # compatibleTypeFamilies: a string is no number: the sample's type replaces it
    assert schemas(s, [{"a": "x"}] * 5) == row(a="STRING")
    # another family (an object): the sample's object
    assert schemas(s, [{"a": {"b": 1}}] * 5) == row(a=row(b="BIGINT"))


def test_fields_are_taken_most_frequent_first_while_the_width_lasts():
    # candidates sorted by ratio (descending), retained before admitted, then by name;
    # selected fields laid out by name
    s = session(**{vi.MAX_WIDTH: 100})
    assert schemas(s, [{"z": 1}] * 10) == row(z="BIGINT")
    values = [{"a": 1, "m": 1, "z": 1}] * 5 + [{"a": 1, "z": 1}] * 5
    # budget 5: the column 1; z (ratio 1, retained) 2; a (1, admitted) 2; m (0.5) not reached
    narrow = session(**{vi.MAX_WIDTH: 5})
    schemas(narrow, [{"z": 1}] * 10)
    assert schemas(narrow, values) == row(a="BIGINT", z="BIGINT")
    assert schemas(s, values) == row(a="BIGINT", m="BIGINT", z="BIGINT")


def test_evidence_is_kept_only_once_its_file_is_written():
    # commitPendingInference after the file closes; a failed file leaves the prior as it was
    s = session(**{va.ADAPTIVE_ROWS: 2})
    s.plan(table([{"a": 1}] * 3))
    assert s.kept is None
    s.plan(table([{"b": 1}] * 3))  # the first file failed: this one is a first file too
    s.written()
    assert s.kept[1] == [row(b="BIGINT")]


def test_ratios_paimon_refuses_are_refused():
    with pytest.raises(ValueError, match="retentionRatio"):
        session(**{va.RETENTION: 0.5})  # above minFieldCardinalityRatio


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", VARIANT_ARROW)])


def test_a_writers_rolled_files_are_shredded_adaptively(warehouse):
    options = {"bucket": "1", vi.INFER: "true", vi.MODE: "adaptive",
               "target-file-size": "8 kb", va.ADAPTIVE_ROWS: "16"}
    paimon = create_table(warehouse, "db", "adaptive", SCHEMA, primary_keys=["id"],
                          options=options)
    values = [{"a": i, "b": "x" * 20} if i < 400 else {"a": i} for i in range(1600)]
    variants = GenericVariant.to_arrow_array([GenericVariant.from_python(v) for v in values])
    write_kv_file(paimon, (), 0, records(pa.table(
        {"id": pa.array(range(1600), pa.int64()), "v": variants}, schema=SCHEMA)))
    files = sorted((os.path.getmtime(p), p) for p in (
        os.path.join(root, name) for root, _, names in os.walk(warehouse) for name in names
        if name.startswith("data-")))
    assert len(files) > 2
    fields = []
    for _, path in files:
        typed = pq.read_schema(path).field("v").type.field("typed_value").type
        first_id = pq.read_table(path, columns=["_KEY_id"]).column(0)[0].as_py()
        fields.append((first_id, [typed.field(i).name for i in range(typed.num_fields)]))
    fields.sort()
    assert all(names == ["a", "b"] for first, names in fields if first < 400), fields
    # past b's last row each file samples 16 rows without b: the kept evidence halves b's
    # ratio file by file (0.5, 0.25, 0.125, 0.0625: retained), until it falls below the
    # retention ratio (0.03 < 0.05); per file, none of these files would shred b
    later = [names for first, names in fields if first >= 400]
    assert len(later) >= 5 and later == [["a", "b"]] * 4 + [["a"]] * (len(later) - 4), fields
