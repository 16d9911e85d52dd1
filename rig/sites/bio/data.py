"""BioKB's data: a taxonomy, protein entries and a clinical-trial registry, generated deterministically (seeded).

Everything here is synthetic: the taxon names are real ranks and names, but every identifier, entry, number and
trial is made up by `generate()` from a fixed seed, so the gold answers are stable and nothing is copied from a
real knowledgebase. `dataset()` holds the generated records (the raw data the gold functions read with pandas);
`query()` answers the site's SQL over the same records loaded into an in-memory sqlite database.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rig.sites.memdb import MemoryDB

SEED = 27
DATA_VERSION = "biokb-synthetic==1 (seed 27)"

#: Protein existence levels, as a protein knowledgebase grades its evidence.
EXISTENCE = {
    1: "Evidence at protein level",
    2: "Evidence at transcript level",
    3: "Inferred from homology",
    4: "Predicted",
    5: "Uncertain",
}
PHASES = ("Early Phase 1", "Phase 1", "Phase 1/Phase 2", "Phase 2", "Phase 2/Phase 3", "Phase 3", "Phase 4")
STATUSES = ("Not yet recruiting", "Recruiting", "Active, not recruiting", "Completed", "Terminated", "Withdrawn")

# (name, rank, common name, children); ranks below the root: superkingdom > phylum > class > genus > species >
# subspecies or strain.
_S = "species"
TREE: tuple[Any, ...] = ("All organisms", "root", "", (
    ("Eukaryota", "superkingdom", "eukaryotes", (
        ("Chordata", "phylum", "chordates", (
            ("Mammalia", "class", "mammals", (
                ("Homo", "genus", "", (("Homo sapiens", _S, "Human", ()),)),
                ("Mus", "genus", "", (
                    ("Mus musculus", _S, "Mouse", (
                        ("Mus musculus castaneus", "subspecies", "Southeastern Asian house mouse", ()),
                        ("Mus musculus domesticus", "subspecies", "Western European house mouse", ()),
                    )),
                    ("Mus spretus", _S, "Western Mediterranean mouse", ()),
                    ("Mus caroli", _S, "Ryukyu mouse", ()),
                )),
                ("Rattus", "genus", "", (
                    ("Rattus norvegicus", _S, "Rat", ()),
                    ("Rattus rattus", _S, "Black rat", ()),
                )),
                ("Bos", "genus", "", (("Bos taurus", _S, "Bovine", ()), ("Bos indicus", _S, "Zebu", ()))),
                ("Sus", "genus", "", (("Sus scrofa", _S, "Pig", ()),)),
            )),
            ("Aves", "class", "birds", (
                ("Gallus", "genus", "", (("Gallus gallus", _S, "Chicken", ()),)),
            )),
            ("Actinopteri", "class", "ray-finned fishes", (
                ("Danio", "genus", "", (("Danio rerio", _S, "Zebrafish", ()),)),
            )),
        )),
        ("Arthropoda", "phylum", "arthropods", (
            ("Insecta", "class", "insects", (
                ("Drosophila", "genus", "", (
                    ("Drosophila melanogaster", _S, "Fruit fly", ()),
                    ("Drosophila simulans", _S, "", ()),
                )),
                ("Apis", "genus", "", (("Apis mellifera", _S, "Honeybee", ()),)),
            )),
        )),
        ("Ascomycota", "phylum", "sac fungi", (
            ("Saccharomycetes", "class", "", (
                ("Saccharomyces", "genus", "", (
                    ("Saccharomyces cerevisiae", _S, "Baker's yeast", (
                        ("Saccharomyces cerevisiae S288C", "strain", "", ()),
                    )),
                    ("Saccharomyces paradoxus", _S, "", ()),
                )),
                ("Candida", "genus", "", (("Candida albicans", _S, "", ()),)),
            )),
            ("Eurotiomycetes", "class", "", (
                ("Aspergillus", "genus", "", (
                    ("Aspergillus fumigatus", _S, "", ()),
                    ("Aspergillus niger", _S, "", ()),
                )),
            )),
        )),
        ("Streptophyta", "phylum", "land plants", (
            ("Magnoliopsida", "class", "flowering plants", (
                ("Arabidopsis", "genus", "", (
                    ("Arabidopsis thaliana", _S, "Mouse-ear cress", ()),
                    ("Arabidopsis lyrata", _S, "Lyre-leaved rock-cress", ()),
                )),
                ("Oryza", "genus", "", (("Oryza sativa", _S, "Rice", ()),)),
            )),
        )),
    )),
    ("Bacteria", "superkingdom", "bacteria", (
        ("Pseudomonadota", "phylum", "", (
            ("Gammaproteobacteria", "class", "", (
                ("Escherichia", "genus", "", (
                    ("Escherichia coli", _S, "", (
                        ("Escherichia coli K-12", "strain", "", ()),
                        ("Escherichia coli O157:H7", "strain", "", ()),
                    )),
                    ("Escherichia fergusonii", _S, "", ()),
                )),
                ("Pseudomonas", "genus", "", (
                    ("Pseudomonas aeruginosa", _S, "", ()),
                    ("Pseudomonas putida", _S, "", ()),
                )),
                ("Salmonella", "genus", "", (("Salmonella enterica", _S, "", ()),)),
            )),
            ("Alphaproteobacteria", "class", "", (
                ("Caulobacter", "genus", "", (("Caulobacter vibrioides", _S, "", ()),)),
            )),
        )),
        ("Bacillota", "phylum", "", (
            ("Bacilli", "class", "", (
                ("Bacillus", "genus", "", (
                    ("Bacillus subtilis", _S, "", ()),
                    ("Bacillus cereus", _S, "", ()),
                )),
                ("Staphylococcus", "genus", "", (
                    ("Staphylococcus aureus", _S, "", (("Staphylococcus aureus MRSA252", "strain", "", ()),)),
                    ("Staphylococcus epidermidis", _S, "", ()),
                )),
                ("Listeria", "genus", "", (("Listeria monocytogenes", _S, "", ()),)),
            )),
        )),
        ("Actinomycetota", "phylum", "", (
            ("Actinomycetes", "class", "", (
                ("Mycobacterium", "genus", "", (
                    ("Mycobacterium tuberculosis", _S, "", (("Mycobacterium tuberculosis H37Rv", "strain", "", ()),)),
                    ("Mycobacterium bovis", _S, "", ()),
                )),
                ("Streptomyces", "genus", "", (("Streptomyces coelicolor", _S, "", ()),)),
            )),
        )),
    )),
    ("Archaea", "superkingdom", "archaea", (
        ("Euryarchaeota", "phylum", "", (
            ("Methanobacteria", "class", "", (
                ("Methanobrevibacter", "genus", "", (("Methanobrevibacter smithii", _S, "", ()),)),
            )),
        )),
    )),
))


@dataclass(frozen=True)
class Family:
    """A protein family: how its genes are named, what its proteins do, where they are."""

    prefix: str
    name: str  # "{n}" is the member's number or letter
    keywords: tuple[str, ...]
    ec: str | None
    location: str
    length: int
    druggable: bool
    domain: str  # "euk" or "bac"
    members: int


FAMILIES: tuple[Family, ...] = (
    Family("CDK", "Cyclin-dependent kinase {n}", ("Kinase", "Transferase", "ATP-binding"), "2.7.11", "Nucleus",
           320, True, "euk", 12),
    Family("MAPK", "Mitogen-activated protein kinase {n}", ("Kinase", "Transferase", "ATP-binding"), "2.7.11",
           "Cytoplasm", 380, True, "euk", 10),
    Family("PTK", "Tyrosine-protein kinase {n}", ("Kinase", "Transferase", "ATP-binding", "Receptor"), "2.7.10",
           "Cell membrane", 1050, True, "euk", 9),
    Family("CYP", "Cytochrome P450 {n}", ("Oxidoreductase", "Monooxygenase", "Heme"), "1.14.14",
           "Endoplasmic reticulum membrane", 500, True, "euk", 10),
    Family("ADH", "Alcohol dehydrogenase {n}", ("Oxidoreductase", "NAD"), "1.1.1", "Cytoplasm", 375, False, "euk", 6),
    Family("PDE", "cAMP-specific phosphodiesterase {n}", ("Hydrolase",), "3.1.4", "Cytoplasm", 760, True, "euk", 8),
    Family("MMP", "Matrix metalloproteinase-{n}", ("Hydrolase", "Protease", "Metalloprotease"), "3.4.24", "Secreted",
           470, True, "euk", 9),
    Family("CASP", "Caspase-{n}", ("Hydrolase", "Protease", "Apoptosis"), "3.4.22", "Cytoplasm", 400, True, "euk", 8),
    Family("GPR", "G-protein coupled receptor {n}", ("Receptor", "Transducer"), None, "Cell membrane", 420, True,
           "euk", 12),
    Family("KCN", "Potassium voltage-gated channel subunit {n}", ("Ion channel", "Transport"), None, "Cell membrane",
           650, True, "euk", 8),
    Family("SLC", "Solute carrier family member {n}", ("Transport",), None, "Cell membrane", 560, False, "euk", 10),
    Family("HSP", "Heat shock protein {n}", ("Chaperone", "Stress response"), None, "Cytoplasm", 640, False, "euk", 6),
    Family("TOP", "DNA topoisomerase {n}", ("Isomerase", "DNA-binding"), "5.6.2", "Nucleus", 1530, True, "euk", 4),
    Family("NR", "Nuclear receptor subfamily member {n}", ("Receptor", "DNA-binding", "Transcription regulation"),
           None, "Nucleus", 480, True, "euk", 8),
    Family("gyr", "DNA gyrase subunit {n}", ("Isomerase", "DNA-binding", "ATP-binding"), "5.6.2", "Cytoplasm", 820,
           False, "bac", 2),
    Family("bla", "Beta-lactamase {n}", ("Hydrolase", "Antibiotic resistance"), "3.5.2", "Periplasm", 290, False,
           "bac", 6),
    Family("fts", "Cell division protein Fts{n}", ("Cell division",), None, "Cell inner membrane", 410, False,
           "bac", 6),
    Family("rpo", "DNA-directed RNA polymerase subunit {n}", ("Transferase", "Transcription"), "2.7.7",
           "Cytoplasm", 1340, False, "bac", 4),
    Family("omp", "Outer membrane protein {n}", ("Transport", "Porin"), None, "Cell outer membrane", 350, False,
           "bac", 6),
)

#: How many genes each taxon's genome has in the knowledgebase, and how often its entries are reviewed.
_COVERAGE = {"Homo sapiens": (0.92, 0.95), "Mus musculus": (0.8, 0.85), "Rattus norvegicus": (0.55, 0.6)}
_DEFAULT_COVERAGE = (0.22, 0.4)
_STRAIN_COVERAGE = (0.1, 0.3)

_CONDITIONS = {
    "Kinase": ("Non-small cell lung cancer", "Breast cancer", "Chronic myeloid leukemia", "Melanoma",
               "Colorectal cancer", "Rheumatoid arthritis"),
    "Monooxygenase": ("Drug-drug interaction", "Hepatic impairment", "Prostate cancer"),
    "Hydrolase": ("Chronic obstructive pulmonary disease", "Psoriasis", "Osteoarthritis", "Heart failure"),
    "Protease": ("Osteoarthritis", "Sepsis", "Liver fibrosis", "Gastric cancer"),
    "Receptor": ("Type 2 diabetes", "Obesity", "Schizophrenia", "Chronic pain", "Asthma"),
    "Ion channel": ("Epilepsy", "Atrial fibrillation", "Neuropathic pain"),
    "Isomerase": ("Small cell lung cancer", "Acute myeloid leukemia", "Ovarian cancer"),
}
_SPONSORS = ("Halden Therapeutics", "Norvik Pharma", "Aurelis Biosciences", "Meridian Oncology Group",
             "Calder University Hospital", "Teva-Lind Research", "Ostrava Clinical Network", "Kestrel Bio")
_PHASE_WEIGHTS = (2, 5, 3, 6, 3, 5, 2)
_STATUS_WEIGHTS = (1, 3, 2, 6, 2, 1)
_ENROLMENT = {"Early Phase 1": (12, 40), "Phase 1": (18, 120), "Phase 1/Phase 2": (40, 220), "Phase 2": (60, 400),
              "Phase 2/Phase 3": (150, 900), "Phase 3": (300, 3200), "Phase 4": (200, 5000)}


@dataclass(frozen=True)
class BioData:
    """The generated records: taxa, protein entries, trials and which entries each trial targets."""

    taxa: list[dict[str, Any]]
    proteins: list[dict[str, Any]]
    trials: list[dict[str, Any]]
    targets: list[dict[str, Any]]  # {nct, accession}


def _taxa(rng: random.Random) -> list[dict[str, Any]]:
    """The taxonomy as rows: id, name, rank, common name, parent id, depth and lineage (names from the top)."""
    ids = iter(rng.sample(range(1000, 99999), 200))
    rows: list[dict[str, Any]] = []

    def walk(node: tuple[Any, ...], parent: int | None, lineage: list[str], depth: int) -> None:
        name, rank, common, children = node
        tid = 1 if parent is None else next(ids)
        path = [*lineage, name] if parent is not None else []
        rows.append({"id": tid, "name": name, "rank": rank, "common": common, "parent": parent, "depth": depth,
                     "lineage": "/".join(path)})
        for child in children:
            walk(child, tid, path, depth + 1)

    walk(TREE, None, [], 0)
    return rows


def _code(name: str, taken: set[str]) -> str:
    """A five-letter organism mnemonic for entry names (MUSMU, ESCCO, ...), unique."""
    words = name.replace(":", "").replace("-", "").split()
    base = (words[0][:3] + words[1][:2] + "".join(w[0] for w in words[2:])).upper()
    special = {"Homo sapiens": "HUMAN", "Mus musculus": "MOUSE", "Rattus norvegicus": "RAT",
               "Bos taurus": "BOVIN", "Saccharomyces cerevisiae": "YEAST", "Escherichia coli": "ECOLI"}
    code = special.get(name, base[:7])
    n = 2
    while code in taken:
        code, n = f"{base[:6]}{n}", n + 1
    taken.add(code)
    return code


def _gene(fam: Family, member: int, organism: str, domain: str) -> str:
    if domain == "bac":
        return f"{fam.prefix}{'ABCDEFGH'[member - 1]}"
    symbol = f"{fam.prefix}{member}"
    return symbol.capitalize() if organism.split()[0] in ("Mus", "Rattus") else symbol


def _accession(rng: random.Random, reviewed: bool, taken: set[str]) -> str:
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    while True:
        if reviewed:
            acc = (rng.choice("OPQ") + rng.choice("0123456789") + "".join(rng.choice(alnum) for _ in range(3))
                   + rng.choice("0123456789"))
        else:
            acc = ("A0A" + rng.choice("0123456789") + "".join(rng.choice(alnum) for _ in range(5))
                   + rng.choice("0123456789"))
        if acc not in taken:
            taken.add(acc)
            return acc


def _proteins(rng: random.Random, taxa: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Protein entries for every species, subspecies and strain: orthologs across taxa, some reviewed."""
    by_id = {t["id"]: t for t in taxa}
    taken_acc: set[str] = set()
    taken_code: set[str] = set()
    ec_of: dict[tuple[str, int], str] = {}
    rows: list[dict[str, Any]] = []
    for taxon in taxa:
        if taxon["rank"] not in ("species", "subspecies", "strain"):
            continue
        domain = "euk" if taxon["lineage"].startswith("Eukaryota") else "bac"
        code = _code(taxon["name"], taken_code)
        coverage, review = (_STRAIN_COVERAGE if taxon["rank"] != "species"
                            else _COVERAGE.get(taxon["name"], _DEFAULT_COVERAGE))
        if domain == "bac" and taxon["rank"] == "species":
            coverage = 0.75
        if taxon["lineage"].startswith("Archaea"):
            domain = "bac"
        plants_or_fungi = any(p in taxon["lineage"] for p in ("Ascomycota", "Streptophyta"))
        for fam in FAMILIES:
            if fam.domain != domain or (plants_or_fungi and fam.prefix in ("GPR", "KCN", "MMP", "CASP", "NR")):
                continue
            for member in range(1, fam.members + 1):
                if rng.random() >= coverage:
                    continue
                gene = _gene(fam, member, taxon["name"], domain)
                label = str(member) if domain == "euk" else "ABCDEFGH"[member - 1]
                ec = None
                if fam.ec:
                    ec = ec_of.setdefault((fam.prefix, member), f"{fam.ec}.{rng.randint(1, 40)}")
                entries = [rng.random() < review]
                entries += [False] * rng.choice((0, 0, 0, 1, 1, 2))
                for i, reviewed in enumerate(entries):
                    acc = _accession(rng, reviewed, taken_acc)
                    length = max(60, int(fam.length * rng.uniform(0.75, 1.3)))
                    if i > 0:  # an unreviewed fragment or isoform of the same gene
                        length = max(60, int(length * rng.uniform(0.3, 0.95)))
                    existence = (rng.choices((1, 2, 3), (6, 3, 1))[0] if reviewed
                                 else rng.choices((2, 3, 4, 5), (1, 5, 4, 1))[0])
                    rows.append({
                        "accession": acc,
                        "entry_name": f"{(gene if reviewed else acc).upper()}_{code}",
                        "protein_name": fam.name.format(n=label) + ("" if i == 0 else " (Fragment)"),
                        "gene": gene,
                        "organism_id": taxon["id"],
                        "organism": taxon["name"],
                        "reviewed": reviewed,
                        "length": length,
                        "mass": int(length * rng.uniform(108.0, 113.5)),
                        "ec": ec,
                        "keywords": ";".join(fam.keywords),
                        "location": fam.location,
                        "existence": existence,
                        "annotation": rng.randint(3, 5) if reviewed else rng.randint(1, 3),
                        "family": fam.prefix,
                        "lineage": by_id[taxon["id"]]["lineage"],
                    })
    return rows


def _trials(rng: random.Random, proteins: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Trials of drugs against human reviewed entries of druggable families; a few trials have two targets."""
    druggable = {f.prefix for f in FAMILIES if f.druggable}
    human = [p for p in proteins if p["organism"] == "Homo sapiens" and p["reviewed"] and p["family"] in druggable]
    taken: set[str] = set()
    trials: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    for p in human:
        for _ in range(rng.choice((0, 0, 1, 2, 3, 5, 8, 12, 16))):
            nct = f"NCT0{rng.randint(1000000, 6999999)}"
            while nct in taken:
                nct = f"NCT0{rng.randint(1000000, 6999999)}"
            taken.add(nct)
            phase = rng.choices(PHASES, _PHASE_WEIGHTS)[0]
            status = rng.choices(STATUSES, _STATUS_WEIGHTS)[0]
            kw = next((k for k in p["keywords"].split(";") if k in _CONDITIONS), "Receptor")
            condition = rng.choice(_CONDITIONS[kw])
            drug = f"{rng.choice('ABCDEFGHKLMNPRSTVXZ')}{rng.choice('ABCDEFGHKLMNPRSTVXZ')}-{rng.randint(100, 9999)}"
            lo, hi = _ENROLMENT[phase]
            year, month = rng.randint(2008, 2023), rng.randint(1, 12)
            trials.append({
                "nct": nct, "title": f"{phase} Study of {drug} in {condition}", "phase": phase, "status": status,
                "condition": condition, "drug": drug, "sponsor": rng.choice(_SPONSORS),
                "start": f"{year}-{month:02d}", "enrollment": rng.randint(lo, hi),
            })
            targets.append({"nct": nct, "accession": p["accession"]})
            if rng.random() < 0.08:
                other = rng.choice(human)
                if other["accession"] != p["accession"]:
                    targets.append({"nct": nct, "accession": other["accession"]})
    return trials, targets


@lru_cache(maxsize=1)
def dataset() -> BioData:
    """Every record of the knowledgebase, generated from the fixed seed (the same on every machine)."""
    rng = random.Random(SEED)
    taxa = _taxa(rng)
    proteins = _proteins(rng, taxa)
    trials, targets = _trials(rng, proteins)
    return BioData(taxa, proteins, trials, targets)


def _tables() -> dict[str, list[dict[str, Any]]]:
    data = dataset()
    return {"taxa": data.taxa, "proteins": data.proteins, "trials": data.trials, "targets": data.targets}


_SCHEMA = (
    "CREATE TABLE taxa (id INTEGER PRIMARY KEY, name TEXT, rank TEXT, common TEXT, parent INTEGER, depth INTEGER,"
    " lineage TEXT);"
    "CREATE TABLE proteins (accession TEXT PRIMARY KEY, entry_name TEXT, protein_name TEXT, gene TEXT,"
    " organism_id INTEGER, organism TEXT, reviewed INTEGER, length INTEGER, mass INTEGER, ec TEXT,"
    " keywords TEXT, location TEXT, existence INTEGER, annotation INTEGER, family TEXT, lineage TEXT);"
    "CREATE TABLE trials (nct TEXT PRIMARY KEY, title TEXT, phase TEXT, status TEXT, condition TEXT, drug TEXT,"
    " sponsor TEXT, start TEXT, enrollment INTEGER);"
    "CREATE TABLE targets (nct TEXT, accession TEXT);"
    "CREATE INDEX taxa_parent ON taxa (parent);"
    "CREATE INDEX proteins_organism ON proteins (organism_id);"
    "CREATE INDEX targets_accession ON targets (accession);"
)
DB = MemoryDB(_SCHEMA, _tables)


def _connection() -> sqlite3.Connection:
    """The loaded database (the site's `warm`: built before the server accepts requests)."""
    return DB.connection


def query(sql: str, params: dict[str, Any] | tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
    """Run one read-only statement on the shared database; every row."""
    return DB.query(sql, params)
