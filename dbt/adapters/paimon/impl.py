"""The paimon adapter: dbt-spark's adapter on an embedded session, plus Paimon tables as relations.

Glue only: where Spark runs is in ``environments``, Spark's view of Paimon tables in ``datasource``,
Paimon's format in ``format``, merging in ``runtime``. Methods marked ``@available`` are what the
macros call.
"""

from __future__ import annotations

import contextlib
import functools
import re

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Type

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.impl import ConstraintSupport
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon import environments, error_messages
from dbt.adapters.paimon.branch_config import table_branches
from dbt.adapters.paimon.catalog_integrations import CATALOG_INTEGRATIONS, catalog_routes
from dbt.adapters.paimon.connections import PaimonConnectionManager
from dbt.adapters.paimon.python_models import SessionPythonJobHelper
from dbt.adapters.paimon.relation import PaimonRelation

logger = AdapterLogger("Paimon")
# a Paimon table's catalog entry is a view carrying the table's schema id (registry.py)
PAIMON_ENTRY_MARK = "paimon.schema-id="


def escape_sql_string(value: str) -> str:
    """A value inside a single-quoted Spark SQL literal."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


@dataclass
class PaimonConfig(SparkConfig):
    primary_key: Optional[Any] = None
    merge_engine: Optional[str] = None
    sequence_field: Optional[Any] = None
    sequence_groups: Optional[Dict[str, Any]] = None
    aggregations: Optional[Dict[str, str]] = None
    default_aggregate_function: Optional[str] = None
    bucket_key: Optional[Any] = None
    ignore_delete: Optional[bool] = None
    changelog_producer: Optional[str] = None
    row_tracking: Optional[bool] = None
    deletion_vectors: Optional[bool] = None
    row_kind_column: Optional[str] = None
    table_options: Optional[Dict[str, Any]] = None
    target: Optional[str] = None
    # which executor writes a primary-key run (docs/write_paths.md)
    write_path: Optional[str] = None
    in_process_max_bytes: Optional[int] = None
    # the branch of the table this model, seed or snapshot writes, for every node that
    # writes or reads it; 'main' for main (branch_config.py)
    paimon_branch: Optional[str] = None
    # the catalogs.yml catalog of the table this node writes or reads (catalog_integrations.py)
    catalog_name: Optional[str] = None
    # an incremental merge deleting the stored rows the run does not match (standard_writes.py)
    not_matched_by_source_action: Optional[str] = None
    not_matched_by_source_condition: Optional[str] = None
    # dbt-databricks' merge clauses: which run rows a merge writes (standard_writes.py)
    matched_condition: Optional[str] = None
    not_matched_condition: Optional[str] = None
    skip_matched_step: Optional[bool] = None
    skip_not_matched_step: Optional[bool] = None
    # materialized='data_evolution_update' (write/column_update.py): the key matching the
    # model's rows to the target's rows ('_ROW_ID' or a unique column), the columns it owns
    update_key: Optional[str] = None
    update_columns: Optional[Any] = None


# the commands whose first statement needs Spark: `dbt parse`, `ls`, `debug` and the like never
# start it (compile and show fill dbt's relation cache first), nor do most run-operations (the
# table operations act on files: _paimon_operation), which start it at a first statement if any
SPARK_COMMANDS = frozenset({"build", "run", "seed", "snapshot", "test", "show", "compile",
                            "clone", "retry", "generate", "freshness"})


def _start_spark_early(credentials) -> None:
    """Start the session-mode Spark while dbt parses the project (environments/early_start.py)."""
    from dbt.flags import get_flags

    from dbt.adapters.paimon.environments import early_start
    from dbt.adapters.paimon.environments.embedded import EmbeddedEnvironment

    if getattr(get_flags(), "WHICH", None) not in SPARK_COMMANDS or credentials.is_connect:
        return
    environment = environments.create(credentials)
    if isinstance(environment, EmbeddedEnvironment):
        early_start.start(environment)


class PaimonAdapter(SparkAdapter):
    ConnectionManager = PaimonConnectionManager  # type: ignore[assignment]
    Relation = PaimonRelation  # type: ignore[assignment]
    AdapterSpecificConfigs = PaimonConfig  # type: ignore[assignment]
    # Paimon tables enforce NOT NULL columns and primary keys (config/constraints.py); dbt warns
    # that the other constraints are not enforced.
    CONSTRAINT_SUPPORT = {
        **SparkAdapter.CONSTRAINT_SUPPORT,
        ConstraintType.not_null: ConstraintSupport.ENFORCED,
        ConstraintType.primary_key: ConstraintSupport.ENFORCED,
    }
    # source freshness without loaded_at_field: the latest Paimon snapshot's commit time
    _capabilities = CapabilityDict({
        Capability.TableLastModifiedMetadata: CapabilitySupport(support=Support.Full),
        # catalogs.yml v2 (project flag use_catalogs_v2): bridged to the v1 integrations below
        Capability.CatalogsV2: CapabilitySupport(support=Support.Full),
    })
    # catalogs.yml: Paimon's filesystem, JDBC and Hive catalogs (catalog_integrations.py)
    CATALOG_INTEGRATIONS = CATALOG_INTEGRATIONS

    def __init__(self, config, mp_context) -> None:
        super().__init__(config, mp_context)
        self._filling_relations_cache = False
        config.credentials.resolve_paths(getattr(config, "project_root", None))
        _start_spark_early(config.credentials)

    @classmethod
    def type(cls) -> str:
        return "paimon"

    # -- Paimon tables as relations --------------------------------------------------------
    def list_relations_without_caching(self, schema_relation: BaseRelation) -> List[BaseRelation]:
        # dbt lists every schema of the project before running anything, in SQL that does not
        # quote the schema name: a name Spark would misparse gets the reason, not a parse error
        if schema_relation.schema and not re.fullmatch(r"[A-Za-z0-9_]+", schema_relation.schema):
            _checked_name("schema", schema_relation.schema, schema_relation.schema)
        if self._filling_relations_cache:
            # the session's start has just listed the schema to sync it: no second request
            rows = self._registry.take_listed_relations(schema_relation.schema or "")
            if rows is not None:
                return self._build_spark_relation_list(rows, self._get_relation_information)
        return super().list_relations_without_caching(schema_relation)

    def _relations_cache_for_schemas(self, relation_configs, cache_schemas=None) -> None:
        # dbt fills its relation cache before it runs anything: only then may the listing of
        # the registry's sync stand in for a new one
        self._filling_relations_cache = True
        try:
            super()._relations_cache_for_schemas(relation_configs, cache_schemas)
        finally:
            self._filling_relations_cache = False

    def _build_spark_relation_list(self, row_list, relation_info_func: Callable) -> List[BaseRelation]:
        relations = super()._build_spark_relation_list(row_list, relation_info_func)
        return [
            # a Paimon table is a table to dbt, whatever entry Spark reads it through
            r.incorporate(is_paimon=True, type=RelationType.Table)
            if PAIMON_ENTRY_MARK in (r.information or "") else r.incorporate(is_paimon=False)
            for r in relations
            # `show table extended in <db>` also lists the session's temporary views, with an
            # empty namespace: they are no relation of this schema.
            if r.schema
        ]

    def set_macro_resolver(self, macro_resolver) -> None:
        """dbt hands the adapter its manifest here, before it compiles the run's graph:
        - a node reading through source() a table that a seed of the project loads runs after
          that seed (order_sources_after_seeds);
        - the relations its seeds, models and snapshots build name the node when a query cannot
          find one (error_messages);
        - the tables whose node config names a branch (paimon_branch) are read and written on
          it by every node (branch_config.py); a bad name fails here, before anything runs."""
        super().set_macro_resolver(macro_resolver)
        nodes = getattr(macro_resolver, "nodes", None) or {}
        self.connections.paimon_table_branches = table_branches(nodes.values())
        sources = getattr(macro_resolver, "sources", None) or {}
        self.connections.paimon_catalog_routes = catalog_routes(
            [*nodes.values(), *sources.values()], self.get_catalog_integration,
            self._catalog_route)
        relations = {}
        for node in nodes.values():
            kind = str(getattr(node, "resource_type", ""))
            materialized = getattr(getattr(node, "config", None), "materialized", None)
            if kind in ("seed", "model", "snapshot") and materialized != "ephemeral":
                relations[(str(node.schema).lower(), str(node.alias).lower())] = (kind, node.name)
        error_messages.set_project_relations(relations)
        order_sources_after_seeds(macro_resolver)

    def _v2_to_v1_type(self, catalog_type: str) -> str:
        return catalog_type.lower()

    def _catalog_route(self, integration):
        """Where a catalogs.yml catalog's tables are (catalog_integrations.py)."""
        credentials = self.config.credentials
        return integration.route(getattr(self.config, "project_root", None) or ".",
                                 credentials.warehouse, credentials.catalog_options)

    @property
    def _registry(self):
        self.connections.get_thread_connection().handle  # the lazy handle opens the session
        self.connections.use_branch()  # paimon_branch config, var, profile (branch_config.py)
        return environments.current_registry()

    def _table_resolver(self):
        """Which Paimon table a name means (datasource/table_resolver.py): the registry's once
        this process's Spark runs, else the profile's catalog with this invocation's catalogs.yml
        routes, which needs no Spark (a Connect server's own warehouse needs the server)."""
        from dbt.adapters.paimon.datasource.table_resolver import TableResolver

        credentials = self.config.credentials
        if _running_registry() is None and credentials.warehouse is not None:
            return TableResolver(credentials.warehouse, credentials.pypaimon_catalog_options,
                                 self.connections.paimon_catalog_routes)
        return self._registry.resolver

    def _expose_if_running(self, schema: str, table: str) -> None:
        """Bring the table's Spark catalog entry up to date after an operation, if this process
        runs Spark; else the next command's sync does (registry.sync compares each entry with
        its table's latest snapshot)."""
        if _running_registry() is not None:
            self._registry.expose(schema, table)

    @available
    def is_paimon_relation(self, relation: BaseRelation) -> bool:
        if getattr(relation, "is_paimon", None) is not None:
            return bool(relation.is_paimon)
        if relation.schema is None or relation.identifier is None:
            return False
        return self._table_resolver().is_paimon_table(relation.schema.lower(),
                                                      relation.identifier.lower())

    @available
    def paimon_operation_target(self, database: Optional[str], schema: str,
                                identifier: str) -> Optional[BaseRelation]:
        """The table a run-operation acts on: the Paimon table of that name, found in its
        catalog without Spark, else what Spark's catalog has under the name (a Spark table the
        operation then refuses), else None."""
        if self._table_resolver().is_paimon_table(schema.lower(), identifier.lower()):
            return self.Relation.create(database=database, schema=schema, identifier=identifier,
                                        type=RelationType.Table, is_paimon=True)
        return self.get_relation(database=database, schema=schema, identifier=identifier)

    @available
    def drop_paimon_table(self, relation: BaseRelation) -> None:
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        relation = _paimon_names(relation)
        wh.drop_table(registry.warehouse_of(relation.schema), relation.schema,
                      relation.identifier, catalog_options=registry.options_of(relation.schema))
        registry.forget(relation.schema, relation.identifier)

    @available
    def rename_paimon_table(self, from_relation: BaseRelation, to_relation: BaseRelation) -> None:
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        from_relation, to_relation = _paimon_names(from_relation), _paimon_names(to_relation)
        if registry.catalog_name_of(from_relation.schema) != \
                registry.catalog_name_of(to_relation.schema):
            raise DbtRuntimeError(
                f"Cannot rename {from_relation} to {to_relation}: their schemas are in "
                f"different catalogs, and a Paimon catalog renames within itself only")
        wh.rename_table(
            registry.warehouse_of(from_relation.schema),
            from_relation.schema,
            from_relation.identifier,
            to_relation.identifier,
            new_database=to_relation.schema,
            catalog_options=registry.options_of(from_relation.schema),
        )
        registry.forget(from_relation.schema, from_relation.identifier)
        registry.expose(to_relation.schema, to_relation.identifier)

    @available
    def create_paimon_database(self, schema: str) -> None:
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        database = _checked_name("schema", schema.lower(), schema)
        wh.create_database(registry.warehouse_of(database), database,
                           catalog_options=registry.options_of(database))

    @available
    def drop_paimon_database(self, schema: str) -> None:
        """Drop every Paimon table of the database, then the database folder itself."""
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        schema = schema.lower()
        warehouse, options = registry.warehouse_of(schema), registry.options_of(schema)
        for table in wh.list_tables(warehouse, schema, catalog_options=options):
            wh.drop_table(warehouse, schema, table, catalog_options=options)
            registry.forget(schema, table)
        registry.forget_database(schema)
        wh.drop_database(warehouse, schema, catalog_options=options)

    @available
    def paimon_snapshot_view(self, relation: BaseRelation, snapshot_id: Any = None, tag=None,
                             timestamp=None, watermark=None, version=None,
                             branch=None) -> str:
        """Register a temporary view of a Paimon table as of a snapshot (by id, tag, timestamp,
        watermark or version: format/time_travel.py), of main or of ``branch`` (its latest
        snapshot when no other argument is given); returns its name.

        From SQL, only a temporary view keeps a Python data source's options (time travel needs
        ``snapshot_id``), so models read it in this session; persistent views cannot use it.
        """
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.datasource.registry import check_name
        from dbt.adapters.paimon.format.time_travel import travel

        if not self.is_paimon_relation(relation):
            raise CompilationError(f"paimon_snapshot: {relation} is not a Paimon table.")
        registry = self._registry
        name = self._paimon_table_or_branch(relation, branch, "paimon_snapshot")
        table = registry.open_table(relation.schema, name)
        try:
            if branch is not None and all(v is None for v in (snapshot_id, tag, timestamp,
                                                                watermark, version)):
                latest = table.snapshot_manager().get_latest_snapshot()
                if latest is None:
                    raise ValueError(f"branch '{branch}' has no snapshot yet")
                snapshot = latest.id
            else:
                snapshot = travel(table, snapshot_id, tag, timestamp, watermark, version).id
        except ValueError as exc:
            raise CompilationError(f"paimon_snapshot of {relation}: {exc}") from None
        view = check_name("view", re.sub(r"\W", "_", f"{relation.schema}__{name}__snapshot_"
                                                     f"{snapshot}", flags=re.ASCII).lower())
        registry.activate()
        # Spark's own reader when that snapshot needs no merge (docs/reads.md)
        if registry.snapshot_view(relation.schema, name, snapshot, view):
            return f"`{view}`"
        return self._paimon_source_view(view, relation, {"snapshot_id": str(snapshot)},
                                        table=name)

    def _paimon_table_or_branch(self, relation: BaseRelation, branch, macro: str) -> str:
        """The Paimon table name a read of ``relation`` means: ``branch`` of it
        (``t$branch_b``) when given, else the table (the branch of a ``paimon_branch``
        invocation, when it has it)."""
        from dbt.adapters.paimon.ops.branches import branch_table_name, branches

        registry = self._registry
        if branch is None:
            return registry.paimon_name(relation.schema, relation.identifier)
        known = branches(registry.open_table(relation.schema, relation.identifier))
        if str(branch) not in known:
            raise CompilationError(f"{macro}: {relation} has no branch '{branch}' (branches: "
                                   f"{known or 'none'})")
        return branch_table_name(relation.identifier, str(branch))

    def _paimon_source_view(self, view: str, relation: BaseRelation, read_options: Dict[str, str],
                            source: str = "paimon", table: Optional[str] = None) -> str:
        """A temporary view of the paimon data source (or ``source``, e.g. paimon_row_tracking)
        reading ``relation`` (or its ``table``, e.g. a branch ``t$branch_b``) with
        ``read_options``."""
        relation = _paimon_names(relation)
        registry = self._registry
        options = registry.table_location(relation.schema,
                                         table or relation.identifier).source_options()
        options.update(read_options)
        rendered = ", ".join(f"`{k}` '{escape_sql_string(v)}'" for k, v in options.items())
        registry.activate().sql(
            f"create or replace temporary view `{view}` using {source} options ({rendered})"
        )
        return f"`{view}`"

    # -- consuming changes (materialize/consumption.py) -----------------------------------------
    @available
    def paimon_changes_view(self, relation: BaseRelation, model_id: str, this: BaseRelation,
                            from_start: bool, consumer_id: Optional[str] = None) -> str:
        """A temporary view of what changed in ``relation`` since the consuming model's last
        successful run (rows with ``_row_kind``); the consumer moves on only if this run
        succeeds (``post_model_hook``)."""
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.materialize import consumption
        from dbt.adapters.paimon.datasource.registry import check_name

        if not self.is_paimon_relation(relation):
            raise CompilationError(f"paimon_changes: {relation} is not a Paimon table.")
        consumer = consumer_id or consumption.default_consumer_id(this.schema, this.identifier)
        location = self._paimon_location(relation)
        try:
            planned = consumption.plan(location.open(), str(consumer), bool(from_start))
        except ValueError as exc:
            raise DbtRuntimeError(f"paimon_changes({relation}) in {this}: {exc}") from exc
        self._pending_positions().hold(model_id, location, planned)
        view = check_name("view", f"{relation.schema}__{relation.identifier}__changes_for_"
                                  f"{this.schema}__{this.identifier}")
        return self._paimon_source_view(view, relation, planned.options)

    @available
    def paimon_changes_between_view(self, relation: BaseRelation, start=None, end=None,
                                    mode: Optional[str] = None, start_timestamp=None,
                                    end_timestamp=None) -> str:
        """A temporary view of what changed in ``relation`` between two snapshots, two tags or
        two times, with ``_row_kind``, as Paimon's ``incremental-between`` and
        ``incremental-between-timestamp`` read it:
        - snapshot ids give the commits (start, end] (delta or changelog files:
          datasource/changes.py);
        - times select those snapshot ids as Java does (time_travel.incremental_between_timestamps);
        - tag names give the difference of the two tagged versions: of a primary-key table by
          key (Java's IncrementalDiffSplitRead: a key new since ``start`` is +I, a key whose row
          changed is +U, both with the ``end`` row; a key deleted since is not returned, as in
          Java's batch read), of an append table the files the end tag has and the start tag
          has not, as +I (changes.py ``diff``).
        Of the branch the invocation reads the table on (registry.paimon_name)."""
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.datasource.registry import check_name
        from dbt.adapters.paimon.format import time_travel

        macro = f"paimon_changes_between({relation})"
        if not self.is_paimon_relation(relation):
            raise CompilationError(f"paimon_changes_between: {relation} is not a Paimon table.")
        by_time = start_timestamp is not None or end_timestamp is not None
        given = (start_timestamp, end_timestamp) if by_time else (start, end)
        if None in given or (by_time and (start is not None or end is not None)):
            raise CompilationError(
                f"{macro}: pass start and end (two snapshot ids or two tags), or "
                f"start_timestamp and end_timestamp; got start={start!r}, end={end!r}, "
                f"start_timestamp={start_timestamp!r}, end_timestamp={end_timestamp!r}")
        registry = self._registry
        name = registry.paimon_name(relation.schema, relation.identifier)
        if by_time:
            table = registry.open_table(relation.schema, relation.identifier)
            try:
                millis = [time_travel.timestamp_millis(v) for v in (start_timestamp,
                                                                     end_timestamp)]
                ids = [str(i) for i in time_travel.incremental_between_timestamps(table,
                                                                                  *millis)]
            except ValueError as exc:
                raise CompilationError(f"{macro}: {exc}") from None
            label = f"t{millis[0]}_{millis[1]}"
        else:
            ids = [str(v).strip() for v in (start, end)]
            label = f"{start}_{end}"
        view = check_name("view", re.sub(r"\W", "_", f"{relation.schema}__{name}__changes_"
                                         f"{label}", flags=re.ASCII).lower())
        if by_time or all(v.isdigit() for v in ids):  # Java: both numbers, else both tags
            options = {"changes_from": ids[0], "changes_to": ids[1], "changes_mode": mode or "auto"}
            return self._paimon_source_view(view, relation, options, table=name)
        table = registry.open_table(relation.schema, relation.identifier)
        try:
            first, last = (time_travel.snapshot_by_tag(table, v) for v in ids)
        except ValueError as exc:
            raise CompilationError(f"{macro}: {exc}") from None
        if last.id <= first.id:
            raise CompilationError(
                f"{macro}: tag end {ids[1]} with snapshot id {last.id} should be later than tag "
                f"start {ids[0]} with snapshot id {first.id}")
        if not table.primary_keys:
            # Java 1.0 IncrementalTagStartingScanner -> SnapshotReaderImpl.readIncrementalDiff;
            # an append table reads the end tag's files the start tag lacks (changes.py)
            options = {"changes_from": str(first.id), "changes_to": str(last.id),
                       "changes_mode": "diff"}
            return self._paimon_source_view(view, relation, options, table=name)
        from pyspark.sql import functions as F

        spark = registry.activate()
        before = spark.table(self.paimon_snapshot_view(relation, tag=ids[0]).strip("`"))
        after = spark.table(self.paimon_snapshot_view(relation, tag=ids[1]).strip("`"))
        keys = list(table.primary_keys)
        joined = after.alias("a").join(
            before.alias("b"), [F.col(f"a.`{k}`") == F.col(f"b.`{k}`") for k in keys], "left")
        same = [F.col(f"a.`{c}`").eqNullSafe(F.col(f"b.`{c}`")) for c in after.columns]
        kind = (F.when(F.col(f"b.`{keys[0]}`").isNull(), F.lit("+I"))
                .when(~functools.reduce(lambda x, y: x & y, same), F.lit("+U")))
        changes = joined.select(*[F.col(f"a.`{c}`") for c in after.columns],
                                kind.alias("_row_kind")).where(F.col("_row_kind").isNotNull())
        changes.createOrReplaceTempView(view)
        return f"`{view}`"

    def _pending_positions(self):
        from dbt.adapters.paimon.materialize.consumption import PendingPositions

        if getattr(self, "_paimon_pending", None) is None:
            self._paimon_pending = PendingPositions()
        return self._paimon_pending

    def post_model_hook(self, config: Any, context: Any) -> None:
        import sys

        super().post_model_hook(config, context)
        # dbt calls this hook in a `finally`: an exception in flight means the model failed
        model_id = getattr(getattr(config, "model", None), "unique_id", None)
        self._pending_positions().settle(model_id, succeeded=sys.exc_info()[1] is None)

    @available
    def spark_lacks_data_source(self, file_format: str) -> bool:
        """Whether this Spark has no data source named ``file_format`` (Delta, Iceberg and Hudi
        come as packages of their own): Spark's DATA_SOURCE_NOT_FOUND while it resolves a read
        of a path that does not exist. Any other error (the path is missing) means it has one."""
        if file_format not in _missing_sources:
            spark = self._registry.activate()
            try:
                spark.read.format(file_format).load("/dbt-paimon-probe-no-such-path").schema
                missing = False
            except Exception as exc:  # noqa: BLE001 - Spark's analysis error, either way
                missing = "DATA_SOURCE_NOT_FOUND" in str(exc) or \
                    "Failed to find the data source" in str(exc)
            _missing_sources[file_format] = missing
        return _missing_sources[file_format]

    @available
    def paimon_warehouse(self) -> str:
        return self.config.credentials.warehouse

    # -- Paimon materializations ------------------------------------------------------------
    @available
    def paimon_table_definition(self, model: dict, materialization: str, sql: str,
                                local_rows=None):
        """Validate a model's config against its query (or its rows, ``local_rows``: Arrow
        this process holds, e.g. a seed's file) before anything is written."""
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder
        from dbt.adapters.paimon.runtime import PaimonConfigError

        name = model.get("alias") or model["name"]
        try:
            config, not_null = _contract_config(name, materialization, model)
            return ModelBuilder(self._registry).definition(
                name, materialization, config, sql, not_null,
                arrow_schema=None if local_rows is None else local_rows.schema)
        except PaimonConfigError as exc:
            raise CompilationError(str(exc)) from exc
        except DbtRuntimeError:
            raise
        except Exception as exc:  # Spark's errors on the query, or a dbt-paimon bug
            raise DbtRuntimeError(error_messages.model_failure(name, exc)) from exc

    @available
    def paimon_target_relation(self, definition, this: BaseRelation) -> BaseRelation:
        """The Paimon table a model writes: itself, or the shared table named by `target`."""
        if not definition.target:
            relation = _paimon_names(this.incorporate(type="table"))
        else:
            schema, _, identifier = definition.target.rpartition(".")
            relation = _paimon_names(self.Relation.create(
                schema=schema or this.schema, identifier=identifier, type="table", is_paimon=True
            ))
        # before anything is written: the names become warehouse folders and Spark identifiers
        _checked_name("schema", relation.schema, definition.model)
        _checked_name("table", relation.identifier, definition.model)
        return relation

    @available
    def paimon_build_model(
        self,
        definition,
        relation: BaseRelation,
        sql: str,
        full_refresh: bool,
        on_schema_change: str,
        overwrite_partitions: bool = False,
        standard: Optional[Dict[str, Any]] = None,
        local_rows=None,
    ) -> AdapterResponse:
        """Write the model's rows into its Paimon table: one atomic commit (or none on error).

        ``standard``: dbt's table/incremental/seed materializations (file_format='paimon'):
        {strategy: 'replace' or the incremental strategy, config: the model's config,
        batch_start/batch_end: a microbatch's window}. ``local_rows``: the rows as Arrow this
        process holds (a seed's file), written without a Spark query
        (ModelBuilder._write_local); None is returned, and nothing written, when the run needs
        the query's path: call again without ``local_rows``."""
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder
        from dbt.adapters.paimon.materialize.standard_writes import WriteRequest

        relation = _paimon_names(relation)
        request = None
        if standard is not None:
            request = WriteRequest.from_config(
                standard["strategy"], dict(standard.get("config") or {}),
                standard.get("batch_start"), standard.get("batch_end"))
        builder = ModelBuilder(self._registry)
        with _model_errors(definition.model, f"committed to {relation} while this run was "
                                             f"writing it"):
            with _committed_by(definition.model):
                result = builder.build(
                    definition, relation.schema, relation.identifier, sql, full_refresh,
                    on_schema_change or "ignore", overwrite_partitions, request,
                    local_rows=local_rows,
                )
        if result is None:
            return None
        self.cache_added(relation.incorporate(type="table", is_paimon=True))
        if result.maintenance_error is not None:
            logger.warning(
                f"Model '{definition.model}': the commit succeeded (snapshot "
                f"{result.snapshot_id}) but automatic maintenance failed: "
                f"{result.maintenance_error!r}. Run `dbt run-operation compact` / "
                "`expire_snapshots` to retry."
            )
        message = result.message
        if result.maintenance:
            message = f"{message}; {result.maintenance}"
        return AdapterResponse(_message=message, rows_affected=result.rows)

    # -- data-evolution column updates (write/column_update.py) ---------------------------------
    @available
    def paimon_column_update_target(self, model: dict, this: BaseRelation) -> BaseRelation:
        """materialized='data_evolution_update': the existing data-evolution table named by
        `target`; CompilationError (nothing written) when a config is missing or the table
        does not exist."""
        name = model.get("alias") or model["name"]
        config = model["config"]
        missing = [c for c in ("target", "update_key") if not config.get(c)]
        if missing:
            raise CompilationError(
                f"Model '{name}': materialized='data_evolution_update' needs config "
                f"{' and '.join(f'`{c}`' for c in missing)}: `target` names the data-evolution "
                f"table whose columns the model writes, `update_key` the column matching the "
                f"model's rows to its rows ('_ROW_ID' or a column unique in the table).")
        columns = config.get("update_columns")
        if columns is not None and not isinstance(columns, (list, tuple, str)):
            raise CompilationError(f"Model '{name}': config `update_columns` is {columns!r}; "
                                   f"expected a column name or a list of them.")
        schema, _, identifier = str(config["target"]).rpartition(".")
        relation = _paimon_names(self.Relation.create(
            schema=schema or this.schema, identifier=identifier, type="table", is_paimon=True))
        _checked_name("schema", relation.schema, name)
        _checked_name("table", relation.identifier, name)
        if not self._registry.is_paimon_table(relation.schema, relation.identifier):
            raise CompilationError(
                f"Model '{name}': its `target` {relation} is not a Paimon table. A "
                f"data_evolution_update model writes columns of an existing data-evolution "
                f"table (options 'row-tracking.enabled' and 'data-evolution.enabled'): create "
                f"it first (a paimon_append model with those table_options, or another "
                f"engine), and run this model after it.")
        return relation

    @available
    def paimon_update_columns(self, model: dict, relation: BaseRelation, sql: str
                              ) -> AdapterResponse:
        """Write the model's columns into the rows of ``relation`` its `update_key` names: one
        Paimon commit of column files (write/column_update.py), or nothing on error."""
        from dbt.adapters.paimon.materialize.model_builder import check_typed
        from dbt.adapters.paimon.write.column_update import (
            check_update, owned_columns, update_columns)

        name = model.get("alias") or model["name"]
        config = model["config"]
        key = config["update_key"]
        columns = config.get("update_columns")
        if isinstance(columns, str):
            columns = [columns]
        registry = self._registry
        with _model_errors(name, f"updated rows of {relation} while this run was writing its "
                                 f"columns"):
            table = registry.open_table(relation.schema, relation.identifier)
            spark = registry.activate(sql)
            df = spark.sql(sql)
            check_typed(name, df)
            owned = owned_columns(key, df.columns, columns)
            check_update(table, name, key, owned, df.columns)  # before Spark computes a row
            rows = df.select(*[f"`{c}`" for c in [key] + owned]).toArrow()
            with _committed_by(name):
                result = update_columns(table, name, rows, key, owned)
        registry.expose(relation.schema, relation.identifier)
        snapshot = (f" (snapshot {result.snapshot_id})" if result.snapshot_id is not None
                    else " (no rows)")
        return AdapterResponse(
            _message=f"UPDATE {owned} of {result.rows} rows in {result.ranges} column "
                     f"file(s){snapshot}", rows_affected=result.rows)

    # -- seeds (materialize/seed_csv.py) -------------------------------------------------------
    @available
    def paimon_seed_rows(self, model: dict, this: BaseRelation, empty: bool = False
                         ) -> Dict[str, Any]:
        """Read the seed's CSV (Arrow, with dbt's types: seed_csv.py). Returns {sql: the typed
        rows' select from ``view`` (registered by paimon_seed_view), columns: [(name, Spark
        type)], rows, unknown_overrides: column_types keys the file lacks, sample: an agate
        table of at most SAMPLE_ROWS random rows (what ``dbt seed --show`` prints),
        local_rows: the rows typed as Arrow here (None when only Spark can cast them)}."""
        import os

        from dbt.adapters.paimon.materialize.seed_csv import (SeedFileError, read_seed,
                                                              sample_agate)
        from dbt.adapters.paimon.datasource.spark_types import quote_identifier

        path = os.path.join(model["root_path"], model["original_file_path"])
        config = model["config"]
        try:
            seed = read_seed(path, config.get("delimiter") or ",",
                             config.get("column_types") or {}, bool(empty))
        except SeedFileError as exc:
            raise DbtRuntimeError(f"Seed '{model['name']}' ({path}): {exc}") from None
        # a one-part name whatever the seed's name (dots, quotes)
        view = re.sub(r"\W", "_", f"{this.identifier}__dbt_seed_rows", flags=re.ASCII)
        select = ", ".join(f"cast(`c{i}` as {spark_type}) as {quote_identifier(name)}"
                           for i, (name, spark_type) in enumerate(zip(seed.columns, seed.types)))
        time_zone = self._registry.activate().conf.get("spark.sql.session.timeZone")
        return {"sql": f"select {select} from {quote_identifier(view)}", "view": view,
                "columns": list(zip(seed.columns, seed.types)), "rows": seed.num_rows,
                "unknown_overrides": seed.unknown_overrides, "sample": sample_agate(seed),
                "local_rows": seed.typed(time_zone), "file": seed}

    @available
    def paimon_seed_view(self, seed: Dict[str, Any]) -> None:
        """Register the seed's rows as the temporary view its ``sql`` reads."""
        from dbt.adapters.paimon.datasource.spark_types import spark_schema

        table = seed["file"].table
        # (the schema given: Spark Connect cannot infer one from an empty seed)
        frame = self._registry.activate().createDataFrame(table, schema=spark_schema(table.schema))
        frame.createOrReplaceTempView(seed["view"])

    @available
    def paimon_drop_seed_rows(self, seed: Dict[str, Any]) -> None:
        self._registry.activate().catalog.dropTempView(seed["view"])

    # -- dbt snapshot (materialize/snapshot_rows.py) -------------------------------------------------
    @available
    def paimon_snapshot_definition(self, model: dict, sql: str, scd_id: str):
        """A snapshot's table: a Paimon primary-key table on ``scd_id``; the source's
        unique_key checked (never NULL, never twice) before anything is written."""
        from dbt.adapters.paimon.materialize import snapshot_rows
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder
        from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

        name = model.get("alias") or model["name"]
        config = dict(model["config"])
        registry = self._registry
        try:
            table_config = snapshot_rows.table_config(name, config, scd_id)
            snapshot_rows.check_unique_key(registry.activate(), name, model["compiled_code"],
                                           config.get("unique_key"))
            return ModelBuilder(registry).definition(name, "paimon_pk", table_config, sql)
        except PaimonConfigError as exc:
            raise CompilationError(str(exc)) from exc
        except PaimonDataError as exc:
            raise DbtRuntimeError(str(exc)) from exc

    @available
    def paimon_snapshot_rows(self, staging_sql: str, relation: BaseRelation,
                             columns: Dict[str, str]) -> str:
        """A query of the rows one snapshot run merges: closed versions (stored values, new
        dbt_valid_to) and new versions. Returns SQL reading a temporary view of them."""
        from dbt.adapters.paimon.materialize import snapshot_rows
        from dbt.adapters.paimon.datasource.registry import check_name

        spark = self._registry.activate()
        rows = snapshot_rows.merge_rows(
            spark, staging_sql, f"`{relation.schema}`.`{relation.identifier}`", dict(columns))
        view = check_name("view", f"{relation.schema}__{relation.identifier}__dbt_snapshot_rows")
        rows.createOrReplaceTempView(view)
        return f"select * from `{view}`"

    # -- docs: catalog stats (ops/catalog_stats.py) ------------------------------------------
    def _get_columns_for_catalog(self, relation: BaseRelation):
        from dbt.adapters.paimon.ops.catalog_stats import catalog_stats

        stats, table_comment, column_comments = {}, None, {}
        if relation.type != "view" and self.is_paimon_relation(relation):
            location = self._paimon_location(relation)
            stats = catalog_stats(location)
            # persist_docs comments live in the Paimon schema (Spark's view of the table has none)
            schema = location.open().table_schema
            table_comment = schema.comment
            column_comments = {f.name: f.description for f in schema.fields}
        else:
            table_comment, column_comments = self._spark_comments(relation)
        for column in super()._get_columns_for_catalog(relation):
            column.update(stats)
            column["table_comment"] = table_comment
            column["column_comment"] = column_comments.get(column["column_name"])
            yield column

    def _spark_comments(self, relation: BaseRelation):
        """(table comment, {column: comment}) of a view or Spark table from `describe table
        extended`: dbt-spark writes them (a view's `create view v (c comment ..) comment ..`,
        Delta's `alter table .. change column .. comment`), but its catalog reads neither (the
        `show table extended` text it parses has no comments)."""
        from dbt.adapters.spark.impl import GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME

        try:
            raw = self.execute_macro(GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME,
                                     kwargs={"relation": relation})
        except DbtRuntimeError as exc:
            logger.debug(f"No comments for {relation}: {exc.msg}")
            return None, {}
        rows = [dict(zip(row._keys, row._values)) for row in raw]
        end = self.find_table_information_separator(rows)
        columns = {row["col_name"]: row.get("comment") for row in rows[:end]
                   if row["col_name"] and not row["col_name"].startswith("#")}
        metadata = {row["col_name"]: row["data_type"] for row in rows[end + 1:]}
        return metadata.get("Comment"), columns

    @available
    def paimon_persist_docs(self, relation: BaseRelation, table_comment: Optional[str],
                            column_comments: Dict[str, str]) -> None:
        """Descriptions as the Paimon table's comment and field descriptions: one schema
        change, only when they differ from the stored ones (no new schema per run)."""
        relation = _paimon_names(relation)
        from pypaimon.schema.schema_change import SchemaChange

        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        table = registry.open_table(relation.schema, relation.identifier)
        stored = {f.name: f.description for f in table.table_schema.fields}
        changes = []
        if table_comment is not None and table_comment != table.table_schema.comment:
            changes.append(SchemaChange.update_comment(table_comment))
        for name, comment in column_comments.items():
            if name in stored and stored[name] != comment:
                changes.append(SchemaChange.update_column_comment(name, comment))
        if changes:
            catalog = wh.open_catalog(registry.warehouse_of(relation.schema),
                                      registry.options_of(relation.schema))
            catalog.alter_table(f"{relation.schema}.{relation.identifier}", changes)
            registry.expose(relation.schema, relation.identifier)

    # -- source freshness from metadata --------------------------------------------------------
    def calculate_freshness_from_metadata(self, source: BaseRelation, macro_resolver=None):
        """`dbt source freshness` without loaded_at_field: a Paimon table was last loaded when
        its latest snapshot was committed."""
        from datetime import datetime, timezone

        from dbt.adapters.paimon.format.splits import list_snapshots

        if not self.is_paimon_relation(source):
            raise DbtRuntimeError(
                f"Source {source} is not a Paimon table: its freshness cannot come from Paimon "
                "snapshots. Set `loaded_at_field` (or `loaded_at_query`) on the source.")
        snapshots = list_snapshots(self._registry.open_table(source.schema, source.identifier))
        last = (datetime.fromtimestamp(snapshots[-1].time_millis / 1000, tz=timezone.utc)
                if snapshots else None)
        response = AdapterResponse(
            _message=f"latest snapshot {snapshots[-1].id}" if snapshots else "no snapshot")
        return response, self._create_freshness_response(last, datetime.now(timezone.utc))

    def valid_incremental_strategies(self) -> List[str]:
        """dbt-spark's strategies, plus delete+insert (Paimon tables: file_format='paimon')."""
        return ["append", "merge", "insert_overwrite", "microbatch", "delete+insert"]

    # -- Python models ---------------------------------------------------------------------
    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> Dict[str, Type[PythonJobHelper]]:
        return {"session": SessionPythonJobHelper}

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK")

    @classmethod
    def _get_adapter_specific_run_info(cls, config) -> Dict[str, Any]:
        return {"adapter_type": "paimon", "table_format": "paimon"}

    def debug_query(self) -> None:
        self.execute("select 1 as id")

    # -- table operations --------------------------------------------------------------------
    # run-operation macros (macros/operations/): compact, rescale_buckets, expire_snapshots,
    # remove_orphan_files, paimon_table_info. Each delegates to ``ops`` and returns its
    # readable result; bad arguments and unsupported tables become DbtRuntimeError.
    def _paimon_location(self, relation: BaseRelation):
        relation = _paimon_names(relation)
        resolver = self._table_resolver()
        if relation is None or not self.is_paimon_relation(relation):
            raise DbtRuntimeError(f"{relation} is not a Paimon table of warehouse "
                                  f"{resolver.warehouse_of(relation.schema)}")
        return resolver.table_location(relation.schema, relation.identifier)

    def _paimon_operation(self, name: str, relation: BaseRelation, action,
                          files_only: bool = False):
        """Run ``action(spark, location)`` on the relation's Paimon table. An operation on the
        table's files only (``files_only``: tags, branches, rollback, expiry) gets no session
        (``spark`` is None), and a run-operation of it never starts Spark."""
        location = self._paimon_location(relation)
        spark = None if files_only else self._registry.activate()
        try:
            with _committed_by(f"run-operation {name}"):
                return action(spark, location)
        except (ValueError, NotImplementedError) as exc:
            raise DbtRuntimeError(f"{name} of {location.name}: {exc}") from exc

    @available
    def paimon_compact(self, relation: BaseRelation, partitions=None, full: bool = False) -> str:
        from dbt.adapters.paimon.ops import compact_table

        result = self._paimon_operation("compact", relation, lambda spark, location: compact_table(
            spark, location, partitions=partitions, full=bool(full)))
        return f"{relation}: {result.message}"

    @available
    def paimon_rescale_buckets(self, relation: BaseRelation, buckets, partitions=None) -> str:
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.ops import rescale_buckets

        result = self._paimon_operation("rescale_buckets", relation,
                                        lambda spark, location: rescale_buckets(
                                            spark, location, buckets, partitions))
        self._registry.expose(relation.schema, relation.identifier)  # new options / schema id
        return f"{relation}: {result.message}"

    @available
    def paimon_expire_snapshots(self, relation: BaseRelation, retain_last=None, older_than=None,
                                retain_max=None, max_deletes=None) -> str:
        from dbt.adapters.paimon.ops import expire_snapshots

        result = self._paimon_operation("expire_snapshots", relation,
                                        lambda spark, location: expire_snapshots(
                                            location, retain_last, older_than, retain_max,
                                            max_deletes), files_only=True)
        return f"{relation}: {result.message}"

    @available
    def paimon_remove_orphan_files(self, relation: BaseRelation, older_than=None,
                                   dry_run: bool = False) -> str:
        from dbt.adapters.paimon.ops import remove_orphan_files
        from dbt.adapters.paimon.ops.expire import DEFAULT_ORPHAN_MARGIN

        result = self._paimon_operation("remove_orphan_files", relation,
                                        lambda spark, location: remove_orphan_files(
                                            location, DEFAULT_ORPHAN_MARGIN
                                            if older_than is None else older_than,
                                            bool(dry_run)),  # 0 means no margin
                                        files_only=True)
        return f"{relation}: {result.message}"

    # -- tags and rollback (ops/tags.py, ops/rollback.py) ---------------------------------------
    @available
    def paimon_tag_operation(self, operation: str, relation: BaseRelation,
                             arguments: Dict[str, Any]) -> str:
        """``create_tag``, ``replace_tag``, ``rename_tag``, ``delete_tag`` or ``expire_tags`` of
        ``relation`` with the macro's ``arguments`` (None ones left out)."""
        from dbt.adapters.paimon.ops import tags

        actions = {"create_tag": tags.create_tag, "replace_tag": tags.replace_tag,
                   "rename_tag": tags.rename_tag, "delete_tag": tags.delete_tag,
                   "expire_tags": tags.expire_tags}
        given = {k: v for k, v in arguments.items() if v is not None}
        result = self._paimon_operation(operation, relation, lambda spark, location: actions[
            operation](location, **given), files_only=True)
        return f"{relation}: {result.message}"

    @available
    def paimon_branch_operation(self, operation: str, relation: BaseRelation,
                                arguments: Dict[str, Any]) -> str:
        """``create_branch``, ``delete_branch`` or ``fast_forward`` of ``relation``."""
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.ops import branches

        actions = {"create_branch": branches.create_branch,
                   "delete_branch": branches.delete_branch,
                   "fast_forward": branches.fast_forward}
        given = {k: v for k, v in arguments.items() if v is not None}
        result = self._paimon_operation(operation, relation, lambda spark, location: actions[
            operation](location, **given), files_only=True)
        if operation == "fast_forward":
            self._expose_if_running(relation.schema, relation.identifier)
        return f"{relation}: {result.message}"

    @available
    def paimon_clone_table(self, source: BaseRelation, target: BaseRelation) -> AdapterResponse:
        """`dbt clone` of a Paimon table (ops/clone.py): ``target`` made, or replaced, as a
        table sharing the files of ``source``'s latest snapshot, or as a copy of its rows where
        files cannot be shared (a catalog registers either table, a remote warehouse)."""
        from dbt.adapters.paimon.format.errors import PaimonFormatError
        from dbt.adapters.paimon.ops.clone import clone_table

        registry = self._registry
        source, target = _paimon_names(source), _paimon_names(target)
        spark = registry.activate()
        from_location = self._paimon_location(source)
        to_location = registry.table_location(target.schema, target.identifier)
        try:
            with _committed_by(target.identifier):
                result = clone_table(from_location, to_location, spark)
        except (ValueError, NotImplementedError, PaimonFormatError) as exc:
            raise DbtRuntimeError(f"clone of {from_location.name} into {target}: {exc}") from exc
        if result.rows is not None:  # a copy: a new table, maybe with the old one's schema id
            registry.forget(target.schema, target.identifier)
        registry.expose(target.schema, target.identifier)
        self.cache_added(target.incorporate(type="table", is_paimon=True))
        return AdapterResponse(_message=result.message, rows_affected=result.rows_affected)

    @available
    def paimon_publish_branch(self, branch: str, delete: bool = True, force: bool = False) -> str:
        """Fast-forward main to ``branch`` in every Paimon table of the warehouse that has it
        (write-audit-publish), deleting the branches unless ``delete`` is false."""
        from dbt.adapters.paimon.ops.branches import publish_branch

        try:
            result = publish_branch(self._table_resolver().locations(), branch, bool(delete),
                                    bool(force))
        except ValueError as exc:
            raise DbtRuntimeError(f"publish_branch: {exc}") from exc
        for name in result.branches:
            schema, table = name.split(".", 1)
            self._expose_if_running(schema, table)
        return result.message

    @available
    def paimon_rollback(self, relation: BaseRelation, snapshot_id=None, tag=None,
                        timestamp=None) -> str:
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.ops.rollback import rollback

        result = self._paimon_operation("rollback", relation, lambda spark, location: rollback(
            location, snapshot_id, tag, timestamp), files_only=True)
        self._expose_if_running(relation.schema, relation.identifier)
        return f"{relation}: {result.message}"

    @available
    def paimon_rollback_invocation(self, invocation_id=None, dry_run: bool = False) -> str:
        """Roll back every Paimon table of the warehouse that dbt invocation ``invocation_id``
        (default: the latest that committed) wrote; tables committed to since are refused and
        left untouched, which fails the operation after the others are rolled back."""
        from dbt.adapters.paimon.ops.invocations import rollback_invocation

        try:
            result = rollback_invocation(self._table_resolver().locations(),
                                         None if invocation_id is None else str(invocation_id),
                                         bool(dry_run))
        except ValueError as exc:
            raise DbtRuntimeError(f"rollback_invocation: {exc}") from exc
        for undo in result.rolled_back:
            if not result.dry_run:
                schema, table = undo.table.split(".", 1)
                self._expose_if_running(schema, table)
        if result.refused:
            raise DbtRuntimeError(f"rollback_invocation: {len(result.refused)} table(s) could "
                                  f"not be rolled back.\n{result.message}")
        return result.message

    @available
    def paimon_table_info(self, relation: BaseRelation, snapshot_id=None) -> str:
        from dbt.adapters.paimon.ops import table_info

        return self._paimon_operation("paimon_table_info", relation,
                                      lambda spark, location: table_info(
                                          location, int(snapshot_id) if snapshot_id else None),
                                      files_only=True)

    @available
    def paimon_table_ddl(self, relation: BaseRelation) -> str:
        """The Paimon table as Paimon's Spark SQL would create it (for the model's run file)."""
        from dbt.adapters.paimon.ops.table_info import table_ddl

        return self._paimon_operation("paimon_table_ddl", relation,
                                      lambda spark, location: table_ddl(location, str(relation)),
                                      files_only=True)

    @available
    def paimon_system_view(self, relation: BaseRelation, name: str, branch=None) -> str:
        """Register a temporary view of Paimon's system table ``name`` of ``relation``
        (``orders$snapshots`` in Paimon's engines), of main or of ``branch``
        (``orders$branch_audit$snapshots``); returns its quoted name. Metadata tables
        are built in this process (format/system_tables.py) and handed to Spark as Arrow;
        audit_log, binlog and ro read data through the paimon data source
        (datasource/system_reads.py). Temporary, as paimon_snapshot's views: models, tests and
        `dbt show` of this session read it, persistent views cannot."""
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.datasource.registry import check_name
        from dbt.adapters.paimon.datasource.source import SYSTEM_TABLE_OPTION
        from dbt.adapters.paimon.datasource.spark_types import spark_schema
        from dbt.adapters.paimon.format.system_tables import (METADATA_TABLES,
                                                              check_system_table, metadata_table)

        try:
            system = check_system_table(name)
        except ValueError as exc:
            raise CompilationError(f"paimon_system({relation}, {name!r}): {exc}") from None
        if not self.is_paimon_relation(relation):
            raise CompilationError(f"paimon_system: {relation} is not a Paimon table.")
        registry = self._registry
        table = self._paimon_table_or_branch(relation, branch, "paimon_system")
        view = check_name("view", re.sub(r"\W", "_", f"{relation.schema}__{table}__system_"
                                                     f"{system}", flags=re.ASCII).lower())
        if system not in METADATA_TABLES:
            return self._paimon_source_view(view, relation, {SYSTEM_TABLE_OPTION: system},
                                            table=table)
        try:
            rows = metadata_table(registry.open_table(relation.schema, table), system)
        except (ValueError, OSError) as exc:
            raise DbtRuntimeError(f"paimon_system({relation}, {system!r}): {exc}") from exc
        spark = registry.activate()
        spark.createDataFrame(rows, schema=spark_schema(rows.schema)) \
            .createOrReplaceTempView(view)
        return f"`{view}`"

    # -- row tracking (paimon_append with row_tracking=true) ----------------------------------
    @available
    def paimon_row_tracking_view(self, relation: BaseRelation) -> str:
        """Register a temporary view of a row-tracking table with _ROW_ID and _SEQUENCE_NUMBER;
        returns its name (Spark keeps a Python data source's options only for temporary views)."""
        relation = _paimon_names(relation)
        from dbt.adapters.paimon.datasource.registry import check_name
        from dbt.adapters.paimon.datasource.row_tracking_source import NAME, register
        from dbt.adapters.paimon.format.row_tracking import require_row_tracking

        if not self.is_paimon_relation(relation):
            raise CompilationError(f"paimon_row_tracking: {relation} is not a Paimon table.")
        registry = self._registry
        try:
            require_row_tracking(registry.open_table(relation.schema, relation.identifier),
                                 "paimon_row_tracking")
        except ValueError as exc:
            raise CompilationError(str(exc)) from exc
        register(registry.activate())
        view = check_name("view", f"{relation.schema}__{relation.identifier}__row_tracking")
        return self._paimon_source_view(view, relation, {}, source=NAME)

    @available
    def paimon_update_rows(self, relation: BaseRelation, where=None, set=None,
                           set_sql=None, write_path=None) -> str:
        from dbt.adapters.paimon.ops.row_ops import update_rows

        result = self._paimon_operation("update_rows", relation, lambda spark, location:
                                        update_rows(spark, location, where, set or {},
                                                    set_sql or {}, write_path=write_path))
        return f"{relation}: {result.message}"

    @available
    def paimon_delete_rows(self, relation: BaseRelation, where=None, write_path=None) -> str:
        from dbt.adapters.paimon.ops.row_ops import delete_rows

        result = self._paimon_operation("delete_rows", relation, lambda spark, location:
                                        delete_rows(spark, location, where,
                                                    write_path=write_path))
        return f"{relation}: {result.message}"

    @available
    def paimon_merge_rows(self, relation: BaseRelation, query: str, condition=None, update="*",
                          insert="*", write_path=None) -> str:
        from dbt.adapters.paimon.ops.row_ops import merge_rows

        result = self._paimon_operation("merge_rows", relation, lambda spark, location:
                                        merge_rows(spark, location, spark.sql(query), condition,
                                                   update, insert, write_path=write_path))
        return f"{relation}: {result.message}"


def _committed_by(node: str):
    """Snapshots committed in this block record this dbt invocation and ``node`` (a model's
    name, or the run-operation): what ``rollback_invocation`` and ``paimon_table_info`` read."""
    from dbt_common.invocation import get_invocation_id

    from dbt.adapters.paimon.format.commit import commit_properties
    from dbt.adapters.paimon.ops.invocations import INVOCATION_PROPERTY, NODE_PROPERTY

    return commit_properties({INVOCATION_PROPERTY: get_invocation_id(), NODE_PROPERTY: node})


@contextlib.contextmanager
def _model_errors(model: str, conflict: str):
    """A model's write failing, as dbt's error: a config error is a compilation error, bad data
    or an unsupported case names the model, a commit conflict says what the other writer did
    (``conflict``) and that nothing of the run is visible, anything else (Spark's errors on the
    query, or a dbt-paimon bug) is the model's failure with its trace in the log."""
    from dbt.adapters.paimon.format.errors import CommitConflictError
    from dbt.adapters.paimon.runtime import PaimonConfigError, PaimonDataError

    try:
        yield
    except PaimonConfigError as exc:
        raise CompilationError(str(exc)) from exc
    except (PaimonDataError, NotImplementedError) as exc:
        raise DbtRuntimeError(_for_model(model, exc)) from exc
    except CommitConflictError as exc:
        raise DbtRuntimeError(
            f"Model '{model}': another writer {conflict}; nothing of this run is visible. Run "
            f"the model again. ({exc})") from exc
    except DbtRuntimeError:
        raise
    except Exception as exc:  # noqa: BLE001 - see the docstring
        raise DbtRuntimeError(error_messages.model_failure(model, exc)) from exc


def _for_model(model: str, exc: BaseException) -> str:
    """The error's message, naming the model once (most of ours name it already)."""
    message = str(exc)
    return message if message.startswith(f"Model '{model}'") else f"Model '{model}': {message}"


# file_format -> whether this process's Spark lacks that data source (it does not change
# while the session lives)
_missing_sources: Dict[str, bool] = {}


def _contract_config(name: str, materialization: str, model: dict):
    """The model's config and NOT NULL columns, with an enforced contract's constraints applied
    (config/constraints.py); without a contract, the config as it is."""
    from dbt.adapters.paimon.config.constraints import apply_contract, contract_keys

    config = dict(model["config"])
    if not (config.get("contract") or {}).get("enforced"):
        return config, ()
    keys = contract_keys(name, model.get("columns") or {}, model.get("constraints") or [])
    return apply_contract(name, materialization, config, keys), keys.not_null


def order_sources_after_seeds(manifest) -> None:
    """A node that reads through source() a table a seed of the project loads (seeds loaded into
    a `raw` schema and declared as sources: a common layout) depends on that seed, so that one
    `dbt build` loads the seed first; dbt itself orders nodes by ref() only. Only seeds: a seed
    depends on nothing, so the added edge never makes a cycle. The edge is in the manifest
    dbt writes (lineage shows it) and in selection (`+model` includes the seed)."""
    nodes = getattr(manifest, "nodes", None) or {}
    sources = getattr(manifest, "sources", None) or {}
    seeds = {(str(n.schema).lower(), str(n.alias).lower()): n.unique_id
             for n in nodes.values() if str(getattr(n, "resource_type", "")) == "seed"}
    if not seeds:
        return
    for node in nodes.values():
        depends_on = getattr(getattr(node, "depends_on", None), "nodes", None)
        if not depends_on:
            continue
        for source_id in [d for d in depends_on if d.startswith("source.")]:
            source = sources.get(source_id)
            if source is None:
                continue
            seed = seeds.get((str(source.schema).lower(), str(source.identifier).lower()))
            if seed and seed not in depends_on and seed != node.unique_id:
                depends_on.append(seed)


def _running_registry():
    """The registry of this process's Spark if it runs, else None (nothing is started)."""
    try:
        return environments.current_registry()
    except RuntimeError:
        return None


def _paimon_names(relation: BaseRelation) -> BaseRelation:
    """The relation with the names its Paimon table has: lower case, as Spark's catalog and
    Paimon's case-insensitive catalogs keep them (a model `Orders` is the table `orders`; SQL
    that says `Orders` finds it, Spark's identifiers being case-insensitive)."""
    return relation.incorporate(path={
        "schema": relation.schema.lower() if relation.schema else relation.schema,
        "identifier": relation.identifier.lower() if relation.identifier else relation.identifier,
    })


def _checked_name(kind: str, name: str, model: str) -> str:
    """A schema or table name Spark's metastore and the warehouse both take as it is (no
    quoting, no path tricks); CompilationError naming the model otherwise."""
    from dbt.adapters.paimon.datasource.registry import check_name

    try:
        return check_name(kind, name)
    except ValueError as exc:
        raise CompilationError(f"Model or schema '{model}': {exc}") from None
