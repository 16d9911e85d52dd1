"""`rig export RUNS_DIR --leaderboard OUT.csv|OUT.json`: the run's summary rows as a leaderboard file
(`rig.formats.leaderboard`, docs/grading.md "Leaderboard"), from summary.json alone."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from rig.episode_dir import RunsDir, write_atomic
from rig.errors import InputError
from rig.formats.leaderboard import Leaderboard, LeaderboardRow
from rig.formats.summary import GroupSummary, Summary


def _row(g: GroupSummary, grader_version: str) -> LeaderboardRow:
    k = g.k if g.k is not None and g.k > 1 else None  # Pass@k and Avg@k beyond k = 1, when the tasks had more trials
    same = ("item_f1", "row_f1", "poa", "record_soft_f1", "record_hard_f1", "gold_state_reach", "answer_state_reach",
            "state_anchored_rows", "pass_hat_k")
    return LeaderboardRow(
        agent=g.agent, model=g.model, variant=g.variant, tasks=g.tasks, episodes=g.episodes, scored=g.scored,
        infra=g.infra, infra_rate=g.infra_rate, k=g.k,
        **{m: getattr(g, m) for m in same}, **{f"{m}_ci95": getattr(g, f"{m}_ci95") for m in same},
        pass_at_1=g.passk.get("pass@1"), pass_at_1_ci95=g.passk_ci95.get("pass@1"),
        pass_at_k=g.passk.get(f"pass@{k}"), pass_at_k_ci95=g.passk_ci95.get(f"pass@{k}"),
        avg_at_k=g.passk.get(f"avg@{k}"), avg_at_k_ci95=g.passk_ci95.get(f"avg@{k}"),
        cost_usd=g.cost_usd, cost_usd_per_episode=g.cost_usd / g.episodes if g.cost_usd is not None and g.episodes
        else None, tokens_in=g.tokens_in, tokens_out=g.tokens_out, grader_version=grader_version,
        **{f"{name}_version": g.versions.get(name) for name in ("rig", "python", "playwright", "chromium", "browser_use")},
    )


def leaderboard(summary: Summary) -> Leaderboard:
    """The leaderboard of a run's summary: one row per summary row, in its order."""
    return Leaderboard(runs_dir=summary.runs_dir, intervals=summary.intervals,
                       rows=[_row(g, summary.grader_version) for g in summary.groups])


def csv_columns() -> list[str]:
    """The CSV's columns: the row's fields, each interval as its `_lo` and `_hi`."""
    out = []
    for name in LeaderboardRow.model_fields:
        out += [f"{name}_lo", f"{name}_hi"] if name.endswith("_ci95") else [name]
    return out


def to_csv(board: Leaderboard) -> str:
    """The leaderboard as CSV (a header row, then one line per row; null: an empty cell)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=csv_columns(), lineterminator="\n")
    writer.writeheader()
    for row in board.rows:
        flat: dict[str, Any] = {}
        for name, value in row.model_dump(mode="json").items():
            if name.endswith("_ci95"):
                flat[f"{name}_lo"], flat[f"{name}_hi"] = value if value is not None else ("", "")
            else:
                flat[name] = "" if value is None else value
        writer.writerow(flat)
    return buf.getvalue()


def write_leaderboard(runs_dir: str | Path, out: str | Path) -> Leaderboard:
    """Write the leaderboard of a graded runs directory to `out` (`.json` or `.csv`); return it."""
    out, runs = Path(out), RunsDir(runs_dir)
    if out.suffix.lower() not in (".json", ".csv"):
        raise InputError(str(out), None, "a leaderboard is written as .json or .csv: name the file so")
    if not runs.summary_file.exists():
        raise InputError(str(runs_dir), None, f"no {runs.summary_file.name}: grade the run first (`rig grade "
                                              f"{runs_dir}`)")
    board = leaderboard(runs.read_summary())
    write_atomic(out, board.model_dump_json(indent=2) + "\n" if out.suffix.lower() == ".json" else to_csv(board))
    return board
