"""The read macros' temporary views of the paimon adapter, the `@available` methods behind
`paimon_snapshot`, `paimon_changes`, `paimon_changes_between`, `paimon_system` and
`paimon_row_tracking`: each checks that the relation is a Paimon table, unpacks it and has
datasource/views.py build the view from plain names.

A mixin of PaimonAdapter (impl.py), whose ``_registry``, ``is_paimon_relation`` and
``_paimon_location`` it uses; dbt finds its methods through AdapterMeta, as it finds the
adapter's own."""

from __future__ import annotations

from typing import Any, Optional

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.base.relation import BaseRelation
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.paimon.relation import paimon_names


class ReadViews(metaclass=AdapterMeta):
    def _paimon_read(self, relation: BaseRelation, macro: str) -> BaseRelation:
        """The relation with its Paimon table's names; CompilationError when it is no Paimon
        table."""
        relation = paimon_names(relation)
        if not self.is_paimon_relation(relation):
            raise CompilationError(f"{macro}: {relation} is not a Paimon table.")
        return relation

    def _view(self, build, relation: BaseRelation, *args, **kwargs) -> str:
        """``build(registry, schema, table, ...)`` of datasource/views.py; the read its
        arguments cannot make is a compilation error."""
        from dbt.adapters.paimon.datasource.views import ViewError

        try:
            return build(self._registry, relation.schema, relation.identifier, *args, **kwargs)
        except ViewError as exc:
            raise CompilationError(str(exc)) from None

    @available
    def paimon_snapshot_view(self, relation: BaseRelation, snapshot_id: Any = None, tag=None,
                             timestamp=None, watermark=None, version=None,
                             branch=None) -> str:
        """Register a temporary view of a Paimon table as of a snapshot, of main or of
        ``branch``; returns its name (views.snapshot_view)."""
        from dbt.adapters.paimon.datasource import views

        relation = self._paimon_read(relation, "paimon_snapshot")
        return self._view(views.snapshot_view, relation, str(relation), snapshot_id, tag,
                          timestamp, watermark, version, branch)

    @available
    def paimon_changes_view(self, relation: BaseRelation, model_id: str, this: BaseRelation,
                            from_start: bool, consumer_id: Optional[str] = None) -> str:
        """A temporary view of what changed in ``relation`` since the consuming model's last
        successful run (rows with ``_row_kind``); the consumer moves on only if this run
        succeeds (``post_model_hook``)."""
        from dbt.adapters.paimon.datasource import views
        from dbt.adapters.paimon.materialize import consumption

        relation = self._paimon_read(relation, "paimon_changes")
        consumer = consumer_id or consumption.default_consumer_id(this.schema, this.identifier)
        location = self._paimon_location(relation)
        try:
            planned = consumption.plan(location.open(), str(consumer), bool(from_start))
        except ValueError as exc:
            raise DbtRuntimeError(f"paimon_changes({relation}) in {this}: {exc}") from exc
        self._pending_positions().hold(model_id, location, planned)
        view = views.view_name(relation.schema, relation.identifier,
                               f"changes_for_{this.schema}", this.identifier)
        return views.source_view(self._registry, view, relation.schema, relation.identifier,
                                 planned.options)

    @available
    def paimon_changes_between_view(self, relation: BaseRelation, start=None, end=None,
                                    mode: Optional[str] = None, start_timestamp=None,
                                    end_timestamp=None) -> str:
        """A temporary view of what changed in ``relation`` between two snapshots, two tags or
        two times, with ``_row_kind`` (views.changes_between_view)."""
        from dbt.adapters.paimon.datasource import views

        relation = self._paimon_read(relation, "paimon_changes_between")
        return self._view(views.changes_between_view, relation, str(relation), start, end, mode,
                          start_timestamp, end_timestamp)

    def _pending_positions(self):
        from dbt.adapters.paimon.materialize.consumption import PendingPositions

        if getattr(self, "_paimon_pending", None) is None:
            self._paimon_pending = PendingPositions()
        return self._paimon_pending


    @available
    def paimon_system_view(self, relation: BaseRelation, name: str, branch=None) -> str:
        """Register a temporary view of Paimon's system table ``name`` of ``relation``, of main
        or of ``branch``; returns its quoted name (views.system_view)."""
        from dbt.adapters.paimon.datasource import views
        from dbt.adapters.paimon.format.errors import PaimonFormatError

        relation = self._paimon_read(relation, "paimon_system")
        try:
            return self._view(views.system_view, relation, str(relation), name, branch)
        except PaimonFormatError as exc:
            raise DbtRuntimeError(str(exc)) from exc

    @available
    def paimon_row_tracking_view(self, relation: BaseRelation) -> str:
        """Register a temporary view of a row-tracking table with _ROW_ID and _SEQUENCE_NUMBER
        (paimon_append with row_tracking=true); returns its name."""
        from dbt.adapters.paimon.datasource import views

        return self._view(views.row_tracking_view,
                          self._paimon_read(relation, "paimon_row_tracking"))
