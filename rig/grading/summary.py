"""Summarising grades per agent and prompt variant (SGR-Bench Table 2 shape): `summary.json` and `summary.md`.

Means are over scored episodes (infra_error and incomplete episodes are counted, never scored as zero;
an agent's timeout, error or unparsable answer scores zero). Pass@k and Avg@k use the unbiased estimator
over each task's scored trials; an episode passes when Row-F1 = 1 and P.O.A. = 1 (or one gold row).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from statistics import fmean

from rig.formats.grade import UNSCORED, Grade
from rig.formats.summary import (
    RECORD_METRICS,
    AgreementCount,
    EpisodeProblem,
    GroupSummary,
    HybridSummary,
    Metrics,
    Summary,
)
from rig.grading.labels import CATEGORIES
from rig.grading.passk import over_tasks


#: How a grade of a directory without episode.json begins its `grading_error`.
NOT_AN_EPISODE = "not an episode"


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return fmean(vals) if vals else None


def pooled(groups: Iterable[Metrics], attr: str) -> float | None:
    """An answer-table metric (`item_f1`, `row_f1`, `poa`) over several groups: their means weighted by the
    episodes each was taken over."""
    vals = [(v, g.table_episodes) for g in groups if (v := getattr(g, attr)) is not None and g.table_episodes]
    n = sum(w for _, w in vals)
    return sum(v * w for v, w in vals) / n if n else None


def _metrics(grades: list[Grade]) -> Metrics:
    scored = [g.scores for g in grades if g.scored and g.scores]
    recs = [g.record_scores for g in grades if g.scored and g.record_scores]
    return Metrics(episodes=len(grades), scored=sum(g.scored for g in grades), table_episodes=len(scored),
                   item_f1=_mean(s.item_f1 for s in scored),
                   row_f1=_mean(s.row_f1 for s in scored), poa=_mean(s.poa for s in scored), record_episodes=len(recs),
                   **{f"record_{m}": _mean(getattr(r, m) for r in recs) for m in RECORD_METRICS})


def _passk(grades: list[Grade]) -> dict[str, float]:
    by_task: dict[str, list[bool]] = defaultdict(list)
    for g in grades:
        if g.scored:
            by_task[g.task_id or ""].append(bool(g.passed))
    if not by_task:
        return {}
    trials = min(len(v) for v in by_task.values())
    out: dict[str, float] = {}
    for k in sorted({1, trials}):
        out.update(over_tasks(list(by_task.values()), k))
    return out


def _hybrid(grades: list[Grade]) -> dict[str, HybridSummary]:
    """Per hybrid type: episodes, scored, passed, Pass@k and Avg@k."""
    out: dict[str, HybridSummary] = {}
    for kind in ("search_to_sql", "sql_to_search", "parallel"):
        mine = [g for g in grades if g.hybrid_type == kind]
        if mine:
            out[kind] = HybridSummary(episodes=len(mine), scored=sum(g.scored for g in mine),
                                      passed=sum(bool(g.scored and g.passed) for g in mine), passk=_passk(mine))
    return out


def _discovery(grades: list[Grade]) -> dict[str, float | int | None]:
    hidden = [g for g in grades if g.scored and g.site_found is not None]
    found = [g.site_found_step for g in hidden if g.site_found and g.site_found_step is not None]
    return {"hidden_start": len(hidden), "site_found": sum(bool(g.site_found) for g in hidden) / len(hidden) if hidden
            else None, "site_found_step": fmean(found) if found else None}


def _group(agent: str, variant: str | None, grades: list[Grade]) -> GroupSummary:
    scored = [g for g in grades if g.scored]
    rows = [p for g in scored if g.annotated for p in g.rows]  # rows of tasks without gold states anchor nothing
    fam: dict[str, list[Grade]] = defaultdict(list)
    for g in grades:
        fam[g.family or "unknown"].append(g)
    return GroupSummary(
        **_metrics(grades).model_dump(), agent=agent, variant=variant,
        infra=sum(g.status in UNSCORED for g in grades), infra_rate=_rate(grades),
        ungraded=sum(g.grading_error is not None for g in grades),
        incomplete_evidence=sum(bool(g.incomplete_evidence) for g in grades), statuses=dict(Counter(g.status for g in grades)),
        gold_state_reach=_mean(sum(r.reached for r in g.gold_states) / len(g.gold_states) for g in scored if g.gold_states),
        answer_state_reach=_mean(float(any(r.reached for r in g.gold_states if r.name in g.answer_states))
                                 for g in scored if g.gold_states),
        state_anchored_rows=sum(p.state_anchored for p in rows) / len(rows) if rows else None,
        passk=_passk(grades), failures={c: sum(g.label == c for g in grades) for c in CATEGORIES},
        families={f: _metrics(gs) for f, gs in sorted(fam.items())},
        hybrid=_hybrid(grades), **_discovery(grades),
    )


def _rate(grades: list[Grade]) -> float | None:
    """The share of episodes that were infrastructure failures (None: no episode)."""
    return sum(g.status in UNSCORED for g in grades) / len(grades) if grades else None


def _problems(grades: list[Grade]) -> list[EpisodeProblem]:
    out = []
    for g in grades:
        agent = None if g.agent == "unknown" else g.agent
        if g.grading_error is not None:
            kind = "not_an_episode" if g.grading_error.startswith(NOT_AN_EPISODE) else "ungraded"
            out.append(EpisodeProblem(episode=g.episode, agent=agent, kind=kind, reason=g.grading_error))
        elif g.incomplete_evidence:
            out.append(EpisodeProblem(episode=g.episode, agent=agent, kind="incomplete_evidence",
                                      reason="; ".join(g.incomplete_evidence)))
    return out


def _agreement(grades: list[Grade]) -> tuple[dict[str, float], dict[str, AgreementCount]] | None:
    judged = [g for g in grades if g.injected_fault and g.scored and g.status == "ok"]
    if not judged:
        return None
    detail: dict[str, AgreementCount] = {}
    for kind in sorted({g.injected_fault for g in judged if g.injected_fault}):
        mine = [g for g in judged if g.injected_fault == kind]
        detail[kind] = AgreementCount(episodes=len(mine), agree=sum(g.label == kind for g in mine),
                                      labels=dict(Counter(g.label or "none" for g in mine)))
    overall = sum(d.agree for d in detail.values()) / len(judged)
    return {"overall": overall, **{k: d.agree / d.episodes for k, d in detail.items()}}, detail


def summarize(grades: list[Grade], runs_dir: str) -> Summary:
    """The run summary of a list of episode grades."""
    groups: dict[tuple[str, str | None], list[Grade]] = defaultdict(list)
    for g in grades:
        groups[(g.agent_label, g.variant)].append(g)  # two models under one agent name are two rows
    order = sorted(groups, key=lambda k: (k[0] != "reference", k[0], k[1] != "constraint", k[1] or ""))
    agreement = _agreement(grades)
    return Summary(
        runs_dir=runs_dir, episodes=len(grades), scored=sum(g.scored for g in grades),
        infra=sum(g.status in UNSCORED for g in grades), infra_rate=_rate(grades),
        ungraded=sum(g.grading_error is not None for g in grades),
        incomplete_evidence=sum(bool(g.incomplete_evidence) for g in grades), problems=_problems(grades),
        groups=[_group(a, v, groups[(a, v)]) for a, v in order],
        label_agreement=agreement[0] if agreement else None, label_agreement_detail=agreement[1] if agreement else None,
    )


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.2f}"


def not_annotated(g: GroupSummary) -> bool:
    """Whether a group's retrieval-state metrics are null because its scored tasks have no gold states (gold-state
    reach is a number whenever one of them has some)."""
    return g.scored > 0 and g.gold_state_reach is None


def _state_pct(x: float | None, g: GroupSummary) -> str:
    """A retrieval-state metric: blank when its tasks are not annotated (never 0), a dash when nothing was scored."""
    return "" if not_annotated(g) else _pct(x)


_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~&])")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # an underscore inside a word is not emphasis


def md_text(text: object) -> str:
    """Text from a file (an agent name, a path, a reason) made inert in a Markdown table cell: one line, with every
    character that could start markup, a link, HTML or a new cell escaped."""
    one_line = " ".join(str(text).split())
    return _MD_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", one_line))


def _agent_infra(summary: Summary) -> dict[str, tuple[int, int]]:
    """Per agent over its variants: (infrastructure failures, episodes)."""
    out: dict[str, tuple[int, int]] = {}
    for g in summary.groups:
        infra, episodes = out.get(g.agent, (0, 0))
        out[g.agent] = (infra + g.infra, episodes + g.episodes)
    return out


def infra_warnings(summary: Summary) -> list[str]:
    """One sentence per agent whose episodes include infrastructure failures: its scores leave those out."""
    return [f"{agent}: {infra} of {n} episodes were infrastructure failures ({_pct(infra / n)} %), not scored; "
            "its scores are over the rest" for agent, (infra, n) in _agent_infra(summary).items() if infra]


def _hybrid_md(summary: Summary) -> list[str]:
    """The hybrid-task table (Pass@k and Avg@k per type) and the discovery table, when such tasks ran."""
    out: list[str] = []
    if any(g.hybrid for g in summary.groups):
        out += ["", "## Hybrid web+SQL tasks (Pass@k and Avg@k per type)", "",
                "| Agent | Variant | Type | Episodes | Scored | Passed | Pass@1 | Avg@1 | Pass@k | Avg@k |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for g in summary.groups:
            for kind, h in g.hybrid.items():
                ks = sorted({int(k.split("@")[1]) for k in h.passk})
                k = ks[-1] if ks and ks[-1] > 1 else None
                out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {kind} | {h.episodes} | {h.scored} "
                           f"| {h.passed} | {_pct(h.passk.get('pass@1'))} | {_pct(h.passk.get('avg@1'))} | "
                           + (f"{_pct(h.passk[f'pass@{k}'])} (k={k}) | {_pct(h.passk[f'avg@{k}'])} |" if k else "– | – |"))
    if any(g.hidden_start for g in summary.groups):
        out += ["", "## Hidden start: was the site found?", "",
                "| Agent | Variant | Hidden-start episodes | Site found | Mean first step on the site |",
                "|---|---|---:|---:|---:|"]
        for g in summary.groups:
            if g.hidden_start:
                step = "–" if g.site_found_step is None else f"{g.site_found_step:.1f}"
                out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.hidden_start} "
                           f"| {_pct(g.site_found)} | {step} |")
    return out


def _problems_md(summary: Summary) -> list[str]:
    if not summary.problems:
        return []
    out = ["", f"## Episodes whose numbers are missing or incomplete ({len(summary.problems)})", "",
           "| Episode | Agent | Problem | Reason |", "|---|---|---|---|"]
    out += [f"| {md_text(p.episode)} | {md_text(p.agent or '–')} | {p.kind} | {md_text(p.reason)} |"
            for p in summary.problems]
    return out


def markdown(summary: Summary) -> str:
    """summary.md: a Table 2-shaped results table, then retrieval-state metrics, failure counts and label agreement."""
    agents = list(dict.fromkeys(g.agent for g in summary.groups))
    by = {(g.agent, g.variant): g for g in summary.groups}
    infra = _agent_infra(summary)
    head = f"# Results ({summary.episodes} episodes, {summary.scored} scored, {summary.infra} not scored: infrastructure"
    head += f", {summary.ungraded} could not be graded)" if summary.ungraded else ")"
    out = [head, ""]
    out += [f"**Warning:** {md_text(w)}  " for w in infra_warnings(summary)] + ([""] if summary.infra else [])
    if unreachable := sum(g.statuses.get("site_unreachable", 0) for g in summary.groups):
        out += [f"{unreachable} episode(s) scored as failures of their task: the live site did not load within the "
                "budget (site_unreachable, the site's failure, not infrastructure).", ""]
    out += [("| Agent | Constraint Row-F1 | Constraint Item-F1 | Constraint P.O.A. | Goal Row-F1 | Goal Item-F1 "
             "| Goal P.O.A. | Overall Item-F1 | Infra failures |"), "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in agents:
        cells = []
        for v in ("constraint", "goal"):
            g = by.get((a, v))
            cells += [_pct(g.row_f1), _pct(g.item_f1), _pct(g.poa)] if g else ["–"] * 3
        overall = pooled([g for g in summary.groups if g.agent == a], "item_f1")
        n_infra, n = infra[a]
        flag = f"{_pct(n_infra / n)} ⚠" if n_infra else _pct(0.0)
        out.append(f"| {md_text(a)} | " + " | ".join(cells) + f" | {_pct(overall)} | {flag} |")
    short = {"scope_drift": "Scope", "criterion_mismatch": "Crit.", "intent_rewriting": "Intent",
             "page_misreading": "Page", "retrieval_dependency": "Dep.", "answer_composition": "Final"}
    out += ["", "## Retrieval states, repeated trials and failure categories", "",
            "| Agent | Variant | Episodes | Scored | Infra | Gold-state reach | Answer-state reach | State-anchored rows "
            "| Pass@1 | Avg@1 | Pass@k | Avg@k | " + " | ".join(short[c] for c in CATEGORIES) + " |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(CATEGORIES)]
    for g in summary.groups:
        ks = sorted({int(k.split("@")[1]) for k in g.passk})
        k = ks[-1] if ks and ks[-1] > 1 else None
        pk = [_pct(g.passk.get("pass@1")), _pct(g.passk.get("avg@1")),
              f"{_pct(g.passk[f'pass@{k}'])} (k={k})" if k else "–", _pct(g.passk[f"avg@{k}"]) if k else "–"]
        out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.episodes} | {g.scored} | {g.infra} "
                   f"| {_state_pct(g.gold_state_reach, g)} | {_state_pct(g.answer_state_reach, g)} "
                   f"| {_state_pct(g.state_anchored_rows, g)} | "
                   + " | ".join(pk) + " | " + " | ".join(str(g.failures[c]) for c in CATEGORIES) + " |")
    if any(not_annotated(g) for g in summary.groups):
        out += ["", ("Blank retrieval-state cells: those tasks have no gold states (not annotated), so nothing is "
                     "measured there; it is not a zero.")]
    if any(g.record_episodes for g in summary.groups):
        out += ["", "## Evidence records (soft and hard precision, recall, F1; means over record tasks)", "",
                "| Agent | Variant | Record episodes | Soft P | Soft R | Soft F1 | Hard P | Hard R | Hard F1 |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for g in summary.groups:
            if g.record_episodes:
                out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.record_episodes} | "
                           + " | ".join(_pct(getattr(g, f"record_{m}")) for m in RECORD_METRICS) + " |")
    out += _hybrid_md(summary)
    if summary.label_agreement and summary.label_agreement_detail:
        out += ["", f"## Label agreement with injected faults: {_pct(summary.label_agreement['overall'])} %", "",
                "| Injected | Episodes | Agree | Agreement | Automatic labels |", "|---|---:|---:|---:|---|"]
        for kind, d in summary.label_agreement_detail.items():
            labels = ", ".join(f"{md_text(k)}: {n}" for k, n in sorted(d.labels.items()))
            out.append(f"| {md_text(kind)} | {d.episodes} | {d.agree} | {_pct(d.agree / d.episodes)} | {labels} |")
    out += _problems_md(summary)
    return "\n".join(out) + "\n"


def summary_json(summary: Summary) -> str:
    """The summary as the `rig grade --json` document."""
    return json.dumps(summary.model_dump(mode="json"), indent=2, ensure_ascii=False)
