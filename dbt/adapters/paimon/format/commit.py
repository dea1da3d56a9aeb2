"""Driver-side commits: all tasks' CommitMessages become exactly one snapshot.

Kinds (as in Java Paimon): APPEND adds files; COMPACT replaces a bucket's files by
rewritten ones (same rows; readers and conflict checks know it is not new data); OVERWRITE
replaces whole partitions or the whole table. pypaimon's public ``commit()`` refuses
compact increments and turns ``deleted_files`` into OVERWRITE snapshots, so COMPACT and
multi-partition OVERWRITE go through ``FileStoreCommit._try_commit`` (private API, wrapped
here only), which also runs pypaimon's conflict detection (a file deleted twice, bucket
count changes, ...).
"""

from __future__ import annotations

import uuid
from typing import Any, Dict, List, Mapping, Optional, Sequence

from pypaimon.common.predicate_builder import PredicateBuilder
from pypaimon.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER
from pypaimon.table.row.offset_row import OffsetRow
from pypaimon.write.commit_message import CommitMessage
from pypaimon.write.file_store_commit import FileStoreCommit

from dbt.adapters.paimon.format.errors import CommitConflictError, PaimonFormatError
from dbt.adapters.paimon.format.splits import current_snapshot_id, plan_splits


def _file_store_commit(table) -> FileStoreCommit:
    snapshot_commit = table.new_snapshot_commit()
    if snapshot_commit is None:
        raise PaimonFormatError(f"Paimon table {table.identifier} cannot be committed to "
                                f"(its catalog provides no snapshot commit)")
    return FileStoreCommit(snapshot_commit, table, commit_user=f"dbt-paimon-{uuid.uuid4()}")


def _non_empty(messages: Sequence[CommitMessage]) -> List[CommitMessage]:
    return [m for m in messages if not m.is_empty()]


def _run(table, kind: str, action) -> Optional[int]:
    before = current_snapshot_id(table)
    try:
        action()
    except NotImplementedError:
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


def check_sequence_numbers(table, messages: Sequence[CommitMessage]) -> None:
    """Each bucket's new files must start above its current largest sequence number.

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
    current = {(split.partition_values, split.bucket): split.max_sequence_number
               for split in plan_splits(table, partition_filter=partitions)}
    for (partition, bucket), files in by_bucket.items():
        ranges = sorted((f.min_sequence_number, f.max_sequence_number) for f in files)
        floor = current.get((partition, bucket), -1)
        if ranges[0][0] <= floor:
            raise CommitConflictError(
                f"new files for partition {partition} bucket {bucket} of {table.identifier} "
                f"start at sequence number {ranges[0][0]}, but the bucket already holds "
                f"numbers up to {floor}: the bucket was written since this write read it, or "
                f"two tasks wrote it (shuffle by (partition, bucket)). Retry the run.")
        for (_, high), (low, _) in zip(ranges, ranges[1:]):
            if low <= high:
                raise CommitConflictError(
                    f"two new files for partition {partition} bucket {bucket} of "
                    f"{table.identifier} overlap in sequence numbers ({low} <= {high}): two "
                    f"tasks wrote the same bucket; shuffle by (partition, bucket)")


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
    if check_sequences:
        check_sequence_numbers(table, messages)
    fsc = _file_store_commit(table)
    return _run(table, "APPEND", lambda: fsc.commit(messages, BATCH_COMMIT_IDENTIFIER))


def commit_compact(table, messages: Sequence[CommitMessage],
                   properties: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """One COMPACT snapshot: each message's ``deleted_files`` are removed and its
    ``new_files`` (the rewritten rows, usually at a higher level) added. ``properties`` are
    stored in the snapshot (e.g. marking a full compaction)."""
    messages = _non_empty(messages)
    if not messages:
        return None
    fsc = _file_store_commit(table)
    entries = fsc._collect_manifest_entries(messages)
    changelog = fsc._collect_changelog_entries(messages)
    extra = {"snapshot_properties": dict(properties)} if properties else {}
    return _run(table, "COMPACT", lambda: fsc._try_commit(
        commit_kind="COMPACT", commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_entries_plan=lambda snapshot: entries, changelog_entries=changelog,
        detect_conflicts=True, allow_rollback=False, **extra))


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
    return _run(table, "OVERWRITE", lambda: fsc._try_commit(
        commit_kind="OVERWRITE", commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_entries_plan=provider.provide, changelog_entries=[],
        detect_conflicts=True, allow_rollback=False, allow_empty_commit=True))


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
