"""Inferring an observed step's action from the page events folded into it."""

from __future__ import annotations

from typing import Any

from recorders.models import Action
from recorders.redact import REDACTED, Redactor

_USER = ("click", "input", "change", "submit", "keydown")
_NAV = ("hashchange", "pushState", "replaceState", "popstate")
_CONTROL_CLICK = ("checkbox", "radio", "select-one", "select-multiple", "file", "color", "date", "range")


def infer_action(events: list[dict[str, Any]], first: bool, redactor: Redactor) -> Action:
    """The one action that best summarises a burst of events: the last user event that is not a consequence.

    An `input` is dropped when a `change` of the same control follows; a click on a checkbox, radio, select or
    label is dropped when a `change` follows; a `submit` is dropped when another user event came before it.
    Without user events: the last same-document navigation, else the page load (`load` on a tab's first step).
    """
    user = [e for e in events if e.get("type") in _USER]
    kept: list[dict[str, Any]] = []
    for i, e in enumerate(user):
        later = user[i + 1 :]
        t = e["type"]
        if t == "input" and any(x["type"] == "change" and x.get("target") == e.get("target") for x in later):
            continue
        control = e.get("kind") in _CONTROL_CLICK or e.get("tag") in ("label", "option", "select")
        if t == "click" and control and any(x["type"] in ("change", "input") for x in later):
            continue
        if t == "submit" and i > 0:
            continue
        if t == "input" and kept and kept[-1]["type"] == "input" and kept[-1].get("target") == e.get("target"):
            kept.pop()
        kept.append(e)
    if kept:
        return _describe(kept[-1], redactor)
    nav = [e for e in events if e.get("type") in _NAV]
    if nav:
        e = nav[-1]
        return Action(type=e["type"], value=redactor.url(str(e.get("value") or "")), source="observed")
    loads = [e for e in events if e.get("type") == "navigate"]
    value = redactor.url(str(loads[-1].get("value") or "")) if loads else None
    return Action(type="load" if first else "navigate", value=value, source="observed")


def _describe(e: dict[str, Any], redactor: Redactor) -> Action:
    t, target = e["type"], e.get("target")
    if t in ("input", "change"):
        kind = e.get("kind") or ""
        if e.get("tag") == "select":
            return Action(type="select", target=target, value=e.get("value"), source="observed")
        if kind in ("checkbox", "radio"):
            return Action(type="check" if e.get("checked") else "uncheck", target=target, source="observed")
        value = REDACTED if e.get("password") or redactor.secret_param(str(e.get("key") or "")) else e.get("value")
        if isinstance(value, str):
            value = redactor.text(value)
        return Action(type="fill", target=target, value=value, source="observed")
    if t == "keydown":
        return Action(type="press", target=target, value=e.get("value"), source="observed")
    return Action(type=t, target=target, source="observed")
