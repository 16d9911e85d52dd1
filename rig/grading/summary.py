"""Summarising grades per agent and prompt variant (SGR-Bench Table 2 shape), and within each per source family and
per hybrid type: `summary.json` (summary.md is `rig.grading.summary_md`).

Means are over scored episodes (infra_error and incomplete episodes are counted, never scored as zero; an agent's
timeout, error or unparsable answer scores zero); each mean has a 95 % percentile bootstrap interval over tasks, a
task's trials resampled together (`rig.stats`). Pass@k, Avg@k and pass^k use the unbiased estimators over each task's
scored trials; an episode passes when Row-F1 = 1 and P.O.A. = 1 (or one gold row). Two revisions of one task are never
summarised in one row unless asked (`mix_revisions`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from math import fsum
from typing import Any

from rig.errors import InputError
from rig.formats.grade import UNSCORED, Grade
from rig.formats.summary import (
    CI_METRICS,
    AgreementCount,
    EpisodeProblem,
    GroupSummary,
    HybridSummary,
    Intervals,
    Metrics,
    RevisionMix,
    Summary,
    infra_warnings,
    pooled,
    row_name,
)
from rig.formats.vocabulary import CATEGORIES
from rig.grading.passk import over_tasks, pass_hat_k
from rig.grading.summary_md import markdown, md_text, not_annotated
from rig.stats import LEVEL, RESAMPLES, SEED, bootstrap_ci

__all__ = ["NOT_AN_EPISODE", "MixedRevisions", "infra_warnings", "markdown", "md_text", "not_annotated", "pooled",
           "revision_mixes", "summarize", "summary_json"]

#: How a grade of a directory without episode.json begins its `grading_error`.
NOT_AN_EPISODE = "not an episode"
HYBRID_TYPES = ("search_to_sql", "sql_to_search", "parallel")


class MixedRevisions(InputError):
    """One summary row would hold episodes of two revisions of a task (`rig grade` exits 2 unless --mix-revisions)."""


def _by_task(grades: list[Grade]) -> dict[str, list[Grade]]:
    out: dict[str, list[Grade]] = defaultdict(list)
    for g in grades:
        out[g.task_id or ""].append(g)
    return out


def _means(tasks: dict[str, list[Grade]]) -> dict[str, Any]:
    """Every mean of CI_METRICS with its interval: the point over all episodes, the interval over tasks."""
    values = {t: [g.metric_values() for g in gs] for t, gs in tasks.items()}
    out: dict[str, Any] = {}
    for metric in CI_METRICS:
        flat = [v[metric] for vs in values.values() for v in vs if metric in v]
        den = fsum(d for _, d in flat)
        out[metric] = fsum(n for n, _ in flat) / den if den else None
        clusters = [(fsum(v[metric][0] for v in vs if metric in v), fsum(v[metric][1] for v in vs if metric in v))
                    for vs in values.values()]
        out[f"{metric}_ci95"] = bootstrap_ci(clusters) if out[metric] is not None else None
    return out


def _trials(tasks: dict[str, list[Grade]]) -> dict[str, Any]:
    """Pass@k and Avg@k for k = 1 and k = trials, pass^k at k = trials, each with its interval over tasks."""
    outcomes = [[bool(g.passed) for g in gs if g.scored] for gs in tasks.values()]
    outcomes = [o for o in outcomes if o]
    if not outcomes:
        return {}
    k = min(len(o) for o in outcomes)
    passk: dict[str, float] = {}
    intervals: dict[str, tuple[float, float] | None] = {}
    for j in sorted({1, k}):
        passk.update(over_tasks(outcomes, j))
        for name in (f"pass@{j}", f"avg@{j}"):
            per_task = [over_tasks([o], j)[name] for o in outcomes]
            intervals[name] = bootstrap_ci([(v, 1.0) for v in per_task])
    hat = [pass_hat_k(len(o), sum(o), k) for o in outcomes]
    return {"passk": passk, "passk_ci95": intervals, "k": k, "pass_hat_k": fsum(hat) / len(hat),
            "pass_hat_k_ci95": bootstrap_ci([(v, 1.0) for v in hat])}


def _total(grades: list[Grade], field: str) -> float | None:
    """A usage figure summed over the episodes, or None unless every one of them records it."""
    vals = [(g.usage or {}).get(field) for g in grades]
    return fsum(vals) if vals and all(isinstance(v, (int, float)) for v in vals) else None


def _judge_cost(grades: list[Grade]) -> float | None:
    """What the LLM judge's calls on these episodes cost in all (None: no call, or one's cost unknown)."""
    calls = [g.hybrid.judge for g in grades if g.hybrid is not None and g.hybrid.judge is not None]
    costs = [v.usage.cost_usd if v.usage is not None else None for v in calls]
    return fsum(c for c in costs if c is not None) if costs and None not in costs else None


def _metrics(grades: list[Grade]) -> dict[str, Any]:
    """The fields of one summary row (`Metrics`) over `grades`."""
    tasks = _by_task(grades)
    scored = [g for g in grades if g.scored]
    tokens = {f: _total(grades, f) for f in ("tokens_in", "tokens_out")}
    return dict(
        episodes=len(grades), scored=len(scored), tasks=len(tasks), infra=sum(g.status in UNSCORED for g in grades),
        statuses=dict(Counter(g.status for g in grades)), table_episodes=sum(g.scores is not None for g in scored),
        record_episodes=sum(g.record_scores is not None for g in scored), **_means(tasks), **_trials(tasks),
        failures={c: sum(g.label == c for g in grades) for c in CATEGORIES},
        hidden_start=sum(g.site_found is not None for g in scored), cost_usd=_total(grades, "cost_usd"),
        judge_cost_usd=_judge_cost(grades),
        **{f: int(v) if v is not None else None for f, v in tokens.items()},
    )


def _hybrid(grades: list[Grade]) -> dict[str, HybridSummary]:
    """Per hybrid type: its row, with the episodes that passed."""
    out: dict[str, HybridSummary] = {}
    for kind in HYBRID_TYPES:
        mine = [g for g in grades if g.hybrid_type == kind]
        if mine:
            out[kind] = HybridSummary(**_metrics(mine), passed=sum(bool(g.scored and g.passed) for g in mine))
    return out


def _versions(grades: list[Grade]) -> dict[str, str | None]:
    names = dict.fromkeys(k for g in grades for k in g.versions)
    return {k: ", ".join(sorted({v for g in grades if (v := g.versions.get(k))})) or None for k in names}


def revision_mixes(grades: list[Grade]) -> list[RevisionMix]:
    """The tasks whose episodes among `grades` stand for more than one task revision."""
    out = []
    for task, gs in sorted(_by_task(grades).items()):
        seen = Counter(g.revision for g in gs if g.revision is not None)
        if len(seen) > 1:
            out.append(RevisionMix(task=task, revisions=dict(sorted(seen.items()))))
    return out


def _group(agent: str, variant: str | None, grades: list[Grade], mixes: list[RevisionMix]) -> GroupSummary:
    fam: dict[str, list[Grade]] = defaultdict(list)
    for g in grades:
        fam[g.family or "unknown"].append(g)
    models = {g.model for g in grades if g.model}
    return GroupSummary(
        **_metrics(grades), agent=agent, model=models.pop() if len(models) == 1 else None, variant=variant,
        ungraded=sum(g.grading_error is not None for g in grades),
        incomplete_evidence=sum(bool(g.incomplete_evidence) for g in grades),
        families={f: Metrics(**_metrics(gs)) for f, gs in sorted(fam.items())},
        hybrid=_hybrid(grades), versions=_versions(grades), mixed_revisions=mixes,
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


def _refuse(runs_dir: str, mixes: dict[tuple[str, str | None], list[RevisionMix]]) -> MixedRevisions:
    def count(n: int) -> str:
        return f"{n} episode{'s' * (n != 1)}"

    parts = [f"task {m.task} in the row {row_name(*row)} was graded at {len(m.revisions)} revisions: "
             + ", ".join(f"{r} ({count(n)})" for r, n in m.revisions.items())
             for row, ms in mixes.items() for m in ms]
    return MixedRevisions(runs_dir, None, "; ".join(parts) + ". Summarise one revision per runs directory, or give "
                          "--mix-revisions to put them in one row anyway")


def summarize(grades: list[Grade], runs_dir: str, *, mix_revisions: bool = False) -> Summary:
    """The run summary of a list of episode grades. MixedRevisions when one row would hold two revisions of a task,
    unless `mix_revisions` (the row then lists them in `mixed_revisions`)."""
    groups: dict[tuple[str, str | None], list[Grade]] = defaultdict(list)
    for g in grades:
        groups[(g.agent_label, g.variant)].append(g)  # two models under one agent name are two rows
    order = sorted(groups, key=lambda k: (k[0] != "reference", k[0], k[1] != "constraint", k[1] or ""))
    mixes = {row: found for row in order if (found := revision_mixes(groups[row]))}
    if mixes and not mix_revisions:
        raise _refuse(runs_dir, mixes)
    agreement = _agreement(grades)
    return Summary(
        runs_dir=runs_dir, episodes=len(grades), scored=sum(g.scored for g in grades),
        infra=sum(g.status in UNSCORED for g in grades), infra_rate=_rate(grades),
        ungraded=sum(g.grading_error is not None for g in grades),
        incomplete_evidence=sum(bool(g.incomplete_evidence) for g in grades), problems=_problems(grades),
        intervals=Intervals(level=LEVEL, resamples=RESAMPLES, seed=SEED),
        groups=[_group(a, v, groups[(a, v)], mixes.get((a, v), [])) for a, v in order],
        label_agreement=agreement[0] if agreement else None, label_agreement_detail=agreement[1] if agreement else None,
    )


def summary_json(summary: Summary) -> str:
    """The summary as the `rig grade --json` document."""
    return json.dumps(summary.model_dump(mode="json"), indent=2, ensure_ascii=False)
