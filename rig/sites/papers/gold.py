"""Gold rows of the papers tasks, computed from the generated archive with pandas and a word matcher of its own
(`rig.sites.goldtext`: never the site's query parser, FTS index or SQL)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from rig.sites.goldtext import has_phrase, unique_top
from rig.sites.papers.data import Article, articles, by_id


def frame() -> pd.DataFrame:
    """The archive as a DataFrame (one row per article; `authors` a tuple, `body` the full text)."""
    return pd.DataFrame([{"id": a.id, "title": a.title, "abstract": a.abstract, "body": a.body, "authors": a.authors,
                          "journal": a.journal, "pub_date": a.pub_date, "year": a.year, "type": a.type,
                          "open_access": a.open_access, "cited": a.cited} for a in articles()])


def _with(df: pd.DataFrame, column: str, phrase: str) -> pd.DataFrame:
    return df[df[column].map(lambda text: has_phrase(text, phrase))]


def _only(df: pd.DataFrame, what: str) -> Article:
    if len(df) != 1:
        raise ValueError(f"{len(df)} articles are {what}: {list(df['id'])}")
    return by_id()[df["id"].iloc[0]]


def _newest_first(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["pub_date", "id"], ascending=False)


def _most_cited(df: pd.DataFrame) -> Article:
    return by_id()[unique_top(df.set_index("id")["cited"])]


def series_review(df: pd.DataFrame, year: int, title: str = "gene therapies to watch") -> Article:
    """The series review of one year: a review whose title has `title`, published that year."""
    hits = _with(df[(df["type"] == "review") & (df["year"] == year)], "title", title)
    return _only(hits, f"reviews of {year} titled {title!r}")


def watch_year_01(df: pd.DataFrame) -> int:
    """papers-01's intermediate value: the year the first gene therapy approved in 2021 (Table 1 of the 2022 review,
    by approval date) was first put on the watch list."""
    t1 = series_review(df, 2022).tables[0]
    return int(t1.rows[0][t1.columns.index("First watch-listed")])


def papers_01() -> list[list[str]]:
    """The watch list (Table 3) of the series review of that year: INN, category, indication."""
    df = frame()
    t3 = series_review(df, watch_year_01(df)).tables[2]
    cols = [t3.columns.index(c) for c in ("INN", "Category", "Indication")]
    return [[row[i] for i in cols] for row in t3.rows]


def _base_editing_reviews(df: pd.DataFrame, first: int, last: int) -> pd.DataFrame:
    reviews = df[(df["type"] == "review") & df["open_access"] & df["year"].between(first, last)]
    return _with(reviews, "abstract", "base editing")


def top_tissue_02(df: pd.DataFrame) -> str:
    """papers-02's intermediate value: the first target tissue (highest efficiency) of Table 1 of the most cited
    open-access review of 2015-2019 whose abstract says base editing."""
    return _most_cited(_base_editing_reviews(df, 2015, 2019)).tables[0].rows[0][0]


def tissue_articles(df: pd.DataFrame, tissue: str) -> pd.DataFrame:
    """papers-02's answer scope for one tissue: research articles of 2020-2024 on base editing with the tissue in
    their title, newest first."""
    hits = df[(df["type"] == "research-article") & df["year"].between(2020, 2024)]
    return _newest_first(_with(_with(hits, "abstract", "base editing"), "title", tissue))


def papers_02() -> list[list[str]]:
    """The research articles of 2020-2024 on base editing in that tissue, newest first: ID, title, year."""
    df = frame()
    return [[r.id, r.title, str(r.year)] for r in tissue_articles(df, top_tissue_02(df)).itertuples()]


def trial_03(df: pd.DataFrame) -> str:
    """papers-03's intermediate value: the trial of the first Phase 3 agent (by trial start) in the 2021 pipeline
    review."""
    t1 = series_review(df, 2021, "drug development pipeline").tables[0]
    return t1.rows[0][t1.columns.index("Trial ID")]


def trial_articles(df: pd.DataFrame, trial: str,
                   columns: tuple[str, ...] = ("title", "abstract", "body")) -> pd.DataFrame:
    """Research articles whose text (title, abstract or full text) names the trial, newest first."""
    hits = df[df["type"] == "research-article"]
    named = hits[hits.apply(lambda r: any(has_phrase(r[c], trial) for c in columns), axis=1)]
    return _newest_first(named)


def papers_03() -> list[list[str]]:
    """The research articles naming that trial anywhere in their text, newest first: ID, title, year."""
    df = frame()
    return [[r.id, r.title, str(r.year)] for r in trial_articles(df, trial_03(df)).itertuples()]


def capsid_reviews(df: pd.DataFrame) -> pd.DataFrame:
    """The reviews of 2016 whose abstract says AAV capsid."""
    return _with(df[(df["type"] == "review") & (df["year"] == 2016)], "abstract", "aav capsid")


def first_author_04(df: pd.DataFrame) -> str:
    """papers-04's intermediate value: the first author of the most cited of those reviews."""
    return _most_cited(capsid_reviews(df)).authors[0]


def author_articles(df: pd.DataFrame, author: str, open_access_only: bool = True) -> pd.DataFrame:
    """One author's research articles of 2017-2020 (open access only by default), newest first."""
    hits = df[(df["type"] == "research-article") & df["year"].between(2017, 2020)
              & df["authors"].map(lambda names: author in names)]
    return _newest_first(hits[hits["open_access"]] if open_access_only else hits)


def papers_04() -> list[list[str]]:
    """That author's open-access research articles of 2017-2020, newest first: ID, title, journal, year."""
    df = frame()
    return [[r.id, r.title, r.journal, str(r.year)] for r in author_articles(df, first_author_04(df)).itertuples()]


GOLD: dict[str, Callable[[], list[list[str]]]] = {
    "papers-01": papers_01, "papers-02": papers_02, "papers-03": papers_03, "papers-04": papers_04,
}
