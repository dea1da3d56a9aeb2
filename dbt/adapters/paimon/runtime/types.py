"""Paimon SQL type names -> pyarrow types (the table of docs/merge_runtime.md, nothing more).

``parse_type("DECIMAL(10, 2) NOT NULL")`` returns a :class:`SqlType` that keeps the
Paimon type root (what aggregate functions check) beside the Arrow type (what the
kernel produces).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Tuple

import pyarrow as pa

from .errors import PaimonConfigError

INTEGER_ROOTS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
NUMERIC_ROOTS = INTEGER_ROOTS + ("FLOAT", "DOUBLE", "DECIMAL")
# Types Paimon can order (max/min, sequence fields, sequence groups).
COMPARABLE_ROOTS = NUMERIC_ROOTS + ("CHAR", "VARCHAR", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ")

VARIANT_ARROW = pa.struct([pa.field("value", pa.binary(), nullable=False),
                           pa.field("metadata", pa.binary(), nullable=False)])

_ALIASES = {
    "INTEGER": "INT",
    "STRING": "VARCHAR",
    "BYTES": "VARBINARY",
    "BINARY": "VARBINARY",
    "BOOL": "BOOLEAN",
    "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL",
    "TIMESTAMP_NTZ": "TIMESTAMP",
}


@dataclass(frozen=True)
class SqlType:
    root: str  # canonical Paimon root: INT, VARCHAR, DECIMAL, ARRAY, ...
    arrow: pa.DataType
    nullable: bool = True
    length: Optional[int] = None  # VARCHAR(n)/CHAR(n); None = STRING (unbounded)
    precision: Optional[int] = None
    scale: Optional[int] = None
    children: Tuple["SqlType", ...] = field(default=())
    text: str = ""

    @property
    def is_integer(self) -> bool:
        return self.root in INTEGER_ROOTS

    @property
    def is_numeric(self) -> bool:
        return self.root in NUMERIC_ROOTS

    @property
    def is_comparable(self) -> bool:
        return self.root in COMPARABLE_ROOTS

    @property
    def is_unbounded_string(self) -> bool:
        return self.root == "VARCHAR" and self.length is None


class _Parser:
    _token = re.compile(r"\s*(<|>|\(|\)|,|:|[A-Za-z_][A-Za-z0-9_$]*|`[^`]*`|\"[^\"]*\"|\d+|'[^']*')")

    def __init__(self, text: str):
        self.text = text
        self.tokens = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = self._token.match(text, pos)
            if not m:
                raise PaimonConfigError(f"Cannot parse type {text!r} near {text[pos:]!r}")
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self, k: int = 0):
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self, expected: Optional[str] = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok.upper() != expected):
            raise PaimonConfigError(f"Cannot parse type {self.text!r}: expected {expected or 'more'}, got {tok!r}")
        self.i += 1
        return tok

    def ints(self):
        vals = []
        if self.peek() == "(":
            self.take("(")
            vals.append(int(self.take()))
            while self.peek() == ",":
                self.take(",")
                vals.append(int(self.take()))
            self.take(")")
        return vals

    def parse(self) -> SqlType:
        start = self.i
        word = self.take().upper()
        root = _ALIASES.get(word, word)
        kwargs = {}
        if word == "DOUBLE" and (self.peek() or "").upper() == "PRECISION":
            self.take()
        if root in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "DATE"):
            arrow = {
                "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "BIGINT": pa.int64(),
                "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "DATE": pa.date32(),
            }[root]
        elif root in ("VARCHAR", "CHAR"):
            args = self.ints()
            if word == "STRING":
                length = None
            elif args:
                length = None if args[0] >= 2147483647 else args[0]
            else:
                length = 1  # VARCHAR / CHAR without length is length 1 in Paimon
            kwargs["length"] = length
            arrow = pa.string()
        elif root == "VARBINARY":
            self.ints()
            arrow = pa.binary()
        elif root == "DECIMAL":
            args = self.ints() or [10, 0]
            p, s = args[0], (args[1] if len(args) > 1 else 0)
            kwargs.update(precision=p, scale=s)
            arrow = pa.decimal128(p, s)
        elif root == "TIME":
            args = self.ints()
            p = args[0] if args else 0
            kwargs["precision"] = p
            arrow = pa.time32("ms") if p <= 3 else pa.time64("us")
        elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            args = self.ints()
            p = args[0] if args else 6
            if root == "TIMESTAMP" and (self.peek() or "").upper() in ("WITH", "WITHOUT"):
                with_tz = self.take().upper() == "WITH"
                if (self.peek() or "").upper() == "LOCAL":
                    self.take()
                self.take("TIME")
                self.take("ZONE")
                if with_tz:
                    root = "TIMESTAMP_LTZ"
            kwargs["precision"] = p
            arrow = pa.timestamp("ms" if p <= 3 else "us", tz="UTC" if root == "TIMESTAMP_LTZ" else None)
        elif root == "VARIANT":
            # Paimon's variant as its readers and writers hold it in Arrow (pypaimon 2.1: a
            # struct of the encoded value and metadata; Parquet stores the same group)
            arrow = VARIANT_ARROW
        elif root == "ARRAY":
            self.take("<")
            elem = self.parse()
            self.take(">")
            kwargs["children"] = (elem,)
            arrow = pa.list_(pa.field("element", elem.arrow, nullable=elem.nullable))
        elif root == "VECTOR":
            # Paimon 1.4's VECTOR<element, length>: a fixed-size list in Arrow, as pypaimon
            # holds it (its element nullable)
            self.take("<")
            elem = self.parse()
            self.take(",")
            length = int(self.take())
            self.take(">")
            kwargs.update(children=(elem,), length=length)
            arrow = pa.list_(pa.field("item", elem.arrow, nullable=elem.nullable), length)
        elif root == "MAP":
            self.take("<")
            key = self.parse()
            self.take(",")
            val = self.parse()
            self.take(">")
            kwargs["children"] = (key, val)
            arrow = pa.map_(key.arrow, pa.field("value", val.arrow, nullable=val.nullable))
        elif root == "ROW":
            self.take("<")
            children, fields = [], []
            while True:
                name = self.take().strip("`\"")
                if self.peek() == ":":
                    self.take(":")
                child = self.parse()
                if self.peek() and self.peek().startswith("'"):
                    self.take()  # field comment
                children.append(child)
                fields.append(pa.field(name, child.arrow, nullable=child.nullable))
                if self.peek() == ",":
                    self.take(",")
                    continue
                self.take(">")
                break
            kwargs["children"] = tuple(children)
            arrow = pa.struct(fields)
        else:
            raise PaimonConfigError(
                f"Unsupported Paimon type {self.text!r}; supported: INT, BIGINT, SMALLINT, TINYINT, FLOAT, DOUBLE, "
                "STRING/VARCHAR(n)/CHAR(n), BOOLEAN, DECIMAL(p,s), DATE, TIMESTAMP(p), TIMESTAMP_LTZ(p), BYTES, "
                "ARRAY<T>, VECTOR<T, n>, MAP<K,V>, ROW<...>, VARIANT"
            )
        nullable = True
        if (self.peek() or "").upper() == "NOT" and (self.peek(1) or "").upper() == "NULL":
            self.take()
            self.take()
            nullable = False
        elif (self.peek() or "").upper() == "NULL":
            self.take()
        text = " ".join(self.tokens[start:self.i])
        return SqlType(root=root, arrow=arrow, nullable=nullable, text=text, **kwargs)


def parse_type(text: str) -> SqlType:
    """Parse a Paimon SQL type name (case-insensitive, optional ``NOT NULL``)."""
    if not isinstance(text, str) or not text.strip():
        raise PaimonConfigError(f"Column type must be a Paimon SQL type name, got {text!r}")
    parser = _Parser(text)
    result = parser.parse()
    if parser.peek() is not None:
        raise PaimonConfigError(f"Cannot parse type {text!r}: unexpected {parser.peek()!r}")
    return result
