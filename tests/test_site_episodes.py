"""The complaints and papers tasks end to end, recorded once per site through the real runner against the real sites
server (tests/site_runs.py): the reference on every task, each perturbation kind on the one task named for it. The
references score 1.0, reach every gold state and cite verified, state-anchored rows; each injected fault is labelled
with its own category; the shipped snapshot answers the state faults' episodes (the states only they reach) and one
reference with nothing listening where the sites were, and they grade as live (the answer-level faults read the
reference's states; the references of every task are replayed frozen by test_replay_frozen.py)."""

from __future__ import annotations

import pytest
from site_runs import (
    SNAPSHOTS,
    STATE_FAULTS,
    assert_labels_agree,
    assert_reference_perfect,
    frozen_trap,
    once_each,
    record_site,
    record_site_in,
    same_grades,
)

from rig.tasks import bundled_tasks

#: Per site, the task each perturbation kind runs on: the pairs `rig demo` runs on its family task (complaints-01,
#: papers-01), intent rewriting on the paginated task (a result page is dropped), the natural faults of docs/tasks.md
#: on the others, page misreading where the task declares its own edit (papers-03).
FAULT_TASKS = {
    "complaints": {"scope_drift": "complaints-04", "criterion_mismatch": "complaints-03",
                   "retrieval_dependency": "complaints-02", "intent_rewriting": "complaints-04",
                   "page_misreading": "complaints-01", "answer_composition": "complaints-02"},
    "papers": {"scope_drift": "papers-03", "criterion_mismatch": "papers-02", "retrieval_dependency": "papers-01",
               "intent_rewriting": "papers-04", "page_misreading": "papers-03", "answer_composition": "papers-01"},
}


def _tasks(site: str) -> list[str]:
    return sorted(t.id for t in bundled_tasks() if t.site == site)


#: Each site's tests on one pytest-xdist worker (`--dist loadgroup`), which records its runs once.
@pytest.fixture(scope="module", params=[pytest.param(s, marks=pytest.mark.xdist_group(f"site-{s}"))
                                        for s in sorted(FAULT_TASKS)])
async def live(request, sites_url, tmp_path_factory, browser):
    """One site's plan recorded once and graded: (site, plan, grades, summary)."""
    site = request.param
    plan = once_each(_tasks(site), FAULT_TASKS[site])
    grades, summary = await record_site_in(browser, tmp_path_factory.mktemp(f"{site}-live"), sites_url=sites_url,
                                           plan=plan)
    return site, plan, grades, summary


def test_reference_episodes_score_1_and_reach_every_gold_state(live):
    site, _, grades, _ = live
    assert_reference_perfect(grades, _tasks(site))
    for task in _tasks(site):
        cited = grades[task, "reference"].citations
        assert cited and all(c.verified and c.state_anchored for c in cited), (task, cited)


def test_every_perturbation_is_labelled_with_its_injected_category(live):
    site, _, grades, summary = live
    assert_labels_agree(grades, _tasks(site), summary)
    assert not any(g.passed for (_, agent), g in grades.items() if agent != "reference")


def test_frozen_replay_reaches_no_origin_and_grades_the_same(live, tmp_path_factory):
    site, plan, grades, _ = live
    plan = {"reference": _tasks(site)[:1], **{f"perturbed:{k}": plan[f"perturbed:{k}"] for k in STATE_FAULTS}}
    with frozen_trap() as trap:
        frozen, _ = record_site(tmp_path_factory.mktemp(f"{site}-frozen"), frozen=SNAPSHOTS / site, plan=plan)
    assert trap is None or trap.requests == [], [r.target for r in trap.requests]
    assert len(frozen) == len(STATE_FAULTS) + 1
    for key, got in frozen.items():
        same_grades(grades[key], got)
