"""BioKB's query language and the SQL behind its searches: protein entries, the trial registry, the taxonomy tree.

A protein query is clauses joined by AND: `field:value` (`gene:CASP3`, `organism_id:10090`, `reviewed:true`,
`length:[400 TO 600]`, `organism_name:"Mus caroli"`) or bare words (matched in names, genes and accessions).
`Scope.params()` is the query as the results say they were computed under it (normalised: names resolved to
taxon ids, genes upper-cased), in URL-parameter form.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from rig.sites.bio.data import EXISTENCE, PHASES, STATUSES, query

PAGE_SIZE = 25
TRIAL_PAGE_SIZE = 20
FIELDS = ("accession", "gene", "protein_name", "organism_id", "organism_name", "taxonomy_id", "taxonomy_name",
          "reviewed", "keyword", "existence", "length", "ec")
_CLAUSE = re.compile(r'\s*(?:(\w+):)?("[^"]*"|\[[^\]]*\]|\S+)\s*')
_RANGE = re.compile(r"^\[\s*(\d+|\*)\s+TO\s+(\d+|\*)\s*\]$", re.IGNORECASE)


class QueryError(ValueError):
    """A query the knowledgebase cannot run; the message says what to change."""


@dataclass(frozen=True)
class Column:
    """One result column: its key (the `fields` value), header label and SQL expression."""

    key: str
    label: str
    sql: str
    numeric: bool = False


COLUMNS: dict[str, Column] = {c.key: c for c in (
    Column("accession", "Entry", "p.accession"),
    Column("entry_name", "Entry name", "p.entry_name"),
    Column("protein_name", "Protein names", "p.protein_name"),
    Column("gene", "Gene names", "p.gene"),
    Column("organism", "Organism", "p.organism"),
    Column("length", "Length", "p.length", numeric=True),
    Column("reviewed", "Status", "CASE WHEN p.reviewed THEN 'Reviewed' ELSE 'Unreviewed' END"),
    Column("organism_id", "Organism ID", "p.organism_id", numeric=True),
    Column("mass", "Mass", "p.mass", numeric=True),
    Column("ec", "EC number", "COALESCE(p.ec, '')"),
    Column("keywords", "Keywords", "REPLACE(p.keywords, ';', ', ')"),
    Column("location", "Subcellular location", "p.location"),
    Column("existence", "Protein existence", "p.existence"),
    Column("annotation", "Annotation score", "p.annotation", numeric=True),
    Column("trials", "Clinical trials", "(SELECT COUNT(*) FROM targets t WHERE t.accession = p.accession)",
           numeric=True),
)}
DEFAULT_COLUMNS = ("accession", "entry_name", "protein_name", "gene", "organism", "length")


@dataclass(frozen=True)
class Scope:
    """A parsed protein query."""

    accession: str | None = None
    gene: str | None = None
    protein_name: str | None = None
    organism: int | None = None
    taxonomy: int | None = None
    reviewed: bool | None = None
    keyword: str | None = None
    existence: int | None = None
    length: tuple[int | None, int | None] | None = None
    ec: str | None = None
    words: tuple[str, ...] = ()

    def params(self) -> str:
        """The applied query as URL parameters (empty fields left out)."""
        pairs: list[tuple[str, str]] = []
        for name in ("accession", "gene", "protein_name", "organism", "taxonomy", "keyword", "existence", "ec"):
            value = getattr(self, name)
            if value is not None:
                pairs.append((name, str(value)))
        if self.reviewed is not None:
            pairs.append(("reviewed", "true" if self.reviewed else "false"))
        if self.length is not None:
            lo, hi = self.length
            pairs.append(("length", f"{'' if lo is None else lo}-{'' if hi is None else hi}"))
        pairs += [("text", w) for w in self.words]
        return urlencode(pairs)

    def where(self) -> tuple[str, list[Any]]:
        """SQL conditions on `proteins p` for this scope."""
        conds: list[str] = []
        params: list[Any] = []
        if self.accession is not None:
            conds.append("p.accession = ?")
            params.append(self.accession)
        if self.gene is not None:
            conds.append("UPPER(p.gene) = ?")
            params.append(self.gene)
        if self.protein_name is not None:
            conds.append("p.protein_name LIKE ?")
            params.append(f"%{self.protein_name}%")
        if self.organism is not None:
            conds.append("p.organism_id = ?")
            params.append(self.organism)
        if self.taxonomy is not None:
            conds.append("p.organism_id IN (SELECT id FROM subtree)")  # the CTE's own parameter is the taxon
        if self.reviewed is not None:
            conds.append("p.reviewed = ?")
            params.append(int(self.reviewed))
        if self.keyword is not None:
            conds.append("(';' || UPPER(p.keywords) || ';') LIKE ?")
            params.append(f"%;{self.keyword.upper()};%")
        if self.existence is not None:
            conds.append("p.existence = ?")
            params.append(self.existence)
        if self.length is not None:
            lo, hi = self.length
            if lo is not None:
                conds.append("p.length >= ?")
                params.append(lo)
            if hi is not None:
                conds.append("p.length <= ?")
                params.append(hi)
        if self.ec is not None:
            conds.append("(p.ec = ? OR p.ec LIKE ?)")
            params += [self.ec, f"{self.ec}.%"]
        for w in self.words:
            conds.append("(p.protein_name LIKE ? OR p.gene LIKE ? OR p.accession LIKE ?)")
            params += [f"%{w}%"] * 3
        return " AND ".join(conds) or "1", params


def _taxon_by_name(name: str) -> int:
    rows = query("SELECT id FROM taxa WHERE LOWER(name) = LOWER(?)", (name,))
    if not rows:
        raise QueryError(f"No organism or taxon is named {name!r}; browse the taxonomy for names and ids.")
    return int(rows[0]["id"])


def _int(name: str, value: str) -> int:
    if not value.isdigit():
        raise QueryError(f"{name} takes a number, not {value!r}.")
    return int(value)


def parse(text: str) -> Scope:
    """The scope a query text names; QueryError naming the clause that is wrong."""
    scope = Scope()
    words: list[str] = []
    text = text.strip()
    for part in re.split(r"\s+AND\s+", text, flags=re.IGNORECASE) if text else []:
        for m in _CLAUSE.finditer(part):
            name, raw = (m.group(1) or "").lower(), m.group(2)
            value = raw[1:-1] if raw.startswith('"') else raw
            if not name:
                words.append(value)
                continue
            if name not in FIELDS:
                raise QueryError(f"Unknown field {name!r} in {m.group(0).strip()!r}; fields are {', '.join(FIELDS)}.")
            scope = _with(scope, name, value)
    return replace(scope, words=tuple(words))


def _with(scope: Scope, name: str, value: str) -> Scope:
    if name in ("organism_id", "taxonomy_id", "existence"):
        number = _int(name, value)
        if name == "existence" and number not in EXISTENCE:
            raise QueryError(f"existence is a level from 1 to 5, not {number}.")
        if name != "existence" and not query("SELECT 1 FROM taxa WHERE id = ?", (number,)):
            raise QueryError(f"No taxon has the id {number}.")
        key = {"organism_id": "organism", "taxonomy_id": "taxonomy"}.get(name, name)
        return replace(scope, **{key: number})
    if name in ("organism_name", "taxonomy_name"):
        return replace(scope, **{name.split("_")[0]: _taxon_by_name(value)})
    if name == "reviewed":
        if value.lower() not in ("true", "false"):
            raise QueryError(f"reviewed is true or false, not {value!r}.")
        return replace(scope, reviewed=value.lower() == "true")
    if name == "length":
        m = _RANGE.match(value)
        if not m:
            raise QueryError(f"length takes a range such as [400 TO 600], not {value!r}.")
        lo, hi = (None if g == "*" else int(g) for g in m.groups())
        return replace(scope, length=(lo, hi))
    if name == "gene":
        return replace(scope, gene=value.upper())
    return replace(scope, **{name: value})


@dataclass
class Result:
    """One page of protein entries."""

    columns: list[Column]
    rows: list[list[Any]]
    total: int
    page: int
    pages: int
    sort: str | None
    dir: str
    reviewed_counts: dict[bool, int] = field(default_factory=dict)
    organisms: list[tuple[int, str, int]] = field(default_factory=list)


def parse_columns(values: list[str]) -> list[Column]:
    """The chosen columns in the knowledgebase's order (Entry always first); unknown keys are ignored."""
    keys = {k for v in values for k in v.split(",") if k.strip()}
    chosen = [COLUMNS[k] for k in COLUMNS if k in keys] if keys else [COLUMNS[k] for k in DEFAULT_COLUMNS]
    return [COLUMNS["accession"], *[c for c in chosen if c.key != "accession"]]


def _with_subtree(scope: Scope, sql: str) -> str:
    if scope.taxonomy is None:
        return sql
    return ("WITH RECURSIVE subtree(id) AS (SELECT ? UNION ALL SELECT t.id FROM taxa t JOIN subtree s"
            " ON t.parent = s.id) " + sql)


def search(scope: Scope, columns: list[Column], sort: str | None, desc: bool, page: int) -> Result:
    """One page of the entries matching a scope, with the status and organism facet counts."""
    where, params = scope.where()
    cte = [scope.taxonomy] if scope.taxonomy is not None else []
    base = f"FROM proteins p WHERE {where}"
    total = query(_with_subtree(scope, f"SELECT COUNT(*) AS n {base}"), [*cte, *params])[0]["n"]
    pages = max(1, math.ceil(total / PAGE_SIZE))
    page = min(max(1, page), pages)
    if sort not in COLUMNS:
        sort = None
    order = f"{COLUMNS[sort].sql} {'DESC' if desc else 'ASC'}, " if sort else "p.reviewed DESC, "
    select = ", ".join(c.sql for c in columns)
    sql = f"SELECT {select} {base} ORDER BY {order}p.accession LIMIT {PAGE_SIZE} OFFSET {(page - 1) * PAGE_SIZE}"
    rows = [list(r) for r in query(_with_subtree(scope, sql), [*cte, *params])]
    counts = query(_with_subtree(scope, f"SELECT p.reviewed AS r, COUNT(*) AS n {base} GROUP BY p.reviewed"),
                   [*cte, *params])
    organisms = query(_with_subtree(scope, f"SELECT p.organism_id AS id, p.organism AS name, COUNT(*) AS n {base}"
                                           " GROUP BY p.organism_id ORDER BY n DESC, name LIMIT 6"), [*cte, *params])
    return Result(columns, rows, total, page, pages, sort, "desc" if desc else "asc",
                  {bool(r["r"]): r["n"] for r in counts}, [(r["id"], r["name"], r["n"]) for r in organisms])


def with_clause(text: str, name: str, value: str | None) -> str:
    """The query text with the clause on `name` replaced by `name:value` (removed when value is None)."""
    parts = [p for p in re.split(r"\s+AND\s+", text.strip(), flags=re.IGNORECASE) if p
             and not p.lower().startswith(f"{name}:")]
    if value is not None:
        parts.append(f"{name}:{value}")
    return " AND ".join(parts)


# ---- the trial registry --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrialFilter:
    """The registry's filters as the form gives them."""

    target: str = ""
    condition: str = ""
    phases: tuple[str, ...] = ()
    status: str = ""
    sort: str = "start"
    dir: str = "asc"
    page: int = 1
    errors: tuple[str, ...] = ()


TRIAL_SORTS = {"start": "tr.start", "enrollment": "tr.enrollment", "nct": "tr.nct"}


def parse_trials(params: Any) -> TrialFilter:
    """The registry's filters from request parameters; unknown phases or statuses are reported, not applied."""
    errors = []
    phases = tuple(p for p in PHASES if p in params.getlist("phase"))
    bad = [p for p in params.getlist("phase") if p not in PHASES]
    if bad:
        errors.append(f"Unknown phase {bad[0]!r}.")
    status = params.get("status", "")
    if status and status not in STATUSES:
        errors.append(f"Unknown status {status!r}.")
        status = ""
    sort = params.get("sort", "start") if params.get("sort") in TRIAL_SORTS else "start"
    page = int(params["page"]) if params.get("page", "").isdigit() else 1
    return TrialFilter(params.get("target", "").strip().upper(), params.get("condition", "").strip(), phases, status,
                       sort, "desc" if params.get("dir") == "desc" else "asc", page, tuple(errors))


@dataclass
class TrialResult:
    """One page of trials."""

    rows: list[Any]
    total: int
    page: int
    pages: int


def search_trials(f: TrialFilter) -> TrialResult:
    """The trials matching the registry's filters, one page, in the chosen order (then by NCT ID)."""
    conds, params = [], []
    if f.target:
        conds.append("tr.nct IN (SELECT nct FROM targets WHERE accession = ?)")
        params.append(f.target)
    if f.condition:
        conds.append("tr.condition LIKE ?")
        params.append(f"%{f.condition}%")
    if f.phases:
        conds.append(f"tr.phase IN ({', '.join('?' * len(f.phases))})")
        params += list(f.phases)
    if f.status:
        conds.append("tr.status = ?")
        params.append(f.status)
    base = "FROM trials tr" + (f" WHERE {' AND '.join(conds)}" if conds else "")
    total = query(f"SELECT COUNT(*) AS n {base}", params)[0]["n"]
    pages = max(1, math.ceil(total / TRIAL_PAGE_SIZE))
    page = min(max(1, f.page), pages)
    rows = query(f"SELECT tr.* {base} ORDER BY {TRIAL_SORTS[f.sort]} {f.dir.upper()}, tr.nct"
                 f" LIMIT {TRIAL_PAGE_SIZE} OFFSET {(page - 1) * TRIAL_PAGE_SIZE}", params)
    return TrialResult(rows, total, page, pages)


# ---- taxonomy ------------------------------------------------------------------------------------------------

_COUNTS = ("WITH RECURSIVE sub(top, id) AS (SELECT id, id FROM taxa WHERE parent = ? UNION ALL"
           " SELECT s.top, t.id FROM taxa t JOIN sub s ON t.parent = s.id)"
           " SELECT s.top AS id, SUM(p.reviewed) AS reviewed, COUNT(p.accession) - SUM(p.reviewed) AS unreviewed"
           " FROM sub s JOIN proteins p ON p.organism_id = s.id GROUP BY s.top")


def taxon(taxon_id: int) -> dict[str, Any] | None:
    """One taxon: its `path` (names from the top, `Eukaryota/Chordata/...`), `ancestors` (from the top, each {id,
    name, rank}) and the reviewed and unreviewed entries of its subtree."""
    rows = query("SELECT * FROM taxa WHERE id = ?", (taxon_id,))
    if not rows:
        return None
    node = dict(rows[0])
    ancestors, parent = [], node["parent"]
    while parent not in (None, 1):
        p = dict(query("SELECT id, name, rank, parent FROM taxa WHERE id = ?", (parent,))[0])
        ancestors.insert(0, p)
        parent = p["parent"]
    counts = query("WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT t.id FROM taxa t JOIN sub s ON t.parent = s.id)"
                   " SELECT COALESCE(SUM(p.reviewed), 0) AS reviewed, COUNT(p.accession) AS total"
                   " FROM sub s JOIN proteins p ON p.organism_id = s.id", (taxon_id,))[0]
    own = query("SELECT COUNT(*) AS n FROM proteins WHERE organism_id = ?", (taxon_id,))[0]["n"]
    return {**node, "path": node["lineage"] or node["name"], "ancestors": ancestors, "reviewed": counts["reviewed"],
            "unreviewed": counts["total"] - counts["reviewed"], "own_entries": own}


def children(taxon_id: int) -> list[dict[str, Any]]:
    """The child taxa of a taxon, by name, with the reviewed and unreviewed entries of each child's subtree."""
    counts = {r["id"]: (r["reviewed"], r["unreviewed"]) for r in query(_COUNTS, (taxon_id,))}
    out = []
    for r in query("SELECT id, name, rank, common, (SELECT COUNT(*) FROM taxa c WHERE c.parent = t.id) AS kids"
                   " FROM taxa t WHERE parent = ? ORDER BY name", (taxon_id,)):
        reviewed, unreviewed = counts.get(r["id"], (0, 0))
        out.append({"id": r["id"], "name": r["name"], "rank": r["rank"], "common": r["common"],
                    "has_children": r["kids"] > 0, "reviewed": reviewed, "unreviewed": unreviewed})
    return out


def protein(accession: str) -> dict[str, Any] | None:
    """One entry with its organism's lineage and the trials that target it."""
    rows = query("SELECT * FROM proteins WHERE accession = ?", (accession,))
    if not rows:
        return None
    entry = dict(rows[0])
    entry["trials"] = [r["nct"] for r in query("SELECT nct FROM targets WHERE accession = ? ORDER BY nct", (accession,))]
    entry["taxon"] = taxon(entry["organism_id"])
    return entry


def trial(nct: str) -> dict[str, Any] | None:
    """One trial with its target entries."""
    rows = query("SELECT * FROM trials WHERE nct = ?", (nct,))
    if not rows:
        return None
    targets = query("SELECT p.accession, p.gene, p.protein_name, p.organism FROM targets t JOIN proteins p"
                    " ON p.accession = t.accession WHERE t.nct = ? ORDER BY p.accession", (nct,))
    return {**dict(rows[0]), "targets": [dict(t) for t in targets]}
