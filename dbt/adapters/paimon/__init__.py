"""dbt-paimon: a dbt adapter that builds Apache Paimon tables on Spark.

dbt loads ``Plugin`` from this module. It is resolved lazily so that the engine-free parts of the
package (``runtime``, ``format``, ``datasource``) import without dbt: Spark workers import them.
"""


def __getattr__(name: str):
    if name == "Plugin":
        from dbt.adapters.paimon.plugin import Plugin

        return Plugin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
