from dataclasses import dataclass
from typing import Optional

from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.spark.relation import SparkRelation


@dataclass(frozen=True, eq=False, repr=False)
class PaimonRelation(SparkRelation):
    # True for a Paimon table (its Spark provider is paimon.<db>.<table>).
    is_paimon: Optional[bool] = None


def paimon_names(relation: BaseRelation) -> BaseRelation:
    """The relation with the names its Paimon table has: lower case, as Spark's catalog and
    Paimon's case-insensitive catalogs keep them (a model `Orders` is the table `orders`; SQL
    that says `Orders` finds it, Spark's identifiers being case-insensitive)."""
    return relation.incorporate(path={
        "schema": relation.schema.lower() if relation.schema else relation.schema,
        "identifier": relation.identifier.lower() if relation.identifier else relation.identifier,
    })
