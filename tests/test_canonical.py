"""Canonicalisation rules (docs/tasks.md)."""

import pytest

from rig.formats.canonical import Canonicalizer, RuleError, apply_rule


@pytest.mark.parametrize(
    "rule,value,expected",
    [
        ("nfkc", "ﬁ２", "fi2"),
        ("trim", "  a b ", "a b"),
        ("collapse_ws", "a \t\n b", "a b"),
        ("casefold", "Straße", "strasse"),
        ("strip_punct", "U.S.A.!", "USA"),
        ("strip_markdown", "**Boiga** [link](http://x) `c`", "Boiga link c"),
        ("number", "1,234.50", "1234.5"),
        ("number", "12.0", "12"),
        ("number", "n/a", "n/a"),
        ({"number": {"decimals": 1}}, "3.14159", "3.1"),
        ("date", "March 3, 2013", "2013-03-03"),
        ("date", "2013/03/03", "2013-03-03"),
        ("date", "Mar 2013", "2013-03"),
        ("date", "not a date", "not a date"),
        ({"regex_sub": {"pattern": r"v\d+$", "repl": ""}}, "2101.00001v3", "2101.00001"),
        ({"aliases": {"usa": "united states"}}, "usa", "united states"),
    ],
)
def test_rule(rule, value, expected):
    assert apply_rule(rule, value) == expected


def test_rules_apply_per_column_after_default():
    c = Canonicalizer({"columns": {"Country": ["casefold", {"aliases": {"usa": "united states"}}]}})
    assert c.rows(["Country", "N"], [["  USA ", " 3 "]]) == [["united states", "3"]]


def test_rules_never_fill_missing_cells():
    c = Canonicalizer({})
    assert c.rows(["A", "B"], [["x"]]) == [["x"]]
    assert c.cell("A", None) == ""


@pytest.mark.parametrize("rules", [{"default": ["shout"]}, {"columns": {"A": [{"a": 1, "b": 2}]}}, {"colums": {}}])
def test_malformed_rules_fail_early(rules):
    with pytest.raises(RuleError):
        Canonicalizer(rules)
