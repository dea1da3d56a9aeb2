"""Aggregate functions by name (Paimon's FieldAggregatorFactory identifiers)."""
from __future__ import annotations

from typing import Dict, Mapping, Type

from ..errors import PaimonConfigError
from ..options import IGNORE_RETRACT
from ..types import SqlType
from .base import Aggregator, GroupMasks, IgnoreRetract, Masks
from .collections import Collect, MergeMap, NestedPartialUpdate, NestedUpdate
from .numeric import Count, Product, Sum
from .strings import ListAgg
from .values import (
    BoolAnd, BoolOr, FirstNonNullValue, FirstNotNullValue, FirstValue, LastNonNullValue, LastValue, Max, Min,
)

AGGREGATORS: Dict[str, Type[Aggregator]] = {
    cls.name: cls
    for cls in (
        Sum, Count, Product, Max, Min, FirstValue, LastValue, FirstNonNullValue, FirstNotNullValue,
        LastNonNullValue, ListAgg, BoolAnd, BoolOr, Collect, MergeMap, NestedUpdate, NestedPartialUpdate,
    )
}

# Paimon functions we know but do not implement (sketches and bitmaps need their binary formats).
UNSUPPORTED = ("hll_sketch", "theta_sketch", "rbm32", "rbm64", "merge_map_with_keytime", "primary-key")


def create_aggregator(name: str, field: str, sql_type: SqlType, options: Mapping[str, str]) -> Aggregator:
    """Build the aggregator of one field, type-checked, wrapped by ignore-retract when asked."""
    key = f"fields.{field}.aggregate-function"
    cls = AGGREGATORS.get(name)
    if cls is None:
        if name in UNSUPPORTED:
            raise PaimonConfigError(f"Aggregate function '{name}' ('{key}') is not supported by dbt-paimon.")
        raise PaimonConfigError(
            f"Unknown aggregate function '{name}' in '{key}' (or fields.default-aggregate-function). "
            f"Expected one of: {', '.join(sorted(AGGREGATORS))}."
        )
    aggregator = cls(field, sql_type, options)
    if IGNORE_RETRACT.get(options, field):
        aggregator = IgnoreRetract(aggregator)
    return aggregator


__all__ = ["AGGREGATORS", "Aggregator", "GroupMasks", "IgnoreRetract", "Masks", "create_aggregator"]
