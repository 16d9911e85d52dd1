"""Gold rows of the bio tasks, computed from BioKB's generated records with pandas (never the site's SQL or its
query language)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from rig.sites.bio.data import EXISTENCE, dataset


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    d = dataset()
    return pd.DataFrame(d.taxa), pd.DataFrame(d.proteins), pd.DataFrame(d.trials), pd.DataFrame(d.targets)


def _taxon(taxa: pd.DataFrame, name: str) -> pd.Series:
    rows = taxa[taxa["name"] == name]
    if len(rows) != 1:
        raise ValueError(f"{len(rows)} taxa are named {name!r}")
    return rows.iloc[0]


def _below(taxa: pd.DataFrame, name: str) -> pd.DataFrame:
    """The taxon and every taxon below it (by lineage path)."""
    path = _taxon(taxa, name)["lineage"]
    return taxa[(taxa["lineage"] == path) | taxa["lineage"].str.startswith(path + "/")]


def _keyword(proteins: pd.DataFrame, keyword: str) -> pd.Series:
    return proteins["keywords"].str.split(";").apply(lambda ks: keyword in ks)


def _unique_top(s: pd.Series) -> object:
    """The index label of the largest value; a tie would make the task ambiguous."""
    winners = s[s == s.max()]
    if len(winners) != 1:
        raise ValueError(f"tie for the largest value: {list(winners.index)}")
    return winners.index[0]


def _no_tie_at(values: pd.Series, cut: int) -> None:
    if 0 < cut < len(values) and values.iloc[cut - 1] == values.iloc[cut]:
        raise ValueError(f"tie across the cut at row {cut}: {values.iloc[cut]}")


def bio_01() -> list[list[str]]:
    """The Drosophila species with the most reviewed entries; its reviewed Receptor entries and their evidence."""
    taxa, proteins, _, _ = _frames()
    genus = _taxon(taxa, "Drosophila")
    species = taxa[taxa["parent"] == genus["id"]]
    reviewed = {row["id"]: int(proteins[proteins["organism_id"].isin(_below(taxa, row["name"])["id"])]["reviewed"].sum())
                for _, row in species.iterrows()}
    top = _unique_top(pd.Series(reviewed))
    hits = proteins[(proteins["organism_id"] == top) & proteins["reviewed"] & _keyword(proteins, "Receptor")]
    hits = hits.sort_values(["gene", "accession"])
    return [[r.accession, r.gene, EXISTENCE[r.existence]] for r in hits.itertuples()]


def bio_02() -> list[list[str]]:
    """The reviewed human caspase with the most trials; its Phase 3 trials by start date."""
    taxa, proteins, trials, targets = _frames()
    human = _taxon(taxa, "Homo sapiens")["id"]
    caspases = proteins[(proteins["organism_id"] == human) & proteins["reviewed"]
                        & proteins["protein_name"].str.contains("Caspase")]
    counts = targets["accession"].value_counts()
    top = _unique_top(caspases.set_index("accession").index.to_series().map(counts).fillna(0))
    mine = trials[trials["nct"].isin(targets[targets["accession"] == top]["nct"]) & (trials["phase"] == "Phase 3")]
    mine = mine.sort_values(["start", "nct"])
    return [[r.nct, r.status, str(r.enrollment)] for r in mine.itertuples()]


def bio_03() -> list[list[str]]:
    """The class of the organism of the reviewed human TOP2 entry; that class's reviewed Isomerase entries by mass."""
    taxa, proteins, _, _ = _frames()
    entry = proteins[(proteins["gene"] == "TOP2") & (proteins["organism"] == "Homo sapiens") & proteins["reviewed"]]
    if len(entry) != 1:
        raise ValueError(f"{len(entry)} reviewed human TOP2 entries")
    lineage = entry.iloc[0]["lineage"].split("/")
    cls = next(n for n in lineage if _taxon(taxa, n)["rank"] == "class")
    hits = proteins[proteins["organism_id"].isin(_below(taxa, cls)["id"]) & proteins["reviewed"]
                    & _keyword(proteins, "Isomerase")].sort_values(["mass", "accession"], ascending=[False, True])
    return [[r.accession, r.organism, f"{r.mass:,}"] for r in hits.itertuples()]


def bio_04() -> list[list[str]]:
    """The three largest completed Phase 3 heart-failure trials and each one's target entries."""
    _, proteins, trials, targets = _frames()
    done = trials[(trials["condition"] == "Heart failure") & (trials["phase"] == "Phase 3")
                  & (trials["status"] == "Completed")].sort_values(["enrollment", "nct"], ascending=[False, True])
    _no_tie_at(done["enrollment"], 3)
    rows = []
    for t in done.head(3).itertuples():
        mine = targets[targets["nct"] == t.nct].merge(proteins, on="accession").sort_values("accession")
        rows += [[t.nct, str(t.enrollment), p.accession, p.gene] for p in mine.itertuples()]
    return rows


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "bio-01": bio_01, "bio-02": bio_02, "bio-03": bio_03, "bio-04": bio_04,
}
