"""`audit.json`: an auditor's failure category and note for one episode, and agreement with the automatic labels."""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rig.errors import InputError
from rig.tasks.models import FailureKind

AUDIT_FILE = "audit.json"
#: The category of an episode without a failure (a passed answer, or an automatic label the auditor rejects).
NO_FAILURE = "none"


class Audit(BaseModel):
    """`audit.json`: the auditor's category overrides the automatic label; `label: null` means no failure."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["sgr-rig/audit/1"] = "sgr-rig/audit/1"
    label: FailureKind | None = Field(description="the auditor's failure category (null: the episode has no failure)")
    note: str = Field(default="", max_length=10_000)
    auditor: str = Field(default="", max_length=200)
    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


def read_audit(episode_dir: Path) -> Audit | None:
    """The episode's audit, or None when it has not been audited; InputError when audit.json is invalid."""
    path = Path(episode_dir) / AUDIT_FILE
    if not path.exists():
        return None
    try:
        return Audit.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as e:
        raise InputError(str(path), None, f"not a valid audit file: {e}") from None


def write_audit(episode_dir: Path, audit: Audit) -> Path:
    """Write audit.json into the episode directory atomically."""
    path = Path(episode_dir) / AUDIT_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(audit.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over (rater A, rater B) pairs; None when undefined (no pairs, or chance
    agreement is 1 because both raters used one and the same category throughout)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(left[c] * right[c] for c in left) / (n * n)
    return None if chance == 1 else (observed - chance) / (1 - chance)


class Agreement(BaseModel):
    """Automatic against manual labels over the audited episodes."""

    audited: int
    agree: int
    kappa: float | None
    confusion: dict[str, dict[str, int]] = Field(description="automatic label -> manual label -> episodes")

    @property
    def observed(self) -> float | None:
        """Share of audited episodes where both labels agree."""
        return self.agree / self.audited if self.audited else None


def agreement(pairs: list[tuple[str | None, str | None]]) -> Agreement:
    """Agreement of (automatic, manual) labels; a null label counts as the category `none` (no failure)."""
    named = [(a or NO_FAILURE, m or NO_FAILURE) for a, m in pairs]
    confusion: dict[str, dict[str, int]] = {}
    for (a, m), k in sorted(Counter(named).items()):
        confusion.setdefault(a, {})[m] = k
    return Agreement(audited=len(named), agree=sum(a == m for a, m in named), kappa=cohen_kappa(named),
                     confusion=confusion)
