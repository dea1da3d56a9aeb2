"""Driver-side commits: all tasks' CommitMessages become exactly one snapshot.

Kinds (as in Java Paimon): APPEND adds files; COMPACT replaces a bucket's files by
rewritten ones (same rows; readers and conflict checks know it is not new data); OVERWRITE
replaces whole partitions or the whole table. pypaimon's public ``commit()`` refuses
compact increments and turns ``deleted_files`` into OVERWRITE snapshots, so COMPACT and
multi-partition OVERWRITE go through ``FileStoreCommit._try_commit`` (private API, wrapped
here only), which also runs pypaimon's conflict detection (a file deleted twice, bucket
count changes, ...).

Concurrent writers (other processes): pypaimon retries a commit on top of each newer snapshot
it finds. Two guards make that safe here: the snapshot file is created without ever replacing
an existing one (pypaimon's local rename replaces a snapshot another process wrote between
its existence check and its rename: a lost commit), and a primary-key APPEND re-checks its
sequence numbers against the snapshot each attempt builds on (a concurrent writer of the same
bucket would otherwise leave two files with overlapping numbers).
"""

from __future__ import annotations

import uuid
import os
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, ContextManager, Dict, Iterator, List, Mapping, Optional, Sequence

from dbt.adapters.paimon.format import pypaimon_compat  # noqa: F401  (first: mends pypaimon)
from pypaimon.common.json_util import JSON
from pypaimon.common.predicate_builder import PredicateBuilder
from pypaimon.filesystem.local_file_io import LocalFileIO
from pypaimon.snapshot.renaming_snapshot_commit import RenamingSnapshotCommit
from pypaimon.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from pypaimon.snapshot.snapshot_commit import SnapshotCommit
from pypaimon.table.row.offset_row import OffsetRow
from pypaimon.write.commit_message import CommitMessage
from pypaimon.write.file_store_commit import FileStoreCommit

from dbt.adapters.paimon.format.errors import (CatalogLockTimeout, CommitConflictError,
                                               PaimonFormatError)
from dbt.adapters.paimon.format.pause_points import pause_at
from dbt.adapters.paimon.format.splits import (current_snapshot_id, is_postpone_table,
                                               plan_splits)


# Who commits: stored in each snapshot's ``properties`` (read by Paimon Java >= 1.2, ignored by
# 1.0 readers), e.g. the dbt invocation and model, so that one invocation's commits can be found
# and undone across tables (ops/invocations.py). A context variable: dbt builds models in
# threads, each model's commits happen in its thread.
_COMMIT_PROPERTIES: ContextVar[Mapping[str, str]] = ContextVar("paimon_commit_properties",
                                                                default={})


@contextmanager
def commit_properties(properties: Mapping[str, str]) -> Iterator[None]:
    """Every snapshot committed in this block (this thread) carries ``properties``."""
    token = _COMMIT_PROPERTIES.set({str(k): str(v) for k, v in properties.items()})
    try:
        yield
    finally:
        _COMMIT_PROPERTIES.reset(token)


def _file_store_commit(table) -> FileStoreCommit:
    snapshot_commit = table.new_snapshot_commit()
    if snapshot_commit is None:
        raise PaimonFormatError(f"Paimon table {table.identifier} cannot be committed to "
                                f"(its catalog provides no snapshot commit)")
    return FileStoreCommit(GuardedSnapshotCommit(snapshot_commit), table,
                           commit_user=f"dbt-paimon-{uuid.uuid4()}")


class GuardedSnapshotCommit(SnapshotCommit):
    """pypaimon's snapshot commit, made safe between processes on a local warehouse.

    ``RenamingSnapshotCommit`` checks that ``snapshot-<id>`` does not exist, then renames its
    temporary file onto it; its lock is per process, and a POSIX rename replaces an existing
    file, so two processes committing the same id can both "succeed" and the first commit is
    lost. Here the snapshot is published with ``os.link``, which fails when the name exists.
    Other file systems, local ones without hard links and catalog commits keep pypaimon's own
    commit."""

    def __init__(self, inner: SnapshotCommit):
        self.inner = inner

    def commit(self, base_snapshot_uuid, snapshot, statistics) -> bool:
        extra = _COMMIT_PROPERTIES.get()
        if extra:
            snapshot.properties = {**(snapshot.properties or {}), **extra}
        pause_at("commit-manifests-written")
        if snapshot.commit_kind == "COMPACT":
            pause_at("compact-manifests-written")
        committed = None
        if isinstance(self.inner, RenamingSnapshotCommit) and \
                isinstance(self.inner.file_io, LocalFileIO):
            committed = self._link_snapshot(snapshot)
        if committed is None:  # not local, or a file system without hard links
            committed = self.inner.commit(base_snapshot_uuid, snapshot, statistics)
        if committed:
            pause_at("commit-snapshot-written")
        return committed

    def _link_snapshot(self, snapshot) -> Optional[bool]:
        manager = self.inner.snapshot_manager
        file_io = self.inner.file_io
        target = file_io.to_filesystem_path(manager.get_snapshot_path(snapshot.id))
        folder = os.path.dirname(target)
        os.makedirs(folder, exist_ok=True)
        temporary = os.path.join(folder, f".{os.path.basename(target)}.{uuid.uuid4()}.tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(JSON.to_json(snapshot, indent=2))
        try:
            os.link(temporary, target)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some mounted file systems): pypaimon's rename
            return None
        finally:
            os.unlink(temporary)
        self.inner._commit_latest_hint(snapshot.id)
        return True

    def close(self):
        self.inner.close()


def _non_empty(messages: Sequence[CommitMessage]) -> List[CommitMessage]:
    return [m for m in messages if not m.is_empty()]


def _with_bucket_counts(table, messages: List[CommitMessage]) -> List[CommitMessage]:
    """A postpone-bucket table (``bucket`` = -2): each real bucket's manifest entries record
    its partition's bucket count (pypaimon would write the table's -2), taken from the
    partition's live files where a message does not carry it."""
    if not is_postpone_table(table):
        return messages
    missing = [m for m in messages if m.bucket >= 0 and m.total_buckets is None]
    if missing:
        from dbt.adapters.paimon.format.postpone_buckets import known_bucket_counts

        known = known_bucket_counts(table, current_snapshot_id(table))
        for message in missing:
            count = known.get(tuple(message.partition))
            if count is None:
                raise PaimonFormatError(
                    f"a commit to postpone-bucket table {table.identifier} writes bucket "
                    f"{message.bucket} of partition {message.partition}, whose bucket count "
                    f"is unknown")
            message.total_buckets = count
    return messages


def commit_lock(table) -> ContextManager[None]:
    """The lock a commit of ``table`` publishes its snapshot under, as the table's catalog
    environment gives it (Java: ``CatalogEnvironment.lockFactory``): a table of the JDBC or
    Hive catalog carries an environment whose ``commit_lock(identifier)`` is the JDBC catalog's
    or the Hive Metastore's lock when that catalog locks (catalog/catalogs.py
    ``FileSnapshotsEnvironment``). Any other table takes none: the snapshot file's atomic
    creation is the commit."""
    environment = getattr(table, "catalog_environment", None)
    lock = getattr(environment, "commit_lock", None)
    return lock(table.identifier) if lock is not None else nullcontext()


def _run(table, kind: str, action) -> Optional[int]:
    """``action`` (one commit, with pypaimon's retries) under the JDBC catalog's or the Hive
    Metastore's lock when the table's catalog locks (``commit_lock``). Paimon Java holds that
    lock only while it publishes the snapshot file; held around the whole commit here, so that
    a lock not taken in time fails the commit at once instead of being retried by pypaimon's
    commit loop (it retries any error of the publishing step). Java writers and this one still
    exclude each other where Java's writers exclude each other."""
    before = current_snapshot_id(table)
    try:
        with commit_lock(table):
            action()
    except (NotImplementedError, CommitConflictError, CatalogLockTimeout):
        raise
    except RuntimeError as exc:
        message = str(exc)
        if "conflict" in message.lower() or "Commit failed" in message:
            raise CommitConflictError(
                f"{kind} commit to Paimon table {table.identifier} failed: {message}. Another "
                f"writer changed the same files or buckets; nothing of this commit is visible, "
                f"its files are still on disk (call abort to delete them) -- retry the run"
            ) from exc
        raise PaimonFormatError(
            f"{kind} commit to Paimon table {table.identifier} failed: {message}") from exc
    after = current_snapshot_id(table)
    return after if after != before else None


def check_sequence_numbers(table, messages: Sequence[CommitMessage],
                           snapshot_id: Optional[int] = None) -> None:
    """Each bucket's new files must start above its largest sequence number at ``snapshot_id``
    (default: the latest snapshot; 0 = the empty table).

    Two writers of one bucket in one run (or a writer that read an older snapshot) would
    otherwise produce overlapping numbers and the wrong version of a key could win.
    """
    if not table.primary_keys:
        return
    by_bucket: Dict[tuple, List] = {}
    for message in messages:
        if message.new_files:
            by_bucket.setdefault((tuple(message.partition), message.bucket), []).extend(
                message.new_files)
    if not by_bucket:
        return
    keys = list(table.partition_keys)
    partitions = [dict(zip(keys, p)) for p in {p for p, _ in by_bucket}] if keys else None
    splits = [] if snapshot_id == 0 else plan_splits(table, snapshot_id, partitions)
    current = {(split.partition_values, split.bucket): split.max_sequence_number
               for split in splits}
    for (partition, bucket), files in by_bucket.items():
        ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in files)
        floor = current.get((partition, bucket), -1)
        if ranges[0][0] <= floor:
            raise CommitConflictError(
                f"new files for partition {partition} bucket {bucket} of {table.identifier} "
                f"start at sequence number {ranges[0][0]}, but the bucket already holds "
                f"numbers up to {floor}: the bucket was written since this write read it, or "
                f"two tasks wrote it (shuffle by (partition, bucket)). Retry the run.")
        _check_overlaps(table, partition, bucket, files)


def _check_overlaps(table, partition, bucket, files) -> None:
    """New files of one bucket whose sequence numbers overlap must hold different keys: one
    writer's sorted run rolls into several files of disjoint key ranges whose numbers (arrival
    order) interleave, as Java's ``MergeTreeWriter`` writes them; two writers of the bucket
    would hold some keys twice under the same numbers, and either version could win."""
    ordered = sorted(files, key=lambda f: f.min_sequence_number)
    for i, first in enumerate(ordered):
        for second in ordered[i + 1:]:
            if second.min_sequence_number > first.max_sequence_number:
                break
            low = max(tuple(first.min_key.values), tuple(second.min_key.values))
            high = min(tuple(first.max_key.values), tuple(second.max_key.values))
            if low <= high:
                raise CommitConflictError(
                    f"two new files for partition {partition} bucket {bucket} of "
                    f"{table.identifier} overlap in sequence numbers "
                    f"({second.min_sequence_number} <= {first.max_sequence_number}) and in "
                    f"keys: two tasks wrote the same bucket; shuffle by (partition, bucket)")


def commit_append(table, messages: Sequence[CommitMessage],
                  check_sequences: bool = True) -> Optional[int]:
    """One APPEND snapshot of all messages' new (and changelog) files; its id, or None
    when there was nothing to commit. CommitConflictError on a conflict."""
    messages = _non_empty(messages)
    for m in messages:
        if m.deleted_files:
            raise ValueError("commit_append got messages with deleted_files: use "
                             "commit_compact (rewrite) or commit_overwrite")
    if not messages:
        return None
    messages = _with_bucket_counts(table, messages)
    fsc = _file_store_commit(table)
    if check_sequences and table.primary_keys:
        _check_sequences_on_every_attempt(fsc, table, messages)
    return _run(table, "APPEND", lambda: fsc.commit(messages, BATCH_COMMIT_IDENTIFIER))


def _check_sequences_on_every_attempt(fsc: FileStoreCommit, table, messages) -> None:
    """pypaimon's commit plans each attempt on the latest snapshot and retries on top of a
    newer one when another process committed first; the sequence check must run against
    exactly the snapshot the attempt builds on (a CommitConflictError ends the retries)."""
    try_commit = fsc._try_commit

    def guarded(*args, commit_entries_plan, **kwargs):
        def plan(latest_snapshot):
            check_sequence_numbers(table, messages,
                                   latest_snapshot.id if latest_snapshot else 0)
            return commit_entries_plan(latest_snapshot)
        return try_commit(*args, commit_entries_plan=plan, **kwargs)

    fsc._try_commit = guarded


def commit_compact(table, messages: Sequence[CommitMessage],
                   properties: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """One COMPACT snapshot: each message's ``deleted_files`` are removed and its
    ``new_files`` (the rewritten rows, usually at a higher level) added. ``properties`` are
    stored in the snapshot (e.g. marking a full compaction)."""
    messages = _non_empty(messages)
    if not messages:
        return None
    messages = _with_bucket_counts(table, messages)
    fsc = _file_store_commit(table)
    entries = fsc._collect_manifest_entries(messages)
    changelog = fsc._collect_changelog_entries(messages)
    extra = {"snapshot_properties": dict(properties)} if properties else {}
    # deletion-vector tables: each rewritten bucket's index file is replaced
    index_adds = [e for m in messages for e in m.index_adds]
    index_deletes = [e for m in messages for e in m.index_deletes]
    return _run(table, "COMPACT", lambda: fsc._try_commit(
        commit_kind="COMPACT", commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_entries_plan=lambda snapshot: entries, changelog_entries=changelog,
        detect_conflicts=True, allow_rollback=False,
        index_adds=index_adds or None, index_deletes=index_deletes or None,
        # a lookup changelog commit changes no data file (write/spark_job.py)
        allow_empty_commit=bool(changelog), **extra))


def commit_overwrite(table, messages: Sequence[CommitMessage],
                     partitions: Optional[Sequence[Mapping[str, Any]]] = None) -> Optional[int]:
    """One OVERWRITE snapshot: the files of ``partitions`` (list of {partition col: value}),
    or of the whole table when None, are replaced by the messages' new files."""
    messages = _non_empty(messages)
    keys = list(table.partition_keys)
    partition_filter = None
    if partitions is not None:
        if not keys:
            raise ValueError(f"{table.identifier} is not partitioned: overwrite it whole "
                             f"(partitions=None)")
        builder = PredicateBuilder(table.partition_keys_fields)
        alternatives = []
        for spec in partitions:
            if set(spec) != set(keys):
                raise ValueError(f"overwrite partition {dict(spec)} must name every partition "
                                 f"key {keys}")
            alternatives.append(builder.and_predicates(
                [builder.is_null(k) if spec[k] is None else builder.equal(k, spec[k])
                 for k in keys]))
        if not alternatives:
            raise ValueError("partitions is an empty list: pass None to overwrite the table")
        partition_filter = builder.or_predicates(alternatives) if len(alternatives) > 1 \
            else alternatives[0]
        for m in messages:
            if not partition_filter.test(OffsetRow(tuple(m.partition), 0, len(m.partition))):
                raise ValueError(f"a message writes partition {dict(zip(keys, m.partition))}, "
                                 f"which is not among the overwritten partitions")
    fsc = _file_store_commit(table)
    provider = fsc._overwrite_changes_provider(partition_filter, messages)
    # the replaced partitions' index files go with their data files: dynamic-bucket HASH
    # indexes (as pypaimon's own overwrite does) and deletion vectors
    index_adds = [e for m in messages for e in m.index_adds]
    index_deletes = fsc._overwrite_hash_index_deletes(
        partition_filter, [e for m in messages for e in m.index_deletes]) + \
        _replaced_deletion_indexes(table, partitions)
    return _run(table, "OVERWRITE", lambda: fsc._try_commit(
        commit_kind="OVERWRITE", commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_entries_plan=provider.provide, changelog_entries=[],
        detect_conflicts=True, allow_rollback=False, allow_empty_commit=True,
        index_adds=index_adds or None, index_deletes=index_deletes or None))


def _replaced_deletion_indexes(table, partitions) -> list:
    """Deletion-vector index files of the partitions an overwrite replaces (their data files
    all go): they leave the index with them."""
    if not table.options.deletion_vectors_enabled():
        return []
    from pypaimon.manifest.index_manifest_entry import IndexManifestEntry
    from pypaimon.table.row.generic_row import GenericRow

    out = []
    for split in plan_splits(table, partition_filter=list(partitions) if partitions else None):
        partition = GenericRow(list(split.partition_values), table.partition_keys_fields)
        out += [IndexManifestEntry(1, partition, split.bucket, meta)
                for meta in split.deletion_index_files]
    return out


def abort(table, messages: Sequence[CommitMessage]) -> None:
    """Delete the files the messages wrote (new, changelog); never their deleted_files.
    Only for messages known NOT to be committed."""
    _file_store_commit(table).abort(list(messages))


def abort_unless_committed(table, messages: Sequence[CommitMessage]) -> None:
    """After a failed commit: delete the messages' files unless the commit made them visible
    after all (a snapshot written whose response failed must keep its files)."""
    from dbt.adapters.paimon.format.splits import plan_splits

    names = {f.file_name for m in messages for f in m.new_files}
    try:
        live = {f.file_name for s in plan_splits(table) for f in s.files}
    except Exception:  # noqa: BLE001 - cannot tell: keep the files (orphans are harmless)
        return
    if not names & live:
        abort(table, messages)
