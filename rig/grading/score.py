"""`rig score`: one answer file against a gold file (docs/grading.md, `rig score --json`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rig.errors import InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, parse_table
from rig.formats.canonical import Canonicalizer, RuleError
from rig.grading.tables import score_table


def load_rules(path: str | Path) -> dict[str, Any]:
    """Read and check a canonicalisation rule set (JSON file); InputError names the file and the problem."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(str(path), None, f"cannot read the rules file: {e.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(str(path), None, "the rules file is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise InputError(str(path), None, f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(data, dict):
        raise InputError(str(path), None, f"a rule set is a JSON object with 'default' and 'columns', got {type(data).__name__}")
    try:
        Canonicalizer(data)
    except (RuleError, AttributeError, TypeError, KeyError, ValueError, re.error) as e:
        raise InputError(str(path), None, f"bad rule set: {e}") from None
    return data


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputError(str(path), None, f"cannot read the file: {e.strerror}") from None


def _parse(path: str | Path) -> Answer:
    """The answer table in a file; ParseFailure when it holds none (or is not UTF-8 text)."""
    data = _read(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseFailure(str(path), f"not UTF-8 text (byte {e.start})") from None
    return parse_table(text, str(path))


def score_files(gold_path: str | Path, pred_path: str | Path, key: list[str],
                rules: dict[str, Any] | str | Path | None = None) -> dict[str, Any]:
    """Score a predicted answer file against a gold file: the `rig score --json` document.

    A prediction that cannot be parsed gives status `parse_failure` (null metrics and an `error`);
    an unreadable or unparsable gold file, a bad key or bad rules raise InputError.
    """
    if isinstance(rules, (str, Path)):
        rules = load_rules(rules)
    try:
        gold = _parse(gold_path)
    except ParseFailure as e:
        raise InputError(str(gold_path), None, e.reason) from None
    try:
        pred = _parse(pred_path)
    except ParseFailure as e:
        return {"status": "parse_failure", "item_f1": None, "row_f1": None, "poa": None, "error": str(e)}
    try:
        result = score_table(gold, pred, key, rules)
    except InputError as e:
        raise InputError(str(gold_path), e.field, e.reason) from None
    return {"status": "ok", "item_f1": result.item_f1, "row_f1": result.row_f1, "poa": result.poa}
