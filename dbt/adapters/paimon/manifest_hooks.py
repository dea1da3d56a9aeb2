"""What the adapter takes from dbt's manifest before the run's graph is compiled
(``PaimonAdapter.set_macro_resolver``): the branch and catalog of each table, the relations the
project builds, seeds ordered before the nodes reading their tables through source(), and the
writers of a shared partial_update table before the nodes reading it."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

from dbt.adapters.paimon import error_messages
from dbt.adapters.paimon.branch_config import config_value, table_branches, written_table
from dbt.adapters.paimon.catalog_integrations import catalog_routes


def apply(manifest, connections, catalog_integration: Callable, catalog_route: Callable) -> None:
    """- the tables whose node config names a branch (paimon_branch) are read and written on it
      by every node (branch_config.py); a bad name fails here, before anything runs;
    - the tables of a catalogs.yml catalog are found there (catalog_integrations.py);
    - the relations its seeds, models and snapshots build name the node when a query cannot
      find one (error_messages);
    - a node reading through source() a table that a seed of the project loads runs after
      that seed (order_sources_after_seeds);
    - a node reading a table that several partial_update models assemble runs after all of them
      (order_readers_after_shared_writers)."""
    nodes = getattr(manifest, "nodes", None) or {}
    connections.paimon_table_branches = table_branches(nodes.values())
    sources = getattr(manifest, "sources", None) or {}
    connections.paimon_catalog_routes = catalog_routes(
        [*nodes.values(), *sources.values()], catalog_integration, catalog_route)
    error_messages.set_project_relations(project_relations(nodes))
    order_sources_after_seeds(manifest)
    order_readers_after_shared_writers(manifest)


def project_relations(nodes) -> Dict[Tuple[str, str], Tuple[str, str]]:
    """(schema, name) in lower case -> (kind, node name) of what the project's seeds, models
    and snapshots build (ephemeral models build nothing)."""
    relations = {}
    for node in nodes.values():
        kind = str(getattr(node, "resource_type", ""))
        materialized = getattr(getattr(node, "config", None), "materialized", None)
        if kind in ("seed", "model", "snapshot") and materialized != "ephemeral":
            relations[(str(node.schema).lower(), str(node.alias).lower())] = (kind, node.name)
    return relations


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
        depends_on = _parents(node)
        if not depends_on:
            continue
        for source_id in [d for d in depends_on if d.startswith("source.")]:
            source = sources.get(source_id)
            if source is None:
                continue
            seed = seeds.get((str(source.schema).lower(), str(source.identifier).lower()))
            if seed and seed not in depends_on and seed != node.unique_id:
                depends_on.append(seed)


def order_readers_after_shared_writers(manifest) -> None:
    """A node that reads a table several partial_update models assemble (their ``target``),
    through a ref() of one writer (every writer model is a view of the shared table), depends on
    every writer: a data test of one writer's columns, a mart. dbt orders it after the writer it
    names only, so with ``--threads`` above 1 it could run before another writer has added its
    columns to the table ("cannot resolve column") or its rows. An edge that would make a cycle
    is left out (a writer built from that node: the node reads the table as the writers before
    it left it). Like order_sources_after_seeds, the edges are in the manifest dbt writes."""
    nodes = getattr(manifest, "nodes", None) or {}
    groups: Dict[Tuple[str, str], List[str]] = {}
    for node in nodes.values():
        config = getattr(node, "config", None)
        if str(getattr(node, "resource_type", "")) == "model" \
                and getattr(config, "materialized", None) == "partial_update" \
                and config_value(config, "target"):
            groups.setdefault(written_table(node, config), []).append(node.unique_id)
    group_of = {writer: table for table, writers in groups.items() if len(writers) > 1
                for writer in writers}
    if not group_of:
        return
    for node in nodes.values():
        depends_on = _parents(node)
        if not depends_on:
            continue
        for table in sorted({group_of[d] for d in depends_on if d in group_of}):
            if node.unique_id in groups[table]:
                continue  # a writer: the writers' builds take turns (docs/configs.md)
            for writer in groups[table]:
                if writer not in depends_on and \
                        not _depends_on(nodes, writer, node.unique_id):
                    depends_on.append(writer)


def _depends_on(nodes, start: str, ancestor: str) -> bool:
    """Whether node ``start`` depends, directly or not, on node ``ancestor`` (the graph as it
    is now: edges added before count)."""
    seen: Set[str] = set()
    stack = [start]
    while stack:
        current = stack.pop()
        if current == ancestor:
            return True
        if current in seen or current not in nodes:
            continue
        seen.add(current)
        stack.extend(_parents(nodes[current]) or [])
    return False


def _parents(node) -> Optional[List[str]]:
    """The node's ``depends_on.nodes``: the list itself, which the hooks above extend."""
    return getattr(getattr(node, "depends_on", None), "nodes", None)
