"""A boolean search syntax shared by the bundled search portals (Lucene style, as complaint databases and literature
archives take it): terms, quoted phrases, a trailing `*` for prefixes, `FIELD:value` qualifiers, `[a TO b]` ranges,
`AND`, `OR`, `NOT` (upper case; a lower-case `or` is a word) and parentheses. Adjacent clauses are ANDed.

`parse` gives an expression tree; `canonical` writes it back in one normal form (words lower-cased, operators
explicit, parentheses only where needed), which the portals show as their reading of a query. Each site compiles
the tree to its own SQL; `conjuncts` splits a query's top-level AND into single-field clauses and the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

#: Word characters of a search term (what a term is split into when it is matched against text).
WORD = re.compile(r"[0-9a-z]+")
_TOKEN = re.compile(r'\s*(?:(?P<lp>\()|(?P<rp>\))|(?P<phrase>"[^"]*"?)|(?P<range>\[[^\]]*\]?)|(?P<word>[^\s()"\[\]]+))')
_OPERATORS = ("AND", "OR", "NOT")


class QuerySyntaxError(ValueError):
    """The query cannot be read; the message says where and what to change."""


@dataclass(frozen=True)
class Leaf:
    """One clause: a term (`prefix` for a trailing `*`), a phrase, or a range, optionally field-qualified."""

    field: str | None
    kind: str  # "term", "phrase", "range"
    text: str  # lower-cased words; for a range, "lo TO hi" as given
    prefix: bool = False

    @property
    def words(self) -> list[str]:
        """The clause's words as text is split into them."""
        return WORD.findall(self.text)

    @property
    def bounds(self) -> tuple[str, str]:
        """A range's two ends."""
        lo, hi = self.text.split(" TO ")
        return lo, hi


@dataclass(frozen=True)
class Op:
    """`AND`/`OR` over two or more parts, or `NOT` over one."""

    name: str
    parts: tuple[Node, ...]


Node = Leaf | Op


def parse(query: str, fields: dict[str, str], default: str | None = None) -> Node | None:
    """The expression tree of `query` (None when it is blank). `fields` maps each accepted qualifier, in any case,
    to its canonical name; an unqualified clause gets `default`."""
    tokens = _tokens(query)
    if not tokens:
        return None
    parser = _Parser(tokens, {k.casefold(): v for k, v in fields.items()}, default, query)
    node = parser.expression()
    if parser.pos < len(tokens):
        kind, value, at = tokens[parser.pos]
        raise QuerySyntaxError(f"unexpected {value!r} at character {at + 1}" + (": no opening parenthesis"
                                                                              if kind == "rp" else ""))
    return node


def _tokens(query: str) -> list[tuple[str, str, int]]:
    out, pos = [], 0
    while pos < len(query):
        if query[pos:].strip() == "":
            break
        m = _TOKEN.match(query, pos)
        if m is None or m.lastgroup is None:
            raise QuerySyntaxError(f"cannot read the query at character {pos + 1}")
        kind = m.lastgroup
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str, int]], fields: dict[str, str], default: str | None,
                 query: str) -> None:
        self.tokens, self.fields, self.default, self.query = tokens, fields, default, query
        self.pos = 0

    def _peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _is_op(self, name: str) -> bool:
        t = self._peek()
        return t is not None and t[0] == "word" and t[1] == name

    def expression(self, field: str | None = None) -> Node:
        parts = [self._conjunction(field)]
        while self._is_op("OR"):
            self.pos += 1
            parts.append(self._conjunction(field))
        return _joined("OR", parts)

    def _conjunction(self, field: str | None) -> Node:
        parts = [self._negation(field)]
        while (t := self._peek()) is not None and t[0] != "rp" and not self._is_op("OR"):
            if self._is_op("AND"):
                self.pos += 1
            parts.append(self._negation(field))
        return _joined("AND", parts)

    def _negation(self, field: str | None) -> Node:
        if self._is_op("NOT"):
            self.pos += 1
            return Op("NOT", (self._negation(field),))
        return self._primary(field)

    def _primary(self, field: str | None) -> Node:
        t = self._peek()
        if t is None:
            raise QuerySyntaxError("the query ends where a term was expected (after an operator or an opening "
                                   "parenthesis)")
        kind, value, at = t
        self.pos += 1
        if kind == "lp":
            node = self.expression(field)
            if self._peek() is None or self._peek()[0] != "rp":  # type: ignore[index]
                raise QuerySyntaxError(f"the parenthesis at character {at + 1} is never closed")
            self.pos += 1
            return node
        if kind == "rp":
            raise QuerySyntaxError(f"unexpected ')' at character {at + 1}")
        if kind == "word" and value in _OPERATORS:
            raise QuerySyntaxError(f"{value} at character {at + 1} needs a term before and after it")
        if kind == "word" and ":" in value and not value.startswith(":"):
            name, rest = value.split(":", 1)
            if field is not None:
                raise QuerySyntaxError(f"{name}: at character {at + 1} is inside the field {field}'s parentheses")
            qualified = self.fields.get(name.casefold())
            if qualified is None:
                names = ", ".join(sorted(set(self.fields.values())))
                raise QuerySyntaxError(f"unknown field {name!r} at character {at + 1}; the fields are {names}")
            if rest:
                return self._leaf(qualified, "word", rest, at + len(name) + 1)
            nxt = self._peek()
            if nxt is None or nxt[0] == "rp" or (nxt[0] == "word" and nxt[1] in _OPERATORS):
                raise QuerySyntaxError(f"the field {name}: at character {at + 1} has no value")
            self.pos += 1
            if nxt[0] == "lp":
                node = self.expression(qualified)
                if self._peek() is None or self._peek()[0] != "rp":  # type: ignore[index]
                    raise QuerySyntaxError(f"the parenthesis at character {nxt[2] + 1} is never closed")
                self.pos += 1
                return node
            return self._leaf(qualified, nxt[0], nxt[1], nxt[2])
        return self._leaf(field or self.default, kind, value, at)

    def _leaf(self, field: str | None, kind: str, value: str, at: int) -> Leaf:
        if kind == "phrase":
            if len(value) < 2 or not value.endswith('"'):
                raise QuerySyntaxError(f"the quotation mark at character {at + 1} is never closed")
            words = WORD.findall(value[1:-1].lower())
            if not words:
                raise QuerySyntaxError(f"the phrase at character {at + 1} is empty")
            text = " ".join(value[1:-1].lower().split())
            return Leaf(field, "term" if len(text.split()) == 1 else "phrase", text)
        if kind == "range":
            m = re.fullmatch(r"\[\s*(\S+)\s+TO\s+(\S+)\s*\]", value)
            if m is None:
                raise QuerySyntaxError(f"the range at character {at + 1} must look like [2015 TO 2019]")
            return Leaf(field, "range", f"{m.group(1)} TO {m.group(2)}")
        prefix = value.endswith("*")
        text = value.rstrip("*").lower()
        if not WORD.findall(text):
            raise QuerySyntaxError(f"{value!r} at character {at + 1} has no letters or digits to search for")
        return Leaf(field, "term", text, prefix)


def _joined(name: str, parts: list[Node]) -> Node:
    """`name` over the parts, a part that is itself `name` flattened into them (`(a b) c` is `a AND b AND c`)."""
    flat = [q for p in parts for q in (p.parts if isinstance(p, Op) and p.name == name else (p,))]
    return flat[0] if len(flat) == 1 else Op(name, tuple(flat))


def canonical(node: Node | None, show_field: bool = True) -> str:
    """The query in normal form: `medical OR doctor`, `issue:"late fee" AND NOT company:acme`."""
    if node is None:
        return ""
    if isinstance(node, Leaf):
        return _leaf_text(node, show_field)
    if node.name == "NOT":
        return "NOT " + wrapped(node.parts[0], show_field)
    return f" {node.name} ".join(wrapped(p, show_field) if isinstance(p, Op) and p.name != "NOT" and p.name != node.name
                                 else canonical(p, show_field) for p in node.parts)


def wrapped(node: Node, show_field: bool = True) -> str:
    """The normal form of a part, in parentheses when it is an AND or an OR (as it is written inside another)."""
    text = canonical(node, show_field)
    return text if isinstance(node, Leaf) or node.name == "NOT" else f"({text})"


def _leaf_text(leaf: Leaf, show_field: bool) -> str:
    if leaf.kind == "range":
        value = f"[{leaf.text}]"
    elif leaf.kind == "phrase":
        value = f'"{leaf.text}"'
    else:
        value = leaf.text + ("*" if leaf.prefix else "")
    return f"{leaf.field}:{value}" if show_field and leaf.field else value


def conjuncts(node: Node | None) -> list[Node]:
    """The parts of a query's top-level AND (the query itself when it is not an AND)."""
    if node is None:
        return []
    return list(node.parts) if isinstance(node, Op) and node.name == "AND" else [node]


def leaves(node: Node | None, negated: bool = False) -> list[tuple[Leaf, bool]]:
    """Every clause of a query, with whether it sits under a NOT."""
    if node is None:
        return []
    if isinstance(node, Leaf):
        return [(node, negated)]
    return [x for p in node.parts for x in leaves(p, negated != (node.name == "NOT"))]


def to_sql(node: Node, leaf_sql: Callable[[Leaf], tuple[str, list[object]]]) -> tuple[str, list[object]]:
    """A query tree as one SQL condition and its parameters: each clause by `leaf_sql`, joined by AND, OR, NOT."""
    if isinstance(node, Leaf):
        return leaf_sql(node)
    parts = [to_sql(p, leaf_sql) for p in node.parts]
    params = [x for _, ps in parts for x in ps]
    if node.name == "NOT":
        return f"NOT ({parts[0][0]})", params
    return "(" + f" {node.name} ".join(sql for sql, _ in parts) + ")", params


def fts_phrase(leaf: Leaf) -> str:
    """A term or phrase as an SQLite FTS5 phrase over its words (`"doctor"`, `"loan modification"`, `"doc" *`)."""
    body = '"' + " ".join(leaf.words) + '"'
    return body + " *" if leaf.prefix else body
