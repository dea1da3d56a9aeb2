"""Branches: another line of snapshots of the same table, ``<table>/branch/branch-<name>/``.

A branch has its own snapshot, schema and tag folders; data files and manifests stay in the
table's folders, shared with main (Paimon's layout: Java's ``BranchManager``). A branch is read
and written as the table ``<table>$branch_<name>`` of pypaimon's catalog.

- ``create_branch``: empty (main's latest schema, no snapshot) or from a tag (the tag, its
  snapshot and schemas copied into the branch), with pypaimon's ``FileSystemBranchManager``;
  refused for a tag whose snapshot expired on main (the snapshot file to copy is gone);
- ``delete_branch``: the branch folder goes; files only it referenced are then orphans that
  ``remove_orphan_files`` collects (as in Java);
- ``fast_forward``: main becomes the branch. Written here after Java 1.0's
  ``BranchManager.fastForward``, because pypaimon's copies the snapshot files only: it leaves
  main's later snapshots, schemas and tags in place and copies no schema, so main could point
  at a schema it does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List

# branch_table_name: the branch table's name, for the callers of these operations
from dbt.adapters.paimon.catalog.listing import branch_table_name, branches  # noqa: F401
from dbt.adapters.paimon.datasource.source import TableRef
from dbt.adapters.paimon.format import time_travel
from dbt.adapters.paimon.format.pause_points import pause_at


@dataclass(frozen=True)
class BranchResult:
    message: str
    branches: List[str]


def create_branch(location: TableRef, branch: str, tag=None,
                  ignore_if_exists: bool = False) -> BranchResult:
    table = location.open()
    name = check_branch_name(branch)
    manager = table.branch_manager()
    if manager.branch_exists(name):
        if ignore_if_exists:
            return BranchResult(f"branch '{name}' already exists", [name])
        raise ValueError(f"Branch name '{name}' already exists (delete_branch deletes it)")
    if tag is not None:
        snapshot = time_travel.snapshot_by_tag(table, tag)  # a clear error for an unknown tag
        if table.snapshot_manager().get_snapshot_by_id(snapshot.id) is None:
            # Paimon's createBranch copies main's snapshot file of the tag, which expiry
            # deleted: it would fail after copying the tag, leaving a branch folder without
            # snapshot or schema
            raise ValueError(
                f"Cannot create branch '{name}' from tag '{tag}': its snapshot {snapshot.id} "
                f"expired on main of {location.name} (the tag keeps its files, not the "
                f"snapshot file a branch is made from); nothing was changed. Tag a retained "
                f"snapshot and create the branch from that tag.")
    try:
        manager.create_branch(name, None if tag is None else str(tag))
    except BaseException:
        if manager.branch_exists(name):  # no half-made branch left behind
            manager.drop_branch(name)
        raise
    return BranchResult(f"created branch '{name}'" + (f" from tag '{tag}'" if tag is not None
                                                      else " (empty, main's schema)"), [name])


def base_tag(branch: str) -> str:
    """The tag of main a branch made by a dbt run starts from: it keeps the files of that
    snapshot through main's expiry, also by Paimon Java, which knows nothing of branches when
    it expires main (Java branches start from tags for the same reason)."""
    return f"dbt-branch-{branch}"


def ensure_branch(location: TableRef, branch: str) -> bool:
    """Make sure the table has ``branch``; a new one starts from main's latest snapshot
    (tagged ``base_tag``), or empty with main's schema when main has none. Whether it was
    made."""
    table = location.open()
    name = check_branch_name(branch)
    manager = table.branch_manager()
    if manager.branch_exists(name):
        return False
    latest = table.snapshot_manager().get_latest_snapshot()
    if latest is None:
        manager.create_branch(name)
        return True
    tags = time_travel.tag_manager(table)
    if tags.tag_exists(base_tag(name)):
        tags.replace_tag(latest, base_tag(name))
    else:
        tags.create_tag(latest, base_tag(name))
    manager.create_branch(name, base_tag(name))
    return True


def delete_branch(location: TableRef, branch) -> BranchResult:
    """Delete one branch or several (a list, or names separated by commas)."""
    table = location.open()
    names = [check_branch_name(n) for n in (branch if isinstance(branch, (list, tuple))
                                else str(branch).split(","))]
    manager = table.branch_manager()
    missing = [n for n in names if not manager.branch_exists(n)]
    if missing:
        raise ValueError(f"Branch name(s) {missing} don't exist (branches: "
                         f"{branches(table) or 'none'})")
    tags = time_travel.tag_manager(table)
    for name in names:
        manager.drop_branch(name)
        if tags.tag_exists(base_tag(name)):
            tags.delete_tag(base_tag(name))
    return BranchResult(f"deleted branch(es) {names}", names)


def fast_forward(location: TableRef, branch: str, force: bool = False) -> BranchResult:
    """Make main the branch (Java's fastForward): main's snapshots from the branch's earliest
    one on, its tags of those snapshots and its schemas from that snapshot's schema on give way
    to the branch's snapshot, schema and tag files.

    Java replaces main's commits made after the branch started without a word; here that is
    refused unless ``force``: a write-audit-publish must not drop what others committed to
    main meanwhile.

    Order, so that a kill at any point leaves main readable at some snapshot and a second call
    finishes the job (Java deletes the schemas first and copies the snapshots before them,
    where a kill leaves snapshots whose schema is missing): main's LATEST hint and its
    snapshots from the branch's start, newest first; their tags; the schemas (the branch's
    copied over main's, main's later ones deleted: main's remaining snapshots use schemas up to
    the branch's first, which both have alike); the branch's tags; its snapshots, oldest
    first, and the hints last."""
    table = location.open()
    name = check_branch_name(branch)
    if not table.branch_manager().branch_exists(name):
        raise ValueError(f"Branch name '{name}' doesn't exist (branches: "
                         f"{branches(table) or 'none'})")
    branch_snapshots = _branch_snapshots(table, name)
    if not branch_snapshots:
        raise ValueError(f"Cannot fast forward branch {name}: it has no snapshot (write to it "
                         f"first)")
    earliest = branch_snapshots[0]
    if not force:
        _check_not_moved(location, name)
    file_io = table.file_io
    manager = table.snapshot_manager()
    root = table.table_path.rstrip("/")
    branch_root = f"{root}/branch/branch-{name}"
    file_io.delete_quietly(f"{root}/snapshot/LATEST")
    for snapshot in sorted(manager.list_snapshots(), key=lambda s: -s.id):
        if snapshot.id >= earliest.id:
            file_io.delete_quietly(manager.get_snapshot_path(snapshot.id))
    tags = time_travel.tag_manager(table)
    for tag_name, tag in time_travel.tags(table).items():
        if tag.id >= earliest.id:
            file_io.delete_quietly(tags.tag_path(tag_name))
    pause_at("fast-forward-main-cut")
    branch_schemas = set(_schema_ids(file_io, f"{branch_root}/schema"))
    _copy_folder(file_io, f"{branch_root}/schema", f"{root}/schema")
    for schema_id in _schema_ids(file_io, f"{root}/schema"):
        if schema_id >= earliest.schema_id and schema_id not in branch_schemas:
            file_io.delete_quietly(f"{root}/schema/schema-{schema_id}")
    _copy_folder(file_io, f"{branch_root}/tag", f"{root}/tag")
    pause_at("fast-forward-schemas-copied")
    _copy_folder(file_io, f"{branch_root}/snapshot", f"{root}/snapshot")
    if tags.tag_exists(base_tag(name)):  # copied over from the branch: its job is done
        tags.delete_tag(base_tag(name))
    return BranchResult(f"main is now branch '{name}' (snapshots {earliest.id}.."
                        f"{branch_snapshots[-1].id})", [name])


def _branch_snapshots(table, branch: str) -> list:
    return sorted(table.snapshot_manager().copy_with_branch(branch).list_snapshots(),
                  key=lambda s: s.id)


def publish_branch(tables: Iterable[TableRef], branch: str,
                   delete: bool = True, force: bool = False) -> BranchResult:
    """Fast-forward main to ``branch`` in every one of ``tables`` that has it (the publish
    step of write-audit-publish), then delete those branches unless ``delete`` is false.
    Table by table: a failure part-way leaves the tables before it published."""
    name = check_branch_name(branch)
    located = [location for location in tables if name in branches(location.open())]
    if not force:  # refuse before anything changes, not half-way
        for location in located:
            _check_not_moved(location, name)
    published = []
    for location in located:
        fast_forward(location, name, force)
        if delete:
            delete_branch(location, name)
        published.append(location.name)
    if not published:
        raise ValueError(f"no table of the warehouse has branch '{name}'")
    return BranchResult(f"published branch '{name}' to main of {published}"
                        + (" and deleted the branch" if delete else ""), published)


def _check_not_moved(location: TableRef, branch: str) -> None:
    """ValueError if main moved since ``branch`` started (what fast_forward refuses)."""
    table = location.open()
    on_branch = {s.id: s for s in _branch_snapshots(table, branch)}
    if not on_branch:
        return
    earliest = min(on_branch.values(), key=lambda s: s.id)
    # main's snapshots from the branch's start that are not the branch's own (a fast-forward
    # that was killed part-way has copied some of those already)
    moved = sorted(s.id for s in table.snapshot_manager().list_snapshots()
                   if s.id >= earliest.id and (s.id not in on_branch or
                                               s.time_millis != on_branch[s.id].time_millis))
    if moved:
        raise ValueError(
            f"main of {location.name} has commits made after branch '{branch}' started at "
            f"snapshot {earliest.id} (main's snapshot(s) "
            f"{moved[0] if len(moved) == 1 else f'{moved[0]}..{moved[-1]}'}): "
            f"fast-forwarding would drop them; nothing was changed. Build the branch again "
            f"from main's latest state (delete_branch, then build with paimon_branch), or "
            f"pass force: true to replace them.")


def _schema_ids(file_io, folder: str) -> List[int]:
    try:
        statuses = file_io.list_status(folder)
    except (FileNotFoundError, OSError):
        return []
    return [int(s.base_name[len("schema-"):]) for s in statuses
            if s.base_name.startswith("schema-") and s.base_name[len("schema-"):].isdigit()]


def _copy_folder(file_io, source: str, target: str) -> None:
    """Copy a metadata folder's files: numbered ones (snapshot-3, schema-1) in id order, the
    hints (LATEST, EARLIEST) last; an atomic write's hidden temporary files not at all."""
    try:
        statuses = file_io.list_status(source)
    except (FileNotFoundError, OSError):
        return
    if not file_io.exists(target):
        file_io.mkdirs(target)

    def order(name: str):
        number = name.rsplit("-", 1)[-1]
        return (name.isupper(), int(number) if number.isdigit() else -1, name)

    for file_name in sorted((s.base_name for s in statuses if not s.base_name.startswith(".")),
                            key=order):
        file_io.copy_file(f"{source}/{file_name}", f"{target}/{file_name}", overwrite=True)


def check_branch_name(value) -> str:
    """A valid branch name, or ValueError saying why not."""
    from pypaimon.branch.branch_manager import BranchManager

    name = "" if value is None else str(value).strip()
    BranchManager.validate_branch(name)  # not main, not blank, not all digits
    if "/" in name or "$" in name or name.startswith(".") or any(c.isspace() for c in name):
        raise ValueError(f"branch name {name!r} must not contain '/', '$' or spaces nor start "
                         f"with '.': it names the folder branch/branch-<name>")
    return name
