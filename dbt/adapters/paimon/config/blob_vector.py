"""BLOB and VECTOR columns of a model's table: which of the query's columns they are, the
checks Paimon applies to a table holding them (run before anything is created or written),
and the table's Arrow types for them.

As Paimon's Spark catalog makes them from a query's columns (``SparkCatalog.toInitialSchema``):

- a BINARY column named in ``blob-field`` becomes BLOB. Its values live in ``.blob`` files of
  their own, matched to the rows of the table's data files by row id, so the table needs
  ``row-tracking.enabled`` and ``data-evolution.enabled``; it is an append table (pypaimon 2.1,
  whose BLOB writer dbt-paimon's append path uses, refuses BLOB columns with a primary key),
  the column is no partition key, and the table has at least one other column
  (``SchemaValidation``, pypaimon's ``SchemaManager``);
- an ARRAY column named in ``vector-field`` becomes ``VECTOR<element, n>``, ``n`` from
  ``field.<column>.vector-dim``, its element BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or
  DOUBLE (``VectorType.isValidElementType``). Without ``vector.file.format`` the vectors are
  stored in the data files, of an append table or of a primary-key table of any merge engine
  (a NULL vector, which a partial-update or aggregation row holds until a writer gives it one,
  is stored as Paimon stores it: format/pypaimon_compat.py); with it in ``.vector.<format>``
  files of their own, which again needs data evolution (an append table), no partition key
  among them and another column.

Pure Python with Arrow types and NumPy (no dbt, no Spark, no pypaimon).
"""

from __future__ import annotations

import importlib.util
from typing import Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

BLOB_FIELD = "blob-field"
VECTOR_FIELD = "vector-field"
VECTOR_FILE_FORMAT = "vector.file.format"
# BLOB storage other than bytes in .blob files: values the query would have to give as
# serialized descriptors, references to other tables' blobs, or video frames. The first three
# keep the column in the data files (the older descriptor key counts only without the newer)
DESCRIPTOR_FIELD, OLD_DESCRIPTOR_FIELD = "blob-descriptor-field", "blob.stored-descriptor-fields"
IN_DATA_FILES_OPTIONS = (DESCRIPTOR_FIELD, OLD_DESCRIPTOR_FIELD, "blob-view-field")
INLINE_BLOB_OPTIONS = IN_DATA_FILES_OPTIONS + ("video-frame-field",)
VECTOR_ELEMENT_TYPES = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
# vector.file.format -> the Python module pypaimon 2.1's writer of that format needs
VECTOR_FORMAT_MODULES = {"parquet": None, "lance": "lance", "vortex": "vortex"}
KEYED_MATERIALIZATIONS = ("paimon_pk", "partial_update")


def _names(value: Any) -> List[str]:
    return [part.strip() for part in str(value or "").split(",") if part.strip()]


def blob_columns(options: Mapping[str, str]) -> List[str]:
    return _names(options.get(BLOB_FIELD))


def vector_columns(options: Mapping[str, str]) -> List[str]:
    return _names(options.get(VECTOR_FIELD))


def vector_dim_key(column: str) -> str:
    return f"field.{column}.vector-dim"


def vector_dim(options: Mapping[str, str], column: str) -> Optional[int]:
    """The length of VECTOR column ``column`` (``field.<column>.vector-dim``); None when it is
    not set or not a whole number >= 1."""
    try:
        dim = int(str(options.get(vector_dim_key(column), "")).strip())
    except ValueError:
        return None
    return dim if dim >= 1 else None


def wrong_vector_lengths(values, length: int) -> Tuple[np.ndarray, List[int]]:
    """The rows of ``values`` (lists, the query's values of a VECTOR column) whose list is not
    ``length`` long (NULL rows aside), and up to 5 of the lengths found there: what both write
    paths refuse before anything is written."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    lengths = pc.list_value_length(values)
    wrong = pc.fill_null(pc.not_equal(lengths, length), False)
    rows = np.flatnonzero(wrong.to_numpy(zero_copy_only=False))
    return rows, sorted(set(lengths.take(pa.array(rows)).to_pylist()))[:5]


def stored_types(schema: pa.Schema, options: Mapping[str, str]) -> pa.Schema:
    """``schema`` (the query's columns as Arrow) with the table's types for BLOB columns
    (pypaimon's BLOB: ``large_binary``, as a list's elements and a map's values too) and VECTOR
    columns (a ``fixed_size_list`` of the vector's length). Columns whose query type does not
    fit stay as they are (the config checks refuse them)."""
    blobs, vectors = set(blob_columns(options)), set(vector_columns(options))
    if not blobs and not vectors:
        return schema
    fields = []
    for field in schema:
        kind = field.type
        if field.name in blobs and _arrow_binary(kind):
            field = field.with_type(pa.large_binary())
        elif field.name in blobs and pa.types.is_list(kind) and _arrow_binary(kind.value_type):
            field = field.with_type(pa.list_(kind.value_field.with_type(pa.large_binary())))
        elif field.name in blobs and pa.types.is_map(kind) and _arrow_binary(kind.item_type):
            field = field.with_type(pa.map_(kind.key_field, kind.item_field.with_type(
                pa.large_binary())))
        elif field.name in vectors and (pa.types.is_list(kind) or pa.types.is_large_list(kind)) \
                and vector_dim(options, field.name) is not None:
            # the element nullable whatever the query's array says, as Paimon's Spark catalog
            # makes it (toPaimonType of the element type)
            field = field.with_type(pa.list_(kind.value_field.with_nullable(True),
                                             vector_dim(options, field.name)))
        fields.append(field)
    return pa.schema(fields, metadata=schema.metadata)


def check_blob_and_vector(materialization: str, primary_keys: Sequence[str],
                          partition_keys: Sequence[str],
                          options: Mapping[str, str], columns: Sequence[Tuple[str, str]],
                          problems) -> None:
    """Add to ``problems`` (model_config.ConfigProblems) what Paimon refuses, or dbt-paimon
    does not write, about the model's BLOB and VECTOR columns. ``columns``: the query's
    [(name, Paimon type)]."""
    if options.get("data-evolution.enabled") == "true" and \
            options.get("row-tracking.enabled") != "true":
        problems.add("table_options 'data-evolution.enabled' = 'true' needs row_tracking=true "
                     "(Paimon refuses data evolution without row tracking): set row_tracking="
                     "true.")
    types = dict(columns)
    names = [name for name, _ in columns]
    keyed = materialization in KEYED_MATERIALIZATIONS or bool(primary_keys)
    evolving = options.get("row-tracking.enabled") == "true" and \
        options.get("data-evolution.enabled") == "true"
    how_to_evolve = ("set row_tracking=true and table_options 'data-evolution.enabled': "
                     "'true' (with materialized='paimon_append')")
    for key in INLINE_BLOB_OPTIONS:
        if key in options:
            problems.add(f"config `table_options['{key}']`: dbt-paimon writes BLOB columns "
                         f"from the bytes the query returns ('blob-field'); descriptor, view "
                         f"and video BLOB fields are not written by models. Remove '{key}'.")

    blobs = blob_columns(options)
    if blobs:
        _require(problems, BLOB_FIELD, blobs, names)
        for column in [c for c in blobs if c in types]:
            kind = types[column]
            if not _is_binary(_blob_values(kind)):
                problems.add(f"column '{column}' in 'blob-field' is {kind} in the model's "
                             f"query; a BLOB column takes BINARY values (Paimon's BLOB), an "
                             f"ARRAY or a MAP of them (ARRAY<BLOB>, MAP<X, BLOB>): return it "
                             f"as binary (e.g. cast({column} as binary)) or remove it from "
                             f"'blob-field'.")
        if keyed:
            problems.add(f"BLOB column(s) {blobs} ('blob-field') in a primary-key table: Paimon "
                         f"2.1 (pypaimon) stores BLOB columns in append tables only; use "
                         f"materialized='paimon_append' without a primary key.")
        elif not evolving:
            problems.add(f"BLOB column(s) {blobs} ('blob-field') need a data-evolution table "
                         f"(Paimon stores BLOB values in .blob files of their own, matched to "
                         f"rows by row id): {how_to_evolve}.")
        _no_partition_keys(problems, "BLOB ('blob-field')", blobs, partition_keys)
        if names and set(names) <= set(blobs):
            problems.add("every column of the query is a BLOB column: Paimon needs at least "
                         "one other column in the table (e.g. an id).")

    vectors = vector_columns(options)
    if vectors:
        _require(problems, VECTOR_FIELD, vectors, names)
        for column in [c for c in vectors if c in types]:
            kind = types[column]
            element = kind[len("ARRAY<"):-1] if kind.startswith("ARRAY<") else None
            if element is None or element.replace(" NOT NULL", "") not in VECTOR_ELEMENT_TYPES:
                problems.add(f"column '{column}' in 'vector-field' is {kind} in the model's "
                             f"query; a VECTOR column takes an ARRAY of "
                             f"{', '.join(VECTOR_ELEMENT_TYPES)}: return it as such (e.g. "
                             f"cast({column} as array<float>)) or remove it from "
                             f"'vector-field'.")
        for column in vectors:
            key = vector_dim_key(column)
            if key not in options:
                problems.add(f"'vector-field' names '{column}' but table_options has no "
                             f"'{key}' (the vector's length, as Paimon requires): add e.g. "
                             f"'{key}': '768'.")
            elif vector_dim(options, column) is None:
                problems.add(f"table_options '{key}' is {options[key]!r}; expected a whole "
                             f"number >= 1 (the vector's length).")
    file_format = options.get(VECTOR_FILE_FORMAT)
    if file_format is not None:
        module = VECTOR_FORMAT_MODULES.get(str(file_format).lower(), "")
        if module == "":
            problems.add(f"table_options 'vector.file.format' is {file_format!r}; expected one "
                         f"of {list(VECTOR_FORMAT_MODULES)}.")
        elif module is not None and importlib.util.find_spec(module) is None:
            problems.add(f"table_options 'vector.file.format' is {file_format!r}, whose writer "
                         f"(pypaimon 2.1's) needs the Python package '{module}', which is not "
                         f"installed: install it, or use 'parquet'.")
        if vectors and keyed:
            problems.add(f"table_options 'vector.file.format' stores VECTOR column(s) {vectors} "
                         f"in files of their own, which needs a data-evolution table (an append "
                         f"table): remove 'vector.file.format' to store them in the primary-key "
                         f"table's data files.")
        if vectors and not keyed and not evolving:
            problems.add(f"table_options 'vector.file.format' stores VECTOR column(s) {vectors} "
                         f"in files of their own, which needs a data-evolution table: "
                         f"{how_to_evolve}; or remove 'vector.file.format' (the vectors are "
                         f"then stored in the data files).")
        if vectors:
            _no_partition_keys(problems, "VECTOR stored in vector files ('vector.file.format')",
                               vectors, partition_keys)
            if names and set(names) <= set(vectors):
                problems.add("every column of the query is a VECTOR column stored in vector "
                             "files: Paimon needs at least one other column in the table.")


def _blob_values(paimon_type: str) -> str:
    """The type of the values a BLOB column stores: the type itself, or the element of an ARRAY
    or the value of a MAP (Paimon 2.x's ARRAY<BLOB> and MAP<X, BLOB>; a binary type holds no
    comma, so a MAP's value is what follows its last one)."""
    kind = paimon_type.replace(" NOT NULL", "")
    if kind.startswith("ARRAY<") and kind.endswith(">"):
        return kind[len("ARRAY<"):-1]
    if kind.startswith("MAP<") and kind.endswith(">") and "," in kind:
        return kind[len("MAP<"):-1].rsplit(",", 1)[1].strip()
    return kind


def _is_binary(paimon_type: str) -> bool:
    return paimon_type in ("BYTES", "BLOB") or paimon_type.startswith(("BINARY", "VARBINARY"))


def _arrow_binary(kind: pa.DataType) -> bool:
    return pa.types.is_binary(kind) or pa.types.is_large_binary(kind)


def _require(problems, option: str, wanted: Sequence[str], names: Sequence[str]) -> None:
    missing = [c for c in wanted if c not in names]
    if missing:
        problems.add(f"config `table_options['{option}']` names {missing}, which the model's "
                     f"query does not return (columns: {list(names)}).")


def _no_partition_keys(problems, what: str, columns: Sequence[str],
                       partition_keys: Sequence[str]) -> None:
    both = [c for c in columns if c in partition_keys]
    if both:
        problems.add(f"column(s) {both} are {what} and partition keys (partition_by): Paimon "
                     f"refuses such partition keys; partition by other columns.")
