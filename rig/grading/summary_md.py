"""`summary.md`: the run summary as Markdown tables (SGR-Bench Table 2 shape first, then the intervals, retrieval
states, trials and failures, evidence records, hybrid tasks, label agreement and problems)."""

from __future__ import annotations

import re

from rig.formats.summary import Metrics, Summary, agent_infra, infra_warnings, pct, pooled, with_ci
from rig.formats.vocabulary import CATEGORIES

_SHORT = {"scope_drift": "Scope", "criterion_mismatch": "Crit.", "intent_rewriting": "Intent",
          "page_misreading": "Page", "retrieval_dependency": "Dep.", "answer_composition": "Final"}
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|~&])")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # an underscore inside a word is not emphasis


def md_text(text: object) -> str:
    """Text from a file (an agent name, a path, a reason) made inert in a Markdown table cell: one line, with every
    character that could start markup, a link, HTML or a new cell escaped."""
    one_line = " ".join(str(text).split())
    return _MD_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", one_line))


def not_annotated(g: Metrics) -> bool:
    """Whether a row's retrieval-state metrics are null because its scored tasks have no gold states (gold-state
    reach is a number whenever one of them has some)."""
    return g.scored > 0 and g.gold_state_reach is None


def _state_pct(x: float | None, g: Metrics) -> str:
    """A retrieval-state metric: blank when its tasks are not annotated (never 0), a dash when nothing was scored."""
    return "" if not_annotated(g) else pct(x)


def _k(g: Metrics) -> int | None:
    """The k beyond 1 of a row's Pass@k, if its tasks had more than one trial."""
    return g.k if g.k is not None and g.k > 1 else None


def _trial_cells(g: Metrics) -> list[str]:
    """Pass@1, Avg@1, Pass@k, Avg@k and pass^k cells of a row."""
    k = _k(g)
    return [pct(g.passk.get("pass@1")), pct(g.passk.get("avg@1")),
            f"{pct(g.passk[f'pass@{k}'])} (k={k})" if k else "–", pct(g.passk[f"avg@{k}"]) if k else "–",
            f"{pct(g.pass_hat_k)} (k={k})" if k else pct(g.pass_hat_k)]


def _table2(summary: Summary) -> list[str]:
    agents = list(dict.fromkeys(g.agent for g in summary.groups))
    by = {(g.agent, g.variant): g for g in summary.groups}
    infra = agent_infra(summary)
    out = [("| Agent | Constraint Row-F1 | Constraint Item-F1 | Constraint P.O.A. | Goal Row-F1 | Goal Item-F1 "
            "| Goal P.O.A. | Overall Item-F1 | Infra failures |"), "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in agents:
        cells = []
        for v in ("constraint", "goal"):
            g = by.get((a, v))
            cells += [pct(g.row_f1), pct(g.item_f1), pct(g.poa)] if g else ["–"] * 3
        overall = pooled([g for g in summary.groups if g.agent == a], "item_f1")
        n_infra, n = infra[a]
        flag = f"{pct(n_infra / n)} ⚠" if n_infra else pct(0.0)
        out.append(f"| {md_text(a)} | " + " | ".join(cells) + f" | {pct(overall)} | {flag} |")
    return out


def _intervals(summary: Summary) -> list[str]:
    """Each group's headline means with their 95 % intervals over tasks."""
    if not summary.groups or summary.intervals is None:
        return []
    records = any(g.record_episodes for g in summary.groups)
    iv = summary.intervals
    head = ["Item-F1", "Row-F1", "P.O.A."] + (["Record soft F1", "Record hard F1"] if records else []) + [
        "Gold-state reach", "State-anchored rows", "Pass@1", "Pass^k"]
    out = ["", f"## 95 % intervals (percentile bootstrap over tasks: {iv.resamples} resamples, seed {iv.seed})", "",
           "| Agent | Variant | Tasks | " + " | ".join(head) + " |", "|---|---|---:|" + "---:|" * len(head)]
    for g in summary.groups:
        cells = [with_ci(g.item_f1, g.item_f1_ci95), with_ci(g.row_f1, g.row_f1_ci95), with_ci(g.poa, g.poa_ci95)]
        if records:
            cells += [with_ci(g.record_soft_f1, g.record_soft_f1_ci95), with_ci(g.record_hard_f1, g.record_hard_f1_ci95)]
        states = [with_ci(g.gold_state_reach, g.gold_state_reach_ci95),
                  with_ci(g.state_anchored_rows, g.state_anchored_rows_ci95)]
        cells += [""] * 2 if not_annotated(g) else states
        cells += [with_ci(g.passk.get("pass@1"), g.passk_ci95.get("pass@1")), with_ci(g.pass_hat_k, g.pass_hat_k_ci95)
                  + (f" (k={g.k})" if _k(g) else "")]
        out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.tasks} | " + " | ".join(cells) + " |")
    out += ["", "Tasks are resampled with replacement, each with all its trials; `[n/a]`: fewer than two tasks hold the "
                "metric, so there is no spread over tasks to resample."]
    return out


def _states(summary: Summary) -> list[str]:
    out = ["", "## Retrieval states, repeated trials and failure categories", "",
           "| Agent | Variant | Episodes | Scored | Infra | Gold-state reach | Answer-state reach | State-anchored rows "
           "| Pass@1 | Avg@1 | Pass@k | Avg@k | Pass^k | " + " | ".join(_SHORT[c] for c in CATEGORIES) + " |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(CATEGORIES)]
    for g in summary.groups:
        out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.episodes} | {g.scored} | {g.infra} "
                   f"| {_state_pct(g.gold_state_reach, g)} | {_state_pct(g.answer_state_reach, g)} "
                   f"| {_state_pct(g.state_anchored_rows, g)} | " + " | ".join(_trial_cells(g)) + " | "
                   + " | ".join(str(g.failures.get(c, 0)) for c in CATEGORIES) + " |")
    if any(not_annotated(g) for g in summary.groups):
        out += ["", ("Blank retrieval-state cells: those tasks have no gold states (not annotated), so nothing is "
                     "measured there; it is not a zero.")]
    return out


def _usd(x: float | None) -> str:
    return "–" if x is None else f"${x:.4g}"


def _cost(summary: Summary) -> list[str]:
    """Cost and tokens per row, from episode.json's `usage` (a dash: unknown, never 0); the judge's apart."""
    if not any(g.cost_usd is not None or g.tokens_in is not None for g in summary.groups):
        return []
    out = ["", "## Cost (from each episode's usage; a dash: some episode records none)", "",
           "| Agent | Variant | Episodes | Cost | Cost / episode | Tokens in | Tokens out | Judge cost |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for g in summary.groups:
        per = g.cost_usd / g.episodes if g.cost_usd is not None and g.episodes else None
        tokens = ["–" if t is None else str(t) for t in (g.tokens_in, g.tokens_out)]
        out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.episodes} | {_usd(g.cost_usd)} "
                   f"| {_usd(per)} | {tokens[0]} | {tokens[1]} | {_usd(g.judge_cost_usd)} |")
    return out


def _records(summary: Summary) -> list[str]:
    if not any(g.record_episodes for g in summary.groups):
        return []
    out = ["", "## Evidence records (soft and hard precision, recall, F1; means over record tasks)", "",
           "| Agent | Variant | Record episodes | Soft P | Soft R | Soft F1 | Hard P | Hard R | Hard F1 |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for g in summary.groups:
        if g.record_episodes:
            values = [g.record_soft_precision, g.record_soft_recall, g.record_soft_f1, g.record_hard_precision,
                      g.record_hard_recall, g.record_hard_f1]
            out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.record_episodes} | "
                       + " | ".join(pct(v) for v in values) + " |")
    return out


def _hybrid(summary: Summary) -> list[str]:
    """The hybrid-task table (Pass@k, Avg@k and pass^k per type) and the discovery table, when such tasks ran."""
    out: list[str] = []
    if any(g.hybrid for g in summary.groups):
        out += ["", "## Hybrid web+SQL tasks (Pass@k and Avg@k per type)", "",
                "| Agent | Variant | Type | Episodes | Scored | Passed | Pass@1 | Avg@1 | Pass@k | Avg@k | Pass^k |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for g in summary.groups:
            for kind, h in g.hybrid.items():
                out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {kind} | {h.episodes} | {h.scored} "
                           f"| {h.passed} | " + " | ".join(_trial_cells(h)) + " |")
    if any(g.hidden_start for g in summary.groups):
        out += ["", "## Hidden start: was the site found?", "",
                "| Agent | Variant | Hidden-start episodes | Site found | Mean first step on the site |",
                "|---|---|---:|---:|---:|"]
        for g in summary.groups:
            if g.hidden_start:
                step = "–" if g.site_found_step is None else f"{g.site_found_step:.1f}"
                out.append(f"| {md_text(g.agent)} | {md_text(g.variant or '–')} | {g.hidden_start} "
                           f"| {pct(g.site_found)} | {step} |")
    return out


def _agreement(summary: Summary) -> list[str]:
    if not (summary.label_agreement and summary.label_agreement_detail):
        return []
    out = ["", f"## Label agreement with injected faults: {pct(summary.label_agreement['overall'])} %", "",
           "| Injected | Episodes | Agree | Agreement | Automatic labels |", "|---|---:|---:|---:|---|"]
    for kind, d in summary.label_agreement_detail.items():
        labels = ", ".join(f"{md_text(k)}: {n}" for k, n in sorted(d.labels.items()))
        out.append(f"| {md_text(kind)} | {d.episodes} | {d.agree} | {pct(d.agree / d.episodes)} | {labels} |")
    return out


def _problems(summary: Summary) -> list[str]:
    if not summary.problems:
        return []
    out = ["", f"## Episodes whose numbers are missing or incomplete ({len(summary.problems)})", "",
           "| Episode | Agent | Problem | Reason |", "|---|---|---|---|"]
    out += [f"| {md_text(p.episode)} | {md_text(p.agent or '–')} | {p.kind} | {md_text(p.reason)} |"
            for p in summary.problems]
    return out


def _warnings(summary: Summary) -> list[str]:
    out = [f"**Warning:** {md_text(w)}  " for w in infra_warnings(summary)]
    out += [f"**Warning:** {md_text(g.name)} mixes revisions of task {md_text(m.task)}: "
            + ", ".join(f"{md_text(r)} ({n})" for r, n in m.revisions.items()) + "  "
            for g in summary.groups for m in g.mixed_revisions]
    if unreachable := sum(g.statuses.get("site_unreachable", 0) for g in summary.groups):
        out.append(f"{unreachable} episode(s) scored as failures of their task: the live site did not load within the "
                   "budget (site_unreachable, the site's failure, not infrastructure).  ")
    return out + ([""] if out else [])


def markdown(summary: Summary) -> str:
    """summary.md: a Table 2-shaped results table, the intervals, then retrieval-state metrics, trials, failure
    counts, records, hybrid tasks, label agreement and problems."""
    head = f"# Results ({summary.episodes} episodes, {summary.scored} scored, {summary.infra} not scored: infrastructure"
    head += f", {summary.ungraded} could not be graded)" if summary.ungraded else ")"
    out = [head, "", *_warnings(summary), *_table2(summary), *_intervals(summary), *_states(summary), *_cost(summary),
           *_records(summary), *_hybrid(summary), *_agreement(summary), *_problems(summary)]
    return "\n".join(out) + "\n"
