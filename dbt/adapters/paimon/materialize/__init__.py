"""Building models into Paimon tables (Spark + format + runtime; errors are raised as Paimon*Error
and turned into dbt errors by the adapter)."""
