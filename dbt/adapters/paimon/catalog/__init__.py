"""The Paimon catalogs: which databases and tables a warehouse holds, where their files are,
and opening them as pypaimon tables.

- ``config``: the profile's ``catalog:`` checked (pure Python: read with the profile, before
  anything connects);
- ``catalogs``: the interface the four catalogs sit behind (filesystem, JDBC, Hive, REST):
  which one the options name, opening it, and the catalog environment of JDBC and Hive tables
  (snapshots read from files, the lock a commit takes);
- ``jdbc_catalog``; ``hive_catalog`` with ``hive_metastore`` (the Thrift connection and lock),
  ``hive_entries`` (the entries it writes) and ``hive_types`` (its column types);
  ``rest_catalog``: one module per catalog;
- ``warehouse``: the catalog of a warehouse opened, and its tables opened, created, dropped and
  renamed through it;
- ``listing``: the databases, tables and latest schema and snapshot ids the registry reads on
  every dbt command (a local filesystem warehouse's folders, without importing pypaimon).

A table's files, snapshots and commits are the format package's (the layer below); nothing
here imports dbt or Spark.
"""
