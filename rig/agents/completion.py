"""A browser-use chat model as a plain text completion, `prompt -> reply` (the LLM judge of `rig grade --judge`
asks one through it: the browser-use agent's providers and API-key variables, docs/runner.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rig.agents.browser_use_agent import make_llm
from rig.errors import InfraError


def text_completion(model: str) -> Callable[[str], str]:
    """A completion function on `provider:model` (e.g. `openai:gpt-4.1-mini`, `ollama:qwen3:30b`); InputError for a
    bad or unconfigured model, now; InfraError for a provider failing a call."""
    llm = make_llm(model)

    def complete(prompt: str) -> str:
        from browser_use.llm.messages import UserMessage

        try:
            reply = asyncio.run(llm.ainvoke([UserMessage(content=prompt)]))
        except Exception as exc:  # any provider failure is the rig's, never the agent's zero
            raise InfraError(f"{model} failed: {type(exc).__name__}: {exc}") from exc
        return str(reply.completion)

    return complete
