"""Automatic failure labels: one synthetic episode per SGR-Bench category and per precedence rule."""

from __future__ import annotations

from test_grading_states import (
    CARRIER_DIMS,
    CARRIERS,
    GOLD,
    ROUTE_DIMS,
    ROUTES_B6,
    ROUTES_EV,
    ROUTES_EV_ALL,
    ROUTES_EV_LGA,
    answer,
    reference_steps,
    step,
    synthetic_task,
    write_episode,
)

from rig.grading.grade import grade_episode


def grade(tmp_path, steps, rows, task=None, columns=None, **kw):
    body = answer(rows)
    if columns:
        body["columns"] = columns
    d = write_episode(tmp_path / "ep", steps, body, **kw)
    return grade_episode(d, task or synthetic_task())


def routes(change, text, action="extract_table"):
    return step({**ROUTE_DIMS, **change}, text, action)


def test_perfect_answer_has_no_label(tmp_path):
    g = grade(tmp_path, reference_steps(), GOLD)
    assert g.passed and g.label is None and g.rationale is None
    assert all(r.reached for r in g.gold_states) and g.state_anchored_rows == 1.0


def test_scope_drift(tmp_path):
    g = grade(tmp_path, reference_steps()[:3] + [routes({"dim.origin": "LGA"}, ROUTES_EV_LGA)], [["BOS", "12"], ["DCA", "9"]])
    assert g.label == "scope_drift" and g.label_step == 3
    assert g.rationale.startswith("step 3: rows 0-1 read where dim.origin=LGA violates gold state `carrier_routes` (scope")


def test_criterion_mismatch(tmp_path):
    g = grade(tmp_path, reference_steps()[:3] + [routes({"dim.min_flights": "1"}, ROUTES_EV_ALL)], GOLD + [["XNA", "2"]])
    assert g.label == "criterion_mismatch" and "dim.min_flights=1" in g.rationale and "(criterion" in g.rationale
    assert g.state_anchored_rows == 0.0


def test_retrieval_dependency_inferred_from_the_ranking(tmp_path):
    g = grade(tmp_path, reference_steps()[:3] + [routes({"dim.carrier": "B6"}, ROUTES_B6)], [["MIA", "40"], ["BOS", "5"]])
    assert g.label == "retrieval_dependency" and "dim.carrier=B6" in g.rationale and "scope, dependent" in g.rationale


def test_retrieval_dependency_declared(tmp_path):
    dep = reference_steps()[:3] + [routes({"dim.carrier": "B6"}, ROUTES_B6)]
    assert grade(tmp_path / "a", dep, [["MIA", "40"]], task=synthetic_task(dependent=True)).label == "retrieval_dependency"
    # the dependent dimension set to a value that was never among the candidates: a drift, not a wrong reading
    drift = reference_steps()[:3] + [routes({"dim.carrier": "ZZ"}, ROUTES_B6)]
    g = grade(tmp_path / "b", drift, [["MIA", "40"]], task=synthetic_task(dependent=True))
    assert g.label == "scope_drift" and "dim.carrier=ZZ" in g.rationale and "(scope, dependent;" in g.rationale


def test_wrong_ranking_rule_upstream_is_criterion_mismatch(tmp_path):
    # the ranking was read in ascending order (a view dimension of the intermediate state), so the carrier
    # it decided is wrong: the earliest cause is the decision rule, not the dependent lookup
    task = synthetic_task()
    data = task.model_dump()
    data["gold_states"][0]["constraints"].append({"key": "dim.sort", "value": "flights:desc", "tag": "view"})
    first = {**CARRIER_DIMS, "dim.sort": "flights:asc"}
    steps = [step({}, "Welcome", "goto"), step(first, CARRIERS), step(first, CARRIERS, "extract_table"),
             routes({"dim.carrier": "B6"}, ROUTES_B6)]
    g = grade(tmp_path, steps, [["MIA", "40"]], task=type(task).model_validate(data))
    assert g.label == "criterion_mismatch" and g.label_step == 2
    assert "`top_carrier` was read under the wrong rule: dim.sort=flights:asc" in g.rationale and "dim.carrier=B6" in g.rationale


def test_retrieval_dependency_when_the_lookup_was_skipped(tmp_path):
    # the answer is copied from the intermediate ranking: the dependent state was never reached
    g = grade(tmp_path, reference_steps()[:3], [["EV", "100"], ["B6", "80"]])
    assert g.label == "retrieval_dependency" and "intermediate gold state `top_carrier`" in g.rationale


def test_upstream_state_never_reached_wins(tmp_path):
    task = synthetic_task()
    data = task.model_dump()
    data["gold_states"][0]["constraints"].append({"key": "dim.metric", "value": "flights", "tag": "criterion"})
    first = {**CARRIER_DIMS, "dim.metric": "delay"}
    steps = [step({}, "Welcome", "goto"), step(first, CARRIERS), step(first, CARRIERS, "extract_table"),
             routes({"dim.carrier": "B6"}, ROUTES_B6)]
    g = grade(tmp_path, steps, [["MIA", "40"]], task=type(task).model_validate(data))
    assert g.label == "criterion_mismatch"
    assert "upstream state `top_carrier` never reached" in g.rationale and "dim.metric=delay" in g.rationale


def test_no_answer_state_reached_uses_the_closest_step(tmp_path):
    # the rows are on no page at all; the trajectory never reached the answer state (origin LGA)
    g = grade(tmp_path, reference_steps()[:3] + [routes({"dim.origin": "LGA"}, "nothing here")], [["BOS", "99"]])
    assert g.label == "scope_drift" and "no answer state reached" in g.rationale


def test_intent_rewriting(tmp_path):
    g = grade(tmp_path, reference_steps(), GOLD[:2])
    assert g.label == "intent_rewriting"
    assert g.rationale.startswith("1 of 3 gold rows missing (keys SFO)") and "`carrier_routes` (step 3)" in g.rationale


def test_intent_rewriting_with_an_empty_answer(tmp_path):
    g = grade(tmp_path, reference_steps(), [])
    assert g.label == "intent_rewriting" and "no rows although an answer state was reached at step 3" in g.rationale


def test_view_only_difference_is_not_a_state_cause(tmp_path):
    # the rows were read on the right slice but another page/sort (a view dimension): rows dropped
    g = grade(tmp_path, reference_steps()[:3] + [routes({"dim.group": "dest-page-2"}, ROUTES_EV)], GOLD[:1])
    assert g.label == "intent_rewriting"


def test_page_misreading(tmp_path):
    g = grade(tmp_path, reference_steps(), [["BOS", "20"], ["ORD", "10"], ["SFO", "30"]])
    assert g.label == "page_misreading"
    assert g.rationale.startswith("row 0 (BOS) Flights: answered '20' where `carrier_routes` at step 3 shows '30'")
    assert g.state_anchored_rows == 1.0  # right state, wrong reading


def test_misread_key_is_page_misreading(tmp_path):
    g = grade(tmp_path, reference_steps(), [["BOS", "30"], ["0RD", "20"], ["SFO", "10"]])
    assert g.label == "page_misreading" and "key ['0RD']" in g.rationale


def test_answer_composition_order(tmp_path):
    g = grade(tmp_path, reference_steps(), GOLD[::-1])
    assert g.label == "answer_composition" and "P.O.A. 0.00" in g.rationale
    assert g.scores.item_f1 == 1.0 and g.scores.poa == 0.0


def test_answer_composition_format(tmp_path):
    g = grade(tmp_path, reference_steps(), [["BOS", "30 flights"], ["ORD", "20"], ["SFO", "10"]])
    assert g.label == "answer_composition" and "'30 flights' is the gold '30' in another format" in g.rationale


def test_answer_composition_missing_column(tmp_path):
    g = grade(tmp_path, reference_steps(), [["BOS"], ["ORD"], ["SFO"]], columns=["Dest"])
    assert g.label == "answer_composition" and "columns missing: Flights" in g.rationale


def test_agent_failures_are_scored_zero_but_not_labelled(tmp_path):
    g = grade(tmp_path, reference_steps(), GOLD, status="timeout")
    assert g.scored and g.scores.item_f1 == 0.0 and g.label is None and not g.passed


def test_infra_failures_are_not_scored(tmp_path):
    for status in ("infra_error", "incomplete"):
        g = grade(tmp_path / status, reference_steps(), GOLD, status=status)
        assert not g.scored and g.scores is None and g.label is None


def test_unparsable_answer_file_is_a_parse_failure(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps(), answer(GOLD))
    (d / "answer.json").write_text("{not json")
    g = grade_episode(d, synthetic_task())
    assert g.status == "parse_failure" and g.scored and g.scores.row_f1 == 0.0 and g.label is None


def test_ok_episode_without_an_answer_file_is_an_agent_error(tmp_path):
    d = write_episode(tmp_path / "ep", reference_steps())
    g = grade_episode(d, synthetic_task())
    assert g.status == "agent_error" and g.scored and g.scores.item_f1 == 0.0 and g.label is None
