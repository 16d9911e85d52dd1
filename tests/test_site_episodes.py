"""The complaints and papers sites end to end: their tasks' episodes recorded once per site through the real runner
against the real sites server (tests/site_episodes.py), graded. The reference solution scores 1.0 and reaches every
gold state; each injected fault is labelled with its own category by the failure labeller (label agreement 1.0);
the frozen replay of the shipped snapshot grades the same and reaches no origin."""

from __future__ import annotations

import pytest
from site_episodes import planned, record_site, site_task_ids

#: The task each answer-level fault runs on: the paginated task for intent rewriting (a result page is dropped),
#: the task declaring its own misreading edit where there is one.
SITES = {
    "complaints": {"intent_rewriting": "complaints-04", "page_misreading": "complaints-03",
                   "answer_composition": "complaints-02"},
    "papers": {"intent_rewriting": "papers-04", "page_misreading": "papers-03", "answer_composition": "papers-01"},
}
CASES = [(site, task, agent) for site, faults in SITES.items() for task, agent in planned(site, faults)]


@pytest.fixture(scope="module")
def recorded(request, sites_url, tmp_path_factory):
    """One site's episodes (indirectly parametrised by site name), recorded once for the module."""
    site = request.param
    return site, record_site(site, SITES[site], tmp_path_factory.mktemp(site), sites_url)


@pytest.mark.slow
@pytest.mark.parametrize(("recorded", "task", "agent"), CASES, ids=[f"{t}-{a}" for _, t, a in CASES],
                         indirect=["recorded"])
def test_episode_is_graded_as_its_agent_should_be(recorded, task, agent):
    g = recorded[1].grade(task, agent)
    if agent == "reference":
        assert (g.scores.item_f1, g.scores.row_f1, g.scores.poa) == (1.0, 1.0, 1.0), g.scores
        assert all(r.reached for r in g.gold_states), [r for r in g.gold_states if not r.reached]
        assert g.label is None and g.state_anchored_rows == 1.0 and all(e.met for e in g.evidence)
        assert g.citations and all(c.verified and c.state_anchored for c in g.citations)
    else:
        kind = agent.removeprefix("perturbed:")
        assert not g.passed and g.label == kind, (g.label, g.rationale)


@pytest.mark.slow
@pytest.mark.parametrize("recorded", sorted(SITES), indirect=True)
def test_label_agreement_and_frozen_replay(recorded):
    site, episodes = recorded
    assert episodes.summary.label_agreement["overall"] == 1.0
    assert sorted(episodes.frozen) == site_task_ids(site)
    for task, frozen in episodes.frozen.items():
        live = episodes.grade(task, "reference")
        assert frozen.scores == live.scores and frozen.passed and frozen.label is None
        assert [r.reached for r in frozen.gold_states] == [r.reached for r in live.gold_states]
    assert episodes.trapped in (None, []), f"a frozen run reached the sites' origin: {episodes.trapped}"
