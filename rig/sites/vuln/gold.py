"""Gold rows of the vuln tasks, computed from VulnDB's generated records with pandas (never the site's SQL)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from rig.sites.vuln.data import dataset


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The records with one score column per CVSS version (v40, v31, v20), and the affected configurations."""
    d = dataset()
    cves, metrics, configs = pd.DataFrame(d.cves), pd.DataFrame(d.metrics), pd.DataFrame(d.configs)
    for version in ("4.0", "3.1", "2.0"):
        scores = metrics[metrics["version"] == version].set_index("cve")["score"]
        cves["v" + version.replace(".", "")] = cves["cve"].map(scores)
    return cves, configs


def _affecting(cves: pd.DataFrame, configs: pd.DataFrame, vendor: str, product: str | None = None) -> pd.DataFrame:
    hit = configs[(configs["vendor"] == vendor) & ((configs["product"] == product) if product else True)]
    return cves[cves["cve"].isin(hit["cve"])]


def _between(s: pd.Series, lo: str, hi: str) -> pd.Series:
    return (s >= lo) & (s <= hi)


def _one(frame: pd.DataFrame, what: str) -> pd.Series:
    if len(frame) != 1:
        raise ValueError(f"{len(frame)} records are {what}")
    return frame.iloc[0]


def _strictly_first(values: pd.Series) -> None:
    """The top row must win outright (a tie would make the dependency ambiguous)."""
    if len(values) > 1 and values.iloc[0] == values.iloc[1]:
        raise ValueError(f"tie for the first row: {values.iloc[0]}")


def _no_tie_at(values: pd.Series, cut: int) -> None:
    if 0 < cut < len(values) and values.iloc[cut - 1] == values.iloc[cut]:
        raise ValueError(f"tie across the cut at row {cut}: {values.iloc[cut]}")


def _score(x: float) -> str:
    return f"{x:.1f}"


def vuln_01() -> list[list[str]]:
    """The product Apexsoft's 2019 session-token-replay record lists first; its 2019-2021 records of v3.1 >= 7."""
    cves, configs = _frames()
    apex = _affecting(cves, configs, "Apexsoft")
    finder = _one(apex[apex["description"].str.contains("session token replay", case=False)
                       & _between(apex["published"], "2019-01-01", "2019-12-31")], "the 2019 session-token finder")
    product = configs[configs["cve"] == finder["cve"]].iloc[0]["product"]
    rows = _affecting(cves, configs, "Apexsoft", product)
    rows = rows[_between(rows["published"], "2019-01-01", "2021-12-31") & (rows["v31"] >= 7.0)]
    return [[r.cve, r.published, _score(r.v31)] for r in rows.sort_values(["published", "cve"]).itertuples()]


def vuln_02() -> list[list[str]]:
    """The product of Apexsoft's top-scoring (v3.1) 2022 record; its 2017-2019 records of CVSS v2.0 >= 7."""
    cves, configs = _frames()
    apex = _affecting(cves, configs, "Apexsoft")
    ranked = apex[apex["published"].str.startswith("2022")].sort_values(["v31", "cve"], ascending=[False, True])
    _strictly_first(ranked["v31"])
    top = ranked.iloc[0]["cve"]
    product = configs[(configs["cve"] == top) & (configs["vendor"] == "Apexsoft")].iloc[0]["product"]
    rows = _affecting(cves, configs, "Apexsoft", product)
    rows = rows[_between(rows["published"], "2017-01-01", "2019-12-31") & (rows["v20"] >= 7.0)]
    rows = rows.sort_values(["v20", "cve"], ascending=[False, True])
    return [[r.cve, r.published, _score(r.v20)] for r in rows.itertuples()]


def vuln_03() -> list[list[str]]:
    """The three most recent Emberline PLC Firmware records of CVSS v4.0 >= 9; their affected version ranges."""
    cves, configs = _frames()
    plc = "Emberline PLC Firmware"
    rows = _affecting(cves, configs, "Emberline", plc)
    rows = rows[rows["v40"] >= 9.0].sort_values(["published", "cve"], ascending=[False, True])
    _no_tie_at(rows["published"], 3)
    out = []
    for r in rows.head(3).itertuples():
        for c in configs[(configs["cve"] == r.cve) & (configs["product"] == plc)].itertuples():
            out.append([r.cve, r.published, c.start_incl, c.end_excl, c.end_incl])
    return out


def vuln_04() -> list[list[str]]:
    """The vendor of the earliest hard-coded-credentials record; its medium (v3.1) records modified in H1 2024."""
    cves, configs = _frames()
    finder = cves[cves["description"].str.contains("hard-coded credentials", case=False)]
    finder = finder.sort_values(["published", "cve"])
    _strictly_first(finder["published"])
    vendor = finder.iloc[0]["vendor"]
    rows = _affecting(cves, configs, vendor)
    rows = rows[_between(rows["modified"], "2024-01-01", "2024-06-30") & rows["v31"].between(4.0, 6.9)]
    rows = rows.sort_values(["modified", "cve"], ascending=[False, True])
    listed = {r.cve: r.product for r in configs[configs["vendor"] == vendor].drop_duplicates("cve").itertuples()}
    return [[r.cve, listed[r.cve], r.modified, _score(r.v31)] for r in rows.itertuples()]


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "vuln-01": vuln_01, "vuln-02": vuln_02, "vuln-03": vuln_03, "vuln-04": vuln_04,
}
