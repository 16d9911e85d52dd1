"""Canonicalisation rules for answer cells (docs/tasks.md): rules never fill or merge values."""

from __future__ import annotations

import difflib
import re
import string
import unicodedata
from datetime import datetime
from typing import Any, Callable

DEFAULT_RULES: list[Any] = ["nfkc", "trim", "collapse_ws"]
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%m/%d/%Y", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y",
                 "%Y-%m", "%B %Y", "%b %Y", "%Y%m%d")
_YEAR = re.compile(r"\d\d\d\d")
_WS = re.compile(r"\s+")
_MD = re.compile(r"(\*\*|__|\*|_|`|~~)(.+?)\1")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _number(value: str, decimals: int | None = None) -> str:
    text = value.replace(",", "").replace("\u2212", "-").strip().rstrip("%")
    try:
        num = float(text)
    except ValueError:
        return value
    if decimals is not None:
        num = round(num, decimals)
    return str(int(num)) if num == int(num) else repr(num)


def _date(value: str) -> str:
    text = value.strip()
    if not _YEAR.search(text):  # every format holds a four-digit year (%Y): without one, no date and no strptime
        return value
    for fmt in _DATE_FORMATS:
        try:
            d = datetime.strptime(text, fmt)
        except ValueError:
            continue
        return d.strftime("%Y-%m" if fmt in ("%Y-%m", "%B %Y", "%b %Y") else "%Y-%m-%d")
    return value


_SIMPLE: dict[str, Callable[[str], str]] = {
    "nfkc": lambda v: unicodedata.normalize("NFKC", v),
    "trim": str.strip,
    "collapse_ws": lambda v: _WS.sub(" ", v),
    "casefold": str.casefold,
    "strip_punct": lambda v: v.translate(str.maketrans("", "", string.punctuation)),
    "strip_markdown": lambda v: _MD.sub(r"\2", _MD_LINK.sub(r"\1", v)),
    "number": _number,
    "date": _date,
}


class RuleError(ValueError):
    """A canonicalisation rule is malformed."""


def apply_rule(rule: Any, value: str) -> str:
    """Apply one rule (a name, or a one-key mapping with arguments) to one value."""
    if isinstance(rule, str):
        if rule not in _SIMPLE:
            raise RuleError(f"unknown rule {rule!r}; known: {', '.join(sorted(_SIMPLE))}, regex_sub, aliases")
        return _SIMPLE[rule](value)
    if not isinstance(rule, dict) or len(rule) != 1:
        raise RuleError(f"a rule is a name or a one-key mapping, got {rule!r}")
    name, arg = next(iter(rule.items()))
    if name == "regex_sub":
        return re.sub(arg["pattern"], arg.get("repl", ""), value)
    if name == "aliases":
        return arg.get(value, arg.get(value.casefold(), value))
    if name == "number":
        return _number(value, (arg or {}).get("decimals"))
    if name in _SIMPLE:
        return _SIMPLE[name](value)
    raise RuleError(f"unknown rule {name!r}")


_WITH_ARGS = ("regex_sub", "aliases", "number")


def _suggest(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_rule(rule: Any) -> None:
    """RuleError saying what is wrong with one rule (its name or its arguments)."""
    known = sorted(_SIMPLE) + ["regex_sub", "aliases"]
    if isinstance(rule, str):
        if rule not in _SIMPLE:
            raise RuleError(f"unknown rule {rule!r}{_suggest(rule, known)}; known: {', '.join(known)}")
        return
    if not isinstance(rule, dict) or len(rule) != 1:
        raise RuleError(f"a rule is a name or a one-key mapping of a name to its arguments, got {rule!r}")
    name, arg = next(iter(rule.items()))
    if name not in _WITH_ARGS and name not in _SIMPLE:
        raise RuleError(f"unknown rule {name!r}{_suggest(str(name), known)}; known: {', '.join(known)}")
    if name == "regex_sub":
        if not isinstance(arg, dict) or not isinstance(arg.get("pattern"), str) or set(arg) - {"pattern", "repl"} \
                or not isinstance(arg.get("repl", ""), str):
            raise RuleError(f"regex_sub takes {{pattern: text, repl: text}}, got {arg!r}")
        try:
            re.compile(arg["pattern"])
        except re.error as e:
            raise RuleError(f"regex_sub pattern {arg['pattern']!r}: {e}") from None
    elif name == "aliases":
        if not isinstance(arg, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in arg.items()):
            raise RuleError(f"aliases takes a mapping of text to text, got {arg!r}")
    elif name == "number":
        if arg is not None and (not isinstance(arg, dict) or set(arg) - {"decimals"}
                                or not isinstance(arg.get("decimals", 0), int)):
            raise RuleError(f"number takes {{decimals: N}} or nothing, got {arg!r}")


def check_rules(rules: Any, where: str) -> None:
    """RuleError("<where>[i]: <reason>") for a list of rules with a malformed or unknown one."""
    if not isinstance(rules, list):
        raise RuleError(f"{where}: a list of rules, got {type(rules).__name__}")
    for i, rule in enumerate(rules):
        try:
            _check_rule(rule)
        except RuleError as e:
            raise RuleError(f"{where}[{i}]: {e}") from None


def known_rules(rules: list[Any]) -> list[Any]:
    """`rules` unchanged when each is known and well formed; a pydantic field validator's ValueError otherwise."""
    try:
        check_rules(rules, "")
    except RuleError as e:
        raise ValueError(str(e).removeprefix(": ")) from None
    return rules


def check_rule_set(rules: Any, columns: list[str] | None = None) -> None:
    """RuleError("<where>: <reason>") unless `rules` is {"default": [...], "columns": {name: [...]}} of known,
    well-formed rules (and, given `columns`, every per-column rule names one of them)."""
    if not isinstance(rules, dict):
        raise RuleError(f"a rule set is a mapping with `default` and `columns`, got {type(rules).__name__}")
    for key in rules:
        if key not in ("default", "columns"):
            raise RuleError(f"{key}: unknown key{_suggest(str(key), ['default', 'columns'])}; a rule set has "
                            "`default` and `columns`")
    check_rules(rules.get("default", []), "default")
    per_column = rules.get("columns", {})
    if not isinstance(per_column, dict):
        raise RuleError(f"columns: a mapping of column names to rules, got {type(per_column).__name__}")
    for name, column_rules in per_column.items():
        if columns is not None and name not in columns:
            raise RuleError(f"columns.{name}: not an answer column{_suggest(str(name), columns)}; the columns are "
                            f"{columns}")
        check_rules(column_rules, f"columns.{name}")


class Canonicalizer:
    """Applies a rule set ({"default": [...], "columns": {name: [...]}}) to cells by column."""

    def __init__(self, rules: dict[str, Any] | None = None) -> None:
        rules = rules or {}
        unknown = set(rules) - {"default", "columns"}
        if unknown:
            raise RuleError(f"unknown rule-set keys {sorted(unknown)}; expected 'default' and 'columns'")
        self.default = list(rules.get("default", DEFAULT_RULES))
        self.columns: dict[str, list[Any]] = dict(rules.get("columns", {}))
        for rule in self.default + [r for rs in self.columns.values() for r in rs]:
            apply_rule(rule, "")  # fail early on a malformed rule

    def cell(self, column: str, value: Any) -> str:
        """The canonical form of one cell."""
        text = "" if value is None else str(value)
        for rule in self.default + self.columns.get(column, []):
            text = apply_rule(rule, text)
        return text

    def rows(self, columns: list[str], rows: list[list[Any]]) -> list[list[str]]:
        """Canonicalise every cell of a table (missing cells stay missing)."""
        return [[self.cell(c, v) for c, v in zip(columns, row)] for row in rows]
