"""`audit.json`: an auditor's failure category and note for one episode, and agreement with the automatic labels."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from rig.formats.audit import NO_FAILURE


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
