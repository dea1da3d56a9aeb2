"""Spark's view of Paimon tables: the ``paimon`` Python data source and the table registry.

Imports Spark and the engine-free ``format``/``runtime`` layers, never dbt: Spark workers import it.
"""
