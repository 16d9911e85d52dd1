"""The `browser-use` agent: browser-use attached over CDP to a browser the rig launched and records.

browser-use (optional extra `sgr-rig[browser-use]`, pinned 0.13.14) drives Chromium over CDP itself, so
it connects to the endpoint of `rig.browser.launch_for_cdp` and everything it does happens in the
context the rig's recorder observes. It is kept offline: telemetry, cloud sync, version check, cloud
hints, cost lookup and default extensions are switched off through the environment before it is
imported, `.env` files are not read, and its config directory defaults to a temporary one.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rig.agents.usage import Spend, UsageMeter
from rig.errors import AgentError, InfraError, InputError

if TYPE_CHECKING:
    from rig.agents.base import EpisodeEnv
    from rig.formats.answer import Answer

#: The run's history in the episode directory: final text, steps with their targets, replayable decisions.
HISTORY_FILE = "browser_use.json"

#: Forced before browser-use is imported: no telemetry, cloud sync, PyPI version check, hints, pricing fetch.
OFFLINE_ENV = {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_VERSION_CHECK": "false",
    "BROWSER_USE_CLOUD_HINTS": "false",
    "BROWSER_USE_DISABLE_EXTENSIONS": "1",
    "BROWSER_USE_CALCULATE_COST": "false",
}

#: Model providers `make_llm` knows: provider -> (browser-use chat class, API-key variables, one of which is needed).
PROVIDERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai": ("ChatOpenAI", ("OPENAI_API_KEY",)),
    "anthropic": ("ChatAnthropic", ("ANTHROPIC_API_KEY",)),
    "google": ("ChatGoogle", ("GOOGLE_API_KEY", "GEMINI_API_KEY")),
    "groq": ("ChatGroq", ("GROQ_API_KEY",)),
    "deepseek": ("ChatDeepSeek", ("DEEPSEEK_API_KEY",)),
    "mistral": ("ChatMistral", ("MISTRAL_API_KEY",)),
    "openrouter": ("ChatOpenRouter", ("OPENROUTER_API_KEY",)),
    "ollama": ("ChatOllama", ()),
}

NOT_INSTALLED = "browser-use is not installed; pip install 'sgr-rig[browser-use]'"

#: browser-use actions the rig leaves out: `search` goes to a web search engine, which an offline rig cannot reach.
EXCLUDED_ACTIONS = ("search",)


@dataclass
class BrowserUseResult:
    """What a browser-use run produced, as plain data."""

    final_text: str | None
    done: bool
    success: bool | None
    #: One entry per agent step: `{"step", "url", "actions": [{"name", "params", "target"}], "errors"}`.
    steps: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def actions(self) -> list[dict[str, Any]]:
        """Every action of every step, in order."""
        return [a for s in self.steps for a in s["actions"]]

    @property
    def decisions(self) -> list[list[dict[str, Any]]]:
        """The model's steps in the format of the tests' scripted model (`tests/scripted_llm.py`), for replaying them.

        Element indices differ from one page load to the next, so an index whose element had an `id`
        (else a `name`) becomes a `{"match": "id=..."}` matcher; other indices stay numbers.
        """
        return [[_replayable(a) for a in s["actions"]] for s in self.steps if not s.get("initial")]


class BrowserUseAgent:
    """`--agent browser-use`: a browser-use agent on the episode's recorded browser, reached over CDP.

    It starts on the episode's first tab, already at the start URL; the recorder infers its steps
    (`source: observed`). Its final `done` text is parsed as the answer table.
    """

    name, needs_cdp = "browser-use", True

    def __init__(self, model: str | None, llm: Any = None, *, use_vision: bool = True) -> None:
        if llm is None:
            if not model:
                raise InputError("--model", None, "the browser-use agent needs an LLM: pass --model provider:model, "
                                                  "e.g. --model openai:gpt-4.1-mini")
            llm = make_llm(model)
        self.llm = llm
        self.model = model or getattr(llm, "model", None)
        self.use_vision = use_vision

    @property
    def software(self) -> dict[str, str | None]:
        """The versions this agent adds to episode.json's `versions`."""
        try:
            return {"browser_use": version("browser-use")}
        except PackageNotFoundError:
            return {"browser_use": None}

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Run browser-use until it is done; save its history; parse its final text (ParseFailure propagates).
        Its tokens (its own accounting), actions and state messages go to `env.usage`."""
        from rig.formats.answer_text import parse_table

        if not env.cdp_url:
            raise InfraError("the browser-use agent needs a browser reachable over CDP; the runner gave none")
        # browser-use wraps the model's `ainvoke` to count tokens: a copy per episode keeps episodes running at once
        # (and retries) from counting each other's calls
        result = await run_browser_use(env.cdp_url, env.prompt, copy.copy(self.llm), max_steps=env.budget.max_steps,
                                       use_vision=self.use_vision, usage=env.usage, priced_as=self.model)
        save_history(result, env.out_dir / HISTORY_FILE)
        if not result.final_text:
            why = "its done text is empty" if result.done else "it did not finish (step budget or repeated failures)"
            last = f"; last error: {result.errors[-1]}" if result.errors else ""
            raise AgentError(f"browser-use gave no final answer: {why}{last}")
        return parse_table(result.final_text, "browser-use final answer")


def save_history(result: BrowserUseResult, path: Path) -> Path:
    """Write a run's history (final text, steps, replayable decisions) as JSON."""
    data = {"final_text": result.final_text, "done": result.done, "success": result.success, "errors": result.errors,
            "steps": result.steps, "decisions": result.decisions}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def prepare_environment() -> None:
    """Put browser-use's offline settings into the environment; call before importing browser_use."""
    os.environ.update(OFFLINE_ENV)
    os.environ.setdefault("PYTHON_DOTENV_DISABLED", "1")
    os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")
    default_dir = Path(tempfile.gettempdir()) / f"sgr-rig-browser-use-{os.getuid()}"
    os.environ.setdefault("BROWSER_USE_CONFIG_DIR", str(default_dir))


def make_llm(model: str) -> Any:
    """Build a browser-use chat model from `provider:model`, e.g. `openai:gpt-4.1-mini` or `ollama:llama3.1`."""
    provider, sep, name = model.partition(":")
    if not sep or not name or provider not in PROVIDERS:
        raise InputError("--model", None, f"{model!r} is not provider:model with provider one of {sorted(PROVIDERS)}")
    class_name, key_vars = PROVIDERS[provider]
    if key_vars and not any(os.environ.get(v) for v in key_vars):
        raise InputError("--model", None, f"{model} needs the environment variable {' or '.join(key_vars)}; export it first")
    prepare_environment()
    try:
        import browser_use.llm as bu_llm
    except ImportError:
        raise InputError("--model", None, NOT_INSTALLED) from None
    kwargs: dict[str, Any] = {"model": name}
    if provider == "ollama":
        kwargs["host"] = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
    elif provider == "google":
        kwargs["api_key"] = os.environ.get("GOOGLE_API_KEY") or os.environ["GEMINI_API_KEY"]
    else:
        kwargs["api_key"] = os.environ[key_vars[0]]
    return getattr(bu_llm, class_name)(**kwargs)


async def run_browser_use(
    cdp_url: str,
    prompt: str,
    llm: Any,
    *,
    max_steps: int,
    start_url: str | None = None,
    use_vision: bool = True,
    step_timeout_s: int = 120,
    usage: UsageMeter | None = None,
    priced_as: str | None = None,
) -> BrowserUseResult:
    """Run a browser-use agent on the browser at `cdp_url` (opened at `start_url`) and return its result.

    The agent uses the browser's first tab, which stays open afterwards; the rig owns the browser.
    Failing to attach raises `InfraError`; an exception while the agent runs becomes an `AgentError`.
    `usage` gets every LLM call's tokens from browser-use's own accounting (its token cost service, whose calls of
    `llm` are priced as `priced_as`, the rig's `provider:model`), each step's state message and its actions, even
    when the run is cut short.
    """
    prepare_environment()
    try:
        from browser_use import Agent, BrowserProfile, BrowserSession, Tools
        from browser_use.browser.session import DEFAULT_BROWSER_PROFILE
    except ImportError:
        raise InputError("--agent browser-use", None, NOT_INSTALLED) from None
    with contextlib.suppress(OSError):  # the empty downloads dir its default profile made in /tmp on import
        os.rmdir(DEFAULT_BROWSER_PROFILE.downloads_path or "")
    with tempfile.TemporaryDirectory(prefix="rig-browser-use-") as tmp:
        profile = BrowserProfile(
            cdp_url=cdp_url,
            is_local=False,
            keep_alive=True,
            # For a browser it did not launch, `headless` only decides whether browser-use emulates a
            # viewport. Its emulation is dropped when it detaches, leaving the rig's pages without
            # Playwright's viewport (1280x633 instead of 1280x720) until they reload: so emulate none.
            headless=False,
            no_viewport=True,
            enable_default_extensions=False,
            user_data_dir=Path(tmp) / "profile",
            # An empty downloads path (None would be replaced by a new temp dir) keeps browser-use from
            # calling Browser.setDownloadBehavior, which would break Playwright's downloads in this browser.
            downloads_path="",
            auto_download_pdfs=False,
        )
        session = BrowserSession(browser_profile=profile)
        initial = [{"navigate": {"url": start_url, "new_tab": False}}] if start_url else None
        agent = Agent(
            task=prompt,
            llm=llm,
            browser_session=session,
            tools=Tools(exclude_actions=list(EXCLUDED_ACTIONS)),
            initial_actions=initial,
            directly_open_url=False,
            use_vision=use_vision,
            use_judge=False,
            enable_planning=False,
            calculate_cost=False,
            generate_gif=False,
            file_system_path=str(Path(tmp) / "files"),
            step_timeout=step_timeout_s,
            enable_signal_handler=False,
        )
        meter = usage if usage is not None else UsageMeter()
        agent.register_new_step_callback = lambda *_: meter.observed(_state_bytes(agent))
        try:
            try:
                await session.start()  # idempotent: agent.run() starts it too, but a failure here is the rig's
            except Exception as exc:
                raise InfraError(f"browser-use could not attach to {cdp_url}: {type(exc).__name__}: {exc}") from exc
            try:
                history = await agent.run(max_steps=max_steps)
            except Exception as exc:
                raise AgentError(f"browser-use failed: {type(exc).__name__}: {exc}") from exc
        finally:
            _count_usage(agent, llm, meter, priced_as)
            await session.reset()
            shutil.rmtree(agent.agent_directory, ignore_errors=True)  # its screenshots, in the system temp dir
    return _result(history, initial_step=initial is not None)


def _state_bytes(agent: Any) -> int:
    """UTF-8 bytes of the text of the state message browser-use just sent its model (what the agent was shown this
    step: the page's elements, its history, what it read; images not counted)."""
    messages = agent.message_manager.last_input_messages
    return len(str(getattr(messages[-1], "text", "") or "").encode("utf-8")) if messages else 0


def _count_usage(agent: Any, llm: Any, meter: UsageMeter, priced_as: str | None) -> None:
    """Hand browser-use's own accounting to the meter: each LLM call its token cost service saw (a call whose model
    reported no usage is not there), and the actions it ran."""
    for entry in agent.token_cost_service.usage_history:
        u = entry.usage
        model = priced_as if priced_as and entry.model == getattr(llm, "model", None) else entry.model
        meter.llm_call(Spend(model, u.prompt_tokens, u.completion_tokens, u.prompt_cached_tokens), "browser-use")
    meter.actions(sum(len(item.result) for item in agent.history.history))


def _result(history: Any, *, initial_step: bool) -> BrowserUseResult:
    """Convert browser-use's AgentHistoryList into plain data."""
    steps: list[dict[str, Any]] = []
    for i, item in enumerate(history.history):
        if item.model_output is None:
            continue
        targets = item.state.interacted_element or [None] * len(item.model_output.action)
        actions = []
        for action, target in zip(item.model_output.action, targets, strict=False):
            dumped = action.model_dump(exclude_none=True, mode="json")
            name, params = next(iter(dumped.items()))
            actions.append({"name": name, "params": params, "target": _target(target)})
        steps.append(
            {
                "step": len(steps),
                "url": item.state.url,
                "initial": initial_step and i == 0,
                "actions": actions,
                "errors": [r.error for r in item.result if r.error],
            }
        )
    return BrowserUseResult(
        final_text=history.final_result(),
        done=history.is_done(),
        success=history.is_successful(),
        steps=steps,
        errors=[e for e in history.errors() if e],
    )


def _replayable(action: dict[str, Any]) -> dict[str, Any]:
    """One action as `{name: params}`, its element index turned into a matcher where the element allows."""
    params = dict(action["params"])
    attrs = (action.get("target") or {}).get("attributes", {})
    if isinstance(params.get("index"), int):
        for key in ("id", "name"):
            if attrs.get(key):
                params["index"] = {"match": f"{key}={attrs[key]}"}
                break
    return {action["name"]: params}


def _target(element: Any) -> dict[str, Any] | None:
    """The element an action touched, as browser-use saw it (tag, attributes, XPath)."""
    if element is None:
        return None
    return {"tag": element.node_name.lower(), "attributes": dict(element.attributes or {}), "xpath": element.x_path}
