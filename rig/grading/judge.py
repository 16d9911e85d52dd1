"""An optional LLM judge for free-text hybrid answers (`sql_to_search`, `parallel`), in the style of BrowseComp's
grader: it reads the question, the gold answer and the agent's answer and says whether they agree.

A `Judge` is anything with `judge(question, gold, answer) -> JudgeVerdict`; `LLMJudge` wraps a text-completion
function (prompt -> reply, or a `Completion` that also says what the call used), so the grader never imports a model
library: the command layer builds that function from the same `provider:model` settings as the browser-use agent,
and tests pass a scripted one. The call's usage goes into the verdict (`JudgeVerdict.usage`), apart from the agent's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from rig.errors import InfraError
from rig.formats.grade import JudgeVerdict
from rig.formats.usage import Usage

PROMPT = """Judge whether the following response to a question is correct, based only on the precise and unambiguous
correct answer below.

[question]: {question}

[response]: {answer}

[correct_answer]: {gold}

Reply in exactly this format:
extracted_final_answer: the final answer taken from the response ("None" if there is none)
reasoning: why the extracted answer does or does not match the correct answer, ignoring formatting, order and case,
and allowing only small numeric rounding differences; any missing, extra or different item makes it incorrect
correct: yes or no
"""

_FIELD = re.compile(r"^\s*(extracted_final_answer|reasoning|correct)\s*:\s*(.*)$", re.IGNORECASE)


class Judge(Protocol):
    """Decides whether a free-text answer agrees with the gold answer."""

    def judge(self, question: str, gold: str, answer: str) -> JudgeVerdict:
        """The verdict on `answer` to `question` given the `gold` answer."""
        ...


def parse_reply(reply: str, model: str) -> JudgeVerdict:
    """A judge's reply in PROMPT's format as a verdict; InfraError when it gives no `correct: yes|no` line."""
    fields: dict[str, list[str]] = {}
    current = None
    for line in reply.splitlines():
        m = _FIELD.match(line)
        if m:
            current = m.group(1).lower()
            fields[current] = [m.group(2).strip()]
        elif current is not None:
            fields[current].append(line.strip())
    verdict = " ".join(fields.get("correct", [])).strip().lower()
    if not verdict.startswith(("yes", "no")):
        raise InfraError(f"the judge ({model}) gave no `correct: yes|no` line; its reply began {reply[:120]!r}")
    return JudgeVerdict(model=model, correct=verdict.startswith("yes"),
                        extracted_answer=" ".join(fields.get("extracted_final_answer", [])).strip(),
                        rationale=" ".join(fields.get("reasoning", [])).strip())


class Completion(Protocol):
    """A completion function's reply and what its call used (tokens, cost; None: not reported), e.g.
    `rig.agents.completion.Completion`."""

    text: str
    usage: Usage | None


class LLMJudge:
    """A judge backed by a completion function (prompt -> reply text, or a `Completion`)."""

    def __init__(self, complete: Callable[[str], str | Completion], model: str) -> None:
        self.complete, self.model = complete, model

    def judge(self, question: str, gold: str, answer: str) -> JudgeVerdict:
        """Ask the model with PROMPT and parse its reply; the verdict keeps the call's usage."""
        reply = self.complete(PROMPT.format(question=question, gold=gold, answer=answer or "(no answer)"))
        if not isinstance(reply, str):
            verdict = parse_reply(reply.text, self.model)
            verdict.usage = reply.usage
            return verdict
        return parse_reply(reply, self.model)
