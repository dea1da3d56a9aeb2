"""The four merge engines behind one interface, picked by ``merge-engine`` (one switch)."""
from __future__ import annotations

from typing import Callable, Dict

from . import aggregation, deduplicate, first_row, partial_update

ENGINES: Dict[str, Callable] = {
    "deduplicate": deduplicate.merge,
    "first-row": first_row.merge,
    "aggregation": aggregation.merge,
    "partial-update": partial_update.merge,
}


def engine_for(spec) -> Callable:
    return ENGINES[spec.engine]
