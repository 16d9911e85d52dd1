"""Retrieval states of synthetic episodes: constraint ops, gold-state reach, row provenance, drift, divergence,
the inferred dependency, and reading per-step text back from a WARC.

`synthetic_task` and `write_episode` build small episodes (trajectory.jsonl + evidence.warc.gz in the
recorder's layout) without a browser; the other grading tests import them from here.
"""

from __future__ import annotations

import hashlib
import json
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from recorders.trajectory import read_trajectory
from rig.episode_dir import EpisodeDir
from rig.formats.answer import Answer
from rig.formats.episode import Episode
from rig.formats.task import StateConstraint, Task
from rig.grading.evidence import Evidence, PageText, has_token, html_text
from rig.grading.states import (
    EpisodeStates,
    _tokens,
    answer_states,
    first_divergence,
    holds,
)

BASE = "http://127.0.0.1:9/syn"
CARRIERS = "Carrier\tName\tFlights\nEV\tExpressJet\t100\nB6\tJetBlue\t80\nAA\tAmerican\t1,982"
ROUTES_EV = "Results\nDest\tAirport\tFlights\nBOS\tBoston Logan\t30\nORD\tChicago O'Hare\t20\nSFO\tSan Francisco\t10"
ROUTES_B6 = "Dest\tAirport\tFlights\nMIA\tMiami Intl\t40\nBOS\tBoston Logan\t5"
ROUTES_EV_ALL = ROUTES_EV + "\nXNA\tNorthwest Arkansas\t2"
ROUTES_EV_LGA = "Dest\tAirport\tFlights\nBOS\tBoston Logan\t12\nDCA\tReagan National\t9"
GOLD = [["BOS", "30"], ["ORD", "20"], ["SFO", "10"]]
CARRIER_DIMS = {"dim.origin": "JFK", "dim.group": "carrier"}
ROUTE_DIMS = {"dim.origin": "JFK", "dim.carrier": "EV", "dim.min_flights": "5", "dim.group": "dest"}


def synthetic_task(dependent: bool = False, **changes: Any) -> Task:
    """A two-state task: read the top carrier from JFK, then list its routes with at least 5 flights."""
    data: dict[str, Any] = {
        "id": "syn-01", "family": "synthetic", "site": "syn", "start_path": "/syn/",
        "prompts": {"constraint": "Find the carrier with most flights from JFK, then its routes.", "goal": "Routes?"},
        "output": {"columns": ["Dest", "Flights"], "key": ["Dest"], "order": "Flights descending"},
        "canonicalize": {"default": ["nfkc", "trim", "collapse_ws"], "columns": {"Flights": ["number"]}},
        "gold": {"rows": GOLD},
        "gold_states": [
            {"name": "top_carrier", "constraints": [
                {"key": "dim.origin", "value": "JFK", "tag": "scope"},
                {"key": "dim.group", "value": "carrier", "tag": "view"}]},
            {"name": "carrier_routes", "constraints": [
                {"key": "dim.origin", "value": "JFK", "tag": "scope"},
                {"key": "dim.carrier", "value": "EV", "tag": "scope", "dependent": dependent},
                {"key": "dim.min_flights", "value": "5", "tag": "criterion"},
                {"key": "dim.group", "value": "dest", "tag": "view"}]},
        ],
        "evidence": [{"state": "top_carrier", "description": "carrier ranking"},
                     {"state": "carrier_routes", "description": "routes", "url_contains": "/syn/search"}],
        "dependency": "the top carrier decides the carrier filter",
        "reference_solution": [{"goto": "/syn/search"}],
        "data_version": "synthetic==1",
    }
    data.update(changes)
    return Task.model_validate(data)


def step(dims: dict[str, Any], text: str, action: str = "click", url: str | None = None) -> dict[str, Any]:
    """One synthetic step: its dim.* state, the page text, the action type and URL."""
    return {"dims": dims, "text": text, "action": action, "url": url or f"{BASE}/search"}


def write_episode(directory: Path, steps: list[dict[str, Any]], answer: dict[str, Any] | None = None, *,
                  status: str = "ok", agent: str = "synthetic", variant: str | None = "constraint",
                  task_id: str | None = "syn-01", trial: int = 0, injected_fault: str | None = None,
                  responses: dict[str, tuple[str, str]] | None = None, task_path: str | None = None) -> Path:
    """An episode directory in the recorder's layout (episode.json, trajectory.jsonl, evidence.warc.gz, answer.json)."""
    directory.mkdir(parents=True, exist_ok=True)
    extra = {"task_path": task_path} if task_path else {}
    ep = Episode(task_id=task_id, variant=variant if task_id else None, agent=agent, trial=trial,
                 start_url=f"{BASE}/", injected_fault=injected_fault, **extra)
    ep.finish(status, steps=len(steps))  # type: ignore[arg-type]
    EpisodeDir(directory).write_episode(ep)
    buf = BytesIO()
    writer = WARCWriter(buf, gzip=True, warc_version="1.1")
    lines, prev = [], {}
    for n, s in enumerate(steps):
        rid = f"<urn:uuid:00000000-0000-0000-0000-{n:012d}>"
        data = s["text"].encode()
        rec = writer.create_warc_record(s["url"], "conversion", payload=BytesIO(data), length=len(data),
                                        warc_content_type="text/plain",
                                        warc_headers_dict={"WARC-Record-ID": rid, "WARC-Rig-Step": str(n),
                                                           "WARC-Rig-Capture": "text"})
        writer.write_record(rec)
        state = {"url.path": "/syn/search", **s["dims"]}
        changed = {k: [prev.get(k), v] for k, v in state.items() if k in prev and prev[k] != v}
        lines.append(json.dumps({
            "step": n, "t": n * 0.5, "url": s["url"],
            "action": {"type": s["action"], "target": None, "value": None, "source": "agent"},
            "state": state, "state_diff": {"changed": changed, "added": {}, "removed": []},
            "dom_hash": "d", "text_hash": hashlib.sha256(data).hexdigest(),
            "snapshot": {"warc_record_id": rid, "dom_record_id": None}}))
        prev = state
    for url, (ctype, body) in (responses or {}).items():
        payload = body.encode()
        http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(url, "response", payload=BytesIO(payload), length=len(payload),
                                                      http_headers=http))
    (directory / "evidence.warc.gz").write_bytes(buf.getvalue())
    (directory / "trajectory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if answer is not None:
        (directory / "answer.json").write_text(json.dumps(answer), encoding="utf-8")
    return directory


def answer(rows: list[list[str]], citations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An answer.json body with the synthetic task's columns."""
    return {"columns": ["Dest", "Flights"], "rows": rows, "citations": citations or []}


def reference_steps() -> list[dict[str, Any]]:
    """The synthetic task solved: start page, the carrier ranking, then the EV routes."""
    return [step({}, "Welcome", "goto"), step(CARRIER_DIMS, CARRIERS), step(CARRIER_DIMS, CARRIERS, "extract_table"),
            step(ROUTE_DIMS, ROUTES_EV), step(ROUTE_DIMS, ROUTES_EV, "extract_table"), step(ROUTE_DIMS, ROUTES_EV, "answer")]


def states_of(tmp_path: Path, steps: list[dict[str, Any]], rows: list[list[str]] | None = None,
              task: Task | None = None) -> EpisodeStates:
    """EpisodeStates of a synthetic episode written under tmp_path."""
    d = write_episode(tmp_path / "ep", steps, answer(rows) if rows is not None else None)
    traj = read_trajectory(d / "trajectory.jsonl")
    ans = Answer.model_validate(answer(rows)) if rows is not None else None
    return EpisodeStates(task or synthetic_task(), traj, Evidence.from_archive(EpisodeDir(d).archive(), traj).texts, ans)


def c(op: str, value: Any, key: str = "dim.x") -> StateConstraint:
    return StateConstraint(key=key, op=op, value=value, tag="scope")  # type: ignore[arg-type]


@pytest.mark.parametrize("constraint,state,expected", [
    (c("eq", "JFK"), {"dim.x": "JFK"}, True),
    (c("eq", "JFK"), {"dim.x": "LGA"}, False),
    (c("eq", ["a", "b"]), {"dim.x": ["b", "a"]}, True),  # list-valued keys compare as sets
    (c("eq", ["a", "b"]), {"dim.x": ["a"]}, False),
    (c("eq", "a"), {"dim.x": ["a"]}, True),
    (c("eq", "JFK"), {}, False),  # a missing key satisfies nothing but `ne`
    (c("ne", "JFK"), {}, True),
    (c("ne", "JFK"), {"dim.x": "JFK"}, False),
    (c("in", ["LAX", "lax"]), {"dim.x": "lax"}, True),
    (c("in", ["LAX"]), {"dim.x": ["LAX", "SFO"]}, False),
    (c("contains", "1977"), {"dim.x": "1952-1977"}, True),
    (c("contains", "1977"), {"dim.x": ["1972", "1977"]}, True),
    (c("contains", "1977"), {"dim.x": ["19771"]}, False),
    (c("gte", "10"), {"dim.x": "9.5"}, False),  # numeric, not string, comparison
    (c("gte", "10"), {"dim.x": "10"}, True),
    (c("lte", "10"), {"dim.x": "9.5"}, True),
    (c("lte", "b"), {"dim.x": "a"}, True),  # non-numbers compare as strings
    (c("prefix", "2007:"), {"dim.x": "2007:desc"}, True),
    (c("prefix", "2007:"), {"dim.x": "1952:desc"}, False),
])
def test_constraint_ops(constraint, state, expected):
    assert holds(constraint, state) is expected


def test_answer_states_include_view_only_siblings():
    task = synthetic_task()
    assert answer_states(task) == ["carrier_routes"]
    pages = synthetic_task(gold_states=[*task.model_dump()["gold_states"], {"name": "routes_page_2", "constraints": [
        *task.model_dump()["gold_states"][1]["constraints"], {"key": "dim.page", "value": "2", "tag": "view"}]}])
    assert answer_states(pages) == ["carrier_routes", "routes_page_2"]


def test_reach_first_step_and_closest(tmp_path):
    es = states_of(tmp_path, reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6)])
    top, routes = es.reach()
    assert (top.reached, top.step, top.steps_held) == (True, 1, 2)
    assert not routes.reached and routes.closest_step == 3
    assert [(v.key, v.actual, v.expected) for v in routes.unmet] == [("dim.carrier", "B6", "EV")]


def test_row_provenance_line_match_and_anchoring(tmp_path):
    es = states_of(tmp_path, reference_steps(), [["BOS", "30"], ["ORD", "20"], ["SFO", "10"]])
    rows = es.provenance()
    assert [p.steps for p in rows] == [[3, 4, 5]] * 3
    assert all(p.match == "line" and p.state_anchored and p.gold_state == "carrier_routes" and p.step == 3 for p in rows)


def test_row_visible_only_across_lines_is_a_page_match(tmp_path):
    # 30 is BOS's value and 20 ORD's: on the page, but never on one line with BOS
    es = states_of(tmp_path, reference_steps(), [["BOS", "20"]])
    (p,) = es.provenance()
    assert p.match == "page" and p.steps == [3, 4, 5] and p.state_anchored


def test_row_values_match_canonically(tmp_path):
    # the page shows 1,982; the `number` rule makes 1982 the same value
    task = synthetic_task(output={"columns": ["Dest", "Flights"], "key": ["Dest"], "order": "x"})
    es = states_of(tmp_path, reference_steps(), [["AA", "1982"]], task=task)
    assert es.provenance()[0].steps == [1, 2] and es.provenance()[0].match == "line"


def test_row_in_wrong_state_is_not_anchored(tmp_path):
    steps = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.origin": "LGA"}, ROUTES_EV_LGA, "extract_table")]
    es = states_of(tmp_path, steps, [["DCA", "9"]])
    (p,) = es.provenance()
    assert not p.state_anchored and p.step == 3
    assert [(v.key, v.actual, v.tag, v.dependent) for v in p.violations] == [("dim.origin", "LGA", "scope", False)]
    assert p.violations[0].describe().startswith("dim.origin=LGA violates gold state `carrier_routes` (scope")


def test_numbers_never_match_inside_longer_numbers():
    assert has_token("flights 30 and 1,982", "1,982") and has_token("a 30 b", "30")
    assert not has_token("1,982", "1") and not has_token("12.5", "12") and not has_token("130", "30")
    assert not has_token("2014-03-02", "2014-03") and has_token("2014-03 total", "2014-03")


def test_dependency_declared_or_inferred_from_one_table_column(tmp_path):
    steps = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6, "extract_table")]
    rows = [["MIA", "40"]]
    # no declaration: B6 and EV show in one column of the earlier state's ranking -> inferred
    (p,) = states_of(tmp_path / "a", steps, rows).provenance()
    assert [(v.key, v.dependent, v.read_earlier) for v in p.violations] == [("dim.carrier", True, True)]
    # declared on the constraint
    (p,) = states_of(tmp_path / "b", steps, rows, task=synthetic_task(dependent=True)).provenance()
    assert p.violations[0].dependent and p.violations[0].read_earlier
    # a value never shown in the earlier state: not inferred; declared, but not a wrong reading
    steps[3]["dims"]["dim.carrier"] = "ZZ"
    (p,) = states_of(tmp_path / "c", steps, rows).provenance()
    assert not p.violations[0].dependent and not p.violations[0].read_earlier
    (p,) = states_of(tmp_path / "d", steps, rows, task=synthetic_task(dependent=True)).provenance()
    assert p.violations[0].dependent and not p.violations[0].read_earlier


def test_tokens_split_ranges_dates_and_paths():
    assert _tokens("2014-03..2014-03") == {"2014-03", "2014", "03"}
    assert _tokens("1977-2007") == {"1977-2007", "1977", "2007"}
    assert _tokens(["/flights/plane/N57852"]) == {"/flights/plane/N57852", "N57852"}
    assert _tokens("/stats/country/Costa%20Rica") == {"/stats/country/Costa%20Rica", "Costa Rica"}


def test_a_value_kept_from_the_earlier_state_is_not_a_wrong_reading(tmp_path):
    # the ranking lists a `World` total row next to the continents; staying on World (the earlier state's own
    # region) is a scope drift, not the dependency taking the wrong row
    ranking = "Region\tMean\nAsia\t10\nWorld\t20\nAfrica\t30"
    task = synthetic_task(gold_states=[
        {"name": "ranking", "constraints": [{"key": "dim.region", "value": "World", "tag": "scope"}]},
        {"name": "detail", "constraints": [{"key": "dim.region", "value": "Asia", "tag": "scope", "dependent": True},
                                           {"key": "dim.view", "value": "table", "tag": "view"}]}],
        evidence=[{"state": "detail", "description": "x"}])
    first = {"dim.region": "World"}
    for region, read in (("World", False), ("Africa", True)):
        steps = [step(first, ranking), step({"dim.region": region, "dim.view": "table"}, ROUTES_B6)]
        (p,) = states_of(tmp_path / region, steps, [["MIA", "40"]], task=task).provenance()
        assert [(v.key, v.dependent, v.read_earlier) for v in p.violations] == [("dim.region", True, read)]


def test_declared_dependencies_switch_inference_off(tmp_path):
    # the task declares another constraint dependent, so dim.carrier is taken as not dependent
    task = synthetic_task()
    data = task.model_dump()
    data["gold_states"][1]["constraints"][2]["dependent"] = True
    steps = reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6, "extract_table")]
    (p,) = states_of(tmp_path, steps, [["MIA", "40"]], task=Task.model_validate(data)).provenance()
    assert not p.violations[0].dependent and not p.violations[0].read_earlier


def _form_steps(change: dict[str, Any]) -> list[dict[str, Any]]:
    """A form-driven site: the state is set on the form (text unchanged), then results are run."""
    return reference_steps()[:3] + [
        step(ROUTE_DIMS, CARRIERS, "select"),                     # 3: state reached on the form only
        step({**ROUTE_DIMS, **change}, CARRIERS, "fill"),         # 4: left before anything was shown
        step({**ROUTE_DIMS, **change}, ROUTES_EV_ALL, "click"),   # 5: results under the changed state
        step({**ROUTE_DIMS, **change}, ROUTES_EV_ALL, "extract_table")]


def test_drift_event_names_the_changed_dimension(tmp_path):
    es = states_of(tmp_path, _form_steps({"dim.min_flights": "1"}), GOLD + [["XNA", "2"]])
    rows = es.provenance()
    index = {s.step: i for i, s in enumerate(es.steps)}
    (event,) = es.drift({index[n] for p in rows for n in p.steps})
    assert (event.state, event.reached_step, event.step) == ("carrier_routes", 3, 4)
    assert event.dimensions == ["dim.min_flights"] and event.changes == {"dim.min_flights": ["5", "1"]}
    assert not event.recovered


def test_no_drift_when_the_state_was_displayed_or_left_on_a_view(tmp_path):
    es = states_of(tmp_path / "a", reference_steps(), GOLD)
    assert es.drift({3, 4, 5}) == []
    es = states_of(tmp_path / "b", _form_steps({"dim.group": "carrier"}), GOLD)
    assert es.drift({5, 6}) == []  # only a view dimension changed


def test_evidence_displayed_only_after_the_page_changed(tmp_path):
    es = states_of(tmp_path, _form_steps({"dim.min_flights": "1"}))
    assert es.displayed("carrier_routes") == []  # held only at step 3, before results were shown
    assert es.displayed("top_carrier") == [1, 2]


def _traj(tmp_path: Path, name: str, steps: list[dict[str, Any]]):
    return read_trajectory(write_episode(tmp_path / name, steps) / "trajectory.jsonl")


def test_first_divergence(tmp_path):
    ref = _traj(tmp_path, "ref", reference_steps())
    same = _traj(tmp_path, "same", [reference_steps()[0], *reference_steps()[1:3] * 2, *reference_steps()[3:]])
    assert first_divergence(same, ref) is None  # repeated states collapse
    other = _traj(tmp_path, "other", reference_steps()[:3] + [step({**ROUTE_DIMS, "dim.carrier": "B6"}, ROUTES_B6)])
    d = first_divergence(other, ref)
    assert (d.step, d.reference_step, d.keys) == (3, 3, ["dim.carrier"])
    short = _traj(tmp_path, "short", reference_steps()[:3])
    d = first_divergence(short, ref)
    assert (d.step, d.reference_step, d.episode_state) == (None, 3, None)


def test_page_text_find_levels():
    page = PageText("Dest\tFlights\nBOS\tBoston  Logan\t30\nＡＢＣ")
    assert page.find("BOS\tBoston  Logan") == "exact"
    assert page.find("BOS Boston Logan 30") == "normalised"  # tabs and runs of spaces collapse
    assert page.find("ABC") == "normalised"  # NFKC folds full-width letters
    assert page.find("bos boston logan") == "casefold"
    assert page.find("Dest … Logan 30") == "normalised"  # an ellipsis marks an elision
    assert page.find("Logan … Dest") is None  # parts must occur in order
    assert page.find("   ") is None


def test_step_text_found_by_step_header_without_record_id(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps())
    lines = (d / "trajectory.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace('"warc_record_id": "<urn:uuid:00000000-0000-0000-0000-000000000003>"', '"warc_record_id": null')
    (d / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    texts = Evidence.from_archive(EpisodeDir(d).archive(), read_trajectory(d / "trajectory.jsonl")).texts
    assert texts.at(3).raw == ROUTES_EV and texts.missing == []
    (d / "evidence.warc.gz").unlink()
    texts = Evidence.from_archive(EpisodeDir(d).archive(), read_trajectory(d / "trajectory.jsonl")).texts
    assert texts.missing == [0, 1, 2, 3, 4, 5] and texts.at(3).raw == ""


def test_html_text_keeps_table_rows_on_lines():
    text = html_text("<html><style>x{}</style><table><tr><th>Dest</th><th>Flights</th></tr>"
                     "<tr><td>BOS</td><td>30</td></tr></table><p>Note &amp; more</p><script>var a;</script></html>")
    assert text.splitlines() == ["Dest\tFlights", "BOS\t30", "Note & more"]
