"""The table operations of the paimon adapter, the `@available` methods the run-operation macros
call (macros/operations/): compaction, bucket rescale, snapshot expiry and orphan files, tags,
branches, rollback and undoing an invocation, `dbt clone`, table info, and row updates, deletes
and merges. Each unpacks dbt's relation, delegates to ``ops`` and returns its readable result;
bad arguments and unsupported tables become DbtRuntimeError.

A mixin of PaimonAdapter (impl.py), whose ``_registry``, ``_table_resolver``,
``is_paimon_relation``, ``_expose_if_running`` and ``cache_added`` it uses; dbt finds its
methods through AdapterMeta, as it finds the adapter's own."""

from __future__ import annotations

from typing import Any, Dict

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.paimon.relation import paimon_names


class TableOperations(metaclass=AdapterMeta):
    def _paimon_location(self, relation: BaseRelation):
        relation = paimon_names(relation)
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
            with committed_by(f"run-operation {name}"):
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
        relation = paimon_names(relation)
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
        relation = paimon_names(relation)
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
        source, target = paimon_names(source), paimon_names(target)
        spark = registry.activate()
        from_location = self._paimon_location(source)
        to_location = registry.table_location(target.schema, target.identifier)
        try:
            with committed_by(target.identifier):
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
        relation = paimon_names(relation)
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


def committed_by(node: str):
    """Snapshots committed in this block record this dbt invocation and ``node`` (a model's
    name, or the run-operation): what ``rollback_invocation`` and ``paimon_table_info`` read."""
    from dbt_common.invocation import get_invocation_id

    from dbt.adapters.paimon.format.commit import commit_properties
    from dbt.adapters.paimon.ops.invocations import INVOCATION_PROPERTY, NODE_PROPERTY

    return commit_properties({INVOCATION_PROPERTY: get_invocation_id(), NODE_PROPERTY: node})
