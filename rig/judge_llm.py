"""The LLM judge of `rig grade --judge provider:model`: a browser-use chat model (the browser-use agent's providers and
API-key variables, docs/runner.md) asked once per free-text hybrid episode (rig.grading.judge)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from typing import Any

from rig.errors import InfraError, InputError
from rig.formats.usage import Usage
from rig.grading.judge import Completion, Judge, LLMJudge


def make_judge(model: str) -> Judge:
    """An LLM judge on `provider:model` (e.g. `openai:gpt-4.1-mini`, `ollama:qwen3:30b`); InputError for a bad or
    unconfigured model. Each verdict keeps its call's tokens and cost (priced by the price table, rig.pricing)."""
    from rig.agents.browser_use_agent import make_llm

    return LLMJudge(completion_function(make_llm(model), model), model)


def completion_function(llm: Any, model: str) -> Callable[[str], Completion]:
    """Ask a browser-use chat model `llm` (the rig's `model`) one prompt: its reply and the call's usage."""

    def complete(prompt: str) -> Completion:
        from browser_use.llm.messages import UserMessage

        try:
            reply = asyncio.run(llm.ainvoke([UserMessage(content=prompt)]))
        except Exception as exc:  # any provider failure is the rig's, never the agent's zero
            raise InfraError(f"the judge {model} failed: {type(exc).__name__}: {exc}") from exc
        return Completion(str(reply.completion), judge_usage(reply.usage, model))

    return complete


def judge_usage(usage: Any, model: str) -> Usage | None:
    """A judge call's `Usage` from browser-use's `ChatInvokeUsage` (None when the model reported none)."""
    from rig.agents.usage import Spend, UsageMeter
    from rig.pricing import load_prices

    if usage is None:
        return None
    meter = UsageMeter()
    meter.llm_call(Spend(model, usage.prompt_tokens, usage.completion_tokens, usage.prompt_cached_tokens), "judge")
    return meter.usage(load_prices(), steps=None, wall_s=None)


def judge_factory(model: str) -> Callable[[], Judge]:
    """A picklable function building the judge (once per grading process); checks the model string now."""
    try:
        make_judge(model)  # a bad provider, a missing API key or browser-use not installed fails before any grading
    except InputError as exc:
        raise InputError("--judge", None, exc.reason) from None
    return functools.partial(make_judge, model)
