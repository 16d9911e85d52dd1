"""The report and `rig view` in real Chromium, over real recorded and graded runs (tests/real_runs.py, recorded once
per session): pages load offline with no console error and no request leaving the report, figures and key elements
are present, every verdict shown is grade.json's and summary.json's (the report imports no grading code), page-derived
text stays inert, an old grade.json asks for a regrade, an audit saved through the view reaches audit.json and the
overview, and the comparison pages of two runs load."""

from __future__ import annotations

import json
import re
import shutil
from io import BytesIO
from math import comb
from pathlib import Path

import pytest
from real_runs import AGENTS, TASKS, TRIALS, copy_run, episode_path
from warcio.warcwriter import WARCWriter

from recorders.trajectory import read_trajectory
from recorders.warc import CAPTURE_HEADER, STEP_HEADER
from rig.episode_dir import EpisodeDir
from rig.formats.grade import DriftEvent, Grade
from rig.grading.evidence import Evidence
from rig.grading.runs import grade_runs
from rig.grading.spans import find_spans
from rig.report import Audit, ViewServer, cohen_kappa, write_report
from rig.report.load import episode_id

SCRIPT = "<script>window.__xss=1</script>"
IMG = '<img src=x onerror="window.__xss=1">'
FAMILIES = {"eco-01": "environmental monitoring", "eco-02": "environmental monitoring", "flights-06": "transport"}


@pytest.fixture(scope="session")
def runs(real_runs) -> Path:
    """The session's real runs (3 tasks, the reference and two perturbed agents, 2 trials each), graded."""
    return real_runs


@pytest.fixture(scope="session")
def report(runs) -> Path:
    """The static report of the runs."""
    return write_report(runs, runs.parent / "site").parent


def _ep(runs: Path, task: str, agent: str, trial: int = 0) -> Path:
    return episode_path(runs, task, agent, trial)


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
    assert await page.locator("#families tbody tr").count() == 2 * len(AGENTS)  # two families per agent
    assert await page.locator("#episodes tbody tr").count() == len(TASKS) * len(AGENTS) * TRIALS
    scatter = page.locator("#fig-scatter svg")
    assert await scatter.locator("circle.point").count() == len(AGENTS)
    assert await scatter.locator("line.diagonal").count() == 1
    bars = page.locator("#fig-bars svg")
    assert await bars.locator("g.bar").count() == len(AGENTS)
    assert await bars.locator("rect.segment.cat-scope_drift").count() == 1
    assert await bars.locator("rect.segment.cat-page_misreading").count() == 1
    # every mean with its interval over tasks, as summary.json has it
    summary = json.loads((runs / "summary.json").read_text())
    for g in summary["groups"]:
        row = page.locator(f"#metrics tr[data-group='{g['agent']} / {g['variant']}']")
        for metric in ("item_f1", "row_f1", "poa", "gold_state_reach", "state_anchored_rows"):
            lo, hi = g[f"{metric}_ci95"]
            cell = row.locator(f"td[data-metric='{metric}']")
            assert await cell.locator(".ci").inner_text() == f"[{100 * lo:.1f}, {100 * hi:.1f}]", (g["agent"], metric)
        assert float(await row.locator("td[data-metric='pass^k']").get_attribute("data-sort")) == g["pass_hat_k"]
    assert await page.locator("#outdated").count() == 0
    # sortable: Item-F1 descending puts the reference first
    header = page.locator("#metrics thead th", has_text="Item-F1").locator("button")
    await header.click()
    await header.click()
    assert await page.locator("#metrics thead th[aria-sort=descending]").count() == 1
    assert await page.locator("#metrics tbody tr").first.locator("th").inner_text() == "reference"
    watch.check((report).as_uri() + "/")


METRICS = ("item_f1", "row_f1", "poa", "pass@1", "avg@1", "pass@k", "avg@k", "pass^k", "gold_state_reach",
           "answer_state_reach", "state_anchored_rows", "drift")


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
    """Each family row holds the table, Pass@k, pass^k, state and failure metrics of that family's graded episodes,
    recomputed here from the grade.json files by hand, and equal to summary.json's `families` entries (the report
    shows what rig grade wrote)."""
    page = await context.new_page()
    await page.goto((report / "index.html").as_uri())
    table = await _family_table(page)
    summary = json.loads((runs / "summary.json").read_text())
    grades = [Grade.model_validate_json(p.read_text()) for p in runs.rglob("grade.json")]
    assert len(table) == 2 * len(AGENTS)
    assert {fam for _, _, fam in table} == set(FAMILIES.values())
    for (agent, variant, family), cells in table.items():
        mine = [g for g in grades if (g.agent, g.variant, g.family) == (agent, variant, family)]
        scored = [g for g in mine if g.scored]
        tasks = sorted({g.task_id for g in scored})
        assert cells["episodes"] == str(len(mine)) and cells["scored"] == str(len(scored)) == str(TRIALS * len(tasks))
        [group] = [x for x in summary["groups"] if (x["agent"], x["variant"]) == (agent, variant)]
        trials = {t: [bool(g.passed) for g in scored if g.task_id == t] for t in tasks}
        rows = [r for g in scored for r in g.rows]
        expected = {
            "item_f1": _mean([g.scores.item_f1 for g in scored]), "row_f1": _mean([g.scores.row_f1 for g in scored]),
            "poa": _mean([g.scores.poa for g in scored]),
            "pass@1": _mean([sum(o) / len(o) for o in trials.values()]), "avg@1": _mean([sum(o) / len(o) for o in trials.values()]),
            "pass@k": _mean([1 - comb(len(o) - sum(o), TRIALS) / comb(len(o), TRIALS) for o in trials.values()]),
            "avg@k": _mean([sum(o) / len(o) for o in trials.values()]),
            "pass^k": _mean([comb(sum(o), TRIALS) / comb(len(o), TRIALS) for o in trials.values()]),
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
        fam = group["families"][family]
        for name in ("item_f1", "row_f1", "poa", "gold_state_reach", "state_anchored_rows"):  # rig grade's numbers
            assert float(cells[name]) == pytest.approx(fam[name])
        assert float(cells["drift"]) == pytest.approx(fam["unrecovered_drift"])
        # the family with two tasks has intervals, the one with a single task none
        assert (fam["item_f1_ci95"] is None) == (len(tasks) < 2), (agent, family)
        labels = [g.label for g in scored if g.label]
        assert cells["failures"] == (f"{labels[0]} {len(labels)}" if labels else "none")
    assert table[("reference", "constraint", "environmental monitoring")]["failures"] == "none"
    assert table[("perturbed:scope_drift", "constraint", "environmental monitoring")]["failures"] == "scope_drift 4"


async def test_family_view_leaves_metrics_blank_where_nothing_was_scored(context, runs, tmp_path):
    """The transport episodes turned into infrastructure failures: rig grade keeps those grade.json files (they are
    current) and summarises them; the report shows that family's metrics as dashes, never zeros."""
    root = tmp_path / "runs"
    shutil.copytree(runs, root)
    grade_runs(root)  # graded where they are now
    for path in root.rglob("grade.json"):
        g = Grade.model_validate_json(path.read_text())
        if g.family == "transport":
            path.write_text(g.model_copy(update={"status": "infra_error", "scored": False, "passed": None, "scores": None,
                                                 "record_scores": None, "gold_states": [], "rows": [], "drift": [],
                                                 "label": None}).model_dump_json())
    summary = grade_runs(root)
    assert all(g.families["transport"].scored == 0 for g in summary.groups)
    page = await context.new_page()
    await page.goto(write_report(root, tmp_path / "site").as_uri())
    table = await _family_table(page)
    for (agent, _, family), cells in table.items():
        if family == "transport":
            assert (cells["episodes"], cells["scored"], cells["failures"]) == ("2", "0", "–")
            assert all((cells[m], cells[f"text:{m}"]) == ("", "–") for m in METRICS), (agent, cells)
        else:
            assert cells["scored"] == "4" and cells["gold_state_reach"] and cells["item_f1"], (agent, cells)


async def test_episode_pages(context, report, runs):
    """Every episode page: the timeline with grade.json's per-step constraint marks, the answer against the gold, the
    citations and records with links to their highlighted text."""
    watch = Watch(context)
    page = await context.new_page()
    for agent in AGENTS:
        for task in TASKS:
            d = _ep(runs, task, agent)
            await page.goto((report / "episodes" / f"{episode_id(runs, d)}.html").as_uri())
            steps = read_trajectory(d / "trajectory.jsonl")
            assert await page.locator("#timeline tbody tr.step").count() == len(steps)
            held = (await page.locator("#recording").inner_text()).split()  # what recording cost the agent
            rec = EpisodeDir(d).read_episode().recording
            assert held[:5] == ["(the", "recorder", "held", "the", "agent"] and rec.settle_s > 0
            assert float(held[5]) == round(rec.settle_s + rec.image_wait_s, 1)
            assert await page.locator("#timeline img.thumb").count() == 0  # recorded with --step-images off
            assert await page.locator("#timeline tr.step.reached").count() >= 1
            grade = Grade.model_validate_json((d / "grade.json").read_text())
            marks = [h for m in grade.step_marks for hs in m.holds.values() for h in hs]
            assert len(grade.step_marks) == len(steps)
            assert await page.locator("#timeline .mark.holds").count() == sum(marks)
            assert await page.locator("#timeline .mark.fails").count() == len(marks) - sum(marks) > 0
            cells = page.locator("#answer td.cell")
            verdicts = [c.verdict for r in grade.scores.gold_rows for c in r.cells]
            for v in ("correct", "wrong", "missing"):
                assert await cells.and_(page.locator(f".{v}")).count() == verdicts.count(v)
            width = len(grade.scores.gold_rows[0].cells)
            assert await page.locator("#answer td.cell.extra").count() == len(grade.scores.extra_rows) * width
            if agent == "perturbed:scope_drift" and task != "flights-06":
                assert await page.locator("#timeline tr.step.diverged").count() == 1
                assert await page.locator("#answer td.cell.missing").count()
            if agent == "perturbed:page_misreading":
                assert await page.locator("#answer td.cell.wrong").count()
            assert await page.locator("#citations tr.citation").count() == len(grade.citations)
            assert await page.locator("#records tr.record").count() == len(grade.records)
            assert await page.locator("#records a.excerpt-link").count() == sum(
                x.highlight is not None for r in grade.records for x in r.excerpts)
            assert await page.locator("#outdated").count() == 0
            # the static report cannot save audits: the form says so
            assert await page.locator("#audit-label").is_disabled() and await page.locator("#audit-static").is_visible()
    # every captured-text page of the last episode loads
    for s in steps:
        await page.goto((report / "text" / episode_id(runs, d) / f"step-{s.step:04d}.html").as_uri())
        assert await page.locator("#captured").count() == 1
    watch.check(report.as_uri() + "/")


async def test_highlights_are_the_spans_grade_json_gives(context, report, runs):
    """A citation leads to the captured text of its step with exactly grade.json's spans marked; a record excerpt
    likewise (the report places nothing itself)."""
    watch = Watch(context)
    page = await context.new_page()
    d = _ep(runs, "flights-06", "reference")
    grade = Grade.model_validate_json((d / "grade.json").read_text())
    texts = EpisodeDir(d).step_texts()
    await page.goto((report / "episodes" / f"{episode_id(runs, d)}.html").as_uri())
    cite = grade.citations[0]
    assert cite.verified and cite.highlight.spans
    await page.locator("#citations a.cite-link").first.click()
    await page.wait_for_load_state()
    assert "/text/" in page.url and page.url.split("#")[1] == "cite-0"
    (a, b), = cite.highlight.spans
    marked = page.locator("#captured mark[data-marks~='cite-0']")
    assert "".join(await marked.all_inner_texts()) == texts[cite.highlight.step][a:b]
    record = grade.records[0].excerpts[0]
    assert record.faithful and record.highlight.spans
    (a, b), = record.highlight.spans
    recorded = page.locator("#captured mark[data-marks~='record-0-0']")
    assert "".join(await recorded.all_inner_texts()) == texts[record.highlight.step][a:b]
    assert await page.locator("#marked li").count() == len(grade.citations) + sum(len(r.excerpts) for r in grade.records)
    watch.check(report.as_uri() + "/")


async def test_an_old_grade_asks_for_a_regrade(context, runs, tmp_path):
    """A grade.json of format 1 (no per-step marks, no highlights): the report says to regrade instead of failing or
    showing less silently; `rig grade` redoes it on its own (its grader version is older)."""
    root = tmp_path / "runs"
    d = episode_path(root, "eco-01", "reference")
    shutil.copytree(_ep(runs, "eco-01", "reference"), d)
    grade_runs(root)
    old = json.loads((d / "grade.json").read_text())
    for key in ("step_marks", "task_revision", "run_revision", "versions", "usage"):
        old.pop(key)
    for r in old["gold_states"]:
        r.pop("constraints"), r.pop("description")
    for c in old["citations"]:
        c.pop("highlight")
    old.update(format="sgr-rig/grade/1", grader_version="1.1.0")
    (d / "grade.json").write_text(json.dumps(old))
    summary = json.loads((root / "summary.json").read_text())
    for g in summary["groups"]:
        for key in [k for k in g if k.endswith("_ci95")] + ["pass_hat_k", "k", "tasks"]:
            g.pop(key)
    summary.update(format="sgr-rig/summary/1", grader_version="1.1.0")
    summary.pop("intervals")
    (root / "summary.json").write_text(json.dumps(summary))
    index = write_report(root, tmp_path / "site")
    watch = Watch(context)
    page = await context.new_page()
    await page.goto(index.as_uri())
    notice = await page.locator("#outdated").inner_text()
    assert "rig grade --force" in notice and "summary.json is sgr-rig/summary/1" in notice
    assert await page.locator("#metrics tbody tr").count() == 1 and await page.locator("#metrics .ci").count() == 0
    await page.goto((index.parent / "episodes" / f"{episode_id(root, d)}.html").as_uri())
    assert "rig grade --force" in await page.locator("#outdated").inner_text()
    assert await page.locator("#timeline .mark").count() == 0 and await page.locator("#citations tr.citation").count()
    watch.check(index.parent.as_uri() + "/")
    grade_runs(root)
    again = Grade.model_validate_json((d / "grade.json").read_text())
    assert again.format == "sgr-rig/grade/2" and again.step_marks and not again.outdated


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
    target = _ep(root, "eco-02", "perturbed:page_misreading")
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
        # the page rewritten after the audit still carries grade.json's marks
        assert await page.locator("#timeline .mark.holds").count()
        audit = EpisodeDir(target).read_audit()
        assert (audit.label, audit.note, audit.auditor) == ("answer_composition", "values read from <the wrong column>", "tester")
        await page.goto(f"{view.url}/")
        row = page.locator(f"#audited tr[data-episode='{eid}']")
        assert await row.locator(".manual-label").inner_text() == "answer_composition"
        assert await page.locator("#audited-count").inner_text() == "3"
        auto = {k: Grade.model_validate_json((_ep(root, *k) / "grade.json").read_text()).label for k in labels}
        auto[("eco-02", "perturbed:page_misreading")] = Grade.model_validate_json((target / "grade.json").read_text()).label
        labels[("eco-02", "perturbed:page_misreading")] = "answer_composition"
        kappa = cohen_kappa([(auto[k] or "none", labels[k] or "none") for k in labels])
        assert await page.locator("#audit-kappa").inner_text() == f"{kappa:.3f}"
        # the view accepts writes from its own pages only
        bad = await page.request.post(f"{view.url}/api/audit/{eid}", form={"label": "scope_drift"},
                                      headers={"Origin": "http://evil.example"})
        assert bad.status == 403 and EpisodeDir(target).read_audit().label == "answer_composition"
        assert (await page.request.post(f"{view.url}/api/audit/no-such", form={"label": "none"})).status == 404
        assert (await page.request.post(f"{view.url}/api/audit/{eid}", form={"label": "bogus"})).status == 422
        watch.check(view.url + "/")


async def test_comparison_pages(context, runs, tmp_path):
    """`rig report A --compare B` (B: a perturbed agent, on fewer tasks): the comparison page with the per-task
    deltas sorted by delta, the tasks only A holds, and per task the two trajectories side by side."""
    from typer.testing import CliRunner

    from rig.cli import app

    a = copy_run(runs, tmp_path / "a", ("reference",))
    b = copy_run(runs, tmp_path / "b", ("perturbed:scope_drift",), ("eco-01", "eco-02"))
    res = CliRunner().invoke(app, ["report", str(a), "--out", str(tmp_path / "site"), "--compare", str(b)])
    assert res.exit_code == 0, res.output
    site = tmp_path / "site"
    watch = Watch(context)
    page = await context.new_page()
    await page.goto((site / "index.html").as_uri())
    await page.locator("#comparison-link a").click()
    await page.wait_for_load_state()
    assert page.url.endswith("/compare.html")
    deltas = [float(x) for x in await page.locator("#compare-tasks tbody td.delta").evaluate_all(
        "cells => cells.map(c => c.dataset.sort)")]
    assert len(deltas) == 2 and deltas == sorted(deltas) and all(x < 0 for x in deltas)
    assert await page.locator("#only-in-a").inner_text() == "Tasks only in A: flights-06"
    p_value = float(await page.locator("#compare-groups td.p-value").inner_text())
    assert p_value == 0.5  # two tasks, both worse: 2 * (1/2)^2
    await page.locator("#compare-tasks a.task-link", has_text="eco-01").click()
    await page.wait_for_load_state()
    for side, run, agent in (("a", a, "reference"), ("b", b, "perturbed:scope_drift")):
        col = page.locator(f"#side-{side}")
        assert await col.locator("article.trial").count() == TRIALS
        steps = read_trajectory(episode_path(run, "eco-01", agent) / "trajectory.jsonl")
        assert await col.locator("article.trial").first.locator("table.trajectory tbody tr").count() == len(steps)
    assert await page.locator("#side-b .failure-label .label").first.inner_text() == "scope_drift"
    assert await page.locator("#side-a .failure-label .label").first.inner_text() == "no failure"
    assert await page.locator("#side-b table.answer td.cell.missing").count()
    watch.check(site.as_uri() + "/")


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
