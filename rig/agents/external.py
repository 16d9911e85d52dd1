"""Agents driven from outside the rig: `cdp` (any program over CDP) and `operator` (a person with a product)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from loguru import logger

from recorders import Action

from rig.agents.base import EpisodeEnv
from rig.agents.cdp import announce, wait_for_answer
from rig.episode_dir import EpisodeDir, write_atomic
from rig.errors import AgentError, InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, parse_table


def _save_prompt(env: EpisodeEnv) -> Path:
    return write_atomic(EpisodeDir(env.out_dir).prompt_file, env.prompt + "\n")


class CdpAgent:
    """Records whatever an outside program does over CDP until `rig submit` hands in the answer."""

    name, model, needs_cdp = "cdp", None, True

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Print the endpoint and the prompt, then wait for the answer (within the episode's budget)."""
        _save_prompt(env)
        out = env.console or sys.stdout
        announce(env.cdp_url or "", env.out_dir, out)
        out.write(f"Start URL: {env.start_url}\nPrompt:\n{env.prompt}\n"
                  f"Hand in the answer with: rig submit {env.out_dir} --answer FILE\n")
        out.flush()
        # the runner's own wall-clock budget ends a silent episode first, as `timeout`; this is a backstop
        answer = await wait_for_answer(env.out_dir, timeout_s=env.budget.timeout_s + 5)
        if answer is None:
            raise AgentError("no answer was submitted within the time budget")
        if isinstance(answer, ParseFailure):
            raise answer  # the runner ends the episode with status parse_failure
        return answer


class OperatorAgent:
    """Semi-manual evaluation of a product with no trajectory API: takes its final answer (markdown with
    tables and links), snapshots every cited http(s) page into the episode's archive, and hands the answer in.

    A pasted answer is untrusted: a citation of any other scheme (`file:`, `chrome:`, `data:`, ...) is never
    opened; it is kept, marked not captured with the reason, as is a page that could not be loaded."""

    name, model, needs_cdp = "operator", None, False

    def __init__(self, answer_file: Path | None) -> None:
        if answer_file is not None and not Path(answer_file).is_file():
            raise InputError(str(answer_file), None, "answer file not found")
        self.answer_file = answer_file

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Read the product's answer, parse it, capture each cited page."""
        prompt_path = _save_prompt(env)
        if self.answer_file is not None:
            text, source = Path(self.answer_file).read_text(encoding="utf-8"), str(self.answer_file)
        elif sys.stdin.isatty():
            sys.stderr.write(f"Prompt (also in {prompt_path}):\n{env.prompt}\n\n"
                             "Paste the product's final answer, then Ctrl-D:\n")
            text, source = sys.stdin.read(), "pasted answer"
        else:
            raise InputError("--answer-file", None, "the operator agent needs --answer-file when stdin is not a terminal")
        write_atomic(EpisodeDir(env.out_dir).operator_answer_file, text)
        answer = parse_table(text, source)  # ParseFailure -> status parse_failure
        outcome = {url: await self._capture(env, url) for url in dict.fromkeys(c.url for c in answer.citations)}
        for citation in answer.citations:
            citation.captured, citation.capture_reason = outcome[citation.url] is None, outcome[citation.url]
        return answer

    async def _capture(self, env: EpisodeEnv, url: str) -> str | None:
        """Open a cited http(s) page in the recorded browser so its response and visible text reach the archive;
        the reason it was not captured, or None."""
        target = urljoin(env.start_url, url)
        scheme = urlsplit(target).scheme.lower()
        if scheme not in ("http", "https"):
            logger.warning("operator: not opening cited URL {} (scheme {!r})", url, scheme)
            return f"not opened: only http(s) citations are captured, this one is {scheme or 'without a scheme'}"
        try:
            async with env.recorder.action(Action(type="goto", value=target), page=env.page):
                await env.page.goto(target, timeout=30_000)
        except Exception as exc:  # an unreachable citation is evidence too: recorded as not captured
            logger.warning("operator: could not capture cited page {}: {}", url, exc)
            return f"the page could not be loaded: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        return None
