"""Aggregate functions by name (Paimon's FieldAggregatorFactory identifiers)."""
from __future__ import annotations

from typing import Dict, Mapping, Type

from ..errors import PaimonConfigError
from ..options import IGNORE_RETRACT
from ..types import SqlType
from .base import Aggregator, GroupMasks, IgnoreRetract, Masks
from .collections import Collect, MergeMap, MergeMapWithKeyTime, NestedPartialUpdate, NestedUpdate
from .numeric import Count, Product, Sum
from .sketches import HllSketch, RoaringBitmap32, ThetaSketch
from .strings import ListAgg
from .values import (
    BoolAnd, BoolOr, FirstNonNullValue, FirstNotNullValue, FirstValue, LastNonNullValue, LastValue, Max, Min,
    PrimaryKeyValue,
)

AGGREGATORS: Dict[str, Type[Aggregator]] = {
    cls.name: cls
    for cls in (
        Sum, Count, Product, Max, Min, FirstValue, LastValue, FirstNonNullValue, FirstNotNullValue,
        LastNonNullValue, ListAgg, BoolAnd, BoolOr, Collect, MergeMap, NestedUpdate, NestedPartialUpdate,
        PrimaryKeyValue, MergeMapWithKeyTime, HllSketch, ThetaSketch, RoaringBitmap32,
    )
}

# Paimon functions we know but do not implement, with the reason.
UNSUPPORTED = {
    "rbm64": "Paimon stores Java's Roaring64Bitmap in its internal ART-tree serialization, which "
             "no Python library writes (pyroaring's BitMap64 reads and writes the portable format "
             "only); use rbm32 for 32-bit ids",
}


def check_function_name(name: str, field: str) -> None:
    """Raise PaimonConfigError for a function name Apache Paimon does not know."""
    if name not in AGGREGATORS and name not in UNSUPPORTED:
        raise PaimonConfigError(
            f"Unknown aggregate function '{name}' in 'fields.{field}.aggregate-function' (or "
            f"fields.default-aggregate-function). Expected one of: {', '.join(sorted(AGGREGATORS))}."
        )


def create_aggregator(name: str, field: str, sql_type: SqlType, options: Mapping[str, str]) -> Aggregator:
    """Build the aggregator of one field, type-checked, wrapped by ignore-retract when asked."""
    check_function_name(name, field)
    cls = AGGREGATORS.get(name)
    if cls is None:
        key = f"fields.{field}.aggregate-function"
        raise PaimonConfigError(
            f"Aggregate function '{name}' ('{key}') is not supported by dbt-paimon: {UNSUPPORTED[name]}."
        )
    aggregator = cls(field, sql_type, options)
    if IGNORE_RETRACT.get(options, field):
        aggregator = IgnoreRetract(aggregator)
    return aggregator


__all__ = ["AGGREGATORS", "Aggregator", "check_function_name", "GroupMasks", "IgnoreRetract", "Masks", "create_aggregator"]
