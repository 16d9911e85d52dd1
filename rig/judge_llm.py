"""The LLM judge of `rig grade --judge provider:model`: a browser-use chat model (the browser-use agent's providers and
API-key variables, docs/runner.md) asked once per free-text hybrid episode (rig.grading.judge)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from rig.errors import InfraError, InputError
from rig.grading.judge import Judge, LLMJudge


def make_judge(model: str) -> Judge:
    """An LLM judge on `provider:model` (e.g. `openai:gpt-4.1-mini`, `ollama:qwen3:30b`); InputError for a bad or
    unconfigured model."""
    from rig.agents.browser_use_agent import make_llm

    llm = make_llm(model)

    def complete(prompt: str) -> str:
        from browser_use.llm.messages import UserMessage

        try:
            reply = asyncio.run(llm.ainvoke([UserMessage(content=prompt)]))
        except Exception as exc:  # any provider failure is the rig's, never the agent's zero
            raise InfraError(f"the judge {model} failed: {type(exc).__name__}: {exc}") from exc
        return str(reply.completion)

    return LLMJudge(complete, model)


def judge_factory(model: str) -> Callable[[], Judge]:
    """A picklable function building the judge (once per grading process); checks the model string now."""
    try:
        make_judge(model)  # a bad provider, a missing API key or browser-use not installed fails before any grading
    except InputError as exc:
        raise InputError("--judge", None, exc.reason) from None
    return functools.partial(make_judge, model)
