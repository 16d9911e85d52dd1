"""A browser-use chat model as a plain text completion, `prompt -> Completion` (the reply and what the call used; the
LLM judge of `rig grade --judge` asks one through it: the browser-use agent's providers and API-key variables,
docs/runner.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rig.agents.browser_use_agent import make_llm
from rig.errors import InfraError
from rig.formats.usage import Usage


@dataclass(frozen=True)
class Completion:
    """A reply and what its call used (tokens, cost; None: the model reported none)."""

    text: str
    usage: Usage | None = None


def text_completion(model: str) -> Callable[[str], Completion]:
    """A completion function on `provider:model` (e.g. `openai:gpt-4.1-mini`, `ollama:qwen3:30b`); InputError for a
    bad or unconfigured model, now; InfraError for a provider failing a call. Each reply keeps its call's tokens and
    cost (priced by the price table, rig.pricing)."""
    llm = make_llm(model)

    def complete(prompt: str) -> Completion:
        from browser_use.llm.messages import UserMessage

        try:
            reply = asyncio.run(llm.ainvoke([UserMessage(content=prompt)]))
        except Exception as exc:  # any provider failure is the rig's, never the agent's zero
            raise InfraError(f"{model} failed: {type(exc).__name__}: {exc}") from exc
        return Completion(str(reply.completion), call_usage(reply.usage, model))

    return complete


def call_usage(usage: Any, model: str) -> Usage | None:
    """One call's `Usage` from browser-use's `ChatInvokeUsage` (None when the model reported none)."""
    from rig.agents.usage import Spend, UsageMeter
    from rig.pricing import load_prices

    if usage is None:
        return None
    meter = UsageMeter()
    meter.llm_call(Spend(model, usage.prompt_tokens, usage.completion_tokens, usage.prompt_cached_tokens), "judge")
    return meter.usage(load_prices(), steps=None, wall_s=None)
