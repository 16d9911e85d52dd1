"""The archive's search: an advanced query (rig.sites.querylang) validated into a `Search`, compiled to SQL over the
FTS5 index, ranked by relevance, date or citations, one page of ten results, type and access facets, and the
query's reading as single-field parts (the results table's `data-scope`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

from rig.sites.papers.data import TYPES, fetch
from rig.sites.querylang import (
    Leaf,
    Node,
    Op,
    QuerySyntaxError,
    canonical,
    conjuncts,
    fts_phrase,
    leaves,
    parse,
    to_sql,
    wrapped,
)

#: Field qualifiers (any case) and their canonical names.
FIELDS = {"title": "TITLE", "ti": "TITLE", "abstract": "ABSTRACT", "abs": "ABSTRACT", "auth": "AUTH",
          "author": "AUTH", "journal": "JOURNAL", "pub_year": "PUB_YEAR", "pub_type": "PUB_TYPE",
          "open_access": "OPEN_ACCESS"}
#: The index columns a text clause searches; an unqualified clause searches title, abstract and full text.
_COLUMNS = {None: "{title abstract body}", "TITLE": "title", "ABSTRACT": "abstract", "AUTH": "authors",
            "JOURNAL": "journal"}
#: What a clause adds to an article's relevance where it matches (title, abstract, full text).
_WEIGHTS = {None: (("title", 3), ("abstract", 2), ("body", 1)), "TITLE": (("title", 3),),
            "ABSTRACT": (("abstract", 2),), "AUTH": (("authors", 1),), "JOURNAL": (("journal", 1),)}
SORTS = {"relevance": "Relevance", "date": "Date (newest first)", "cited": "Times cited"}
PAGE_SIZE = 10
_YES = {"y": "y", "yes": "y", "true": "y", "n": "n", "no": "n", "false": "n"}
#: The data-scope name of each single-field part of a query (unqualified terms: `terms`; anything else: `expr`).
_SCOPE = {None: "terms", "TITLE": "title", "ABSTRACT": "abstract", "AUTH": "author", "JOURNAL": "journal",
          "PUB_YEAR": "pub_year", "PUB_TYPE": "pub_type", "OPEN_ACCESS": "open_access"}


class SearchError(ValueError):
    """The query cannot be answered; the message says what to change."""


@dataclass(frozen=True)
class Search:
    """A validated search: the query tree, the order and the page."""

    query: str
    tree: Node | None
    sort: str = "relevance"
    page: int = 1


def _year(text: str) -> int:
    if not (text.isdigit() and len(text) == 4):
        raise SearchError(f"PUB_YEAR takes a year or a range like [2015 TO 2019], not {text!r}.")
    return int(text)


def _check(leaf: Leaf) -> None:
    if leaf.field == "PUB_YEAR":
        lo, hi = leaf.bounds if leaf.kind == "range" else (leaf.text, leaf.text)
        if _year(lo) > _year(hi):
            raise SearchError(f"The range PUB_YEAR:[{leaf.text}] is empty.")
    elif leaf.kind == "range":
        raise SearchError(f"Only PUB_YEAR takes a range; {leaf.field or 'a term'} does not.")
    elif leaf.field == "PUB_TYPE" and leaf.text not in TYPES:
        raise SearchError(f"PUB_TYPE is one of {', '.join(TYPES)}, not {leaf.text!r}.")
    elif leaf.field == "OPEN_ACCESS" and leaf.text not in _YES:
        raise SearchError(f"OPEN_ACCESS is y or n, not {leaf.text!r}.")
    if leaf.prefix and leaf.field in ("PUB_YEAR", "PUB_TYPE", "OPEN_ACCESS"):
        raise SearchError(f"{leaf.field} takes no * wildcard.")


def parse_search(query: str, sort: str = "", page: str = "") -> Search:
    """Validate a query, its order and page; raise SearchError with a message for the user."""
    text = " ".join(query.split())
    try:
        tree = parse(text, FIELDS)
    except QuerySyntaxError as exc:
        raise SearchError(f"The query cannot be read: {exc}.") from None
    for leaf, _ in leaves(tree):
        _check(leaf)
    sort = sort or "relevance"
    if sort not in SORTS:
        raise SearchError(f"Sort by one of {', '.join(SORTS)}, not {sort!r}.")
    try:
        number = max(1, int(page or 1))
    except ValueError:
        raise SearchError(f"The page must be a number, not {page!r}.") from None
    return Search(text, tree, sort, number)


def _leaf_sql(leaf: Leaf, column: str | None = None) -> tuple[str, list[object]]:
    if leaf.field == "PUB_YEAR":
        lo, hi = leaf.bounds if leaf.kind == "range" else (leaf.text, leaf.text)
        return "a.year BETWEEN ? AND ?", [int(lo), int(hi)]
    if leaf.field == "PUB_TYPE":
        return "a.type = ?", [leaf.text]
    if leaf.field == "OPEN_ACCESS":
        return "a.open_access = ?", [_YES[leaf.text]]
    return ("a.n IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)",
            [f"{column or _COLUMNS[leaf.field]} : {fts_phrase(leaf)}"])


def _relevance(tree: Node) -> tuple[str, list[object]]:
    terms, params = [], []
    for leaf, negated in leaves(tree):
        if negated or leaf.field not in _WEIGHTS:
            continue
        for column, weight in _WEIGHTS[leaf.field]:
            sql, ps = _leaf_sql(leaf, column)
            terms.append(f"{weight} * ({sql})")
            params += ps
    return (" + ".join(terms) or "0 + 0"), params  # a constant alone would be read as a column number


@dataclass
class Results:
    """One page of results, the facets of the whole result, and what the query was read as."""

    rows: list[list[str]]
    total: int
    page: int
    pages: int
    types: list[tuple[str, int]]
    access: list[tuple[str, int]]
    search: Search


def run_search(s: Search) -> Results:
    """The page of results of a search, in its order, with the facet counts of every result."""
    if s.tree is None:
        return Results([], 0, 1, 1, [], [], s)
    where, params = to_sql(s.tree, _leaf_sql)
    total = fetch(f"SELECT COUNT(*) FROM articles a WHERE {where}", params)[0][0]
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(s.page, pages)
    order, oparams = {"date": ("a.pub_date DESC, a.n DESC", []),
                      "cited": ("a.cited DESC, a.pub_date DESC, a.n DESC", [])}.get(s.sort, ("", []))
    if s.sort == "relevance":
        score, oparams = _relevance(s.tree)
        order = f"({score}) DESC, a.pub_date DESC, a.n DESC"
    raw = fetch(f"SELECT a.id, a.title, a.authors, a.journal, a.year, a.type, a.open_access, a.cited "
                f"FROM articles a WHERE {where} ORDER BY {order} LIMIT {PAGE_SIZE} OFFSET {(page - 1) * PAGE_SIZE}",
                params + oparams)
    rows = [[str(v) for v in r[:6]] + ["Yes" if r[6] == "y" else "No", str(r[7])] for r in raw]
    types = fetch(f"SELECT a.type, COUNT(*) FROM articles a WHERE {where} GROUP BY 1 ORDER BY 2 DESC, 1", params)
    access = fetch(f"SELECT a.open_access, COUNT(*) FROM articles a WHERE {where} GROUP BY 1 ORDER BY 1 DESC",
                   params)
    return Results(rows, total, page, pages, types, access, Search(s.query, s.tree, s.sort, page))


def _part(node: Node) -> tuple[str, str]:
    """A conjunct as (scope name, value): a single-field clause by its field, its value without quotes or field;
    a year as `lo..hi`; anything else as `expr`, written in full."""
    if isinstance(node, Op) or (isinstance(node, Leaf) and node.field not in _SCOPE):
        return "expr", wrapped(node) if isinstance(node, Op) and node.name == "OR" else canonical(node)
    if node.field == "PUB_YEAR":
        lo, hi = node.bounds if node.kind == "range" else (node.text, node.text)
        return "pub_year", f"{lo}..{hi}"
    if node.field == "OPEN_ACCESS":
        return "open_access", _YES[node.text]
    return _SCOPE[node.field], node.text + ("*" if node.prefix else "")


def scope_params(s: Search) -> str:
    """The search as URL parameters, one per single-field part of its top-level AND (several parts of one field
    joined by ` AND `), then its order and page: the results table's `data-scope`."""
    parts: dict[str, list[str]] = {}
    for node in conjuncts(s.tree):
        name, value = _part(node)
        parts.setdefault(name, []).append(value)
    pairs = [(name, " AND ".join(values)) for name, values in parts.items()]
    return urlencode(pairs + [("sort", s.sort), ("page", str(s.page))])


def with_clause(s: Search, clause: str) -> str:
    """The query with one more clause ANDed on (a facet's link)."""
    return f"({s.query}) AND {clause}" if isinstance(s.tree, Op) and s.tree.name == "OR" else f"{s.query} AND {clause}"
