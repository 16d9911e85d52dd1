"""`rig freeze --fuzzy NAME[@[HOST]/PATH]`: a snapshot's fuzzy-match rule, like pywb's fuzzy matching: the named query
parameter (a cache-buster, a timestamp) is ignored when requests are matched to the snapshot's answers, on every
URL or on those under a path (and host). Kept in the manifest's `rules.site_params`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from replay.freeze import FROZEN_RULES
from replay.keys import MatchRules, ParamRule
from rig.errors import InputError

_RULE = re.compile(r"^(?P<name>[^@\s]+)(?:@(?P<host>[A-Za-z0-9.-]+(?::\d{1,5})?)?(?P<path>/\S*))?$")


def fuzzy_rules(values: Iterable[str], base: MatchRules = FROZEN_RULES) -> MatchRules:
    """`base` with one parameter rule per `--fuzzy` value; InputError naming a value that is not NAME[@[HOST]/PATH]."""
    rules = list(base.site_params)
    for value in values:
        m = _RULE.match(value.strip())
        if m is None:
            raise InputError("--fuzzy", None, f"{value!r} is not NAME, NAME@/PATH or NAME@HOST/PATH (e.g. "
                                              "_ts@/api/ or cb@portal.example.org/search)")
        host = m["host"].lower() if m["host"] else None
        rules.append(ParamRule(frozenset({m["name"]}), m["path"] or "/", host))
    return replace(base, site_params=tuple(rules))
