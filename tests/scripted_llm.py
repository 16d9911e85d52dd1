"""A chat model that browser-use accepts and that answers from a fixed script: the tests drive browser-use offline
with it, and replay the decisions of a browser-use run (`BrowserUseResult.decisions`).

Each call of `ainvoke` that asks for the agent's next actions returns the next scripted step, a list of
browser-use action dicts (`{"<action name>": {<params>}}`). The parameters are passed to browser-use as
they are, so any action its `Tools` registers works; the ones used and tested with browser-use 0.13 are:

| action | params | note |
|---|---|---|
| `navigate` | `url`, `new_tab` | URLs with query strings set a state without clicking |
| `go_back` | – | |
| `wait` | `seconds` | |
| `click` | `index` | index from the browser state (see below) |
| `input` | `index`, `text`, `clear` | types into a text field |
| `select_dropdown` | `index`, `text` | picks a `<select>` option by its exact text or value |
| `dropdown_options` | `index` | lists a `<select>`'s options |
| `send_keys` | `keys` | e.g. `Enter`, `Escape`, `Control+a`, to the focused element |
| `scroll` | `down`, `pages`, `index` | |
| `find_text` | `text` | scrolls to a text |
| `search_page` | `pattern`, ... | text search in the page, no LLM |
| `find_elements` | `selector`, ... | CSS query, no LLM |
| `evaluate` | `code` | runs JavaScript in the page |
| `done` | `text`, `success` | ends the run; `text` is the agent's final answer |

Element indices change from page to page, so instead of a number an `index` may be
`{"match": "some text"}` (optionally `"nth": k`): it resolves to the index of the k-th interactive
element (0-based, default 0) whose line in the latest browser state, or the text nested under it,
contains that text (an `attr=value` is matched whole), e.g. `{"match": "id=carrier"}`,
`{"match": "name=q"}` or `{"match": "Show result"}`. The state line shows browser-use's pick of
attributes (a `name` equal to the `id` is left out), e.g.
`|SHADOW(open)|*[3]<select id=carrier ... options=any|American|United />` or
`[27]<button id=go type=submit />` with `Show result` on the next, indented line.
A step holds at most 5 actions (browser-use's `max_actions_per_step`, which cuts longer steps without
a word), and browser-use itself ends a step early after an action that changes the URL or the tab.
A step that cannot be resolved or validated raises `ScriptError` from that call without using the step
up: browser-use counts a failed step and asks again with a fresh browser state (so a page still loading
gets another chance), until its `max_failures`.
When the script runs out, the model answers `done` with `success: false`. An `extract` action's own
LLM call (free text, no `output_format`) gets `free_text`.

Every answer reports its usage as a provider would (`ChatInvokeUsage`), so browser-use's token accounting sees
it: `prompt_tokens` is the characters of the messages' text over 4, `completion_tokens` those of the answer's JSON
over 4, each at least 1 (`tokens(text)`); `usage=False` reports none, as a model without usage accounting does.

A string parameter may contain `{last_result}`: it is replaced by the result of the previous step's
actions as browser-use reported them back, so a script can act on what the agent saw, e.g. an
`evaluate` that turns `table#results` into a Markdown table, then `{"done": {"text": "{last_result}"}}`;
or an `evaluate` that reads a value, then `{"input": {..., "text": "{last_result}"}}`.
How browser-use 0.13 passes results back: after each step, every `ActionResult`'s `long_term_memory`
(else its `extracted_content`; plus its `error`) becomes one line of a `Result` block in that step's
`<step>` item of `<agent_history>` in the next state message. An `evaluate` puts its whole return
value there (strings as they are, objects as JSON) when it is under 10,000 characters; a longer one
(and an `extract`'s content) is shown in full only once, in the next message's `<read_state>`.
So `{last_result}` is the last `<read_state_N>` block when the state message has one, else the
`Result` block of the latest `<step>` that has one (a step the model failed to answer has none): all
the results of that step, one per action, so give a reading `evaluate` a step of its own.
"""

from __future__ import annotations

import json
import re
from copy import deepcopy
from typing import Any

from pydantic import ValidationError

_ELEMENT = re.compile(r"^(\s*)(?:\|[^|]*\|)?\*?\[(\d+)\]")


#: browser-use's default `max_actions_per_step`: it cuts longer steps without saying so.
MAX_ACTIONS_PER_STEP = 5


class ScriptError(ValueError):
    """A scripted step cannot be turned into browser-use actions (bad action, unresolvable index)."""


class ScriptedLLM:
    """A browser-use chat model whose decisions are the given steps, one step per call."""

    _verified_api_keys = True

    def __init__(
        self, steps: list[list[dict[str, Any]]], *, model: str = "scripted", free_text: str = "",
        max_actions: int = MAX_ACTIONS_PER_STEP, usage: bool = True,
    ) -> None:
        for i, step in enumerate(steps):
            if not isinstance(step, list) or not step or not all(isinstance(a, dict) and len(a) == 1 for a in step):
                raise ScriptError(f"step {i} must be a non-empty list of single-key action dicts, got {step!r}")
            if len(step) > max_actions:
                raise ScriptError(f"step {i} has {len(step)} actions; browser-use runs at most {max_actions} per step "
                                  "(its max_actions_per_step) and silently drops the rest: split the step")
        self.steps = [deepcopy(s) for s in steps]
        self.model = model
        self.free_text = free_text
        self.position = 0
        self.usage = usage
        #: What each agent call got: the actions after index resolution.
        self.sent: list[list[dict[str, Any]]] = []
        #: The usage each call reported (prompt and completion tokens), in order.
        self.reported: list[tuple[int, int]] = []

    @property
    def provider(self) -> str:
        """Provider name browser-use logs."""
        return "scripted"

    @property
    def name(self) -> str:
        """Model name browser-use logs."""
        return self.model

    @property
    def model_name(self) -> str:
        """Legacy alias of `model`."""
        return self.model

    async def ainvoke(self, messages: list[Any], output_format: type | None = None, **kwargs: Any) -> Any:
        """Return the next scripted step as browser-use's structured output (or `free_text`)."""
        from browser_use.llm.views import ChatInvokeCompletion

        if output_format is None:
            return ChatInvokeCompletion(completion=self.free_text, usage=self._usage(messages, self.free_text))
        if "action" not in getattr(output_format, "model_fields", {}):
            raise ScriptError(f"the scripted model only answers agent steps, not {output_format.__name__}")
        if self.position < len(self.steps):
            step = self.steps[self.position]
        else:
            step = [{"done": {"text": "scripted model ran out of steps", "success": False}}]
        actions = [self._resolve(_fill_last_result(a, messages), _state_text(messages)) for a in step]
        try:
            completion = output_format.model_validate(
                {"memory": f"scripted step {self.position}", "next_goal": "", "evaluation_previous_goal": "", "action": actions}
            )
        except ValidationError as exc:
            raise ScriptError(f"scripted step {self.position} {actions!r} is not valid for browser-use: {exc}") from None
        self.position += 1
        self.sent.append(actions)
        return ChatInvokeCompletion(completion=completion, usage=self._usage(messages, json.dumps(actions)))

    def _usage(self, messages: list[Any], answer: str) -> Any:
        """The usage of one call, as `tokens` counts it (None with `usage=False`)."""
        from browser_use.llm.views import ChatInvokeUsage

        if not self.usage:
            return None
        prompt = tokens("".join(str(getattr(m, "text", "") or "") for m in messages))
        completion = tokens(answer)
        self.reported.append((prompt, completion))
        return ChatInvokeUsage(prompt_tokens=prompt, prompt_cached_tokens=None, prompt_cache_creation_tokens=None,
                               prompt_image_tokens=None, completion_tokens=completion, total_tokens=prompt + completion)

    def _resolve(self, action: dict[str, Any], state: str) -> dict[str, Any]:
        name, params = next(iter(action.items()))
        if isinstance(params, dict) and isinstance(params.get("index"), dict):
            params = {**params, "index": find_index(state, **params["index"])}
        return {name: params}


def tokens(text: str) -> int:
    """The scripted model's token count of a text: its characters over 4, at least 1."""
    return max(1, len(text) // 4)


def find_index(state: str, match: str, nth: int = 0) -> int:
    """Index of the nth interactive element whose line (or nested text) in a browser-state text contains `match`."""
    if re.fullmatch(r"[\w-]+=\S+", match):  # an attribute: match it whole, so id=go does not find id=gone
        pattern = re.compile(r"(?<![\w-])" + re.escape(match) + r"(?=[\s/>]|$)")
    else:
        pattern = re.compile(re.escape(match))
    lines = state.splitlines()
    found: list[int] = []
    for i, line in enumerate(lines):
        m = _ELEMENT.match(line)
        if not m:
            continue
        depth = len(m.group(1))
        block = [line]
        for nxt in lines[i + 1 :]:
            if _ELEMENT.match(nxt) or len(nxt) - len(nxt.lstrip("\t")) <= depth:
                break
            block.append(nxt)
        if pattern.search("\n".join(block)):
            found.append(int(m.group(2)))
    if len(found) <= nth:
        raise ScriptError(f"no interactive element #{nth} matching {match!r} in the browser state ({len(found)} matched)")
    return found[nth]


LAST_RESULT = "{last_result}"


def _fill_last_result(action: dict[str, Any], messages: list[Any]) -> dict[str, Any]:
    """The action with `{last_result}` in its string parameters replaced by the previous step's result."""
    if LAST_RESULT not in repr(action):
        return action
    result = last_result(messages)
    if result is None:
        raise ScriptError(f"{LAST_RESULT} is used but the messages hold no action result yet")

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(LAST_RESULT, result)
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    return fill(action)


def last_result(messages: list[Any]) -> str | None:
    """What browser-use reported back from the previous step (see the module docstring), or None."""
    text = _latest(messages, "<agent_history>")
    read_state = _section(text, "read_state")
    if read_state:
        blocks = re.findall(r"<read_state_\d+>\n?(.*?)\n?</read_state_\d+>", read_state, re.DOTALL)
        if blocks:
            return blocks[-1]
    items = re.split(r"^<step[^>]*>$", _section(text, "agent_history") or "", flags=re.MULTILINE)[1:]
    for item in reversed(items):  # a step the model failed to answer has an error line and no results
        lines = item.split("\n")
        if "Result" in lines:
            return "\n".join(lines[lines.index("Result") + 1 :]).strip("\n")
    return None


def _latest(messages: list[Any], marker: str) -> str:
    """The text of the latest message containing `marker`."""
    for msg in reversed(messages):
        text = str(getattr(msg, "text", "") or "")
        if marker in text:
            return text
    return ""


def _section(text: str, tag: str) -> str | None:
    """The content of the last `<tag>...</tag>` in `text`."""
    start = text.rfind(f"<{tag}>")
    if start < 0:
        return None
    end = text.find(f"</{tag}>", start)
    return text[start + len(tag) + 2 : end if end >= 0 else len(text)].strip("\n")


def _state_text(messages: list[Any]) -> str:
    """The latest `<browser_state>` section among the messages (browser-use puts it in a user message)."""
    for msg in reversed(messages):
        text = str(getattr(msg, "text", "") or "")
        start = text.rfind("<browser_state>")
        if start >= 0:
            end = text.find("</browser_state>", start)
            return text[start : end if end >= 0 else len(text)]
    return ""
