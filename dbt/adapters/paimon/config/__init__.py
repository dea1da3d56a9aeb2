"""Model config -> Paimon table definition (pure Python: no dbt, no Spark)."""

from dbt.adapters.paimon.config.model_config import (  # noqa: F401
    IMMUTABLE_OPTIONS,
    TableDefinition,
    table_definition,
)
