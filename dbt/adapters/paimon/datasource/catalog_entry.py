"""A Paimon table's catalog entry as Spark lists it: a view whose properties record the Paimon
schema and snapshot it reads, which way (READ_PROPERTY), on which branch, and which hidden
tables (entry_names.py) exist for which schema, so that a new snapshot costs a moved location
and at most a new view, not new tables."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Dict, Optional

from dbt.adapters.paimon.datasource import native_read
from dbt.adapters.paimon.datasource.entry_names import PROVIDER_PREFIX

SCHEMA_ID_PROPERTY = "paimon.schema-id"
SNAPSHOT_PROPERTY = "paimon.snapshot-id"
BRANCH_PROPERTY = "paimon.branch"
READ_PROPERTY = "paimon.read"   # NATIVE, NATIVE_WITH_DELETES, PYTHON, UNCHOSEN or UNMERGED
# the table options the session set for reads when the entry was made (session_options.py
# ``encode``); absent: none
READ_OPTIONS_PROPERTY = "paimon.session-read-options"
NATIVE, NATIVE_WITH_DELETES, PYTHON = "native", "native-with-deleted-rows", "python"
# read through the Python source until a statement names the table: its snapshot needs a choice
# of rows (native_read.CHOICE_DEFERRED), made then; the entry is a PYTHON one until then
UNCHOSEN = "python-until-read"
# read through the Python source until a statement reads the table's rows: its snapshot needs a
# merge of values (native_read.MERGE_DEFERRED), made once then into Parquet files Spark reads
UNMERGED = "python-until-merged"
# How the hidden tables reading a snapshot's files declare their columns
# (native_read.files_schema), recorded with their shape: an entry whose files tables
# declared NOT NULL columns has them made anew.
FILE_COLUMNS = "nullable"
# the view's record of which hidden tables exist: read_<t>'s schema id, files_<t>'s schema id,
# file format and FILE_COLUMNS ("3:parquet:nullable"), and whether deletes_<t> does
PYTHON_ROWS_PROPERTY = "paimon.python-rows"
NATIVE_ROWS_PROPERTY = "paimon.native-rows"
DELETED_ROWS_PROPERTY = "paimon.deleted-rows"
# ... and how many files_<n>_<t> tables (native_read.Projection: files read by older column
# names) exist, for which projections ("2:<digest>"; "0:" for none)
PROJECTED_ROWS_PROPERTY = "paimon.projected-rows"
NO_PROJECTIONS = "0:"
HIDDEN_TABLE_PROPERTIES = (PYTHON_ROWS_PROPERTY, NATIVE_ROWS_PROPERTY, DELETED_ROWS_PROPERTY,
                           PROJECTED_ROWS_PROPERTY)
_PROVIDER_LINE = re.compile(r"^Provider: (.*)$", re.MULTILINE)
_TYPE_LINE = re.compile(r"^Type: (.*)$", re.MULTILINE)
_PROPERTIES_LINE = re.compile(r"^Table Properties: \[(.*)\]$", re.MULTILINE)


@dataclass(frozen=True)
class CatalogEntry:
    kind: str                  # Spark's type: VIEW, MANAGED, EXTERNAL
    provider: str
    properties: Dict[str, str]

    @property
    def ours(self) -> bool:
        """An entry this registry made (a view with our properties, or an older-style table
        entry naming a Paimon provider)."""
        return SCHEMA_ID_PROPERTY in self.properties or self.provider.startswith(PROVIDER_PREFIX)

    @property
    def schema_id(self) -> Optional[int]:
        value = self.properties.get(SCHEMA_ID_PROPERTY, "")
        return int(value) if value.isdigit() else None

    @property
    def snapshot(self) -> str:
        return self.properties.get(SNAPSHOT_PROPERTY, "")

    @property
    def read(self) -> str:
        return self.properties.get(READ_PROPERTY, "")

    @property
    def branch(self) -> str:
        return self.properties.get(BRANCH_PROPERTY, "")

    def reads(self, schema_id: int, snapshot: str, branch: str, choose: bool,
              merge: bool = False, read_options: str = "") -> bool:
        """Whether this entry is the view of that schema, snapshot and branch (``choose``: with
        its choice of rows made, if the snapshot needs one; ``merge``: with its merge of values
        made, if it needs one), made with the session's ``read_options`` (encoded)."""
        return self.kind == "VIEW" and self.schema_id == schema_id \
            and self.snapshot == snapshot and self.branch == branch \
            and self.properties.get(READ_OPTIONS_PROPERTY, "") == read_options \
            and not (choose and self.read == UNCHOSEN) \
            and not (merge and self.read == UNMERGED) \
            and self.files_tables_current()

    def files_tables_current(self) -> bool:
        """False for a native entry whose files tables an older dbt-paimon declared with NOT
        NULL columns (native_read.files_schema says why that fails): made anew."""
        return self.read not in (NATIVE, NATIVE_WITH_DELETES) or \
            self.properties.get(NATIVE_ROWS_PROPERTY, "").endswith(f":{FILE_COLUMNS}")


def catalog_entries(rows: list) -> Dict[str, CatalogEntry]:
    """The catalog entries (type, provider, properties) among `show table extended` rows."""
    entries = {}
    for row in rows:
        if row.isTemporary:
            continue
        information = row.information or ""
        provider = _PROVIDER_LINE.search(information)
        kind = _TYPE_LINE.search(information)
        properties = _PROPERTIES_LINE.search(information)
        values: Dict[str, str] = {}
        if properties:
            for item in properties.group(1).split(", "):
                key, _, value = item.partition("=")
                if key.startswith("paimon."):
                    values[key] = value
        entries[row.tableName] = CatalogEntry(
            kind=(kind.group(1).strip() if kind else ""),
            provider=(provider.group(1).strip() if provider else ""),
            properties=values,
        )
    return entries


def python_rows_key(schema_id: int, branch: str) -> str:
    """What PYTHON_ROWS_PROPERTY records of read_<t>: the schema it has and the branch whose
    provider it names ("3" on main, "3@audit" on branch audit)."""
    return f"{schema_id}@{branch}" if branch else str(schema_id)


def projected_key(schema_id: int, plan: "native_read.NativeSnapshot") -> str:
    """What PROJECTED_ROWS_PROPERTY records for ``plan``: the projection tables' count and a
    digest of their columns."""
    if not plan.projected:
        return NO_PROJECTIONS
    described = repr((schema_id, plan.file_format, FILE_COLUMNS,
                      [p.columns for p in plan.projected]))
    return f"{len(plan.projected)}:{hashlib.sha256(described.encode()).hexdigest()[:16]}"


def projection_count(properties: Dict[str, str]) -> int:
    """How many files_<n>_<t> tables PROJECTED_ROWS_PROPERTY records."""
    return int(properties.get(PROJECTED_ROWS_PROPERTY, NO_PROJECTIONS).split(":")[0])


def shape(read: str) -> str:
    """The entry's tables and view: an UNCHOSEN or UNMERGED entry's are a PYTHON one's."""
    return PYTHON if read in (UNCHOSEN, UNMERGED) else read


def read_of(plan: Optional["native_read.NativeSnapshot"], why: str) -> str:
    """How an entry reads a snapshot native_read.plan_native planned (``why``: why not
    natively)."""
    if plan is None:
        return {native_read.CHOICE_DEFERRED: UNCHOSEN,
                native_read.MERGE_DEFERRED: UNMERGED}.get(why, PYTHON)
    return NATIVE_WITH_DELETES if plan.deleted else NATIVE


# the first keywords of a statement that reads rows: a query, a write from a query; a CREATE
# reads rows when it makes a table from a query (not a view: its definition reads nothing)
_ROW_READING = re.compile(r"(select|with|insert|merge|update|delete|values|from|table|cache)\b",
                          re.IGNORECASE)
_CREATE_VIEW = re.compile(r"create\s+(or\s+replace\s+)?(global\s+)?(temporary\s+|temp\s+)?view\b",
                          re.IGNORECASE)
_FROM_A_QUERY = re.compile(r"\bas\s*\(*\s*(select|with|from|values|table)\b", re.IGNORECASE)


def reads_rows(sql: Optional[str]) -> bool:
    """Whether ``sql`` reads table rows, judged by its first keyword after comments and
    parentheses: a merge of values is made for such a statement only (dbt describes every
    relation it builds or documents, and a view's definition reads nothing)."""
    if sql is None:
        return False
    text = re.sub(r"/\*.*?\*/|--[^\n]*", " ", sql, flags=re.DOTALL).lstrip(" \t\r\n(")
    if _ROW_READING.match(text):
        return True
    return text[:6].lower() == "create" and not _CREATE_VIEW.match(text) \
        and _FROM_A_QUERY.search(text) is not None


def names_table(sql: Optional[str], table: str) -> bool:
    """Whether the statement ``sql`` names ``table`` (as a word, in any case, quoted or not):
    a statement reading it through a view of its own does not, and reads the Python source."""
    return sql is not None and re.search(
        rf"(?<![\w$]){re.escape(table)}(?![\w$])", sql, re.IGNORECASE) is not None
