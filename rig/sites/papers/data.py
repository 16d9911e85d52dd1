"""The papers site's data: a synthetic literature archive, generated deterministically from a seed, and the
in-memory sqlite3 database (with an FTS5 index over titles, abstracts, authors, journals and full texts) the site
answers from.

Everything is made up (no real article, author, molecule or trial). Besides background articles the archive holds
the structures the tasks read: two yearly review series whose tables track candidate therapies from a watch list
to first approval ("Gene Therapies to Watch in <year>", "Cell Therapies to Watch in <year>"), with a commentary
that re-tabulates one year; a yearly drug-development pipeline review listing trials by phase, and the articles
reporting those trials; reviews of base editing tabulating editing efficiency by tissue, and the research
articles on each tissue; and the 2016 reviews of AAV capsids, with their first authors' later work.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import lru_cache

from rig.sites.memdb import MemoryDB

#: One seed per planted part of the archive, so that each part's structure is drawn on its own.
SEEDS = {"capsids": 1, "gene": 3, "cell": 1, "pipeline": 6, "base-editing": 1, "background": 1}
DATA_VERSION = "papers-synthetic==1"
FIRST_YEAR, LAST_YEAR = 2008, 2024
TYPES = ("research-article", "review", "editorial", "letter", "case-report", "correction")
TISSUES = ("hepatocytes", "retinal pigment epithelium", "hematopoietic stem cells", "skeletal muscle",
           "cardiomyocytes", "cochlear hair cells", "lung epithelium")
_SURNAMES = (
    "Abara", "Bergstrom", "Castellanos", "Dunmore", "Eklund", "Fairweather", "Gallardo", "Hayashida", "Ivanova",
    "Jovanovic", "Kowalczyk", "Lindqvist", "Moreau", "Nakashima", "Oyelaran", "Petrakis", "Quintero", "Rasmussen",
    "Szabo", "Takahara", "Ulloa", "Valente", "Whitcombe", "Xiong", "Yildirim", "Zamora", "Achterberg", "Bhandari",
    "Cheswick", "Delacroix", "Esposito", "Falkenrath", "Grimaldi", "Holloway", "Iwasaki", "Janssen", "Kettering",
    "Laurentis", "Mbeki", "Nordahl", "Ostrowski", "Pellegrini", "Radcliffe", "Sandoval", "Thorvaldsen", "Umberti",
    "Vasquez", "Wendling", "Yamaguchi", "Zeller", "Arkwright", "Brannigan", "Corvino", "Duchene", "Engstrand",
    "Fitzgerald", "Gunnarsson", "Halvorsen", "Ingram", "Kaminski")
_INITIALS = "ABCDEFGHJKLMNPRSTW"
_JOURNALS = ("Annals of Vector Science", "Genome Engineering Reports", "Journal of Translational Neurology",
             "Cell Manufacturing Quarterly", "Rare Disease Research", "Clinical Therapeutics Letters",
             "Journal of Molecular Medicine Practice", "Frontiers in Gene Delivery")
SERIES_JOURNAL = "Advanced Therapies Review"
PIPELINE_JOURNAL = "Movement Disorders Therapeutics"
_TOPICS = (
    ("gene therapy", ("vector manufacturing", "immune responses to viral vectors", "hemophilia B",
                      "retinal dystrophy", "spinal muscular atrophy", "dose escalation")),
    ("Parkinson's disease", ("alpha-synuclein aggregation", "LRRK2 kinase activity", "dopaminergic neuron loss",
                             "deep brain stimulation", "GBA1 variants", "gait freezing")),
    ("CAR-T cell therapy", ("cytokine release syndrome", "solid tumours", "lymphodepletion", "antigen escape")),
    ("antisense oligonucleotides", ("splice modulation", "intrathecal delivery", "hepatic uptake")),
    ("lipid nanoparticles", ("mRNA delivery", "endosomal escape", "biodistribution")),
)
_TITLE_FORMS = ("{b} in {a}: a {kind} study", "Effects of {b} on outcomes in {a}", "{b} and {a}: new evidence",
                "Long-term follow-up of {b} in {a}", "Modelling {b} for {a}", "{b}: lessons for {a}")
_GENE_CATEGORIES = ("AAV gene therapy", "Lentiviral gene therapy", "Gene editing", "Oligonucleotide",
                    "mRNA therapy")
_CELL_CATEGORIES = ("CAR-T cell therapy", "TCR-T cell therapy", "TIL therapy", "Stem cell therapy",
                    "NK cell therapy")
_INDICATIONS = ("hemophilia A", "hemophilia B", "Duchenne muscular dystrophy", "spinal muscular atrophy",
                "retinitis pigmentosa", "Leber congenital amaurosis", "sickle cell disease", "beta-thalassemia",
                "Fabry disease", "Pompe disease", "metachromatic leukodystrophy", "Huntington disease",
                "large B-cell lymphoma", "multiple myeloma", "synovial sarcoma", "melanoma", "acute myeloid leukemia",
                "Wilson disease", "phenylketonuria", "Friedreich ataxia")
_SPONSORS = ("Arclight Bio", "Veridian Therapeutics", "Northstar Genomics", "Helix Harbor", "Quillon Pharma",
             "Solent Biologics", "Tamsin Cell Works", "Orrery Medicines", "Bellwether Bio", "Kestrel Therapeutics")
_REGIONS = ("US", "EU", "US and EU", "Japan")
_STEMS = ("ala", "beti", "civa", "dela", "eto", "fida", "gira", "hexa", "iro", "juva", "kela", "lumi", "mira",
          "nova", "ori", "pela", "quira", "rova", "sela", "tira", "ulva", "vira", "wexa", "xela", "yora", "zeta",
          "amo", "boro", "cira", "duna", "elva", "fora")
_MECHANISMS = ("alpha-synuclein antibody", "LRRK2 inhibitor", "GBA1 modulator", "GLP-1 receptor agonist",
               "dopamine agonist", "adenosine A2A antagonist", "iron chelator", "c-Abl inhibitor",
               "AAV-GAD gene therapy", "cell replacement")
_PD_SPONSORS = ("Meadowlark Neuro", "Ferncliff Pharma", "Oakridge Therapeutics", "Synapse Harbour",
                "Brightwater Neuroscience", "Calder University Hospital", "Lindenfield Biotech")


@dataclass(frozen=True)
class Table:
    """One table of an article as it is printed: caption, header and rows in their printed order."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Article:
    """One article of the archive."""

    id: str  # "" until the archive numbers its articles in order of publication
    title: str
    authors: tuple[str, ...]
    journal: str
    pub_date: str
    type: str
    open_access: bool
    cited: int
    abstract: str
    sections: tuple[tuple[str, str], ...] = ()
    tables: tuple[Table, ...] = ()

    @property
    def year(self) -> int:
        """The year of publication."""
        return int(self.pub_date[:4])

    @property
    def body(self) -> str:
        """The full text beyond the abstract (sections and table cells), as the archive indexes it."""
        cells = [" ".join([t.caption, *t.columns, *(c for r in t.rows for c in r)]) for t in self.tables]
        return " ".join([*(f"{h}. {p}" for h, p in self.sections), *cells])


@dataclass
class _Molecule:
    inn: str
    brand: str
    category: str
    indication: str
    sponsor: str
    watch: int
    expected: int
    filed: int | None
    region: str
    approved: str | None = None  # YYYY-MM-DD


@dataclass
class _Trial:
    id: str
    agent: str
    mechanism: str
    sponsor: str
    phase: int
    start: str  # YYYY-MM
    end: str
    reports: list[str] = field(default_factory=list)


class _Gen:
    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.drafts: list[Article] = []
        self.names: set[str] = set()
        self.reserved: set[str] = set()

    def use(self, part: str) -> _Gen:
        """Draw the next part of the archive from its own seed."""
        self.rng = random.Random(f"{part}:{SEEDS[part]}")
        return self

    def author(self) -> str:
        while True:
            name = f"{self.rng.choice(_SURNAMES)} {self.rng.choice(_INITIALS)}"
            if name not in self.reserved:
                return name

    def authors(self, first: str | None = None, n: int | None = None) -> tuple[str, ...]:
        out = [first] if first else []
        while len(out) < (n or self.rng.randint(2, 6)):
            name = self.author()
            if name not in out:
                out.append(name)
        return tuple(out)

    def day(self, year: int, first_month: int = 1, last_month: int = 12) -> str:
        start = date(year, first_month, 1)
        end = date(year + (last_month == 12), 1 if last_month == 12 else last_month + 1, 1)
        return (start + timedelta(days=self.rng.randrange((end - start).days))).isoformat()

    def cited(self, year: int, scale: float = 1.0) -> int:
        return int(self.rng.paretovariate(1.6) * (LAST_YEAR + 1 - year) * 3 * scale)

    def add(self, **kw: object) -> Article:
        d = Article(id="", **kw)  # type: ignore[arg-type]
        self.drafts.append(d)
        return d

    def inn(self, kind: str) -> str:
        """A made-up INN, unique in the archive: `alasogene betiparvovec`, `civatocabtagene autoleucel`."""
        while True:
            mid = self.rng.choice(("so", "to", "va", "ne"))
            name = (f"{self.rng.choice(_STEMS)}{mid}gene {self.rng.choice(_STEMS)}parvovec" if kind == "gene"
                    else f"{self.rng.choice(_STEMS)}{mid}cabtagene autoleucel")
            if name not in self.names:
                self.names.add(name)
                return name


def _series_tables(year: int, mols: list[_Molecule], kind: str) -> tuple[Table, ...]:
    prev = year - 1
    approved = sorted((m for m in mols if m.approved and int(m.approved[:4]) == prev), key=lambda m: m.approved or "")
    review = sorted((m for m in mols if m.filed is not None and m.filed <= prev
                     and (m.approved is None or int(m.approved[:4]) > prev) and prev - m.filed <= 2),
                    key=lambda m: (m.filed, m.inn))
    watch = sorted((m for m in mols if m.watch == year), key=lambda m: m.inn)
    return (
        Table(f"Table 1. First approvals of {kind} therapies in {prev}, by date of first approval",
              ("INN", "Brand name", "Category", "Indication", "Region", "Approved", "First watch-listed"),
              tuple((m.inn, m.brand, m.category, m.indication, m.region, m.approved or "", str(m.watch))
                    for m in approved)),
        Table(f"Table 2. {kind.capitalize()} therapies in first regulatory review at the end of {prev}",
              ("INN", "Category", "Indication", "Region", "Review since"),
              tuple((m.inn, m.category, m.indication, m.region, str(m.filed)) for m in review)),
        Table(f"Table 3. {kind.capitalize()} therapies to watch in {year}",
              ("INN", "Category", "Sponsor", "Indication", "Expected filing"),
              tuple((m.inn, m.category, m.sponsor, m.indication, str(m.expected)) for m in watch)),
    )


def _molecules(g: _Gen, kind: str) -> list[_Molecule]:
    rng = g.rng
    cats = _GENE_CATEGORIES if kind == "gene" else _CELL_CATEGORIES
    mols = []
    for watch in range(2013, LAST_YEAR + 1):
        for _ in range(rng.randint(5, 8)):
            inn = g.inn(kind)
            expected = watch + rng.choice((0, 0, 1))
            filed = expected + rng.choice((0, 0, 0, 1)) if rng.random() < 0.8 else None
            m = _Molecule(inn, inn.split()[0][:4].capitalize() + rng.choice(("vy", "tra", "lis", "mo", "zya")),
                          rng.choice(cats), rng.choice(_INDICATIONS), rng.choice(_SPONSORS), watch, expected, filed,
                          rng.choice(_REGIONS))
            if filed is not None and rng.random() < 0.85:
                m.approved = g.day(filed + rng.choice((1, 1, 1, 2)))
            mols.append(m)
    return mols


def _plant_series(g: _Gen, kind: str, month: int) -> None:
    mols = _molecules(g, kind)
    title_kind = "Gene" if kind == "gene" else "Cell"
    team = g.authors(n=3)
    for year in range(2016, LAST_YEAR + 1):
        tables = _series_tables(year, mols, kind)
        g.add(title=f"{title_kind} Therapies to Watch in {year}", authors=team, journal=SERIES_JOURNAL,
              pub_date=g.day(year, month, month), type="review", open_access=True, cited=g.cited(year, 2.5),
              abstract=(f"Our annual review of {kind} therapies: the first approvals of {year - 1}, the candidates "
                        f"in first regulatory review, and the {kind} therapies to watch in {year}, with the year "
                        "each was first put on this watch list."),
              sections=(("Introduction", f"This is the {year} edition of the series."),
                        ("Methods", "Candidates are followed from the watch list to first regulatory review and "
                                    "first approval.")),
              tables=tables)
        if kind == "gene" and year == 2022:  # a commentary re-tabulating the same approvals, alphabetically
            t1 = tables[0]
            g.add(title=f"{title_kind} therapies to watch in {year}: a commentary", authors=g.authors(n=2),
                  journal=SERIES_JOURNAL, pub_date=g.day(year, month + 1, month + 1), type="editorial",
                  open_access=True, cited=g.cited(year, 0.5),
                  abstract=f"A commentary on this year's list of {kind} therapies to watch and on last year's "
                           "approvals.",
                  sections=(("Commentary", "We discuss each approval in turn."),),
                  tables=(Table(f"Table 1. Approvals of {year - 1} discussed in this commentary", t1.columns,
                                tuple(sorted(t1.rows))),))
        if kind == "gene" and year == 2020:
            g.add(title=f"Correction: {title_kind} Therapies to Watch in {year}", authors=team,
                  journal=SERIES_JOURNAL, pub_date=g.day(year, month + 3, month + 3), type="correction",
                  open_access=True, cited=0, abstract="The region of one first approval was misprinted.")


def _trials(g: _Gen) -> list[_Trial]:
    rng = g.rng
    out, seen = [], set()
    for _ in range(70):
        start_year = rng.randint(2014, 2023)
        while (ident := f"CTR-{start_year}-{rng.randint(100, 9999):04d}") in seen:
            pass
        seen.add(ident)
        month = rng.randint(1, 12)
        end_year, end_month = start_year + rng.randint(2, 5), rng.randint(1, 12)
        out.append(_Trial(ident, f"{rng.choice(_STEMS).upper()}-{rng.randint(100, 999)}", rng.choice(_MECHANISMS),
                          rng.choice(_PD_SPONSORS), rng.choice((1, 2, 2, 3, 3)), f"{start_year}-{month:02d}",
                          f"{end_year}-{end_month:02d}"))
    return out


def _plant_pipeline(g: _Gen) -> None:
    trials = _trials(g)
    team = g.authors(n=4)
    for year in range(2019, LAST_YEAR + 1):
        cut = f"{year}-01"
        active = [t for t in trials if t.start <= cut < t.end]
        tables = tuple(
            Table(f"Table {4 - phase}. Agents in Phase {phase} trials on January 31, {year}, by trial start",
                  ("Agent", "Mechanism", "Sponsor", "Trial ID", "Start"),
                  tuple((t.agent, t.mechanism, t.sponsor, t.id, t.start)
                        for t in sorted((t for t in active if t.phase == phase), key=lambda t: (t.start, t.id))))
            for phase in (3, 2, 1))
        g.add(title=f"Parkinson's Disease Drug Development Pipeline: {year}", authors=team, journal=PIPELINE_JOURNAL,
              pub_date=g.day(year, 5, 5), type="review", open_access=True, cited=g.cited(year, 2),
              abstract=("The yearly review of agents in clinical trials for Parkinson's disease, by phase, from the "
                        "trial registry on January 31."),
              sections=(("Methods", "Trials are read from the registry; each agent is listed with its trial."),),
              tables=tables)
    for t in trials:
        end = int(t.end[:4])
        for k in range(g.rng.randint(1, 4) if t.phase >= 2 else g.rng.randint(0, 2)):
            year = min(LAST_YEAR, end + g.rng.randint(0, 1))
            in_abstract = k % 2 == 0
            mention = f"registered as {t.id}"
            g.add(title=f"{t.agent} ({t.mechanism}) in early Parkinson's disease: "
                        f"{('primary results', 'secondary analysis', 'biomarker findings', 'safety follow-up')[k]}",
                  authors=g.authors(), journal=g.rng.choice(_JOURNALS[:3] + ("Journal of Translational Neurology",)),
                  pub_date=g.day(year), type="research-article", open_access=g.rng.random() < 0.6,
                  cited=g.cited(year), abstract=(f"We report a Phase {t.phase} trial of {t.agent} "
                                                 + (f"({mention}). " if in_abstract else ". ")
                                                 + "Outcomes were motor scores and safety."),
                  sections=(("Methods", f"The trial was {mention} and sponsored by {t.sponsor}."),))
        if t.phase == 3 and g.rng.random() < 0.7:
            year = min(LAST_YEAR, int(t.start[:4]) + 1)
            g.add(title=f"Is {t.agent} the next step in Parkinson's disease?", authors=g.authors(n=2),
                  journal=PIPELINE_JOURNAL, pub_date=g.day(year), type=g.rng.choice(("editorial", "letter")),
                  open_access=True, cited=g.cited(year, 0.3),
                  abstract=f"On the Phase 3 trial of {t.agent} ({t.id}) and what it may show.")


def _efficiency_table(rng: random.Random, tissues: list[str]) -> Table:
    effs = sorted((round(rng.uniform(5, 80), 1) for _ in tissues), reverse=True)
    rows = tuple((t, rng.choice(("ABE8e", "ABE7.10", "BE4max", "CBE3")),
                  rng.choice(("LNP", "AAV", "RNP", "lentivirus")), f"{e:.1f}") for t, e in zip(tissues, effs))
    return Table("Table 1. Reported editing efficiency by target tissue, highest first",
                 ("Target tissue", "Editor", "Delivery", "Efficiency (%)"), rows)


def _plant_base_editing(g: _Gen) -> None:
    rng = g.rng
    reviews = []
    for year in range(2015, LAST_YEAR + 1):
        for _ in range(rng.randint(1, 2)):
            reviews.append(g.add(
                title=f"{rng.choice(('Therapeutic', 'Precision', 'In vivo'))} base editing: "
                      f"{rng.choice(('progress and prospects', 'a review', 'where we stand', 'delivery first'))}",
                authors=g.authors(), journal=rng.choice(_JOURNALS[:2]), pub_date=g.day(year), type="review",
                open_access=rng.random() < 0.7, cited=g.cited(year, 2),
                abstract="We review base editing in vivo and tabulate reported editing efficiency by target tissue.",
                sections=(("Overview", "Base editors convert single bases without double-strand breaks."),),
                tables=(_efficiency_table(rng, rng.sample(TISSUES, rng.randint(4, 6))),)))
    # the landmark review of 2021, cited more than any earlier one, leads with another tissue than the most cited
    # open-access review of 2015-2019, and so does the newest open-access review of those years
    early = [r for r in reviews if r.open_access and r.pub_date < "2020"]
    lead = max(early, key=lambda r: r.cited).tables[0].rows[0][0]
    newest = max(early, key=lambda r: r.pub_date)
    if newest.tables[0].rows[0][0] == lead:
        t = newest.tables[0]
        swapped = Table(t.caption, t.columns, ((t.rows[1][0], *t.rows[0][1:]), (t.rows[0][0], *t.rows[1][1:]),
                                               *t.rows[2:]))
        g.drafts[g.drafts.index(newest)] = replace(newest, tables=(swapped,))
    others = [t for t in TISSUES if t != lead]
    g.add(title="Base editing comes of age", authors=g.authors(), journal=_JOURNALS[1], pub_date=g.day(2021),
          type="review", open_access=True, cited=max(r.cited for r in reviews) + rng.randint(50, 200),
          abstract="A review of five years of base editing in vivo, with editing efficiency by target tissue.",
          sections=(("Overview", "Base editing has reached the clinic."),),
          tables=(_efficiency_table(rng, rng.sample(others, 5)),))
    for tissue in TISSUES:
        for _ in range(rng.randint(8, 14)):
            year = rng.randint(2016, LAST_YEAR)
            g.add(title=f"{rng.choice(('Adenine', 'Cytosine', 'Dual'))} base editing in {tissue} "
                        f"{rng.choice(('of a mouse model', 'of non-human primates', 'ex vivo', 'after LNP delivery'))}",
                  authors=g.authors(), journal=rng.choice(_JOURNALS), pub_date=g.day(year),
                  type=rng.choice(("research-article",) * 5 + ("letter",)), open_access=rng.random() < 0.6,
                  cited=g.cited(year), abstract=f"We applied base editing to {tissue} and measured editing and "
                                                 "off-target effects.")


_CAPSID_TOPICS = ("engineered for tropism", "and neutralising antibodies", "by directed evolution",
                  "for the central nervous system", "in the clinic")
_CAPSID_TARGETS = ("the retina", "motor neurons", "the liver", "the blood-brain barrier", "muscle")


def _plant_capsids(g: _Gen) -> None:
    rng = g.rng
    firsts = []
    while len(firsts) < 5:
        name = g.author()
        if name not in firsts:
            firsts.append(name)
    g.reserved.update(firsts)
    for i, first in enumerate(firsts):
        g.add(title="AAV capsids " + _CAPSID_TOPICS[i],
              authors=g.authors(first), journal=rng.choice(_JOURNALS[:2]), pub_date=g.day(2016), type="review",
              open_access=True, cited=g.cited(2016, 2),
              abstract="A review of how the AAV capsid decides tropism, immunity and manufacturing yield.",
              sections=(("Overview", "Capsid variants are compared."),))
        kinds = ([("research-article", True, (2017, 2020))] * rng.randint(12, 16)
                 + [("research-article", False, (2017, 2020))] * rng.randint(2, 4)
                 + [(rng.choice(("review", "letter")), True, (2017, 2020)) for _ in range(rng.randint(1, 3))]
                 + [("research-article", True, rng.choice(((2013, 2016), (2021, 2023)))) for _ in range(3)])
        for kind, open_access, (lo, hi) in kinds:
            year = rng.randint(lo, hi)
            g.add(title=f"{rng.choice(('Capsid variant', 'Vector', 'Library'))} {rng.randint(2, 99)} "
                        f"{rng.choice(('transduces', 'targets', 'evades', 'crosses'))} "
                        f"{rng.choice(_CAPSID_TARGETS)}",
                  authors=g.authors(first) if rng.random() < 0.8 else (*g.authors(n=2), first),
                  journal=rng.choice(_JOURNALS), pub_date=g.day(year), type=kind, open_access=open_access,
                  cited=g.cited(year), abstract="We characterise an engineered vector in animal models.")
    for year in (2015, 2017):
        g.add(title="The AAV capsid as a drug", authors=g.authors(), journal=_JOURNALS[0], pub_date=g.day(year),
              type="review", open_access=True, cited=g.cited(year, 2),
              abstract="A review of the AAV capsid and its engineering.")


def _background(g: _Gen, n: int) -> None:
    rng = g.rng
    for _ in range(n):
        topic, subs = rng.choice(_TOPICS)
        year = rng.randint(FIRST_YEAR, LAST_YEAR)
        kind = rng.choices(TYPES, weights=(60, 10, 7, 8, 10, 5))[0]
        sub = rng.choice(subs)
        title = rng.choice(_TITLE_FORMS).format(a=topic, b=sub, kind=rng.choice(("cohort", "pilot", "mouse")))
        if kind == "correction":
            title = "Correction: " + title
        g.add(title=title[0].upper() + title[1:], authors=g.authors(), journal=rng.choice(_JOURNALS),
              pub_date=g.day(year), type=kind, open_access=rng.random() < 0.5, cited=g.cited(year),
              abstract=f"We studied {sub} in {topic}. " + rng.choice((
                  "The results support further trials.", "No difference was found.",
                  "Effects were larger in younger patients.", "We propose a new model.")),
              sections=(("Introduction", f"{topic.capitalize()} remains a field of active research."),))


@lru_cache(maxsize=1)
def articles() -> tuple[Article, ...]:
    """Every article of the archive in order of publication (ids ascending), the same on every run."""
    g = _Gen()
    _plant_capsids(g.use("capsids"))
    _plant_series(g.use("gene"), "gene", 1)
    _plant_series(g.use("cell"), "cell", 3)
    _plant_pipeline(g.use("pipeline"))
    _plant_base_editing(g.use("base-editing"))
    _background(g.use("background"), 1200)
    drafts = sorted(g.drafts, key=lambda d: d.pub_date)  # stable
    return tuple(replace(d, id=f"PA{200001 + i}") for i, d in enumerate(drafts))


@lru_cache(maxsize=1)
def by_id() -> dict[str, Article]:
    """The articles by id."""
    return {a.id: a for a in articles()}


_SCHEMA = (
    "CREATE TABLE articles (n INTEGER PRIMARY KEY, id TEXT UNIQUE, title TEXT, authors TEXT, journal TEXT,"
    " pub_date TEXT, year INTEGER, type TEXT, open_access TEXT, cited INTEGER);"
    "CREATE VIRTUAL TABLE papers_fts USING fts5(title, abstract, authors, journal, body, tokenize='unicode61');"
)


def _tables() -> dict[str, list[dict[str, object]]]:
    rows = list(enumerate(articles(), start=1))
    return {
        "articles": [{"n": n, "id": a.id, "title": a.title, "authors": ", ".join(a.authors), "journal": a.journal,
                      "pub_date": a.pub_date, "year": a.year, "type": a.type,
                      "open_access": "y" if a.open_access else "n", "cited": a.cited} for n, a in rows],
        "papers_fts": [{"rowid": n, "title": a.title, "abstract": a.abstract, "authors": ", ".join(a.authors),
                        "journal": a.journal, "body": a.body} for n, a in rows],
    }


#: The archive's database (built on first use).
DB = MemoryDB(_SCHEMA, _tables)
fetch = DB.query


def connection() -> sqlite3.Connection:
    """The loaded database (the site's `warm`: built before the server accepts requests)."""
    return DB.connection
