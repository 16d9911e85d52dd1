"""`rig score --gold FILE --pred FILE --key COLUMN`: one answer table against a gold table (`rig.grading.score`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from rig.commands.console import say
from rig.commands.options import AsJson
from rig.errors import InputError
from rig.grading.score import load_rules, score_files


def score_tables(gold: Path, pred: Path, key: list[str], rules: Path | None = None) -> dict[str, Any]:
    """The `rig score --json` document."""
    try:
        return score_files(gold, pred, key, load_rules(rules) if rules else None)
    except RecursionError:
        raise InputError("--gold/--pred/--rules", None, "a file is nested too deeply to be a table or a rule set") from None


def score(
    gold: Path = typer.Option(..., "--gold", help="gold table: Markdown/pipe, TSV, CSV or answer.json"),
    pred: Path = typer.Option(..., "--pred", help="predicted table, same formats"),
    key: list[str] = typer.Option(..., "--key", help="row-key column (repeatable)"),
    rules: Optional[Path] = typer.Option(None, "--rules", help="canonicalisation rules (JSON)"),
    as_json: AsJson = False,
) -> None:
    """Score one answer table against a gold table: Item-F1, Row-F1, pairwise order accuracy."""
    result = score_tables(gold, pred, key, rules)
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
    elif result["status"] != "ok":
        say(f"parse_failure: {result.get('error', '')}")
    else:
        say(f"Item-F1 {result['item_f1']:.3f}  Row-F1 {result['row_f1']:.3f}  P.O.A. {result['poa']:.3f}")
