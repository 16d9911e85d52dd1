"""The report and `rig view` in real Chromium, over real recorded and graded runs: pages load offline with no
console error and no request leaving the report, figures and key elements are present, page-derived text stays
inert, and an audit saved through the view reaches audit.json and the overview."""

from __future__ import annotations

import json
import re
import shutil
from io import BytesIO
from pathlib import Path

import pytest
from warcio.warcwriter import WARCWriter

from recorders.trajectory import read_trajectory
from recorders.warc import CAPTURE_HEADER, STEP_HEADER
from rig.agents.base import Budget
from rig.agents.registry import make_agent
from rig.episode_dir import EpisodeDir
from rig.formats.grade import DriftEvent, Grade
from rig.grading.evidence import Evidence
from rig.grading.runs import grade_runs
from rig.report import Audit, ViewServer, cohen_kappa, write_report
from rig.report.build import Report
from rig.report.highlight import find_spans
from rig.report.load import episode_id
from rig.runner.local import plan, run_local
from rig.tasks import resolve_task

AGENTS = ("reference", "perturbed:scope_drift", "perturbed:page_misreading")
SCRIPT = "<script>window.__xss=1</script>"
IMG = '<img src=x onerror="window.__xss=1">'


@pytest.fixture(scope="session")
async def runs(sites_url, tmp_path_factory) -> Path:
    """Real episodes (2 tasks, constraint variant, the reference and two perturbed agents), graded."""
    root = tmp_path_factory.mktemp("report") / "runs"
    tasks = [resolve_task("eco-01"), resolve_task("stats-02")]
    for name in AGENTS:
        agent = make_agent(name)
        specs = plan(tasks, ["constraint"], agent.name, 1, root, False)
        await run_local(specs, agent, root, sites_url=sites_url, budget=Budget(timeout_s=120), concurrency=2)
    grade_runs(root)
    return root


@pytest.fixture(scope="session")
def report(runs) -> Path:
    """The static report of the runs."""
    return write_report(runs, runs.parent / "site").parent


def _ep(runs: Path, task: str, agent: str) -> Path:
    return runs / task / "constraint" / agent.replace(":", "_") / "trial-0"


def _add_text(episode_dir: Path, step_no: int, extra: str) -> None:
    """Append a text record holding `extra` for one step to the WARC and point the step at it."""
    steps = read_trajectory(episode_dir / "trajectory.jsonl")
    texts = Evidence.from_archive(EpisodeDir(episode_dir).archive(), steps).texts
    step = next(s for s in steps if s.step == step_no)
    data = (texts.at(step_no).raw + "\n" + extra).encode()
    with (episode_dir / "evidence.warc.gz").open("ab") as fh:
        w = WARCWriter(fh, gzip=True, warc_version="1.1")
        rec = w.create_warc_record(step.url, "conversion", payload=BytesIO(data), length=len(data),
                                   warc_content_type="text/plain; charset=utf-8",
                                   warc_headers_dict={STEP_HEADER: str(step_no), CAPTURE_HEADER: "text"})
        w.write_record(rec)
    step.snapshot.warc_record_id = rec.rec_headers.get_header("WARC-Record-ID")
    step.state["page.title"] = SCRIPT + IMG
    step.action.value = IMG
    lines = [s if s.step != step_no else step for s in steps]
    (episode_dir / "trajectory.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in lines))


@pytest.fixture(scope="session")
def xss(runs) -> tuple[Path, str]:
    """A report of one episode whose prompt, agent, answer, page text and state hold script and onerror markup,
    with a drift event written into its grade.json; returns (report folder, episode id)."""
    root = runs.parent / "xss-runs"
    d = root / "eco-01" / "constraint" / "evil" / "trial-0"
    shutil.copytree(_ep(runs, "eco-01", "reference"), d)
    ep = json.loads((d / "episode.json").read_text())
    ep.update(agent=f"evil{IMG}", prompt=f"{ep['prompt']} {SCRIPT}")
    (d / "episode.json").write_text(json.dumps(ep))
    answer = json.loads((d / "answer.json").read_text())
    cited = answer["citations"][0]
    step_no = next(s.step for s in read_trajectory(d / "trajectory.jsonl") if s.url == cited["url"])
    _add_text(d, step_no, f"warning {SCRIPT} {IMG}")
    answer["rows"].append([SCRIPT, IMG, "1"])
    answer["citations"].append({"url": cited["url"], "excerpt": f"{SCRIPT} {IMG}"})
    (d / "answer.json").write_text(json.dumps(answer))
    grade_runs(root)
    grade = Grade.model_validate_json((d / "grade.json").read_text())
    assert grade.citations[-1].verified, grade.citations[-1].reason
    grade.drift = [DriftEvent(state=grade.gold_states[0].name, reached_step=step_no - 1, step=step_no, dimensions=["dim.x"],
                              changes={"dim.x": ["a", SCRIPT]}, recovered=False)]
    (d / "grade.json").write_text(grade.model_dump_json())
    EpisodeDir(d).write_audit(Audit(label="page_misreading", note=f"note {SCRIPT}{IMG}", auditor=IMG))
    return write_report(root, root.parent / "xss-site").parent, episode_id(root, d)


class Watch:
    """Console errors, page errors and every request of one browser context."""

    def __init__(self, context) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        context.on("request", lambda r: self.requests.append(r.url))
        context.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        context.on("weberror", lambda e: self.errors.append(str(e.error)))

    def check(self, prefix: str) -> None:
        assert self.errors == []
        assert self.requests and all(u.startswith(prefix) for u in self.requests), \
            [u for u in self.requests if not u.startswith(prefix)]


def test_cohen_kappa_by_hand():
    # automatic a a b b none / manual a b b b none: p_o = 4/5; p_e = (2*1 + 2*3 + 1*1) / 25 = 9/25
    pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("b", "b"), ("none", "none")]
    assert cohen_kappa(pairs) == pytest.approx((0.8 - 0.36) / (1 - 0.36)) == pytest.approx(0.6875)
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None and cohen_kappa([]) is None
    assert cohen_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)


def test_excerpt_spans_follow_the_verifier_normalisation():
    raw = "Region\tYear\nEurope\t1982\t15,617.90\nEurope\t1987\t17,214.31\n"
    (s, e), = find_spans(raw, "Europe 1982 15,617.90")
    assert raw[s:e] == "Europe\t1982\t15,617.90"
    spans = find_spans(raw, "europe 1982 ... 17,214.31")
    assert [raw[a:b] for a, b in spans] == ["Europe\t1982", "17,214.31"]
    assert find_spans(raw, "Asia 1982") == []


async def test_overview(context, report, runs):
    watch = Watch(context)
    page = await context.new_page()
    await page.goto((report / "index.html").as_uri())
    assert await page.locator("#metrics tbody tr").count() == len(AGENTS)
    assert await page.locator("#families tbody tr").count() == 2 * len(AGENTS)
    assert await page.locator("#episodes tbody tr").count() == 2 * len(AGENTS)
    scatter = page.locator("#fig-scatter svg")
    assert await scatter.locator("circle.point").count() == len(AGENTS)
    assert await scatter.locator("line.diagonal").count() == 1
    bars = page.locator("#fig-bars svg")
    assert await bars.locator("g.bar").count() == len(AGENTS)
    assert await bars.locator("rect.segment.cat-scope_drift").count() == 1
    assert await bars.locator("rect.segment.cat-page_misreading").count() == 1
    # sortable: Item-F1 descending puts the reference first
    header = page.locator("#metrics thead th", has_text="Item-F1").locator("button")
    await header.click()
    await header.click()
    assert await page.locator("#metrics thead th[aria-sort=descending]").count() == 1
    assert await page.locator("#metrics tbody tr").first.locator("th").inner_text() == "reference"
    watch.check((report).as_uri() + "/")


METRICS = ("item_f1", "row_f1", "poa", "pass@1", "avg@1", "pass@k", "avg@k", "gold_state_reach", "answer_state_reach",
           "state_anchored_rows", "drift")


async def _family_table(page) -> dict[tuple[str, str, str], dict[str, str]]:
    """The per-family table: (agent, variant, family) -> metric -> the cell's raw value ('' when blank), plus the
    shown text of each metric under `text:<metric>` and the failure-label cell under `failures`."""
    out = {}
    rows = page.locator("#families tbody tr")
    for i in range(await rows.count()):
        row = rows.nth(i)
        agent, variant, family = [await row.locator("th, td").nth(j).inner_text() for j in range(3)]
        cells = {}
        for cell in await row.locator("td[data-metric]").all():
            name = await cell.get_attribute("data-metric")
            cells[name], cells[f"text:{name}"] = await cell.get_attribute("data-sort"), await cell.inner_text()
        cells["failures"] = await row.locator("td.failure-labels").inner_text()
        out[(agent, variant, family)] = cells
    return out


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


async def test_family_view_shows_the_metrics_that_apply(context, report, runs):
    """Each family row holds the table, Pass@k, state and failure metrics of that family's graded episodes,
    recomputed here from the grade.json files; its table metrics equal summary.json's; Pass@k with one trial is
    blank, not zero."""
    page = await context.new_page()
    await page.goto((report / "index.html").as_uri())
    table = await _family_table(page)
    summary = json.loads((runs / "summary.json").read_text())
    grades = [Grade.model_validate_json(p.read_text()) for p in runs.rglob("grade.json")]
    assert len(table) == 2 * len(AGENTS)
    assert {fam for _, _, fam in table} == {"environmental monitoring", "official statistics"}
    for (agent, variant, family), cells in table.items():
        mine = [g for g in grades if (g.agent, g.variant, g.family) == (agent, variant, family)]
        scored = [g for g in mine if g.scored]
        assert cells["episodes"] == str(len(mine)) and cells["scored"] == str(len(scored)) == "1"
        [group] = [x for x in summary["groups"] if (x["agent"], x["variant"]) == (agent, variant)]
        rows = [r for g in scored for r in g.rows]
        expected = {
            "item_f1": _mean([g.scores.item_f1 for g in scored]), "row_f1": _mean([g.scores.row_f1 for g in scored]),
            "poa": _mean([g.scores.poa for g in scored]),
            "pass@1": _mean([float(g.passed) for g in scored]), "avg@1": _mean([float(g.passed) for g in scored]),
            "pass@k": None, "avg@k": None,  # one trial per task: Pass@k beyond k = 1 does not apply
            "gold_state_reach": _mean([sum(r.reached for r in g.gold_states) / len(g.gold_states) for g in scored]),
            "answer_state_reach": _mean([float(any(r.reached for r in g.gold_states if r.name in g.answer_states))
                                         for g in scored]),
            "state_anchored_rows": sum(r.state_anchored for r in rows) / len(rows) if rows else None,
            "drift": _mean([float(any(not d.recovered for d in g.drift)) for g in scored]),
        }
        for name in METRICS:
            if expected[name] is None:
                assert (cells[name], cells[f"text:{name}"]) == ("", "–"), (agent, family, name)
            else:
                assert float(cells[name]) == pytest.approx(expected[name]), (agent, family, name)
        for name in ("item_f1", "row_f1", "poa"):  # the same numbers as rig grade's summary
            assert float(cells[name]) == pytest.approx(group["families"][family][name])
        labels = [g.label for g in scored if g.label]
        assert cells["failures"] == (", ".join(f"{x} 1" for x in labels) if labels else "none")
    # the perturbed agents fail where the reference does not
    assert table[("reference", "constraint", "environmental monitoring")]["failures"] == "none"
    assert table[("perturbed:scope_drift", "constraint", "environmental monitoring")]["failures"] == "scope_drift 1"


async def test_family_view_leaves_metrics_blank_where_nothing_was_scored(context, runs, tmp_path):
    report = Report(runs, tmp_path / "site")
    for e in report.run.episodes:  # the statistics episodes hit infrastructure failures: nothing scored there
        if e.grade is not None and e.grade.family == "official statistics":
            e.grade = e.grade.model_copy(update={"status": "infra_error", "scored": False, "passed": None,
                                                 "scores": None, "gold_states": [], "rows": [], "drift": [],
                                                 "label": None})
    page = await context.new_page()
    await page.goto(report.write_index().as_uri())
    table = await _family_table(page)
    for (agent, _, family), cells in table.items():
        if family == "official statistics":
            assert (cells["episodes"], cells["scored"], cells["failures"]) == ("1", "0", "–")
            assert all((cells[m], cells[f"text:{m}"]) == ("", "–") for m in METRICS), (agent, cells)
        else:
            assert cells["scored"] == "1" and cells["gold_state_reach"] and cells["item_f1"], (agent, cells)


async def test_episode_pages(context, report, runs):
    watch = Watch(context)
    page = await context.new_page()
    for agent in AGENTS:
        for task in ("eco-01", "stats-02"):
            d = _ep(runs, task, agent)
            await page.goto((report / "episodes" / f"{episode_id(runs, d)}.html").as_uri())
            steps = read_trajectory(d / "trajectory.jsonl")
            assert await page.locator("#timeline tbody tr.step").count() == len(steps)
            held = (await page.locator("#recording").inner_text()).split()  # what recording cost the agent
            rec = EpisodeDir(d).read_episode().recording
            assert held[:5] == ["(the", "recorder", "held", "the", "agent"] and rec.settle_s > 0
            assert float(held[5]) == round(rec.settle_s + rec.image_wait_s, 1)
            assert await page.locator("#timeline img.thumb").count() == sum(s.screenshot is not None for s in steps)
            assert await page.locator("#timeline tr.step.reached").count() >= 1
            assert await page.locator("#timeline .mark.holds").count() and await page.locator("#timeline .mark.fails").count()
            grade = Grade.model_validate_json((d / "grade.json").read_text())
            cells = page.locator("#answer td.cell")
            verdicts = [c.verdict for r in grade.scores.gold_rows for c in r.cells]
            for v in ("correct", "wrong", "missing"):
                assert await cells.and_(page.locator(f".{v}")).count() == verdicts.count(v)
            width = len(grade.scores.gold_rows[0].cells)
            assert await page.locator("#answer td.cell.extra").count() == len(grade.scores.extra_rows) * width
            if agent == "perturbed:scope_drift":
                assert await page.locator("#timeline tr.step.diverged").count() == 1
                assert await page.locator("#answer td.cell.missing").count()
            if agent == "perturbed:page_misreading":
                assert await page.locator("#answer td.cell.wrong").count()
            assert await page.locator("#citations tr.citation").count() == len(grade.citations)
            # the static report cannot save audits: the form says so
            assert await page.locator("#audit-label").is_disabled() and await page.locator("#audit-static").is_visible()
    # every captured-text page of the last episode loads
    for s in steps:
        await page.goto((report / "text" / episode_id(runs, d) / f"step-{s.step:04d}.html").as_uri())
        assert await page.locator("#captured").count() == 1
    await page.goto((report / "episodes" / f"{episode_id(runs, d)}.html").as_uri())
    # a citation leads to the captured text of its step, excerpt marked
    link = page.locator("#citations a.cite-link").first
    excerpt = await page.locator("#citations q.excerpt").first.inner_text()
    await link.click()
    await page.wait_for_load_state()
    assert "/text/" in page.url and page.url.split("#")[1] == "cite-0"
    marked = " ".join((await page.locator("#captured mark").first.inner_text()).split())
    assert marked == " ".join(excerpt.split())
    watch.check(report.as_uri() + "/")


async def test_page_text_stays_inert(context, xss):
    report, eid = xss
    watch = Watch(context)
    page = await context.new_page()
    for url in ("index.html", f"episodes/{eid}.html"):
        await page.goto((report / url).as_uri())
        assert await page.evaluate("window.__xss") is None
        assert IMG in await page.locator("main").inner_text()
    assert SCRIPT in await page.locator("#answer").inner_text()
    assert SCRIPT in await page.locator("details.prompt pre").text_content()
    assert await page.locator("main img:not(.thumb)").count() == 0 and await page.locator("main script").count() == 0
    assert await page.locator("#timeline tr.step.drift").count() == 1
    await page.locator("#citations a.cite-link").last.click()
    await page.wait_for_load_state()
    assert await page.evaluate("window.__xss") is None
    assert f"{SCRIPT} {IMG}" in await page.locator("#captured mark").last.inner_text()
    watch.check(report.as_uri() + "/")


async def test_view_saves_an_audit(context, runs, tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(runs, root)
    labels = {}
    for task, agent, manual in (("eco-01", "reference", None), ("eco-01", "perturbed:scope_drift", "scope_drift")):
        EpisodeDir(_ep(root, task, agent)).write_audit(Audit(label=manual, auditor="pre"))
        labels[(task, agent)] = manual
    target = _ep(root, "stats-02", "perturbed:page_misreading")
    eid = episode_id(root, target)
    watch = Watch(context)
    page = await context.new_page()
    with ViewServer(root) as view:
        assert view.url.startswith("http://127.0.0.1:")
        await page.goto(f"{view.url}/episodes/{eid}.html")
        assert await page.locator("#audit-label").is_enabled() and await page.locator("#audit-static").is_hidden()
        await page.get_by_label("Failure category").select_option("answer_composition")
        await page.get_by_label("Note").fill("values read from <the wrong column>")
        await page.get_by_label("Auditor").fill("tester")
        async with page.expect_navigation():
            await page.get_by_role("button", name="Save audit").click()
        assert await page.locator("#manual-label .label").inner_text() == "answer_composition"
        audit = EpisodeDir(target).read_audit()
        assert (audit.label, audit.note, audit.auditor) == ("answer_composition", "values read from <the wrong column>", "tester")
        await page.goto(f"{view.url}/")
        row = page.locator(f"#audited tr[data-episode='{eid}']")
        assert await row.locator(".manual-label").inner_text() == "answer_composition"
        assert await page.locator("#audited-count").inner_text() == "3"
        auto = {k: Grade.model_validate_json((_ep(root, *k) / "grade.json").read_text()).label for k in labels}
        auto[("stats-02", "perturbed:page_misreading")] = Grade.model_validate_json((target / "grade.json").read_text()).label
        labels[("stats-02", "perturbed:page_misreading")] = "answer_composition"
        kappa = cohen_kappa([(auto[k] or "none", labels[k] or "none") for k in labels])
        assert await page.locator("#audit-kappa").inner_text() == f"{kappa:.3f}"
        # the view accepts writes from its own pages only
        bad = await page.request.post(f"{view.url}/api/audit/{eid}", form={"label": "scope_drift"},
                                      headers={"Origin": "http://evil.example"})
        assert bad.status == 403 and EpisodeDir(target).read_audit().label == "answer_composition"
        assert (await page.request.post(f"{view.url}/api/audit/no-such", form={"label": "none"})).status == 404
        assert (await page.request.post(f"{view.url}/api/audit/{eid}", form={"label": "bogus"})).status == 422
        watch.check(view.url + "/")


def test_episode_ids_never_collide(tmp_path):
    """Issue 17, item 2d: directory names that differ only by punctuation get different report page ids."""
    runs = tmp_path / "runs"
    names = ["scripted_x", "scripted:x", "scripted x", "scripted/x", "a__b"]
    dirs = [runs / "t" / "constraint" / n / "trial-0" for n in names[:3]]
    dirs += [runs / "t" / "constraint" / "scripted" / "x" / "trial-0", runs / "t" / "a__b" / "trial-0",
             runs / "t" / "a" / "b" / "trial-0"]
    ids = [episode_id(runs, d) for d in dirs]
    assert len(set(ids)) == len(ids), ids
    assert ids[0] == "t__constraint__scripted_x__trial-0", "a plain path keeps its readable id"
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", i) for i in ids)
