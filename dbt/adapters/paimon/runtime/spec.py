"""``MergeSpec``: a table's merge configuration, parsed and validated once.

All configuration checks run in :meth:`MergeSpec.from_table_options` (one function per rule
family: spec_validation.py); the kernel trusts the spec. Errors are :class:`PaimonConfigError`
naming the option and the fix.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import options as O
from .aggregators import Aggregator
from .spec_validation import (SequenceGroup, parse_field_options, parse_primary_keys,
                              parse_schema, validate_aggregation, validate_changelog_producer,
                              validate_engine_options, validate_partial_update,
                              validate_primary_key_types, validate_sequence_field)
from .types import SqlType

__all__ = ["MergeSpec", "SequenceGroup"]


@dataclass(frozen=True)
class MergeSpec:
    columns: Tuple[Tuple[str, SqlType], ...]
    primary_keys: Tuple[str, ...]
    engine: str = "deduplicate"
    ignore_delete: bool = False
    ignore_update_before: bool = False
    sequence_fields: Tuple[str, ...] = ()
    sequence_descending: bool = False
    remove_record_on_delete: bool = False  # partial-update.* or aggregation.* by engine
    sequence_groups: Tuple[SequenceGroup, ...] = ()
    aggregators: Tuple[Tuple[str, Aggregator], ...] = field(default=(), compare=False)
    changelog_producer: str = "none"
    changelog_row_deduplicate: bool = False
    changelog_ignore_fields: Tuple[str, ...] = ()

    # -- derived views ----------------------------------------------------------------------
    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(n for n, _ in self.columns)

    @property
    def value_fields(self) -> Tuple[str, ...]:
        return tuple(n for n in self.names if n not in self.primary_keys)

    @property
    def types(self) -> Dict[str, SqlType]:
        return dict(self.columns)

    @property
    def aggregator_of(self) -> Dict[str, Aggregator]:
        return dict(self.aggregators)

    @property
    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(n, t.arrow, nullable=t.nullable) for n, t in self.columns])

    # -- parsing ----------------------------------------------------------------------------
    @classmethod
    def from_table_options(
        cls,
        schema: Union[Sequence[Tuple[str, str]], Mapping[str, str]],
        primary_keys: Union[str, Sequence[str]],
        options: Optional[Mapping[str, str]] = None,
    ) -> "MergeSpec":
        columns = parse_schema(schema)
        names = [n for n, _ in columns]
        types = dict(columns)
        pks = parse_primary_keys(primary_keys, names)
        validate_primary_key_types(pks, types)
        opts = {str(k): ("" if v is None else str(v)) for k, v in (options or {}).items()}

        engine = O.MERGE_ENGINE.get(opts)
        ignore_delete = O.IGNORE_DELETE.get(opts)
        field_options = parse_field_options(opts, names)
        sequence_fields = validate_sequence_field(opts, names, types, engine)
        descending = O.SEQUENCE_FIELD_SORT_ORDER.get(opts) == "descending"
        validate_engine_options(engine, opts, field_options, pks)  # options of another engine
        changelog_producer, ignore_fields = validate_changelog_producer(opts, names, engine)

        remove_on_delete = False
        groups: Tuple[SequenceGroup, ...] = ()
        aggregators: Dict[str, Aggregator] = {}
        if engine == "aggregation":
            remove_on_delete, aggregators = validate_aggregation(opts, names, types, pks,
                                                                 sequence_fields)
        elif engine == "partial-update":
            remove_on_delete, groups, aggregators = validate_partial_update(
                opts, names, types, pks, field_options, ignore_delete)

        return cls(
            columns=tuple(columns),
            primary_keys=tuple(pks),
            engine=engine,
            ignore_delete=ignore_delete,
            ignore_update_before=O.IGNORE_UPDATE_BEFORE.get(opts),
            sequence_fields=tuple(sequence_fields),
            sequence_descending=descending,
            remove_record_on_delete=remove_on_delete,
            sequence_groups=groups,
            aggregators=tuple(aggregators.items()),
            changelog_producer=changelog_producer,
            changelog_row_deduplicate=O.CHANGELOG_ROW_DEDUPLICATE.get(opts),
            changelog_ignore_fields=tuple(ignore_fields),
        )
