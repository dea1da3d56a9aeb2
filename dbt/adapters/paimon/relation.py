from dataclasses import dataclass
from typing import Optional

from dbt.adapters.spark.relation import SparkRelation


@dataclass(frozen=True, eq=False, repr=False)
class PaimonRelation(SparkRelation):
    # True for a Paimon table (its Spark provider is paimon.<db>.<table>).
    is_paimon: Optional[bool] = None
