"""The paimon adapter: dbt-spark's adapter on an embedded session, plus Paimon tables as relations.

Glue only: where Spark runs is in ``environments``, Spark's view of Paimon tables in
``datasource``, model building in ``materialize``, table operations in ``ops``, Paimon's format
in ``format``, merging in ``runtime``; what the adapter takes from dbt's manifest is in
``manifest_hooks``. Methods marked ``@available`` are what the macros call: each unpacks dbt's
relations and delegates. The read macros' temporary views (``adapter_reads.ReadViews``) and the
run-operations' table operations (``adapter_operations.TableOperations``) are mixins of their
own; this module keeps the relations, the model and seed builds, docs and freshness.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Type

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.impl import ConstraintSupport
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.relation import RelationType
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon import environments, error_messages, manifest_hooks
from dbt.adapters.paimon.adapter_config import PaimonConfig
from dbt.adapters.paimon.adapter_operations import TableOperations, committed_by
from dbt.adapters.paimon.adapter_reads import ReadViews
from dbt.adapters.paimon.catalog_integrations import CATALOG_INTEGRATIONS
from dbt.adapters.paimon.connections import PaimonConnectionManager
from dbt.adapters.paimon.python_models import SessionPythonJobHelper
from dbt.adapters.paimon.relation import PaimonRelation, paimon_names

logger = AdapterLogger("Paimon")
# a Paimon table's catalog entry is a view carrying the table's schema id (registry.py)
PAIMON_ENTRY_MARK = "paimon.schema-id="


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


class PaimonAdapter(ReadViews, TableOperations, SparkAdapter):
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
        """dbt hands the adapter its manifest here, before it compiles the run's graph: branches,
        catalog routes, the project's relations, seeds before their sources' readers, and the
        readers of a shared partial_update table after its writers (manifest_hooks.py)."""
        super().set_macro_resolver(macro_resolver)
        manifest_hooks.apply(macro_resolver, self.connections, self.get_catalog_integration,
                             self._catalog_route)

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
        relation = paimon_names(relation)
        wh.drop_table(registry.warehouse_of(relation.schema), relation.schema,
                      relation.identifier, catalog_options=registry.options_of(relation.schema))
        registry.forget(relation.schema, relation.identifier)

    @available
    def rename_paimon_table(self, from_relation: BaseRelation, to_relation: BaseRelation) -> None:
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        from_relation, to_relation = paimon_names(from_relation), paimon_names(to_relation)
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

    def post_model_hook(self, config: Any, context: Any) -> None:
        import sys

        super().post_model_hook(config, context)
        # dbt calls this hook in a `finally`: an exception in flight means the model failed
        model_id = getattr(getattr(config, "model", None), "unique_id", None)
        self._pending_positions().settle(model_id, succeeded=sys.exc_info()[1] is None)

    @available
    def spark_lacks_data_source(self, file_format: str) -> bool:
        """Whether this Spark has no data source named ``file_format`` (spark_env.py)."""
        from dbt.adapters.paimon.datasource.spark_env import lacks_data_source

        return lacks_data_source(self._registry.activate, file_format)

    @available
    def paimon_warehouse(self) -> str:
        return self.config.credentials.warehouse

    # -- Paimon materializations ------------------------------------------------------------
    @available
    def paimon_table_definition(self, model: dict, materialization: str, sql: str,
                                local_rows=None):
        """Validate a model's config against its query (or its rows, ``local_rows``: Arrow
        this process holds, e.g. a seed's file) before anything is written."""
        from dbt.adapters.paimon.config.constraints import contract_config
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder

        name = model.get("alias") or model["name"]
        with error_messages.model_errors(name):
            config, not_null = contract_config(name, materialization, model)
            return ModelBuilder(self._registry).definition(
                name, materialization, config, sql, not_null,
                arrow_schema=None if local_rows is None else local_rows.schema)

    @available
    def paimon_target_relation(self, definition, this: BaseRelation) -> BaseRelation:
        """The Paimon table a model writes: itself, or the shared table named by `target`."""
        return self._written_table(definition.target, this, definition.model)

    def _written_table(self, target: Optional[str], this: BaseRelation, model: str
                       ) -> BaseRelation:
        """``this`` as a table, or the table ``target`` names (``schema.table``, or a table of
        this's schema); its names checked before anything is written: they become warehouse
        folders and Spark identifiers."""
        if not target:
            relation = paimon_names(this.incorporate(type="table"))
        else:
            schema, _, identifier = str(target).rpartition(".")
            relation = paimon_names(self.Relation.create(
                schema=schema or this.schema, identifier=identifier, type="table", is_paimon=True
            ))
        _checked_name("schema", relation.schema, model)
        _checked_name("table", relation.identifier, model)
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
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder, ModelRun
        from dbt.adapters.paimon.materialize.standard_writes import WriteRequest

        relation = paimon_names(relation)
        request = None
        if standard is not None:
            request = WriteRequest.from_config(
                standard["strategy"], dict(standard.get("config") or {}),
                standard.get("batch_start"), standard.get("batch_end"))
        run = ModelRun(definition, relation.schema, relation.identifier, sql, full_refresh,
                       on_schema_change or "ignore", overwrite_partitions, request, local_rows)
        builder = ModelBuilder(self._registry)
        with error_messages.model_errors(
                definition.model, f"committed to {relation} while this run was writing it"):
            with committed_by(definition.model):
                result = builder.build(run)
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
        from dbt.adapters.paimon.materialize import data_evolution_update as update

        name = model.get("alias") or model["name"]
        with error_messages.model_errors(name):
            update.check_config(name, model["config"])
            relation = self._written_table(model["config"]["target"], this, name)
            if not self._registry.is_paimon_table(relation.schema, relation.identifier):
                raise update.not_a_target(name, str(relation))
        return relation

    @available
    def paimon_update_columns(self, model: dict, relation: BaseRelation, sql: str
                              ) -> AdapterResponse:
        """Write the model's columns into the rows of ``relation`` its `update_key` names: one
        Paimon commit of column files (data_evolution_update.py), or nothing on error."""
        from dbt.adapters.paimon.materialize.data_evolution_update import update_from_query

        name = model.get("alias") or model["name"]
        registry = self._registry
        with error_messages.model_errors(
                name, f"updated rows of {relation} while this run was writing its columns"):
            owned, result, choice = update_from_query(
                registry, name, model["config"], relation.schema, relation.identifier, sql,
                lambda: committed_by(name))
        logger.debug(f"Model '{name}' written {choice.label}: {choice.reason}")
        registry.expose(relation.schema, relation.identifier)
        snapshot = (f" (snapshot {result.snapshot_id})" if result.snapshot_id is not None
                    else " (no rows)")
        inserted = f", INSERT {result.inserted} new rows" if result.inserted else ""
        return AdapterResponse(
            _message=f"UPDATE {owned} of {result.rows} rows in {result.ranges} column "
                     f"file(s){inserted} {choice.label}{snapshot}",
            rows_affected=result.rows + result.inserted)

    # -- seeds (materialize/seed_csv.py) -------------------------------------------------------
    @available
    def paimon_seed_rows(self, model: dict, this: BaseRelation, empty: bool = False
                         ) -> Dict[str, Any]:
        """Read the seed's CSV (Arrow, with dbt's types): what seed_csv.seed_rows returns."""
        from dbt.adapters.paimon.materialize.seed_csv import SeedFileError, seed_rows

        try:
            return seed_rows(model, this.identifier, bool(empty), self._registry.activate)
        except SeedFileError as exc:
            raise DbtRuntimeError(str(exc)) from None

    @available
    def paimon_seed_view(self, seed: Dict[str, Any]) -> None:
        """Register the seed's rows as the temporary view its ``sql`` reads."""
        from dbt.adapters.paimon.materialize.seed_csv import register_rows

        register_rows(self._registry.activate(), seed)

    @available
    def paimon_drop_seed_rows(self, seed: Dict[str, Any]) -> None:
        from dbt.adapters.paimon.materialize.seed_csv import drop_rows

        drop_rows(self._registry.activate(), seed)

    # -- dbt snapshot (materialize/snapshot_rows.py) -------------------------------------------------
    @available
    def paimon_snapshot_definition(self, model: dict, sql: str, scd_id: str):
        """A snapshot's table: a Paimon primary-key table on ``scd_id``; the source's
        unique_key checked (never NULL, never twice) before anything is written."""
        from dbt.adapters.paimon.materialize import snapshot_rows
        from dbt.adapters.paimon.materialize.model_builder import ModelBuilder

        name = model.get("alias") or model["name"]
        config = dict(model["config"])
        registry = self._registry
        with error_messages.model_errors(name):
            table_config = snapshot_rows.table_config(name, config, scd_id)
            snapshot_rows.check_unique_key(registry.activate(), name, model["compiled_code"],
                                           config.get("unique_key"))
            return ModelBuilder(registry).definition(name, "paimon_pk", table_config, sql)

    @available
    def paimon_snapshot_rows(self, staging_sql: str, relation: BaseRelation,
                             columns: Dict[str, str]) -> str:
        """A query of the rows one snapshot run merges: closed versions (stored values, new
        dbt_valid_to) and new versions. Returns SQL reading a temporary view of them."""
        from dbt.adapters.paimon.datasource.views import view_name
        from dbt.adapters.paimon.materialize import snapshot_rows

        spark = self._registry.activate()
        rows = snapshot_rows.merge_rows(
            spark, staging_sql, f"`{relation.schema}`.`{relation.identifier}`", dict(columns))
        view = view_name(relation.schema, relation.identifier, "dbt_snapshot_rows")
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
        relation = paimon_names(relation)
        from dbt.adapters.paimon.catalog import warehouse as wh

        registry = self._registry
        changes = wh.comment_changes(registry.open_table(relation.schema, relation.identifier),
                                     table_comment, column_comments)
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

def _running_registry():
    """The registry of this process's Spark if it runs, else None (nothing is started)."""
    try:
        return environments.current_registry()
    except RuntimeError:
        return None


def _checked_name(kind: str, name: str, model: str) -> str:
    """A schema or table name Spark's metastore and the warehouse both take as it is (no
    quoting, no path tricks); CompilationError naming the model otherwise."""
    from dbt.adapters.paimon.datasource.registry import check_name

    try:
        return check_name(kind, name)
    except ValueError as exc:
        raise CompilationError(f"Model or schema '{model}': {exc}") from None
