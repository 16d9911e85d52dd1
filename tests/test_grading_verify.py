"""`rig verify`: citations checked against the text a synthetic episode captured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_grading_states import (
    BASE,
    GOLD,
    ROUTE_DIMS,
    ROUTES_B6,
    answer,
    reference_steps,
    step,
    synthetic_task,
    write_episode,
)
from typer.testing import CliRunner

from rig.cli import app
from rig.episode_dir import read_answer_file
from rig.formats.actions import parse_actions
from rig.formats.answer_text import ParseFailure
from rig.grading.citations import verify_episode
from rig.grading.grade import grade_episode
from rig.runner.record import record_actions

SEARCH = f"{BASE}/search"


def _verify(tmp_path, citations, steps=None, rows=None, task=True, **kw):
    d = write_episode(tmp_path / "ep", steps or reference_steps(), **kw)
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer(rows or [["BOS", "30"], ["ORD", "20"]], citations)))
    return verify_episode(d, path, synthetic_task() if task else None)["citations"]


def test_contract_shape_and_a_verified_row(tmp_path):
    (c,) = _verify(tmp_path, [{"row": 0, "url": SEARCH, "excerpt": "BOS Boston Logan 30"}])
    assert {"index", "url", "verified", "step", "state", "reason"} <= set(c)
    assert c["verified"] and c["match"] == "normalised" and c["step"] == 3 and c["steps"] == [3, 4, 5]
    assert c["state"]["dim.carrier"] == "EV"
    assert c["state_anchored"] and c["gold_state"] == "carrier_routes" and c["supports_row"]


def test_excerpt_not_on_the_cited_page(tmp_path):
    (c,) = _verify(tmp_path, [{"row": 0, "url": SEARCH, "excerpt": "BOS Boston Logan 31"}])
    assert not c["verified"] and c["step"] is None and "not in the text captured" in c["reason"]


def test_url_never_loaded(tmp_path):
    (c,) = _verify(tmp_path, [{"url": f"{BASE}/elsewhere", "excerpt": "BOS"}])
    assert not c["verified"] and c["reason"] == "the URL was not loaded in the episode"


def test_a_citation_covers_every_state_of_its_page(tmp_path):
    steps = reference_steps()
    steps[1]["url"] = steps[2]["url"] = f"{SEARCH}#view=carriers"
    cites = [{"url": SEARCH, "excerpt": "EV ExpressJet 100"},                 # no fragment: every step of the document
             {"url": f"{SEARCH}#view=carriers", "excerpt": "EV ExpressJet"},  # that exact fragment first ...
             {"url": f"{SEARCH}#view=carriers", "excerpt": "BOS Boston Logan"},  # ... then the document
             {"url": f"{SEARCH}#other", "excerpt": "BOS Boston Logan"}]       # a fragment never shown: the document
    plain, exact, document, other = _verify(tmp_path, cites, steps=steps)
    assert plain["verified"] and plain["steps"] == [1, 2] and plain["state"]["dim.group"] == "carrier"
    assert exact["verified"] and exact["steps"] == [1, 2]
    assert document["verified"] and document["steps"] == [3, 4, 5] and document["state_anchored"]
    assert other["verified"] and other["steps"] == [3, 4, 5]


def test_an_exact_fragment_is_preferred_where_both_show_the_excerpt(tmp_path):
    steps = reference_steps()
    steps[4]["url"] = f"{SEARCH}#view=routes"
    (c,) = _verify(tmp_path, [{"url": f"{SEARCH}#view=routes", "excerpt": "BOS Boston Logan"}], steps=steps)
    assert c["verified"] and c["steps"] == [4] and c["step"] == 4


def test_relative_url_resolves_against_the_start_url(tmp_path):
    (c,) = _verify(tmp_path, [{"url": "/syn/search", "excerpt": "ORD Chicago O'Hare 20"}])
    assert c["verified"] and c["url"] == "/syn/search"


def test_empty_excerpt_is_not_verified(tmp_path):
    (c,) = _verify(tmp_path, [{"row": 1, "url": SEARCH, "excerpt": ""}])
    assert not c["verified"] and "no excerpt" in c["reason"]


def test_row_read_in_the_wrong_state_is_verified_but_not_anchored(tmp_path):
    steps = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6)]
    (c,) = _verify(tmp_path, [{"row": 0, "url": SEARCH, "excerpt": "MIA Miami Intl 40"}], steps=steps, rows=[["MIA", "40"]])
    assert c["verified"] and c["state_anchored"] is False and c["gold_state"] is None
    assert "not state-anchored" in c["reason"]


def test_whole_answer_citation_anchors_to_any_gold_state(tmp_path):
    (c,) = _verify(tmp_path, [{"url": SEARCH, "excerpt": "EV ExpressJet 100"}])
    assert c["verified"] and c["gold_state"] == "top_carrier" and c["state_anchored"] and c["step"] == 1


def test_excerpt_that_does_not_hold_the_cited_row(tmp_path):
    # a verified excerpt from another row: the citation does not support the row it is attached to
    (c,) = _verify(tmp_path, [{"row": 0, "url": SEARCH, "excerpt": "ORD Chicago O'Hare 20"}])
    assert c["verified"] and c["supports_row"] is False


def test_without_a_task_no_anchoring(tmp_path):
    (c,) = _verify(tmp_path, [{"row": 0, "url": SEARCH, "excerpt": "BOS"}], task=False, task_id=None)
    assert c["verified"] and c["state_anchored"] is None and c["gold_state"] is None


def test_fetched_but_never_displayed_url_is_searched_in_its_response_body(tmp_path):
    csv = f"{BASE}/export.csv"
    html = f"{BASE}/page"
    cites = [{"url": csv, "excerpt": "SFO,10"}, {"url": html, "excerpt": "SFO San Francisco"}, {"url": csv, "excerpt": "LAX"}]
    a, b, c = _verify(tmp_path, cites, responses={
        csv: ("text/csv", "Dest,Flights\nSFO,10\n"),
        html: ("text/html; charset=utf-8", "<table><tr><td>SFO</td><td>San Francisco</td></tr></table>")})
    assert a["verified"] and a["step"] is None and "response body" in a["reason"]
    assert b["verified"] and b["match"] == "normalised"
    assert not c["verified"] and "never displayed" in c["reason"]


def test_markdown_answer_file(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps())
    md = tmp_path / "answer.md"
    md.write_text(f"| Dest | Flights |\n|---|---|\n| [BOS]({SEARCH}) | 30 |\n")
    (c,) = verify_episode(d, md, synthetic_task())["citations"]  # the link text is the excerpt
    assert c["row"] == 0 and c["verified"] and c["state_anchored"]


def test_unparsable_answer_raises_parse_failure(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps())
    bad = tmp_path / "answer.txt"
    bad.write_text("Just prose and no table at all.")
    with pytest.raises(ParseFailure):
        verify_episode(d, bad, synthetic_task())



async def test_a_single_page_app_that_rewrites_its_fragment_is_one_page(tmp_path, browser, pages_url):
    # tests/pages/browse.html keeps its state in the fragment: /browse.html, then #node=reptilia&more=1, &more=2
    script = [{"goto": "/browse.html"}, {"click": "#more"}, {"wait_for": "#species li:nth-child(6)"},
              {"click": "#more"}, {"wait_for": "#species li:nth-child(9)"}]
    ep = await record_actions(browser, parse_actions(script), tmp_path / "ep", base_url=pages_url, adapters=[])
    assert ep.status == "ok", ep.error
    steps = [json.loads(line) for line in (tmp_path / "ep" / "trajectory.jsonl").read_text().splitlines()]
    page = f"{pages_url}/browse.html"
    assert page in [s["url"] for s in steps]  # the exact, fragment-less URL was displayed too, before "load more"
    late = [s["step"] for s in steps if s["url"] == f"{page}#node=reptilia&more=2"]
    assert late, [s["url"] for s in steps]
    path = tmp_path / "answer.md"
    path.write_text(f"| Species |\n|---|\n| Rhabdops olivaceus [1] |\n| Boiga ceylonensis [1] |\n\n[1]: {page}\n")
    shown_late, shown_first = verify_episode(tmp_path / "ep", path)["citations"]
    assert shown_late["verified"] and shown_late["step"] in late, shown_late["reason"]
    assert shown_late["state"]["url.fragment.more"] == "2"
    assert shown_first["verified"] and shown_first["step"] < min(late)


ANSWERS = Path(__file__).parent / "data" / "answers"


@pytest.fixture
def synthetic_task_file(tmp_path):
    path = tmp_path / "syn-01.yaml"
    path.write_text(yaml.safe_dump(synthetic_task().model_dump(mode="json"), allow_unicode=True))
    return path


@pytest.mark.parametrize("name", ["ragged.txt", "ragged.csv", "works_cited.md", "sources_line.md"])
def test_rig_score_and_rig_verify_give_the_verdicts_grading_gives(tmp_path, synthetic_task_file, name):
    # the product's text handed in (as `rig submit` does), graded; then the same text through `rig score` and `rig verify`
    task = synthetic_task()
    d = write_episode(tmp_path / "ep", reference_steps(), read_answer_file(ANSWERS / name).model_dump(mode="json"),
                      task_path=str(synthetic_task_file))
    grade = grade_episode(d)
    gold, rules = tmp_path / "gold.md", tmp_path / "rules.json"
    gold.write_text("| Dest | Flights |\n|---|---|\n" + "".join(f"| {a} | {b} |\n" for a, b in GOLD))
    rules.write_text(json.dumps(task.model_dump(mode="json")["canonicalize"]))
    cli = CliRunner()
    scored = cli.invoke(app, ["score", "--gold", str(gold), "--pred", str(ANSWERS / name), "--key", "Dest",
                              "--rules", str(rules), "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout) == {"status": "ok", "item_f1": grade.scores.item_f1,
                                         "row_f1": grade.scores.row_f1, "poa": grade.scores.poa}
    verified = cli.invoke(app, ["verify", str(d), "--answer", str(ANSWERS / name), "--json"])
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["citations"] == [c.model_dump(mode="json") for c in grade.citations]
    if name.startswith("ragged"):  # ORD lacks its Flights cell: only that cell is unmatched
        assert (grade.status, grade.scores.c_item, grade.scores.c_row) == ("ok", 5, 2)
        assert [c.verdict for c in grade.scores.gold_rows[1].cells] == ["correct", "missing"]
    else:  # every footnoted row is verified where it was read, in the gold state
        rows = [c for c in grade.citations if c.row is not None and c.url == SEARCH]
        assert len(rows) == 3 and all(c.verified and c.state_anchored for c in rows)
        assert [c.reason for c in grade.citations if c.url == f"{SEARCH}?dest=SFO"] in (
            [], ["the URL was not loaded in the episode"])
        assert grade.scores.row_f1 == 1.0
