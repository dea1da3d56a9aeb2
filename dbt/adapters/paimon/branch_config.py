"""Which branch of each Paimon table a dbt invocation reads and writes (write-audit-publish).

Three places name a branch, the most specific first:

1. a node's config ``paimon_branch`` (``config()``, a properties file or ``dbt_project.yml``):
   the table that model, seed or snapshot writes, for every node that writes or reads it;
2. ``--vars '{paimon_branch: <name>}'``: every other table of the invocation;
3. the profile's ``branch`` (credentials.py): the same, when the var is not given.

``main`` (Paimon's name of the trunk, the default of its ``branch`` table option) names main
explicitly, e.g. a model kept on main in a build whose other tables go to a branch. A table
that does not have its branch yet is read from main, and gets the branch at its first write
(ops/branches.py ``ensure_branch``).
"""

from __future__ import annotations

from typing import Dict, Iterable, Optional, Tuple

from dbt_common.exceptions import CompilationError, DbtRuntimeError

BRANCH_VAR = "paimon_branch"      # --vars
BRANCH_CONFIG = "paimon_branch"   # node config
PROFILE_KEY = "branch"            # profile
MAIN = "main"
# the nodes that write a table of their own
WRITING_NODES = ("model", "seed", "snapshot")


def branch_name(value) -> Optional[str]:
    """A branch name as given in a config, var or profile: None for main (``main``, empty or
    not given), else the checked name (ValueError saying what is wrong)."""
    if value is None:
        return None
    text = str(value).strip()
    if text in ("", MAIN):
        return None
    from dbt.adapters.paimon.ops.branches import check_branch_name

    return check_branch_name(text)


def default_branch(config) -> Optional[str]:
    """The invocation's branch for tables no node config places: ``--vars paimon_branch``,
    else the profile's ``branch``; None for main."""
    cli_vars = getattr(config, "cli_vars", None) or {}
    if BRANCH_VAR in cli_vars:
        try:
            return branch_name(cli_vars[BRANCH_VAR])
        except ValueError as exc:
            raise DbtRuntimeError(f"--vars {BRANCH_VAR}: {exc}") from None
    return getattr(getattr(config, "credentials", None), PROFILE_KEY, None)


def table_branches(nodes: Iterable) -> Dict[Tuple[str, str], Optional[str]]:
    """(schema, table) -> branch (None: main) of every table a model, seed or snapshot with a
    ``paimon_branch`` config writes (its own, or the shared table its ``target`` config names).
    CompilationError naming the node and the option for a name Paimon refuses, and for two
    nodes that put one table on two branches."""
    placed: Dict[Tuple[str, str], Tuple[Optional[str], str]] = {}
    problems = []
    for node in nodes:
        if str(getattr(node, "resource_type", "")) not in WRITING_NODES:
            continue
        config = getattr(node, "config", None)
        value = config_value(config, BRANCH_CONFIG)
        if value is None:
            continue
        what = f"{node.resource_type} '{node.name}'"
        where = getattr(node, "original_file_path", None)
        if where:
            what += f" ({where})"
        try:
            branch = branch_name(value)
        except ValueError as exc:
            problems.append(f"{what}: config {BRANCH_CONFIG} {value!r}: {exc}")
            continue
        key = written_table(node, config)
        if key in placed and placed[key][0] != branch:
            other_branch, other = placed[key]
            problems.append(
                f"{what} writes {key[0]}.{key[1]} on branch '{branch or MAIN}', and {other} on "
                f"branch '{other_branch or MAIN}': give them the same {BRANCH_CONFIG}")
            continue
        placed[key] = (branch, what)
    if problems:
        raise CompilationError("Invalid paimon_branch config:\n  " + "\n  ".join(problems))
    return {key: branch for key, (branch, _) in placed.items()}


def config_value(config, key: str):
    """A node config's ``key`` (dbt's NodeConfig or a plain mapping), None when unset."""
    if config is None:
        return None
    getter = getattr(config, "get", None)
    if getter is not None:
        return getter(key, None)
    return getattr(config, key, None)


def written_table(node, config) -> Tuple[str, str]:
    """(schema, table) in lower case of the table a node writes: its own, or its ``target``."""
    schema, table = str(node.schema).lower(), str(node.alias).lower()
    target = config_value(config, "target")
    if target:
        target_schema, _, target_table = str(target).lower().rpartition(".")
        schema, table = target_schema or schema, target_table
    return schema, table
