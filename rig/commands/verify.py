"""`rig verify EPISODE_DIR --answer ANSWER`: every citation of an answer against the episode's snapshots
(`rig.grading.citations.verify_episode`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from rig.commands.console import table
from rig.commands.options import AsJson
from rig.grading.citations import verify_episode


def verify(
    episode_dir: Path = typer.Argument(..., help="an episode directory"),
    answer: Path = typer.Option(..., "--answer", help="answer.json (or any table format `rig score` reads)"),
    as_json: AsJson = False,
) -> None:
    """Check every citation of an answer against the episode's own snapshots (and the task's gold states)."""
    result = verify_episode(episode_dir, answer)
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    table(f"citations of {answer}", ("#", "url", "verified", "step", "state-anchored", "reason"),
          [(c["index"], c["url"], "yes" if c["verified"] else "no", c["step"], c.get("state_anchored", ""), c["reason"])
           for c in result["citations"]])
