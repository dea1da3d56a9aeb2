"""Reads the project's Markdown (README.md, docs/*.md) and checks its examples against the code.

No Spark, no dbt project: links are resolved on disk, YAML is parsed (profiles through the
adapter's own credentials class), each `{{ config(...) }}` of a SQL example is evaluated with
Jinja and checked against the configs the adapter and dbt know (and, for Paimon
materializations, against the model config validation itself, with the columns of the example's
select list), and each `dbt run-operation` names an operation macro and its parameters.
Every check returns a list of problems; an empty list means the example matches the code.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import jinja2
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PAIMON_MACROS = os.path.join(REPO, "dbt", "include", "paimon", "macros")
OPERATIONS_DIR = os.path.join(PAIMON_MACROS, "operations")
PAIMON_MATERIALIZATIONS = ("paimon_pk", "partial_update", "paimon_append")
# Configs dbt's own macros read with config.get() without declaring them as config fields.
DBT_UNDECLARED_CONFIGS = {
    "hard_deletes", "invalidate_hard_deletes", "sql_header", "incremental_predicates",
    "submission_method",
}


def doc_files() -> List[str]:
    """README.md and every page under docs/, as paths relative to the repository."""
    pages = sorted(f"docs/{name}" for name in os.listdir(os.path.join(REPO, "docs"))
                   if name.endswith(".md"))
    return ["README.md", *pages]


# -- Markdown ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Block:
    """A fenced code block: its language tag, its text and the line its fence opens on."""

    path: str
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")


def code_blocks(path: str, markdown: str) -> List[Block]:
    blocks, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, lang, start, body = match.group(2), match.group(3).lower(), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        blocks.append(Block(path, start, lang, "\n".join(body)))
        i += 1
    return blocks


def outside_fences(markdown: str) -> List[str]:
    """The page's lines with every fenced block's lines blanked (line numbers stay)."""
    kept, fence = [], None
    for line in markdown.splitlines():
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
            kept.append("")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            kept.append("")
        else:
            kept.append(line)
    return kept


def prose(markdown: str) -> str:
    """The Markdown without its fenced blocks and inline code (links there are not links)."""
    return "\n".join(re.sub(r"`[^`]*`", "", line) for line in outside_fences(markdown))


def heading_anchors(markdown: str) -> Set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading gets -1, -2, ..."""
    anchors: Set[str] = set()
    for line in outside_fences(markdown):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        candidate, n = slug, 0
        while candidate in anchors:
            n += 1
            candidate = f"{slug}-{n}"
        anchors.add(candidate)
    return anchors


_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def link_problems(path: str, markdown: str) -> List[str]:
    """Every relative link of the page resolves to a file, and its #anchor to a heading."""
    problems = []
    for target in _LINK.findall(prose(markdown)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (os.path.normpath(os.path.join(REPO, os.path.dirname(path), file_part))
                    if file_part else os.path.join(REPO, path))
        if not os.path.exists(resolved):
            problems.append(f"{path}: link ({target}): {file_part} does not exist")
            continue
        if anchor and resolved.endswith(".md"):
            with open(resolved, encoding="utf-8") as f:
                anchors = heading_anchors(f.read())
            if anchor.lower() not in anchors:
                problems.append(f"{path}: link ({target}): no heading with anchor #{anchor} in "
                                f"{os.path.relpath(resolved, REPO)} (anchors: {sorted(anchors)})")
    return problems


# -- YAML -------------------------------------------------------------------------------------

def render_env_vars(text: str) -> str:
    """`{{ env_var('X', 'default') }}` -> default, `{{ env_var('X') }}` -> X: a profile's
    values as dbt would see them with the variable unset (or set to its own name)."""
    return re.sub(r"\{\{\s*env_var\(\s*'([^']*)'\s*(?:,\s*'([^']*)'\s*)?\)\s*\}\}",
                  lambda m: m.group(2) if m.group(2) is not None else m.group(1), text)


def _rendered(value: Any) -> Any:
    if isinstance(value, str):
        return render_env_vars(value)
    if isinstance(value, dict):
        return {k: _rendered(v) for k, v in value.items()}
    return value


def yaml_problems(block: Block) -> List[str]:
    try:
        document = yaml.safe_load(block.text)
    except yaml.YAMLError as exc:
        return [f"{block.where}: yaml does not parse: {exc}"]
    problems = []
    for target in _paimon_targets(document):
        problems += profile_problems(block, target)
    for materialized in _materialized_values(document):
        if materialized not in known_materializations():
            problems.append(f"{block.where}: materialized '{materialized}' is not a "
                            f"materialization of dbt or the adapter "
                            f"({', '.join(sorted(known_materializations()))})")
    return problems


def _walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _paimon_targets(document: Any) -> List[Dict[str, Any]]:
    return [node for node in _walk(document)
            if isinstance(node, dict) and node.get("type") == "paimon"]


def _materialized_values(document: Any) -> List[str]:
    return [str(node[key]) for node in _walk(document) if isinstance(node, dict)
            for key in ("materialized", "+materialized") if isinstance(node.get(key), str)]


def profile_problems(block: Block, target: Dict[str, Any]) -> List[str]:
    """A `type: paimon` target: every field is one the credentials declare, and the adapter's
    credentials class accepts it (master URL, method, ...)."""
    from dbt.adapters.paimon.credentials import PaimonCredentials

    fields = {f.name for f in dataclasses.fields(PaimonCredentials)} | {"type", "threads"}
    unknown = sorted(set(target) - fields)
    if unknown:
        return [f"{block.where}: profile field(s) {unknown} are not fields of a paimon profile"]
    data = {k: _rendered(v) for k, v in target.items() if k not in ("type", "threads")}
    data.setdefault("schema", "analytics")  # a fragment may show only the fields it is about
    try:
        PaimonCredentials.from_dict(data)
    except Exception as exc:  # the credentials' own errors: the message says what is wrong
        return [f"{block.where}: profile refused by PaimonCredentials: {exc}"]
    return []


# -- SQL: config(...) -------------------------------------------------------------------------

@dataclass
class ModelExample:
    """One `{{ config(...) }}` of a SQL block and the select that follows it."""

    block: Block
    config: Dict[str, Any]
    columns: Optional[List[str]]  # None: `select *` or no select list to read

    @property
    def materialized(self) -> Optional[str]:
        value = self.config.get("materialized")
        return None if value is None else str(value)


def _call_span(text: str, start: int) -> int:
    """Index just past the parenthesis closing the one at ``start`` (quotes respected)."""
    depth, quote, i = 0, None, start
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses")


_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined)


def evaluate_config(call_args: str) -> Dict[str, Any]:
    """The keyword arguments of `config(...)`, evaluated as dbt's Jinja does."""
    captured: Dict[str, Any] = {}

    def config(*args: Any, **kwargs: Any) -> str:
        for arg in args:  # config({...}) with a dict is dbt's other form
            captured.update(arg)
        captured.update(kwargs)
        return ""

    _JINJA.from_string("{{ config" + call_args + " }}").render(config=config)
    return captured


def _strip_sql_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*", "", sql)


def select_columns(sql: str) -> Optional[List[str]]:
    """Output column names of the first select list in ``sql``; None for `*`/unreadable."""
    sql = _strip_sql_comments(re.sub(r"\{\{.*?\}\}", "__jinja__", sql, flags=re.S))
    match = re.search(r"\bselect\b", sql, re.I)
    if not match:
        return None
    depth, items, current, i = 0, [], "", match.end()
    while i < len(sql):
        if depth == 0 and re.match(r"\bfrom\b", sql[i:i + 5], re.I) and not sql[i - 1].isalnum():
            break
        char = sql[i]
        depth += char in "(["
        depth -= char in ")]"
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
        i += 1
    items.append(current)
    names = []
    for item in (x.strip() for x in items):
        if not item or item == "*" or item.endswith(".*"):
            return None
        alias = re.search(r"\bas\s+`?(\w+)`?\s*$", item, re.I)
        bare = re.fullmatch(r"(?:\w+\.)?`?(\w+)`?", item)
        if alias:
            names.append(alias.group(1))
        elif bare:
            names.append(bare.group(1))
        else:
            return None
    return names


def model_examples(block: Block) -> List[ModelExample]:
    text, examples = block.text, []
    for match in re.finditer(r"\{\{-?\s*config\s*\(", text):
        open_paren = text.index("(", match.start())
        end = _call_span(text, open_paren)
        config = evaluate_config(text[open_paren:end])
        following = text[end:]
        next_config = re.search(r"\{\{-?\s*config\s*\(", following)
        if next_config:
            following = following[:next_config.start()]
        examples.append(ModelExample(block, config, select_columns(following)))
    return examples


def known_materializations() -> Set[str]:
    """dbt's built-in materializations, dbt-spark's and the adapter's (from their macros)."""
    import dbt.include.global_project
    import dbt.include.spark

    names = {"ephemeral"}
    roots = [*dbt.include.global_project.__path__, *dbt.include.spark.__path__, PAIMON_MACROS]
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                if name.endswith(".sql"):
                    with open(os.path.join(folder, name), encoding="utf-8") as f:
                        names |= set(re.findall(r"\{%-?\s*materialization\s+(\w+)", f.read()))
    return names


def known_configs() -> Set[str]:
    """Config keys a model, seed or snapshot may set: the adapter's (PaimonConfig, with
    dbt-spark's) and dbt's own, under their field names and aliases (`pre-hook`)."""
    from dbt.adapters.paimon.impl import PaimonConfig
    from dbt.artifacts.resources import ModelConfig, SeedConfig, SnapshotConfig

    keys = set(DBT_UNDECLARED_CONFIGS)
    for cls in (PaimonConfig, ModelConfig, SeedConfig, SnapshotConfig):
        for f in dataclasses.fields(cls):
            if not f.name.startswith("_"):
                keys.add(f.name)
                if f.metadata.get("alias"):
                    keys.add(f.metadata["alias"])
    return keys


def _referenced_columns(config: Dict[str, Any]) -> List[str]:
    """Every column a Paimon config names: the columns of a `select *` example."""
    from dbt.adapters.paimon.config.model_config import as_list

    names: List[str] = []
    for key in ("primary_key", "unique_key", "partition_by", "bucket_key", "sequence_field"):
        names += as_list(config.get(key))
    for group, members in (config.get("sequence_groups") or {}).items():
        names += as_list(group) + as_list(members)
    names += list((config.get("aggregations") or {}).keys())
    if config.get("row_kind_column"):
        names.append(config["row_kind_column"])
    return list(dict.fromkeys(names))


# Paimon types for an example's columns: what its aggregate function accepts, else STRING
# (orderable, and the type a row-kind column must have).
_AGGREGATE_TYPES = {
    "sum": "BIGINT", "product": "BIGINT", "count": "BIGINT", "max": "BIGINT", "min": "BIGINT",
    "bool_and": "BOOLEAN", "bool_or": "BOOLEAN", "listagg": "STRING",
    "collect": "ARRAY<STRING>", "merge_map": "MAP<STRING, STRING>",
    "nested_update": "ARRAY<ROW<k INT, v STRING>>",
    "nested_partial_update": "ARRAY<ROW<k INT, v STRING>>",
}


def config_problems(example: ModelExample) -> List[str]:
    where = example.block.where
    problems = []
    unknown = sorted(set(example.config) - known_configs())
    if unknown:
        problems.append(f"{where}: config {unknown} is not a config of the adapter or of dbt")
    materialized = example.materialized
    if materialized is not None and materialized not in known_materializations():
        problems.append(f"{where}: materialized '{materialized}' is not a materialization of "
                        f"dbt or the adapter ({', '.join(sorted(known_materializations()))})")
    if materialized in PAIMON_MATERIALIZATIONS and not unknown:
        problems += paimon_definition_problems(example)
    return problems


def paimon_definition_problems(example: ModelExample) -> List[str]:
    """Run the adapter's own validation (config/model_config.py) on the example's config with
    the columns of its select list (or, for `select *`, every column the config names)."""
    from dbt.adapters.paimon.config.model_config import as_list, table_definition
    from dbt.adapters.paimon.runtime import PaimonConfigError

    config = example.config
    names = example.columns if example.columns is not None else _referenced_columns(config)
    aggregations = {str(k): str(v) for k, v in (config.get("aggregations") or {}).items()}
    default_function = config.get("default_aggregate_function")
    options = config.get("table_options") or {}
    # BLOB columns are BINARY in the query, VECTOR columns an ARRAY (config/blob_vector.py)
    special = {**{c: "BYTES" for c in as_list(options.get("blob-field"))},
               **{c: "ARRAY<FLOAT>" for c in as_list(options.get("vector-field"))}}
    columns: List[Tuple[str, str]] = []
    for name in names:
        function = aggregations.get(name)
        if function is None and config.get("merge_engine") == "aggregation" and default_function:
            function = str(default_function)
        columns.append((name, special.get(name) or _AGGREGATE_TYPES.get(function or "", "STRING")))
    if not columns:
        return []
    try:
        table_definition(f"example at {example.block.where}", example.materialized, config,
                         columns)
    except PaimonConfigError as exc:
        return [f"{example.block.where}: {exc}"]
    incremental = config.get("incremental_strategy")
    if example.materialized == "paimon_append" and incremental not in (
            None, "append", "insert_overwrite", "merge"):
        return [f"{example.block.where}: incremental_strategy '{incremental}' is not one of "
                "append, insert_overwrite, merge (materialized='paimon_append')"]
    return []


# -- bash: dbt run-operation ------------------------------------------------------------------

def operation_macros() -> Dict[str, List[str]]:
    """Operation macro name -> its parameter names, from dbt/include/paimon/macros/operations/."""
    macros: Dict[str, List[str]] = {}
    for name in sorted(os.listdir(OPERATIONS_DIR)):
        if not name.endswith(".sql"):
            continue
        with open(os.path.join(OPERATIONS_DIR, name), encoding="utf-8") as f:
            text = f.read()
        for match in re.finditer(r"\{%-?\s*macro\s+(\w+)\s*\(", text):
            start = text.index("(", match.start())
            signature = text[start:_call_span(text, start)]
            macros[match.group(1)] = _parameter_names(signature)
    return macros


def _parameter_names(signature: str) -> List[str]:
    tree = ast.parse(f"def f{signature}: pass")
    arguments = tree.body[0].args  # type: ignore[attr-defined]
    return [a.arg for a in arguments.args]


def shell_commands(text: str) -> List[List[str]]:
    """The block's commands as argument lists (continuation lines joined, comments dropped)."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            commands.append(shlex.split(line, comments=True))
        except ValueError:
            continue
    return commands


def run_operation_problems(block: Block) -> List[str]:
    problems, macros = [], None
    for argv in shell_commands(block.text):
        if "run-operation" not in argv or os.path.basename(argv[0]) != "dbt":
            continue
        macros = macros or operation_macros()
        position = argv.index("run-operation")
        if position + 1 >= len(argv):
            problems.append(f"{block.where}: `dbt run-operation` without a macro name")
            continue
        name = argv[position + 1]
        if name not in macros:
            problems.append(f"{block.where}: run-operation '{name}' is not an operation macro "
                            f"(dbt/include/paimon/macros/operations/: {', '.join(sorted(macros))})")
            continue
        if "--args" not in argv:
            continue
        raw = argv[argv.index("--args") + 1] if argv.index("--args") + 1 < len(argv) else ""
        try:
            args = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            problems.append(f"{block.where}: {name} --args {raw!r} is not YAML: {exc}")
            continue
        if not isinstance(args, dict):
            problems.append(f"{block.where}: {name} --args {raw!r} is not a mapping")
            continue
        unknown = sorted(str(k) for k in args if str(k) not in macros[name])
        if unknown:
            problems.append(f"{block.where}: {name} has no parameter(s) {unknown} "
                            f"(parameters: {', '.join(macros[name])})")
    return problems


# -- all of it --------------------------------------------------------------------------------

def block_problems(block: Block) -> List[str]:
    if block.lang in ("yaml", "yml"):
        return yaml_problems(block)
    if block.lang in ("sql", "jinja", "sql+jinja"):
        problems = []
        try:
            examples = model_examples(block)
        except Exception as exc:  # Jinja that does not evaluate is a broken example
            return [f"{block.where}: config(...) does not evaluate: {exc}"]
        for example in examples:
            problems += config_problems(example)
        return problems
    if block.lang in ("bash", "sh", "shell", "console"):
        return run_operation_problems(block)
    return []


def read(path: str) -> str:
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def all_blocks(paths: Sequence[str]) -> List[Block]:
    return [block for path in paths for block in code_blocks(path, read(path))]
