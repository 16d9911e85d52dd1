"""Gold rows of the complaints tasks, computed from the generated register with pandas and a word matcher of its own
(`rig.sites.goldtext`: never the site's query parser, FTS index or SQL)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from rig.sites.complaints.data import complaints
from rig.sites.goldtext import has_phrase, mentions, unique_top


def frame() -> pd.DataFrame:
    """The register as a DataFrame, with `month` and `quarter` columns."""
    df = pd.DataFrame([vars(c) for c in complaints()])
    df["month"] = df["date_received"].str[:7]
    month = df["date_received"].str[5:7].astype(int)
    df["quarter"] = df["date_received"].str[:4] + "-Q" + ((month - 1) // 3 + 1).astype(str)
    return df


def _between(df: pd.DataFrame, first: str, last: str) -> pd.DataFrame:
    return df[(df["date_received"] >= first) & (df["date_received"] <= last)]


def _medical(n: str) -> bool:
    return mentions(n, "medical") or mentions(n, "doctor")


def _modification(n: str) -> bool:
    return has_phrase(n, "loan modification")


def _forbearance(n: str) -> bool:
    return mentions(n, "forbearance") or mentions(n, "deferment")


def cohort(df: pd.DataFrame, product: str, first: str, last: str, narrative: Callable[[str], bool]) -> pd.DataFrame:
    """A product's complaints received from `first` to `last` whose narrative passes the test."""
    rows = _between(df[df["product"] == product], first, last)
    return rows[rows["narrative"].map(narrative)]


def _quarter_bounds(quarter: str) -> tuple[str, str]:
    year, q = int(quarter[:4]), int(quarter[-1])
    end = pd.Timestamp(year=year, month=3 * q, day=1) + pd.offsets.MonthEnd(0)
    return f"{year}-{3 * q - 2:02d}-01", end.strftime("%Y-%m-%d")


def peak_month_01(df: pd.DataFrame) -> str:
    """complaints-01's intermediate value: the month of 2022 with most debt-collection complaints whose narrative
    says medical or doctor."""
    return unique_top(cohort(df, "Debt collection", "2022-01-01", "2022-12-31", _medical).groupby("month").size())


def _oldest_first(rows: pd.DataFrame, columns: list[str]) -> list[list[str]]:
    """The rows in order of receipt (the register's "oldest first"), as text cells of `columns` after the id."""
    rows = rows.sort_values(["date_received", "id"])
    return [[str(r.id), *(getattr(r, c) for c in columns)] for r in rows.itertuples()]


def complaints_01() -> list[list[str]]:
    """The peak month's medical-or-doctor debt-collection complaints, oldest first."""
    df = frame()
    month = peak_month_01(df)
    rows = cohort(df[df["month"] == month], "Debt collection", "2022-01-01", "2022-12-31", _medical)
    return _oldest_first(rows, ["date_received", "sub_product", "company", "state"])


def top_company_02(df: pd.DataFrame) -> str:
    """complaints-02's intermediate value: the company with most 2021 store-card complaints with a narrative."""
    cohort = _between(df[(df["product"] == "Credit card") & (df["sub_product"] == "Store credit card")],
                      "2021-01-01", "2021-12-31")
    return unique_top(cohort[cohort["narrative"] != ""].groupby("company").size())


def complaints_02() -> list[list[str]]:
    """That company's credit-card complaints per quarter of 2022-2023 (every quarter, zero included)."""
    df = frame()
    company = top_company_02(df)
    rows = _between(df[(df["product"] == "Credit card") & (df["company"] == company)], "2022-01-01", "2023-12-31")
    counts = rows.groupby("quarter").size()
    quarters = [f"{y}-Q{q}" for y in (2022, 2023) for q in (1, 2, 3, 4)]
    return [[q, str(int(counts.get(q, 0)))] for q in quarters]


def peak_quarter_03(df: pd.DataFrame) -> str:
    """complaints-03's intermediate value: the quarter of 2020-2021 with most mortgage complaints whose narrative
    has the phrase "loan modification"."""
    return unique_top(cohort(df, "Mortgage", "2020-01-01", "2021-12-31", _modification).groupby("quarter").size())


def complaints_03() -> list[list[str]]:
    """The peak quarter's "loan modification" mortgage complaints per state, most first (then by state)."""
    df = frame()
    first, last = _quarter_bounds(peak_quarter_03(df))
    rows = cohort(df, "Mortgage", first, last, _modification)
    counts = rows.groupby("state").size().reset_index(name="n").sort_values(["n", "state"], ascending=[False, True])
    return [[r.state, str(r.n)] for r in counts.itertuples()]


def top_state_04(df: pd.DataFrame) -> str:
    """complaints-04's intermediate value: the state with most 2022-2023 student-loan complaints whose narrative
    says forbearance or deferment."""
    return unique_top(cohort(df, "Student loan", "2022-01-01", "2023-12-31", _forbearance).groupby("state").size())


def complaints_04() -> list[list[str]]:
    """That state's forbearance-or-deferment private student loan complaints of 2022-2023, oldest first."""
    df = frame()
    state = top_state_04(df)
    private = df[(df["sub_product"] == "Private student loan") & (df["state"] == state)]
    rows = cohort(private, "Student loan", "2022-01-01", "2023-12-31", _forbearance)
    return _oldest_first(rows, ["date_received", "company", "issue"])


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "complaints-01": complaints_01, "complaints-02": complaints_02, "complaints-03": complaints_03,
    "complaints-04": complaints_04,
}
